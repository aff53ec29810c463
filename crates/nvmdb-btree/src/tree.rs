//! The B+-tree: nodes of 1–8 cache lines in a [`Memory`], one node format per level kind.
//!
//! Every node has the same byte layout (see the crate docs): a header word, `cap` keys,
//! `cap` pointers, one trailing word. Inner nodes use the `Sorted` or `Packed` format;
//! leaves use the format of their variant. An inner entry `(key, child)` holds the lower
//! bound of the child's subtree; the leftmost entry of the tree's leftmost nodes holds 0,
//! so every key routes to the largest separator not above it.

use nvmdb_device::index;
use nvmdb_memory::{Memory, MemoryError};
use rand::seq::SliceRandom;
use rand::Rng;

use crate::{code, BTreeError, Variant};

const WORD: u64 = 8;
const LINE_BYTES: u64 = 64;

/// Instructions declared to the CPU time model beside each load and store (estimates of
/// x86-64 instructions per step; see the crate docs).
mod instructions {
    /// A binary-search probe: midpoint, compare, branch, bound update.
    pub const PROBE: u64 = 4;
    /// A scanned slot: validity test, compare(s), branch, loop.
    pub const SCAN_SLOT: u64 = 4;
    /// Moving one entry: index arithmetic and loop.
    pub const MOVE: u64 = 2;
    /// Finding a bitmap slot or updating a header: not, and, trailing zeros, or.
    pub const HEADER: u64 = 4;
    /// A free slot's distance: xor, popcount, compare, select.
    pub const NEAREST_SLOT: u64 = 5;
    /// Encoding a weight-order code word: about four per bit position.
    pub const ENCODE: u64 = 256;
    /// Decoding one: about four per one bit of a typical word.
    pub const DECODE: u64 = 64;
    /// One comparison of a sort (`n log n` of them).
    pub const SORT_COMPARE: u64 = 4;
    /// One level of the descent: loop and path push.
    pub const LEVEL: u64 = 2;
}

/// How a node keeps its entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// Header = count; entries packed and sorted by key.
    Sorted,
    /// Header = count; entries packed, in any order.
    Packed,
    /// Header = validity bitmap; entries anywhere, first free slot on insert.
    Bitmap,
    /// Header = validity bitmap; a key is stored as the weight-order code of its
    /// distance above the node's separator, a pointer as its weight-order code; an
    /// insert takes the free slot whose stale content is nearest in Hamming distance.
    Nearest,
}

impl Format {
    fn counted(self) -> bool {
        matches!(self, Format::Sorted | Format::Packed)
    }

    /// The stored form of a key in a node whose separator is `base`.
    fn encode_key(self, key: u64, base: u64) -> u64 {
        match self {
            Format::Nearest => code::encode(key.wrapping_sub(base)),
            _ => key,
        }
    }
    /// Instructions of one encode or decode of a key or pointer.
    fn code_instructions(self, encode: bool) -> u64 {
        match (self, encode) {
            (Format::Nearest, true) => instructions::ENCODE,
            (Format::Nearest, false) => instructions::DECODE,
            _ => 0,
        }
    }
    fn decode_key(self, stored: u64, base: u64) -> u64 {
        match self {
            Format::Nearest => code::decode(stored).wrapping_add(base),
            _ => stored,
        }
    }
    fn encode_ptr(self, ptr: u64) -> u64 {
        match self {
            Format::Nearest => code::encode(ptr),
            _ => ptr,
        }
    }
    fn decode_ptr(self, stored: u64) -> u64 {
        match self {
            Format::Nearest => code::decode(stored),
            _ => stored,
        }
    }
}

/// A B+-tree whose every byte lives in the memory `M`.
#[derive(Debug)]
pub struct BTree<M: Memory> {
    mem: M,
    variant: Variant,
    node_lines: u32,
    cap: usize,
    root: u64,
    /// Levels; 1 when the root is a leaf.
    height: u32,
    len: u64,
}

/// One decoded entry of a node.
#[derive(Debug, Clone, Copy)]
struct Entry {
    key: u64,
    ptr: u64,
    slot: usize,
}

impl<M: Memory> BTree<M> {
    /// An empty tree (one empty leaf).
    pub fn new(mem: M, variant: Variant, node_lines: u32) -> Result<BTree<M>, BTreeError> {
        let mut tree = BTree::shell(mem, variant, node_lines)?;
        let root = tree.alloc_node()?;
        tree.write_fresh(root, tree.leaf_format(), &[], 0);
        tree.root = root;
        Ok(tree)
    }

    /// Bulk-loads `pairs` (keys strictly increasing) with `fill` of each node used;
    /// nodes of unsorted formats are shuffled with `rng`, as in the paper's set-up.
    pub fn bulk_load(
        mem: M,
        variant: Variant,
        node_lines: u32,
        pairs: impl IntoIterator<Item = (u64, u64)>,
        fill: f64,
        rng: &mut impl Rng,
    ) -> Result<BTree<M>, BTreeError> {
        if !(fill > 0.0 && fill <= 1.0) {
            return Err(BTreeError::Fill(fill));
        }
        let mut tree = BTree::shell(mem, variant, node_lines)?;
        let per_node = entries_per_node(tree.cap, fill);
        // The leaves' separators, at the capacity the pairs' count gives, not grown by
        // doubling to near twice it (160 MB of separators for 50 M pairs at 2-line nodes).
        let pairs = pairs.into_iter();
        let mut level: Vec<(u64, u64)> = Vec::with_capacity(pairs.size_hint().0.div_ceil(per_node).max(1));
        let mut chunk: Vec<(u64, u64)> = Vec::with_capacity(per_node);
        let mut previous: Option<u64> = None;
        let leaf_format = tree.leaf_format();
        let mut scratch = LoadScratch::default();
        for (index, (key, value)) in pairs.enumerate() {
            if previous.is_some_and(|p| p >= key) {
                return Err(BTreeError::NotIncreasing { index, key });
            }
            previous = Some(key);
            chunk.push((key, value));
            if chunk.len() == per_node {
                level.push(tree.load_node(leaf_format, &chunk, level.is_empty(), rng, &mut scratch)?);
                chunk.clear();
            }
            tree.len += 1;
        }
        if !chunk.is_empty() || level.is_empty() {
            level.push(tree.load_node(leaf_format, &chunk, level.is_empty(), rng, &mut scratch)?);
        }
        let inner_per_node = per_node.max(2);
        let inner_format = tree.inner_format();
        while level.len() > 1 {
            let mut next = Vec::with_capacity(level.len() / inner_per_node + 1);
            for group in level.chunks(inner_per_node) {
                next.push(tree.load_node(inner_format, group, next.is_empty(), rng, &mut scratch)?);
            }
            level = next;
            tree.height += 1;
        }
        tree.root = level[0].1;
        Ok(tree)
    }

    fn shell(mem: M, variant: Variant, node_lines: u32) -> Result<BTree<M>, BTreeError> {
        if !matches!(node_lines, 1 | 2 | 4 | 8) {
            return Err(BTreeError::NodeLines(node_lines));
        }
        let cap = node_capacity(node_lines);
        Ok(BTree { mem, variant, node_lines, cap, root: 0, height: 1, len: 0 })
    }

    /// This tree in `mem`, a memory that holds the same bytes as this tree's (a copy of
    /// it): the same root, height and entries, read and written through `mem`.
    pub fn with_memory<N: Memory>(&self, mem: N) -> BTree<N> {
        let BTree { variant, node_lines, cap, root, height, len, .. } = *self;
        BTree { mem, variant, node_lines, cap, root, height, len }
    }

    /// Writes one bulk-loaded node in a single store; returns `(separator, address)`.
    fn load_node(
        &mut self,
        format: Format,
        entries: &[(u64, u64)],
        leftmost: bool,
        rng: &mut impl Rng,
        scratch: &mut LoadScratch,
    ) -> Result<(u64, u64), BTreeError> {
        let node = self.alloc_node()?;
        let separator = if leftmost { 0 } else { entries[0].0 };
        let LoadScratch { slots, bytes } = scratch;
        slots.clear();
        slots.extend(match format {
            Format::Sorted | Format::Packed => 0..entries.len(),
            Format::Bitmap | Format::Nearest => 0..self.cap,
        });
        if format != Format::Sorted {
            slots.shuffle(rng);
        }
        bytes.clear();
        bytes.resize(index(self.node_bytes()), 0);
        let mut put = |offset: u64, value: u64| {
            bytes[index(offset)..index(offset) + 8].copy_from_slice(&value.to_le_bytes());
        };
        let mut bitmap = 0u64;
        for (&(key, ptr), &slot) in entries.iter().zip(slots.iter()) {
            put(self.key_addr(0, slot), format.encode_key(key, separator));
            put(self.ptr_addr(0, slot), format.encode_ptr(ptr));
            bitmap |= 1 << slot;
        }
        put(0, if format.counted() { entries.len() as u64 } else { bitmap });
        self.mem.write_bytes(node, bytes);
        Ok((separator, node))
    }

    /// The variant.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// Node size in cache lines.
    pub fn node_lines(&self) -> u32 {
        self.node_lines
    }

    /// Entries a node holds at most.
    pub fn node_capacity(&self) -> usize {
        self.cap
    }

    /// Levels (1 when the root is a leaf).
    pub fn height(&self) -> u32 {
        self.height
    }

    /// Keys stored.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True when no key is stored.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The memory.
    pub fn memory(&self) -> &M {
        &self.mem
    }

    /// The memory, mutably (to flush or reset its counters).
    pub fn memory_mut(&mut self) -> &mut M {
        &mut self.mem
    }

    /// The value of `key`.
    pub fn get(&mut self, key: u64) -> Option<u64> {
        let (leaf, base) = self.descend(key, &mut Vec::new());
        let format = self.leaf_format();
        let slot = self.find_exact(leaf, format, key, base)?;
        Some(format.decode_ptr(self.mem.load(self.ptr_addr(leaf, slot))))
    }

    /// Inserts or replaces; returns the previous value.
    pub fn insert(&mut self, key: u64, value: u64) -> Result<Option<u64>, BTreeError> {
        let mut path = Vec::new();
        let (leaf, base) = self.descend(key, &mut path);
        let format = self.leaf_format();
        if let Some(slot) = self.find_exact(leaf, format, key, base) {
            let old = format.decode_ptr(self.mem.load(self.ptr_addr(leaf, slot)));
            self.mem.store(self.ptr_addr(leaf, slot), format.encode_ptr(value));
            return Ok(Some(old));
        }
        self.insert_at(leaf, format, base, key, value, path)?;
        self.len += 1;
        Ok(None)
    }

    /// Inserts into `node` (leaf or inner; `base` is its separator), splitting up the
    /// `path` as needed.
    fn insert_at(
        &mut self,
        mut node: u64,
        mut format: Format,
        mut base: u64,
        mut key: u64,
        mut ptr: u64,
        mut path: Vec<u64>,
    ) -> Result<(), BTreeError> {
        loop {
            if self.count(node, format) < self.cap {
                self.insert_entry(node, format, base, key, ptr);
                return Ok(());
            }
            let (separator, right) = self.split(node, format, base)?;
            if key >= separator {
                self.insert_entry(right, format, separator, key, ptr);
            } else {
                self.insert_entry(node, format, base, key, ptr);
            }
            let inner = self.inner_format();
            match path.pop() {
                Some(parent) => {
                    (node, format, base, key, ptr) = (parent, inner, 0, separator, right);
                }
                None => {
                    let root = self.alloc_node()?;
                    self.write_fresh(root, inner, &[(0, node), (separator, right)], 0);
                    self.root = root;
                    self.height += 1;
                    return Ok(());
                }
            }
        }
    }

    /// Deletes; returns the value that was stored.
    pub fn delete(&mut self, key: u64) -> Option<u64> {
        let mut path = Vec::new();
        let (leaf, base) = self.descend(key, &mut path);
        let format = self.leaf_format();
        let slot = self.find_exact(leaf, format, key, base)?;
        let value = format.decode_ptr(self.mem.load(self.ptr_addr(leaf, slot)));
        self.remove_entry(leaf, format, slot);
        self.len -= 1;
        self.rebalance(leaf, format, path);
        Some(value)
    }

    /// Merges underfull nodes bottom-up (see the crate docs for the policy) and
    /// collapses a root left with one child.
    fn rebalance(&mut self, mut node: u64, mut format: Format, mut path: Vec<u64>) {
        let inner = self.inner_format();
        while let Some(parent) = path.pop() {
            let n = self.count(node, format);
            if n * 3 >= self.cap && n >= 2 {
                break;
            }
            let mut siblings = self.entries(parent, inner, 0);
            siblings.sort_unstable_by_key(|e| e.key);
            self.mem.compute(sort_instructions(siblings.len()));
            let j = siblings.iter().position(|e| e.ptr == node).expect("a node is listed in its parent");
            let (left, right) = match j {
                0 if siblings.len() > 1 => (siblings[0], siblings[1]),
                0 => {
                    // An only child: the parent is underfull too, so look one level up.
                    (node, format) = (parent, inner);
                    continue;
                }
                _ => (siblings[j - 1], siblings[j]),
            };
            if self.count(left.ptr, format) + self.count(right.ptr, format) > self.cap {
                break;
            }
            let mut moved = self.entries(right.ptr, format, right.key);
            moved.sort_unstable_by_key(|e| e.key);
            self.mem.compute(sort_instructions(moved.len()));
            for e in moved {
                self.insert_entry(left.ptr, format, left.key, e.key, e.ptr);
            }
            self.free_node(right.ptr);
            self.remove_entry(parent, inner, right.slot);
            (node, format) = (parent, inner);
        }
        while self.height > 1 && self.count(self.root, inner) == 1 {
            let child = self.entries(self.root, inner, 0)[0].ptr;
            self.free_node(self.root);
            self.root = child;
            self.height -= 1;
        }
    }

    /// All `(key, value)` with `lo <= key <= hi`, in key order.
    pub fn scan(&mut self, lo: u64, hi: u64) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        if lo <= hi {
            self.scan_node(self.root, self.height, 0, lo, hi, &mut out);
        }
        out
    }

    fn scan_node(&mut self, node: u64, level: u32, base: u64, lo: u64, hi: u64, out: &mut Vec<(u64, u64)>) {
        if level == 1 {
            let mut entries = self.entries(node, self.leaf_format(), base);
            entries.retain(|e| (lo..=hi).contains(&e.key));
            entries.sort_unstable_by_key(|e| e.key);
            self.mem.compute(sort_instructions(entries.len()));
            out.extend(entries.iter().map(|e| (e.key, e.ptr)));
            return;
        }
        let mut children = self.entries(node, self.inner_format(), 0);
        children.sort_unstable_by_key(|e| e.key);
        self.mem.compute(sort_instructions(children.len()));
        for (i, child) in children.iter().enumerate() {
            if child.key > hi {
                break;
            }
            if children.get(i + 1).is_some_and(|next| next.key <= lo) {
                continue;
            }
            self.scan_node(child.ptr, level - 1, child.key, lo, hi, out);
        }
    }

    // ----- node geometry -----

    fn node_bytes(&self) -> u64 {
        u64::from(self.node_lines) * LINE_BYTES
    }
    fn key_addr(&self, node: u64, slot: usize) -> u64 {
        node + WORD + WORD * slot as u64
    }
    fn ptr_addr(&self, node: u64, slot: usize) -> u64 {
        node + WORD + WORD * (self.cap + slot) as u64
    }
    fn leaf_format(&self) -> Format {
        self.variant.leaf_format()
    }
    fn inner_format(&self) -> Format {
        self.variant.inner_format()
    }
    fn full_mask(&self) -> u64 {
        (1u64 << self.cap) - 1
    }

    fn alloc_node(&mut self) -> Result<u64, MemoryError> {
        self.mem.alloc(self.node_bytes(), LINE_BYTES)
    }
    fn free_node(&mut self, node: u64) {
        self.mem.free(node, self.node_bytes());
    }

    // ----- node operations, all reading and writing simulated memory -----

    fn count(&mut self, node: u64, format: Format) -> usize {
        let header: u64 = self.mem.load(node);
        self.mem.compute(1);
        if format.counted() {
            index(header)
        } else {
            header.count_ones() as usize
        }
    }

    fn valid_slots(&mut self, node: u64, format: Format) -> Vec<usize> {
        let header: u64 = self.mem.load(node);
        if format.counted() {
            (0..index(header)).collect()
        } else {
            (0..self.cap).filter(|s| header >> s & 1 == 1).collect()
        }
    }

    /// The decoded entries of a node whose separator is `base`.
    fn entries(&mut self, node: u64, format: Format, base: u64) -> Vec<Entry> {
        let slots = self.valid_slots(node, format);
        self.mem.begin_independent();
        let entries = slots
            .into_iter()
            .map(|slot| {
                self.mem.compute(instructions::MOVE + 2 * format.code_instructions(false));
                Entry {
                    key: format.decode_key(self.mem.load(self.key_addr(node, slot)), base),
                    ptr: format.decode_ptr(self.mem.load(self.ptr_addr(node, slot))),
                    slot,
                }
            })
            .collect();
        self.mem.end_independent();
        entries
    }

    /// Follows separators from the root to the leaf for `key`, pushing inner nodes;
    /// returns the leaf and its separator.
    fn descend(&mut self, key: u64, path: &mut Vec<u64>) -> (u64, u64) {
        let (mut node, mut separator) = (self.root, 0);
        let format = self.inner_format();
        for _ in 1..self.height {
            self.mem.compute(instructions::LEVEL);
            path.push(node);
            (node, separator) = self.route(node, format, key);
        }
        (node, separator)
    }

    /// The child whose separator is the largest not above `key`, and that separator.
    fn route(&mut self, node: u64, format: Format, key: u64) -> (u64, u64) {
        let n = self.count(node, format);
        let slot = match format {
            Format::Sorted => {
                let (mut lo, mut hi) = (0, n);
                while lo < hi {
                    let mid = (lo + hi) / 2;
                    self.mem.compute(instructions::PROBE);
                    if self.mem.load::<u64>(self.key_addr(node, mid)) <= key {
                        lo = mid + 1;
                    } else {
                        hi = mid;
                    }
                }
                lo.checked_sub(1)
            }
            _ => {
                let mut best: Option<(u64, usize)> = None;
                self.mem.begin_independent();
                for slot in 0..n {
                    self.mem.compute(instructions::SCAN_SLOT);
                    let k: u64 = self.mem.load(self.key_addr(node, slot));
                    if k <= key && !matches!(best, Some((b, _)) if k <= b) {
                        best = Some((k, slot));
                    }
                }
                self.mem.end_independent();
                best.map(|(_, slot)| slot)
            }
        };
        let slot = slot.expect("the leftmost separator is a lower bound of every key routed here");
        (self.mem.load(self.ptr_addr(node, slot)), self.mem.load(self.key_addr(node, slot)))
    }

    fn find_exact(&mut self, node: u64, format: Format, key: u64, base: u64) -> Option<usize> {
        match format {
            Format::Sorted => {
                let (mut lo, mut hi) = (0, self.count(node, format));
                while lo < hi {
                    let mid = (lo + hi) / 2;
                    self.mem.compute(instructions::PROBE);
                    let k: u64 = self.mem.load(self.key_addr(node, mid));
                    match k.cmp(&key) {
                        std::cmp::Ordering::Less => lo = mid + 1,
                        std::cmp::Ordering::Greater => hi = mid,
                        std::cmp::Ordering::Equal => return Some(mid),
                    }
                }
                None
            }
            _ => {
                let stored = format.encode_key(key, base);
                self.mem.compute(format.code_instructions(true));
                let header: u64 = self.mem.load(node);
                let valid = |slot: usize| if format.counted() { slot < index(header) } else { header >> slot & 1 == 1 };
                self.mem.begin_independent();
                let found = (0..self.cap).filter(|&slot| valid(slot)).find(|&slot| {
                    self.mem.compute(instructions::SCAN_SLOT);
                    self.mem.load::<u64>(self.key_addr(node, slot)) == stored
                });
                self.mem.end_independent();
                found
            }
        }
    }

    /// Adds an entry to a node that is not full and whose separator is `base`.
    fn insert_entry(&mut self, node: u64, format: Format, base: u64, key: u64, ptr: u64) {
        let header: u64 = self.mem.load(node);
        let (stored_key, stored_ptr) = (format.encode_key(key, base), format.encode_ptr(ptr));
        self.mem.compute(2 * format.code_instructions(true) + instructions::HEADER);
        self.mem.begin_independent();
        let slot = match format {
            Format::Sorted => {
                let n = index(header);
                let mut pos = n;
                while pos > 0 && self.mem.load::<u64>(self.key_addr(node, pos - 1)) > key {
                    self.mem.compute(instructions::SCAN_SLOT);
                    pos -= 1;
                }
                for i in (pos..n).rev() {
                    self.move_entry(node, i, i + 1);
                }
                pos
            }
            Format::Packed => index(header),
            Format::Bitmap => (!header & self.full_mask()).trailing_zeros() as usize,
            Format::Nearest => self.nearest_free_slot(node, header, stored_key),
        };
        assert!(slot < self.cap, "insert into a full node");
        self.mem.store(self.key_addr(node, slot), stored_key);
        self.mem.store(self.ptr_addr(node, slot), stored_ptr);
        let header = if format.counted() { header + 1 } else { header | 1 << slot };
        self.mem.store(node, header);
        self.mem.end_independent();
    }

    /// The free slot whose stale key word differs from the new one in the fewest bits
    /// (lowest slot on ties). Only key words are compared: they share lines with the
    /// keys a search has just read, so the choice fetches no extra line.
    fn nearest_free_slot(&mut self, node: u64, bitmap: u64, stored_key: u64) -> usize {
        let free = !bitmap & self.full_mask();
        (0..self.cap)
            .filter(|s| free >> s & 1 == 1)
            .min_by_key(|&s| {
                self.mem.compute(instructions::NEAREST_SLOT);
                ((self.mem.load::<u64>(self.key_addr(node, s)) ^ stored_key).count_ones(), s)
            })
            .expect("a node that is not full has a free slot")
    }

    fn move_entry(&mut self, node: u64, from: usize, to: usize) {
        self.mem.compute(instructions::MOVE);
        let k: u64 = self.mem.load(self.key_addr(node, from));
        let p: u64 = self.mem.load(self.ptr_addr(node, from));
        self.mem.store(self.key_addr(node, to), k);
        self.mem.store(self.ptr_addr(node, to), p);
    }

    fn remove_entry(&mut self, node: u64, format: Format, slot: usize) {
        let header: u64 = self.mem.load(node);
        self.mem.compute(instructions::HEADER);
        self.mem.begin_independent();
        match format {
            Format::Sorted => {
                for i in slot + 1..index(header) {
                    self.move_entry(node, i, i - 1);
                }
                self.mem.store(node, header - 1);
            }
            Format::Packed => {
                let last = index(header) - 1;
                if slot != last {
                    self.move_entry(node, last, slot);
                }
                self.mem.store(node, header - 1);
            }
            Format::Bitmap | Format::Nearest => self.mem.store(node, header & !(1 << slot)),
        }
        self.mem.end_independent();
    }

    /// Moves the upper half of a full node to a new node; returns `(separator, new)`.
    fn split(&mut self, node: u64, format: Format, base: u64) -> Result<(u64, u64), BTreeError> {
        let mut entries = self.entries(node, format, base);
        entries.sort_unstable_by_key(|e| e.key);
        self.mem.compute(sort_instructions(entries.len()));
        let keep = entries.len() / 2;
        let separator = entries[keep].key;
        let right = self.alloc_node()?;
        let upper: Vec<(u64, u64)> = entries[keep..].iter().map(|e| (e.key, e.ptr)).collect();
        self.write_fresh(right, format, &upper, separator);
        match format {
            Format::Sorted => self.mem.store(node, keep as u64),
            Format::Packed => {
                // Compact the kept entries into slots 0..keep, moving as few as possible.
                let mut holes: Vec<usize> = entries[keep..].iter().map(|e| e.slot).filter(|&s| s < keep).collect();
                for e in entries[..keep].iter().filter(|e| e.slot >= keep) {
                    let hole = holes.pop().expect("as many holes below keep as kept entries above it");
                    self.move_entry(node, e.slot, hole);
                }
                self.mem.store(node, keep as u64);
            }
            Format::Bitmap | Format::Nearest => {
                let bitmap = entries[..keep].iter().fold(0u64, |m, e| m | 1 << e.slot);
                self.mem.store(node, bitmap);
            }
        }
        Ok((separator, right))
    }

    /// Fills a newly allocated node (separator `base`) with sorted entries in slots
    /// `0..n`, word by word.
    fn write_fresh(&mut self, node: u64, format: Format, entries: &[(u64, u64)], base: u64) {
        self.mem.begin_independent();
        for (slot, &(key, ptr)) in entries.iter().enumerate() {
            self.mem.compute(instructions::MOVE + 2 * format.code_instructions(true));
            self.mem.store(self.key_addr(node, slot), format.encode_key(key, base));
            self.mem.store(self.ptr_addr(node, slot), format.encode_ptr(ptr));
        }
        let n = entries.len();
        let header = if format.counted() { n as u64 } else { (1u64 << n) - 1 };
        self.mem.store(node, header);
        self.mem.end_independent();
    }
}

/// The buffers of [`BTree::load_node`], kept across the nodes of one bulk load: a node's
/// slot order and its bytes (zeroed for each node).
#[derive(Default)]
struct LoadScratch {
    slots: Vec<usize>,
    bytes: Vec<u8>,
}

/// Instructions of sorting `n` entries: `n log2 n` comparisons.
fn sort_instructions(n: usize) -> u64 {
    let n = n as u64;
    n * u64::from(n.max(1).ilog2() + 1) * instructions::SORT_COMPARE
}

/// Entries a node of `node_lines` lines holds: a header word, then key and value words.
fn node_capacity(node_lines: u32) -> usize {
    ((u64::from(node_lines) * LINE_BYTES - WORD) / (2 * WORD)) as usize
}

/// A node's capacity at `node_lines` lines, and the entries a bulk load puts in it.
pub(crate) fn node_fill(node_lines: u32, fill: f64) -> (usize, usize) {
    let cap = node_capacity(node_lines);
    (cap, entries_per_node(cap, fill))
}

/// Nodes of a tree bulk-loaded with `entries` at `fill` ([`BTree::bulk_load`]): the
/// leaves, then each inner level, up to the root.
pub fn bulk_loaded_nodes(node_lines: u32, entries: u64, fill: f64) -> u64 {
    let per_node = node_fill(node_lines, fill).1 as u64;
    let inner_per_node = per_node.max(2);
    let mut level = entries.div_ceil(per_node).max(1);
    let mut nodes = level;
    while level > 1 {
        level = level.div_ceil(inner_per_node);
        nodes = nodes.saturating_add(level);
    }
    nodes
}

/// Entries per node of a bulk load: `fill` of `cap`, rounded, at least 1.
#[expect(
    clippy::cast_possible_truncation,
    reason = "fill is in (0, 1], checked by bulk_load, so the rounded product lies in [0, cap] and fits usize"
)]
fn entries_per_node(cap: usize, fill: f64) -> usize {
    ((cap as f64 * fill).round() as usize).clamp(1, cap)
}
