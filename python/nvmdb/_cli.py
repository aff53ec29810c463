"""Arguments and errors, in one place for every function of the package.

``@checked`` gives a function Python-native arguments: each keyword is checked against
its annotation when the function is called (``int``: any ``numbers.Integral``, numpy's
included, not ``bool``; ``float``: any ``numbers.Real``; ``bool``: ``bool`` or numpy's;
``str``; a path: ``str`` or ``os.PathLike``; a ``Mapping``; a ``Sequence[str]``) and
converted to the plain Python type, so a wrong type raises ``TypeError`` naming the
keyword before anything runs; it also records which keywords the caller gave
(``not_given``). ``command`` turns keywords into the CLI's flags, always as
``--flag=VALUE``, so a negative number or a value starting with ``-`` is read as the
flag's value; a keyword the caller did not give and that is still at its default is left
out, so the CLI sees the same command line as a shell user who typed only those flags
(the defaults are the CLI's: a test checks each), and a flag given where it has no effect
is refused in both. ``run`` calls the native module and rewrites a bad-input message so that it
names the keyword (``records``), not the CLI's flag (``--records <RECORDS>``).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import importlib.util
import inspect
import numbers
import os
import re
import sys
import types
import typing
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

from . import _native

F = TypeVar("F", bound=Callable[..., Any])


def _is_bool(value: object) -> bool:
    """A Python or numpy boolean."""
    kind = type(value)
    return isinstance(value, bool) or (kind.__module__ == "numpy" and kind.__name__ in ("bool", "bool_"))


def _kind(annotation: Any) -> tuple[str, bool]:
    """The kind of value an annotation asks for, and whether ``None`` is allowed."""
    args = typing.get_args(annotation) if typing.get_origin(annotation) in (typing.Union, types.UnionType) else ()
    members = [a for a in args if a is not type(None)] if args else [annotation]
    optional = len(members) < len(args)
    origins = {typing.get_origin(m) or m for m in members}
    if origins == {int}:
        return "int", optional
    if origins == {float}:
        return "float", optional
    if origins == {bool}:
        return "bool", optional
    if origins == {str}:
        return "str", optional
    if origins == {str, os.PathLike}:
        return "path", optional
    if origins == {str, int}:
        return "str or int", optional
    if origins <= {Mapping, dict}:
        return "mapping", optional
    if origins <= {Sequence, list}:
        return "list of str", optional
    raise AssertionError(f"no argument check for the annotation {annotation!r}")


def _convert(name: str, kind: str, optional: bool, value: Any) -> Any:
    """``value`` as the plain type of ``kind``; ``TypeError`` naming ``name`` if it is not one."""
    if value is None and optional:
        return None
    if kind in ("int", "str or int") and isinstance(value, numbers.Integral) and not _is_bool(value):
        return int(value)
    if kind == "float" and isinstance(value, numbers.Real) and not _is_bool(value):
        return float(value)
    if kind == "bool" and _is_bool(value):
        return bool(value)
    if kind in ("str", "str or int") and isinstance(value, str):
        return value
    if kind == "path" and isinstance(value, (str, os.PathLike)):
        path = os.fspath(value)
        if isinstance(path, str):
            return path
    if kind == "mapping" and isinstance(value, Mapping):
        return value
    if kind == "list of str" and isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        for item in value:
            if not isinstance(item, str):
                raise TypeError(f"{name} must be a list of str; it holds {type(item).__name__} {item!r}")
        return list(value)
    wanted = {
        "int": "an int",
        "float": "a real number",
        "bool": "True or False",
        "str": "a str",
        "path": "a path (str or os.PathLike)",
        "str or int": "a str or an int",
        "mapping": "a dict",
        "list of str": "a list of str",
    }[kind]
    none = " or None" if optional else ""
    raise TypeError(f"{name} must be {wanted}{none}, not {type(value).__name__} {value!r}"[:300])


# The keywords of the running ``@checked`` call that its caller left at their defaults,
# with those defaults (converted): ``command`` leaves them out of the command line.
_not_given: contextvars.ContextVar[Mapping[str, Any]] = contextvars.ContextVar("not_given", default={})


def checked(fn: F) -> F:
    """Checks and converts the keywords of ``fn`` by their annotations (see the module)."""
    signature = inspect.signature(fn)
    hints = typing.get_type_hints(fn)
    kinds = {name: _kind(hints[name]) for name in signature.parameters}

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        given = set(bound.arguments)
        bound.apply_defaults()
        converted = {name: _convert(name, *kinds[name], value) for name, value in bound.arguments.items()}
        token = _not_given.set({name: value for name, value in converted.items() if name not in given})
        try:
            return fn(**converted)
        finally:
            _not_given.reset(token)

    return typing.cast(F, wrapper)


def not_given(name: str, value: Any) -> bool:
    """Whether keyword ``name`` of the running call was left by its caller at its default,
    and ``value`` is still that default."""
    defaults = _not_given.get()
    return name in defaults and defaults[name] is value


def text(value: Any) -> str:
    """A converted value as the CLI reads it: ``true``/``false``, numbers as Python writes
    them (``0.75``, ``1e-05``), paths and text as they are."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def command(words: Sequence[str], flags: Mapping[str, Any], renamed: Mapping[str, str] | None = None) -> list[str]:
    """``words``, then ``--flag=VALUE`` per keyword (``True``: the switch given; ``False``
    and ``None``: not given; a keyword its caller did not give, at its default: not given),
    the flag named by ``renamed`` where it differs from the keyword."""
    args = list(words)
    for name, value in flags.items():
        flag = "--" + (renamed or {}).get(name, name).replace("_", "-")
        if value is None or value is False or not_given(name, value):
            continue
        args.append(flag if value is True else f"{flag}={text(value)}")
    return args


def show_progress(progress: bool | None) -> bool:
    """``progress`` resolved: ``None`` shows a bar only on a terminal or in Jupyter."""
    if progress is not None:
        return bool(progress)
    return sys.stderr.isatty() or _in_jupyter()


def _in_jupyter() -> bool:
    """Whether this code runs in a Jupyter kernel (an IPython shell that talks to a
    front end), not merely in a process that imported one's modules."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return type(shell).__name__ == "ZMQInteractiveShell"


def progress_bar(total: int, description: str, progress: bool | None) -> Any:
    """A tqdm bar on stderr: a widget in Jupyter when ipywidgets is installed (``pip
    install 'nvmdb[jupyter]'``), text otherwise, never a warning about it."""
    import tqdm.auto
    import tqdm.std

    bar = tqdm.auto.tqdm if importlib.util.find_spec("ipywidgets") is not None else tqdm.std.tqdm
    return bar(total=total, desc=description, disable=not show_progress(progress), file=sys.stderr)


@contextlib.contextmanager
def step_bar(description: str) -> Iterator[Callable[[int, int], None]]:
    """A bar of a single call's steps (requests, operations, ...): the count and its rate,
    a total only if the command knows one; yields the ``(done, total)`` callback."""
    bar = progress_bar(0, description, True)
    bar.total = None
    bar.unit = " steps"

    def update(done: int, total: int) -> None:
        bar.total = total or None
        bar.n = done
        bar.refresh()

    with bar:
        yield update


def run(
    args: list[str],
    keywords: Mapping[str, str],
    function: str,
    progress: Callable[[int, int], None] | None = None,
) -> str:
    """Runs ``nvmdb ARGS`` in this process (``_native.run``). A ``ValueError`` names the
    keyword (``keywords`` maps each flag to it) and says ``see help(nvmdb.FUNCTION)``."""
    try:
        return _native.run(args, progress)
    except ValueError as error:
        raise ValueError(keyword_message(str(error), keywords, function)) from None


def keyword_message(message: str, keywords: Mapping[str, str], function: str) -> str:
    """The CLI's line with its flags written as the function's keywords."""
    message = message.removeprefix("error: ")

    def keyword(match: re.Match[str]) -> str:
        return keywords.get(match.group(1), match.group(0))

    message = re.sub(r"'--([a-z0-9-]+)(?: <[A-Z_:]+>)?'", keyword, message)
    message = re.sub(r"(?<![\w-])--([a-z0-9-]+)(?: <[A-Z_:]+>)?", keyword, message)
    return message.replace("(see --help)", f"(see help(nvmdb.{function}))")
