#!/usr/bin/env python3
"""Finds import cycles between the files of one crate: the path edges between its files
(use declarations and inline paths: `super::x`, `crate::a::b`, `self::c`, a child module
`c::` named in its parent), then the strongly connected components among them. A parent's
references to its own child modules (registering them, re-exporting from them) are left
out, so a folder's mod.rs may hold what its children share.
Usage: import_cycles.py SRC_DIR... [--edges]; exits 1 naming each cycle found."""
import os, re, sys


def strip(text):
    """Drop comments, string and char literals (one pass, so `//` in a string stays a string)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith('//', i):
            j = text.find('\n', i); i = n if j < 0 else j
        elif text.startswith('/*', i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith('/*', i): depth += 1; i += 2
                elif text.startswith('*/', i): depth -= 1; i += 2
                else: i += 1
        elif c in 'rb' and (i == 0 or not (text[i-1].isalnum() or text[i-1] == '_')) and re.match(r'(br|r)(#*)"', text[i:i+70]):
            m = re.match(r'(br|r)(#*)"', text[i:])
            end = '"' + m.group(2)
            j = text.find(end, i + len(m.group(0)))
            out.append('""'); i = j + len(end)
        elif c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == '\\' else 1
            out.append('""'); i += 1
        elif c == "'" and re.match(r"'(\\.[^']*|[^\\'])'", text[i:i+12]):
            m = re.match(r"'(\\.[^']*|[^\\'])'", text[i:])
            out.append("' '"); i += len(m.group(0))
        else:
            out.append(c); i += 1
    return ''.join(out)

def cycles(src, show_edges):
    # module path (tuple) -> file
    files = {}
    for root, _, names in os.walk(src):
        for n in names:
            if not n.endswith('.rs'):
                continue
            rel = os.path.relpath(os.path.join(root, n), src)
            parts = rel[:-3].split(os.sep)
            if parts[-1] in ('mod', 'lib', 'main'):
                parts = parts[:-1]
            files[tuple(parts)] = rel

    # inline modules (mod x { ... }) are part of their file: map them to it
    def resolve(path):
        """Longest prefix of `path` that is a module with a file."""
        for k in range(len(path), -1, -1):
            if tuple(path[:k]) in files:
                return files[tuple(path[:k])]
        return None

    def expand_use(tree):
        """`a::{b, c::{d, e}}` -> [[a,b],[a,c,d],[a,c,e]] (approximate: renames dropped)."""
        tree = tree.strip()
        m = re.match(r'^([\w:]*?)(::)?\{(.*)\}$', tree, re.S)
        if m and m.group(3) is not None and tree.endswith('}'):
            prefix = [p for p in m.group(1).split('::') if p]
            inner, depth, cur, items = m.group(3), 0, '', []
            for ch in inner:
                if ch == '{': depth += 1
                if ch == '}': depth -= 1
                if ch == ',' and depth == 0:
                    items.append(cur); cur = ''
                else:
                    cur += ch
            items.append(cur)
            out = []
            for it in items:
                if it.strip():
                    out += [prefix + p for p in expand_use(it)]
            return out
        tree = re.sub(r'\s+as\s+\w+$', '', tree)
        return [[p for p in tree.split('::') if p]]

    edges = {}
    for mod, rel in files.items():
        text = strip(open(os.path.join(src, rel)).read())
        children = set(re.findall(r'\bmod\s+(\w+)\s*;', text))
        # inline modules: (start, end, name) so that a path inside `mod tests { .. }` is read
        # from that module (its `super` is this file)
        inline = []
        for m in re.finditer(r'\bmod\s+(\w+)\s*\{', text):
            depth, j = 1, m.end()
            while depth and j < len(text):
                depth += {'{': 1, '}': -1}.get(text[j], 0); j += 1
            inline.append((m.start(), j, m.group(1)))
        def base_at(pos):
            return list(mod) + [name for (a, b, name) in inline if a <= pos < b]
        paths = []
        for m in re.finditer(r'\buse\s+([^;]+);', text):
            paths += [(m.start(), p) for p in expand_use(m.group(1))]
        for m in re.finditer(r'(?<![\w:])((?:super|crate|self)(?:::\w+)+)', text):
            paths.append((m.start(), m.group(1).split('::')))
        for m in re.finditer(r'(?<![\w:])(\w+)::', text):
            if m.group(1) in children:
                paths.append((m.start(), ['self', m.group(1)]))
        for pos, p in paths:
            base = base_at(pos)
            if p[0] == 'crate':
                full = p[1:]
            elif p[0] == 'self':
                full = base + p[1:]
            elif p[0] == 'super':
                b = base[:]
                while p and p[0] == 'super':
                    b = b[:-1]; p = p[1:]
                full = b + p
            elif p[0] in children:
                full = base + p
            else:
                continue
            full = [x for x in full if x not in ('*',)]
            target = resolve(full)
            if target is None or target == rel:
                continue
            if len(full) > len(mod) and full[:len(mod)] == list(mod) and files.get(tuple(full[:len(mod)+1])) == target:
                continue
            edges.setdefault(rel, set()).add(target)

    if show_edges:
        for a in sorted(edges):
            print(f"{a} -> {', '.join(sorted(edges[a]))}")

    # strongly connected components (Tarjan)
    index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]
    def visit(v):
        index[v] = low[v] = counter[0]; counter[0] += 1
        stack.append(v); on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w); low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on.discard(w); comp.append(w)
                if w == v: break
            if len(comp) > 1:
                sccs.append(sorted(comp))
    for v in sorted(files.values()):
        if v not in index:
            visit(v)
    for c in sccs:
        cyc = [f"{a} <-> {b}" for a in c for b in c if a < b and b in edges.get(a, ()) and a in edges.get(b, ())]
        print(f"{src}: import cycle among", ', '.join(c), ('(' + '; '.join(cyc) + ')') if cyc else '')
    return len(sccs)


sys.setrecursionlimit(10000)
show = '--edges' in sys.argv
dirs = [a.rstrip('/') for a in sys.argv[1:] if a != '--edges']
found = sum(cycles(d, show) for d in dirs)
print(f"import cycles: {found} in {len(dirs)} source directories")
sys.exit(1 if found else 0)
