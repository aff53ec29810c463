"""Parameter sweeps: run a function at every point of a grid, on local processes or Dask.

``sweep(fn, grid)`` calls ``fn(**point)`` for every point and returns a
:class:`pandas.DataFrame` with one row per point, in grid order, whatever the executor and
the order in which points finish: the point's parameters, then the result's scalar fields.

Executors:

- ``None`` (the default): a :class:`concurrent.futures.ProcessPoolExecutor` on this
  machine, ``workers`` processes (default :func:`os.cpu_count`).
- a :class:`dask.distributed.Client`: every point is submitted to that cluster (local or
  multi-node) and gathered. Dask is imported only then (``pip install 'nvmdb[dask]'``).
- any other :class:`concurrent.futures.Executor` (a thread pool, your own process pool).

``fn`` travels as cloudpickle bytes (Dask uses cloudpickle itself), so a function defined
in a notebook or in a script's ``__main__``, a lambda or a closure works with every
executor. What it refers to by module (``nvmdb``, ``numpy``, ...) must be importable where
it runs: on a multi-node cluster, install nvmdb on every worker. Scripts that start
processes must guard their top level with ``if __name__ == "__main__":`` (Dask's
``LocalCluster`` with processes needs it; so do process pools on platforms that spawn).

Input files travel with the points: a grid value that is a path object
(``pathlib.Path``, ``nvmdb.InputFile``) names an input file, read where the sweep is
called (relative to its current directory). ``fn`` gets the path (a ``str``) of a copy
it can read: on this machine the file itself; on a Dask cluster a copy of its bytes,
sent once per file and written once per worker (under the worker's temporary directory).
``InputFile(path, shared=True)`` declares a file on storage every worker sees at the same
path: only its absolute path travels. A plain ``str`` is passed as it is.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import inspect
import itertools
import numbers
import os
import tempfile
import traceback
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import cloudpickle
import pandas as pd

from . import _cli

__all__ = ["InputFile", "SweepError", "sweep", "grid_points", "result_fields"]

Point = dict[str, Any]
Grid = Mapping[str, Sequence[Any]] | Sequence[Mapping[str, Any]]


class InputFile(os.PathLike[str]):
    """An input file of a sweep's points (a grid value): its bytes travel with the task
    to a Dask cluster, or, with ``shared=True``, only its absolute path (storage that
    every worker sees at the same path). A ``pathlib.Path`` grid value is the same as
    ``InputFile(path)``. The point's row shows the value as given."""

    def __init__(self, path: str | os.PathLike[str], shared: bool = False):
        self.path = os.fspath(path)
        self.shared = shared

    def __fspath__(self) -> str:
        return self.path

    def __repr__(self) -> str:
        return f"InputFile({self.path!r}{', shared=True' if self.shared else ''})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, InputFile) and (self.path, self.shared) == (other.path, other.shared)

    def __hash__(self) -> int:
        return hash((self.path, self.shared))


class SweepError(RuntimeError):
    """A point of a sweep failed (its function raised) or could not be run.

    ``index`` is the point's position in grid order, ``point`` its parameters, and
    ``worker_traceback`` the traceback text from where ``fn`` ran (also attached as a
    note, so it prints below the error).
    """

    def __init__(self, index: int, point: Point, message: str, worker_traceback: str | None = None):
        super().__init__(f"sweep point {index} {_describe(point)} failed: {message}")
        self.index = index
        self.point = point
        self.worker_traceback = worker_traceback
        if worker_traceback:
            self.add_note(f"traceback where the point ran:\n{worker_traceback.rstrip()}")


def grid_points(grid: Grid) -> list[Point]:
    """The points of ``grid``, in grid order.

    ``grid`` is either a dict of lists, whose points are the product of the lists in the
    dict's key order with the last key varying fastest (``{"a": [1, 2], "b": [3, 4]}``
    gives ``a=1,b=3``, ``a=1,b=4``, ``a=2,b=3``, ``a=2,b=4``), or a list of dicts, one
    point each, taken in list order; every point must have the first point's parameters.

    Raises ``ValueError`` for an empty grid, a key with no values or a point whose
    parameters differ from the first's, and ``TypeError`` for a grid value that is not a
    list (or tuple), a point that is not a dict, or a parameter name that is not a str.
    """
    if isinstance(grid, Mapping):
        return _product_points(grid)
    if isinstance(grid, Sequence) and not isinstance(grid, (str, bytes)):
        return _listed_points(grid)
    raise TypeError(f"grid must be a dict of lists or a list of dicts, not {type(grid).__name__}")


def _product_points(grid: Mapping[str, Sequence[Any]]) -> list[Point]:
    if not grid:
        raise ValueError("the grid is empty: give at least one parameter with values")
    for key, values in grid.items():
        _check_name(key)
        if not isinstance(values, (list, tuple)):
            raise TypeError(
                f"grid value of {key!r} must be a list of values, not {type(values).__name__}"
                f" (write [{values!r}] for a single value)"
            )
        if not values:
            raise ValueError(f"grid value of {key!r} is an empty list: the grid has no points")
    keys = list(grid)
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*grid.values())]


def _listed_points(grid: Sequence[Mapping[str, Any]]) -> list[Point]:
    if not grid:
        raise ValueError("the grid is empty: give at least one point")
    points: list[Point] = []
    names: list[str] = []
    for index, point in enumerate(grid):
        if not isinstance(point, Mapping):
            raise TypeError(f"grid point {index} must be a dict of parameters, not {type(point).__name__}")
        if index == 0:
            names = list(point)
            for name in names:
                _check_name(name)
        missing = [name for name in names if name not in point]
        extra = [name for name in point if name not in names]
        if missing or extra:
            parts = []
            if missing:
                parts.append(f"lacks {', '.join(map(repr, missing))}")
            if extra:
                parts.append(f"has {', '.join(map(repr, extra))} that point 0 lacks")
            raise ValueError(f"grid point {index} {_describe(dict(point))} {' and '.join(parts)}")
        points.append({name: point[name] for name in names})
    return points


def _check_name(name: object) -> None:
    if not isinstance(name, str):
        raise TypeError(f"parameter names must be str (they are keyword arguments), not {name!r}")


def _is_scalar(value: object) -> bool:
    return value is None or isinstance(value, (str, bool, numbers.Number))


def result_fields(result: object) -> dict[str, Any]:
    """The columns a result gives its row.

    A dict gives its scalar values (int, float, str, bool, None and other numbers such
    as numpy scalars) under their keys, and the values of nested dicts under dotted names
    (``{"config": {"seed": 1}}`` gives ``config.seed``); lists and every other value are
    left out. Any other scalar result gives one column, ``result``. Raises ``TypeError``
    for a result that is neither (a list, an object) and ``ValueError`` when two fields
    get the same name (``{"a.b": 1, "a": {"b": 2}}``).
    """
    if isinstance(result, Mapping):
        fields: dict[str, Any] = {}
        _flatten(result, "", fields)
        return fields
    if _is_scalar(result):
        return {"result": result}
    raise TypeError(f"the result is a {type(result).__name__}: return a dict or a scalar (int, float, str, bool, None)")


def _flatten(mapping: Mapping[Any, Any], prefix: str, out: dict[str, Any]) -> None:
    for key, value in mapping.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            _flatten(value, f"{name}.", out)
        elif _is_scalar(value):
            if name in out:
                raise ValueError(f"the result gives the field {name!r} twice (a dotted key and a nested dict)")
            out[name] = value


# What a worker sends back for a point: ("ok", fields) or ("error", message, traceback).
Outcome = tuple[Any, ...]

# An input file as it travels to a Dask worker: its name, the SHA-256 of its bytes, and
# the bytes (a Dask future of them on the client, the bytes themselves on the worker).
Sent = tuple[str, str, Any]


def _local_inputs(point: Point) -> Point:
    """``point`` with each input file (a path object) as the absolute path of the file."""
    return {k: os.path.abspath(os.fspath(v)) if isinstance(v, os.PathLike) else v for k, v in point.items()}


def _is_shared(value: object) -> bool:
    return isinstance(value, InputFile) and value.shared


def _materialise(sent: Sent) -> str:
    """A sent input file written once under this machine's temporary directory (keyed by
    its digest; written beside, then renamed), and its path."""
    name, digest, data = sent
    directory = os.path.join(tempfile.gettempdir(), "nvmdb-sweep-inputs", digest)
    path = os.path.join(directory, name)
    if not os.path.exists(path):
        os.makedirs(directory, exist_ok=True)
        partial = f"{path}.{uuid.uuid4().hex}.partial"
        with open(partial, "wb") as f:
            f.write(data)
        os.replace(partial, path)
    return path


def _dask_task(fn: Callable[..., Any], point: Point, sent: dict[str, Sent]) -> Outcome:
    """A point on a Dask worker: its sent input files written there, then evaluated."""
    try:
        local = {**point, **{name: _materialise(file) for name, file in sent.items()}}
    except Exception as error:  # reported with the point named
        return ("error", f"{type(error).__name__}: {error}", traceback.format_exc())
    return _evaluate(fn, local)


def _evaluate(fn: Callable[..., Any], point: Point) -> Outcome:
    """Runs one point where the executor runs it and reduces the result to its fields."""
    # The sweep shows its own bar of points: a function's bar of its steps is left off,
    # unless the point sets it.
    if "progress" not in point and _takes_progress(fn):
        point = {**point, "progress": False}
    try:
        fields = result_fields(fn(**point))
    except Exception as error:  # reported to the caller with the point named
        return ("error", f"{type(error).__name__}: {error}", traceback.format_exc())
    # A result that echoes a parameter (ssd_replay's "trace", "format") gives no column.
    for name in [name for name in fields if name in point]:
        if fields[name] != point[name]:
            message = (
                f"the result's field {name!r} = {fields[name]!r} has the name of a parameter whose value is"
                f" {point[name]!r}; rename it in the function"
            )
            return ("error", message, None)
        del fields[name]
    return ("ok", fields)


def _takes_progress(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` has a ``progress`` keyword (nvmdb's functions of one simulation)."""
    try:
        return "progress" in inspect.signature(fn).parameters
    except (TypeError, ValueError):  # a callable with no signature to read
        return False


# The sweep's function in a worker of the default process pool, set once per process.
_worker_fn: Callable[..., Any] | None = None


def _init_worker(fn_bytes: bytes) -> None:
    global _worker_fn
    _worker_fn = cloudpickle.loads(fn_bytes)


def _pool_task(point_bytes: bytes) -> Outcome:
    assert _worker_fn is not None, "process pool worker started without the sweep's function"
    return _evaluate(_worker_fn, cloudpickle.loads(point_bytes))


def _executor_task(fn_bytes: bytes, point_bytes: bytes) -> Outcome:
    return _evaluate(cloudpickle.loads(fn_bytes), cloudpickle.loads(point_bytes))


def sweep(
    fn: Callable[..., Any],
    grid: Grid,
    executor: Any = None,
    *,
    workers: int | None = None,
    progress: bool | None = None,
    description: str = "sweep",
    on_error: str = "raise",
) -> pd.DataFrame:
    """Runs ``fn(**point)`` at every point of ``grid`` and returns one row per point.

    Parameters
    ----------
    fn:
        The function to call with each point's parameters as keyword arguments. It may be
        defined anywhere (a notebook, a script's ``__main__``, a lambda): it is sent to
        the workers with cloudpickle. It returns a dict or a scalar.
    grid:
        A dict of lists (their product, in the dict's key order, last key fastest) or a
        list of dicts (one point each, in list order). See :func:`grid_points`. A path
        object among the values is an input file (see the module): ``fn`` gets a ``str``
        path it can read, on whichever machine the point runs.
    executor:
        ``None`` for local processes; a ``dask.distributed.Client`` to run on its cluster;
        or a ``concurrent.futures.Executor``.
    workers:
        Processes of the default local executor (default ``os.cpu_count()``); only with
        ``executor=None``.
    progress:
        A progress bar of completed points on stderr (tqdm; a widget in Jupyter).
        ``None`` (default): shown only when stderr is a terminal or in a Jupyter kernel,
        so logs and pipes get nothing; ``True``: always; ``False``: never.
    description:
        The progress bar's label.
    on_error:
        ``"raise"`` (default): the first failing point (in grid order) raises
        :class:`SweepError` and the sweep stops. ``"collect"``: every point runs, and the
        frame gets a last column ``error``: ``None`` for a point that ran, the error
        (``"KeyError: 'x'"``, a lost worker, ...) for one that failed, whose result
        columns are then missing.

    Returns
    -------
    pandas.DataFrame
        Row ``i`` is the ``i``-th point in grid order (index 0..n-1). Columns: the
        parameters in grid order, then the result fields (see :func:`result_fields`;
        those equal to a parameter of the same name left out) in the order they first
        appear; a field some results lack is missing (NaN/None) in their rows. The same
        grid and function (with its randomness seeded from the point) give the same
        frame on every executor. On Dask, each point's task key names the point
        (``fn(a=1, b='x')-TOKEN-INDEX``).

    Raises
    ------
    ValueError, TypeError
        A malformed grid (see :func:`grid_points`), a bad ``workers``, ``on_error`` or
        executor, or an input file that cannot be read, before any point runs.
    SweepError
        A point's function raised, returned something other than a dict or a scalar, or
        returned a field named like a parameter with a different value (rename it in
        ``fn``: the frame would otherwise hold two columns of one name; a field equal to
        its parameter, as ``ssd_replay``'s ``trace``, is dropped), or its worker was
        lost. The sweep stops (points not yet started are cancelled, running ones
        finish); if several points failed, the one earliest in grid order is reported.
    """
    points = grid_points(grid)
    if on_error not in ("raise", "collect"):
        raise ValueError(f'on_error must be "raise" or "collect", not {on_error!r}')
    if workers is not None:
        if executor is not None:
            raise ValueError("workers= applies only to the default local executor (executor=None)")
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValueError(f"workers must be a positive int, not {workers!r}")
    distributed = None if executor is None or isinstance(executor, concurrent.futures.Executor) else (
        _dask_distributed(executor)
    )
    files = _read_inputs(points) if distributed is not None else {}
    collect = on_error == "collect"
    with _cli.progress_bar(len(points), description, progress) as bar:
        outcomes = _run(fn, points, executor, distributed, files, workers, bar, collect)
    return _frame(points, outcomes, collect)


def _read_inputs(points: list[Point]) -> dict[str, tuple[str, str, bytes]]:
    """The bytes of every input file the points name that is not shared, by its absolute
    path: (name, SHA-256, bytes). A file that cannot be read raises ``OSError`` now."""
    files: dict[str, tuple[str, str, bytes]] = {}
    for point in points:
        for value in point.values():
            if isinstance(value, os.PathLike) and not _is_shared(value):
                path = os.path.abspath(os.fspath(value))
                if path not in files:
                    with open(path, "rb") as f:
                        data = f.read()
                    files[path] = (os.path.basename(path), hashlib.sha256(data).hexdigest(), data)
    return files


def _task_key(fn: Callable[..., Any], point: Point, token: str, index: int) -> str:
    """A Dask task key that names the point: ``fn(a=1, b='x')-TOKEN-INDEX``."""
    name = getattr(fn, "__name__", type(fn).__name__)
    return f"{name}{_describe(point)}-{token}-{index}"


def _run(
    fn: Callable[..., Any],
    points: list[Point],
    executor: Any,
    distributed: Any,
    files: dict[str, tuple[str, str, bytes]],
    workers: int | None,
    bar: Any,
    collect: bool,
) -> list[Outcome | None]:
    if executor is None:
        fn_bytes = cloudpickle.dumps(fn)
        with concurrent.futures.ProcessPoolExecutor(
            max_workers=workers or os.cpu_count(), initializer=_init_worker, initargs=(fn_bytes,)
        ) as pool:
            futures = [pool.submit(_pool_task, cloudpickle.dumps(_local_inputs(point))) for point in points]
            return _collect(futures, concurrent.futures.as_completed(futures), _cancel_local, points, bar, collect)
    if distributed is None:
        fn_bytes = cloudpickle.dumps(fn)
        futures = [executor.submit(_executor_task, fn_bytes, cloudpickle.dumps(_local_inputs(point))) for point in points]
        return _collect(futures, concurrent.futures.as_completed(futures), _cancel_local, points, bar, collect)
    # Each input file's bytes go to the cluster once; each task names those it needs.
    scattered = {path: (name, digest, executor.scatter(data, hash=False)) for path, (name, digest, data) in files.items()}
    token = uuid.uuid4().hex[:8]
    futures = []
    for index, point in enumerate(points):
        sent = {
            name: scattered[os.path.abspath(os.fspath(value))]
            for name, value in point.items()
            if isinstance(value, os.PathLike) and not _is_shared(value)
        }
        plain = {name: value for name, value in _local_inputs(point).items() if name not in sent}
        key = _task_key(fn, point, token, index)
        futures.append(executor.submit(_dask_task, fn, plain, sent, key=key, pure=False))
    return _collect(futures, distributed.as_completed(futures), executor.cancel, points, bar, collect)


def _dask_distributed(executor: Any) -> Any:
    """The ``distributed`` module if ``executor`` is its Client; imported only here."""
    if type(executor).__module__.split(".")[0] == "distributed":
        import distributed

        if isinstance(executor, distributed.Client):
            return distributed
    raise TypeError(
        "executor must be None, a dask.distributed.Client or a concurrent.futures.Executor,"
        f" not {type(executor).__name__}"
    )


def _cancel_local(futures: list[Any]) -> None:
    for future in futures:
        future.cancel()


def _collect(
    futures: list[Any],
    completed: Iterator[Any],
    cancel: Callable[[list[Any]], None],
    points: list[Point],
    bar: Any,
    collect: bool,
) -> list[Outcome | None]:
    """Each point's outcome in grid order; on a failure, unless ``collect``, the earliest
    failed point raised."""
    index_of = {id(future): index for index, future in enumerate(futures)}
    outcomes: list[Outcome | None] = [None] * len(futures)
    failed = False
    try:
        for future in completed:
            index = index_of[id(future)]
            outcome = outcomes[index] = _outcome(future)
            bar.update(1)
            if outcome[0] != "ok" and not collect:
                failed = True
                cancel([f for f in futures if not f.done()])
                break
    except BaseException:
        cancel([f for f in futures if not f.done()])
        raise
    if failed:
        _wait_running(futures, outcomes)
        _raise_first_failure(outcomes, points)
    return outcomes


def _outcome(future: Any) -> Outcome:
    try:
        outcome: Outcome = future.result()
        return outcome
    except Exception as error:  # the executor could not run the point (a worker died, ...)
        return ("error", f"{type(error).__name__}: {error}", None)


def _wait_running(futures: list[Any], outcomes: list[Outcome | None]) -> None:
    """Waits for the points already running when the sweep stopped, to rank failures."""
    for index, future in enumerate(futures):
        if outcomes[index] is None and not future.cancelled():
            try:
                outcomes[index] = future.result()
            except (Exception, asyncio.CancelledError):  # cancelled or lost: it has no outcome
                continue


def _raise_first_failure(outcomes: list[Outcome | None], points: list[Point]) -> None:
    for index, outcome in enumerate(outcomes):
        if outcome is not None and outcome[0] != "ok":
            raise SweepError(index, points[index], outcome[1], outcome[2])


def _frame(points: list[Point], outcomes: list[Outcome | None], collect: bool) -> pd.DataFrame:
    parameters = list(points[0])
    fields: dict[str, None] = {}
    rows = []
    for point, outcome in zip(points, outcomes, strict=True):
        assert outcome is not None, "a point without an outcome reached the frame"
        if outcome[0] == "ok":
            result = outcome[1]
            fields.update(dict.fromkeys(result))
            rows.append({**point, **result, **({"error": None} if collect else {})})
        else:
            assert collect, "a failed point reached the frame"
            rows.append({**point, "error": outcome[1]})
    if collect and "error" in fields:
        raise ValueError("a result has a field named 'error', the column that on_error='collect' adds; rename it")
    columns = parameters + list(fields) + (["error"] if collect else [])
    return pd.DataFrame(rows, columns=columns)


def _describe(point: Mapping[str, Any]) -> str:
    text = ", ".join(f"{key}={value!r}" for key, value in point.items())
    return f"({text[:200]}{'...' if len(text) > 200 else ''})"
