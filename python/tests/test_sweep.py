"""nvmdb.sweep: grid forms and order, result fields, errors, and the same frame from every
executor (local processes, a thread pool, a 2-worker Dask LocalCluster), including for
functions defined in a script's ``__main__``. Plain-Python functions only: these tests do
not need the extension."""

from __future__ import annotations

import concurrent.futures
import importlib
import importlib.util
import json
import os
import random
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest

from nvmdb.sweep import SweepError, grid_points, result_fields, sweep

# The directory holding the `nvmdb` package these tests import, so that Dask's worker
# processes and the script below import the same one.
# (`nvmdb.sweep` may be the function once the package exports it: ask for the module.)
PACKAGE_PARENT = str(Path(importlib.import_module("nvmdb.sweep").__file__).resolve().parents[1])


def seeded(workload: str, size: int, seed: int) -> dict:
    """A result with randomness drawn from the point's own seed, and fields of every kind."""
    rng = random.Random(f"{workload}/{size}/{seed}")
    draws = [rng.random() for _ in range(size)]
    return {
        "mean": sum(draws) / size,
        "hits": sum(d > 0.5 for d in draws),
        "label": f"{workload}-{size}",
        "ok": True,
        "missing": None,
        "draws": draws,
        "stats": {"max": max(draws), "inner": {"first": draws[0]}, "all": draws},
    }


SEEDED_GRID = {"workload": ["t1", "t3"], "size": [1, 5, 20], "seed": [1, 2]}


def expected_seeded_frame() -> pd.DataFrame:
    rows = []
    for point in grid_points(SEEDED_GRID):
        r = seeded(**point)
        rows.append(
            {
                **point,
                "mean": r["mean"],
                "hits": r["hits"],
                "label": r["label"],
                "ok": True,
                "missing": None,
                "stats.max": r["stats"]["max"],
                "stats.inner.first": r["stats"]["inner"]["first"],
            }
        )
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def dask_client():
    distributed = pytest.importorskip("distributed")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [PACKAGE_PARENT, os.environ.get("PYTHONPATH")])))
        with (
            distributed.LocalCluster(
                n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
            ) as cluster,
            distributed.Client(cluster) as client,
        ):
            yield client


# Grid forms and order.


def test_dict_grid_is_the_product_in_key_order_last_key_fastest():
    points = grid_points({"a": [1, 2], "b": ["x", "y", "z"]})
    assert points == [
        {"a": 1, "b": "x"},
        {"a": 1, "b": "y"},
        {"a": 1, "b": "z"},
        {"a": 2, "b": "x"},
        {"a": 2, "b": "y"},
        {"a": 2, "b": "z"},
    ]
    assert grid_points({"b": ("x", "y"), "a": [1]}) == [{"b": "x", "a": 1}, {"b": "y", "a": 1}]


def test_list_grid_keeps_list_order_and_first_points_parameter_order():
    points = grid_points([{"b": 2, "a": 1}, {"a": 3, "b": 4}])
    assert points == [{"b": 2, "a": 1}, {"b": 4, "a": 3}]
    assert [list(p) for p in points] == [["b", "a"], ["b", "a"]]


def test_frame_rows_follow_grid_order_not_completion_order():
    # Each point finishes only after the point after it: completion is in reverse.
    points = grid_points({"i": [0, 1, 2, 3]})
    frame = _reverse_completion_sweep(points)
    assert COMPLETED == [3, 2, 1, 0]
    assert frame["i"].tolist() == [0, 1, 2, 3]
    assert frame["square"].tolist() == [0, 1, 4, 9]
    assert frame.index.tolist() == [0, 1, 2, 3]


COMPLETED: list[int] = []
DONE = [threading.Event() for _ in range(5)]


def finish_after_next(i: int) -> dict:
    assert DONE[i + 1].wait(timeout=30), "the next point never finished"
    COMPLETED.append(i)
    DONE[i].set()
    return {"square": i * i}


def _reverse_completion_sweep(points):
    COMPLETED.clear()
    for event in DONE:
        event.clear()
    DONE[len(points)].set()
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(points)) as pool:
        return sweep(finish_after_next, points, pool, progress=False)


# Result fields.


def test_result_fields_flattens_nested_dicts_and_skips_lists():
    fields = result_fields(
        {
            "n": 3,
            "x": 0.5,
            "s": "a",
            "b": False,
            "none": None,
            "np": np.int64(7),
            "list": [1, 2],
            "tuple": (1,),
            "obj": object(),
            "nested": {"k": 1, "deeper": {"z": "q"}, "skipped": [3]},
        }
    )
    assert fields == {
        "n": 3,
        "x": 0.5,
        "s": "a",
        "b": False,
        "none": None,
        "np": 7,
        "nested.k": 1,
        "nested.deeper.z": "q",
    }
    assert list(fields) == ["n", "x", "s", "b", "none", "np", "nested.k", "nested.deeper.z"]


def test_scalar_results_go_to_a_result_column():
    for value in [1, 2.5, "s", True, None, np.float64(0.25)]:
        assert result_fields(value) == {"result": value}
    frame = sweep(lambda x: x * 2, [{"x": 1}, {"x": 5}], workers=2, progress=False)
    pdt.assert_frame_equal(frame, pd.DataFrame({"x": [1, 5], "result": [2, 10]}))


def test_result_fields_refuses_other_results_and_duplicate_names():
    with pytest.raises(TypeError, match="the result is a list"):
        result_fields([1, 2])
    with pytest.raises(ValueError, match="'a.b' twice"):
        result_fields({"a.b": 1, "a": {"b": 2}})


def test_fields_some_results_lack_are_missing_and_columns_in_first_appearance_order():
    def fn(n):
        return {"even": n} if n % 2 == 0 else {"odd": n, "even": None}

    frame = sweep(fn, {"n": [1, 2, 3]}, workers=2, progress=False)
    assert list(frame.columns) == ["n", "odd", "even"]
    assert frame["odd"].tolist()[0] == 1 and pd.isna(frame["odd"].tolist()[1])
    assert frame["even"].tolist()[1] == 2


def test_local_sweep_gives_the_parameters_then_the_scalar_fields():
    frame = sweep(seeded, SEEDED_GRID, workers=2, progress=False)
    pdt.assert_frame_equal(frame, expected_seeded_frame())


# Executors: the same frame from each.


def test_thread_pool_executor_gives_the_local_frame():
    with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
        frame = sweep(seeded, SEEDED_GRID, pool, progress=False)
    pdt.assert_frame_equal(frame, expected_seeded_frame())


def test_dask_local_cluster_gives_the_local_frame(dask_client):
    local = sweep(seeded, SEEDED_GRID, progress=False)
    on_dask = sweep(seeded, SEEDED_GRID, dask_client, progress=False)
    pdt.assert_frame_equal(on_dask, local)
    pdt.assert_frame_equal(on_dask, expected_seeded_frame())
    # Both workers ran points, so the frame was gathered from two processes.
    workers = sweep(lambda i: os.getpid(), {"i": list(range(40))}, dask_client, progress=False)
    assert workers["result"].nunique() == 2


def test_dask_failing_point_is_named(dask_client):
    with pytest.raises(SweepError, match=r"sweep point 2 \(x=0\) failed: ZeroDivisionError") as info:
        sweep(lambda x: 1 / x, {"x": [2, 1, 0, 4]}, dask_client, progress=False)
    assert info.value.index == 2 and info.value.point == {"x": 0}
    assert "ZeroDivisionError" in info.value.worker_traceback


def slow_unless_first(i: int) -> int:
    if i == 0:
        raise RuntimeError("first point")
    time.sleep(0.05)
    return i


def test_a_failure_stops_the_points_not_yet_started(dask_client):
    points = {"i": list(range(60))}
    with pytest.raises(SweepError, match=r"sweep point 0 \(i=0\) failed: RuntimeError: first point"):
        sweep(slow_unless_first, points, dask_client, progress=False)
    with pytest.raises(SweepError, match=r"sweep point 0 \(i=0\) failed: RuntimeError: first point"):
        sweep(slow_unless_first, points, workers=2, progress=False)


SCRIPT = textwrap.dedent(
    """
    import json, random, sys

    from distributed import Client, LocalCluster

    from nvmdb.sweep import sweep


    def interactive(kind, n):
        # Defined in __main__: only cloudpickle can send it to a worker.
        rng = random.Random(f"{kind}:{n}")
        return {"value": rng.randint(0, 10**9), "scaled": SCALE * n}


    SCALE = 3

    if __name__ == "__main__":
        grid = {"kind": ["a", "b"], "n": [1, 2, 3]}
        local = sweep(interactive, grid, progress=False)
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
            with Client(cluster) as client:
                on_dask = sweep(interactive, grid, client, progress=False)
        json.dump({"local": local.to_dict("list"), "dask": on_dask.to_dict("list")}, sys.stdout)
    """
)


def test_function_defined_in_a_scripts_main_runs_locally_and_on_dask(tmp_path):
    pytest.importorskip("distributed")
    script = tmp_path / "interactive_sweep.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [PACKAGE_PARENT, os.environ.get("PYTHONPATH")])))
    run = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120
    )
    assert run.returncode == 0, run.stderr
    frames = json.loads(run.stdout)
    expected = {"kind": [], "n": [], "value": [], "scaled": []}
    for kind in ["a", "b"]:
        for n in [1, 2, 3]:
            expected["kind"].append(kind)
            expected["n"].append(n)
            expected["value"].append(random.Random(f"{kind}:{n}").randint(0, 10**9))
            expected["scaled"].append(3 * n)
    assert frames["local"] == expected
    assert frames["dask"] == expected


# Errors.


@pytest.mark.parametrize(
    ("grid", "error", "message"),
    [
        ({}, ValueError, "the grid is empty"),
        ([], ValueError, "the grid is empty"),
        ({"a": [1], "b": []}, ValueError, "grid value of 'b' is an empty list"),
        ({"a": 5}, TypeError, r"grid value of 'a' must be a list of values, not int \(write \[5\]"),
        ({"a": "abc"}, TypeError, "grid value of 'a' must be a list of values, not str"),
        ({"a": {1, 2}}, TypeError, "grid value of 'a' must be a list of values, not set"),
        ([{"a": 1}, 7], TypeError, "grid point 1 must be a dict of parameters, not int"),
        ([{"a": 1, "b": 2}, {"a": 3}], ValueError, r"grid point 1 \(a=3\) lacks 'b'"),
        ([{"a": 1}, {"a": 3, "c": 4}], ValueError, r"grid point 1 \(a=3, c=4\) has 'c' that point 0 lacks"),
        ({1: [1]}, TypeError, "parameter names must be str"),
        ("a", TypeError, "grid must be a dict of lists or a list of dicts, not str"),
    ],
)
def test_malformed_grids_are_refused(grid, error, message):
    with pytest.raises(error, match=message):
        sweep(seeded, grid, progress=False)


def test_bad_workers_and_executors_are_refused():
    with pytest.raises(ValueError, match="workers must be a positive int, not 0"):
        sweep(seeded, SEEDED_GRID, workers=0)
    with pytest.raises(ValueError, match="workers= applies only to the default local executor"):
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            sweep(seeded, SEEDED_GRID, pool, workers=2)
    with pytest.raises(TypeError, match="executor must be None, a dask.distributed.Client or a concurrent"):
        sweep(seeded, SEEDED_GRID, "dask", progress=False)


def fails_on_three(x: int) -> dict:
    if x == 3:
        raise KeyError("no such configuration")
    return {"y": x}


def test_failing_point_is_named_with_the_workers_traceback():
    with pytest.raises(SweepError, match=r"sweep point 2 \(x=3\) failed: KeyError: 'no such configuration'") as info:
        sweep(fails_on_three, {"x": [1, 2, 3, 4]}, workers=2, progress=False)
    assert "in fails_on_three" in info.value.worker_traceback
    assert any("traceback where the point ran" in note for note in info.value.__notes__)


def test_the_earliest_failing_point_in_grid_order_is_reported():
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        with pytest.raises(SweepError, match=r"sweep point 1 \(x=0\)"):
            sweep(lambda x: 1 // x, [{"x": 1}, {"x": 0}, {"x": 2}, {"x": 0}], pool, progress=False)


def test_result_fields_named_like_parameters_are_dropped_if_equal_and_refused_if_not():
    frame = sweep(lambda n, s: {"n": n, "s": s, "m": 2 * n}, {"n": [1, 2], "s": ["a"]}, workers=1, progress=False)
    pdt.assert_frame_equal(frame, pd.DataFrame({"n": [1, 2], "s": ["a", "a"], "m": [2, 4]}))
    message = r"sweep point 1 \(n=2\) failed: the result's field 'n' = 3 has the name of a parameter whose value is 2"
    with pytest.raises(SweepError, match=message):
        sweep(lambda n: {"n": n if n == 1 else 3}, {"n": [1, 2]}, workers=1, progress=False)


def test_results_that_are_neither_dicts_nor_scalars_fail_their_point():
    with pytest.raises(SweepError, match=r"sweep point 0 \(n=1\) failed: TypeError: the result is a list"):
        sweep(lambda n: [n], {"n": [1]}, workers=1, progress=False)


# Progress.


def test_progress_prints_only_when_asked_or_on_a_terminal(capfd):
    sweep(lambda n: n, {"n": [1, 2]}, workers=1)
    assert capfd.readouterr().err == ""  # stderr is not a terminal under pytest
    sweep(lambda n: n, {"n": [1, 2]}, workers=1, progress=True, description="points")
    assert "points: 100%" in capfd.readouterr().err
    sweep(lambda n: n, {"n": [1, 2]}, workers=1, progress=False)
    assert capfd.readouterr().err == ""


# The examples' flags (their sweeps need the extension; these checks stop before any point).

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def example(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name.removesuffix(".py"), EXAMPLES / name)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def exit_status(name: str, *args: str) -> int:
    with pytest.raises(SystemExit) as exit:
        example(name).main(list(args))
    return exit.value.code


def test_the_example_never_overwrites_its_png_without_force(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pcm_log_sweep.png").write_bytes(b"earlier")
    assert exit_status("pcm_log_sweep.py") == 2
    message = "pcm_log_sweep.py: --out pcm_log_sweep.png: the file exists; pass --force to overwrite it\n"
    assert capsys.readouterr().err == message
    assert (tmp_path / "pcm_log_sweep.png").read_bytes() == b"earlier"


@pytest.mark.parametrize(
    ("name", "args", "message"),
    [
        ("pcm_log_sweep.py", ["--workers", "0"], "pcm_log_sweep.py: argument --workers: '0' is not a positive integer"),
        ("pcm_log_sweep.py", ["--trace", "missing.trace:fiu"], "pcm_log_sweep.py: argument --trace: missing.trace:"),
        ("pcm_log_sweep.py", ["--out", "no/dir.png"], "pcm_log_sweep.py: --out no/dir.png: no such directory no"),
        ("bench_sweep.py", ["--rounds", "x"], "bench_sweep.py: argument --rounds: 'x' is not a positive integer"),
        ("bench_sweep.py", ["--trace", "t.trace:csv"], "bench_sweep.py: argument --trace: 't.trace:csv' is not FILE:"),
    ],
)
def test_the_examples_bad_flags_get_one_line_and_status_2(tmp_path, monkeypatch, capsys, name, args, message):
    monkeypatch.chdir(tmp_path)
    assert exit_status(name, *args) == 2
    out, err = capsys.readouterr()
    assert err.startswith(message) and err.count("\n") == 1, err
    assert out == "" and list(tmp_path.iterdir()) == []
