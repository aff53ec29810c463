"""A sweep on a Dask cluster of separate processes, as on remote machines: a `dask
scheduler` and two `dask worker` processes started here, in a directory of their own, so
that a relative input path means nothing where the points run. The input file travels
with the points; on_error="collect" keeps the finished rows; task keys name the points."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pandas.testing as pdt
import pytest

import nvmdb

distributed = pytest.importorskip("distributed")

TRACE = "".join(f"W {i % 96 * 4096} 4096\nR {i % 64 * 4096} 4096\n" for i in range(400))
SMALL_SSD = {"flash.packages": 1, "flash.planes_per_package": 2, "flash.blocks_per_plane": 32, "ftl.overprovision": 0.2}


def dask_command() -> list[str]:
    """The `dask` command of this Python's environment."""
    beside = Path(sys.executable).with_name("dask")
    found = str(beside) if beside.exists() else shutil.which("dask")
    if found is None:
        pytest.skip("no dask command (pip install 'nvmdb[dask]')")
    return [found]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[distributed.Client]:
    """A scheduler and two single-threaded workers, each its own process, started in a
    directory that holds no input file."""
    where = tmp_path_factory.mktemp("cluster")
    scheduler_file = where / "scheduler.json"
    dask = dask_command()
    processes = [
        subprocess.Popen(
            [*dask, "scheduler", "--scheduler-file", str(scheduler_file), "--port", "0", "--no-dashboard"],
            cwd=where, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
    ]
    try:
        for _ in range(600):
            if scheduler_file.exists() and scheduler_file.read_text().strip():
                break
            time.sleep(0.1)
        address = json.loads(scheduler_file.read_text())["address"]
        for n in range(2):
            processes.append(
                subprocess.Popen(
                    [*dask, "worker", address, "--nworkers", "1", "--nthreads", "1", "--no-dashboard",
                     "--local-directory", str(where / f"worker-{n}"), "--name", f"worker-{n}"],
                    cwd=where, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                )
            )
        with distributed.Client(address) as client:
            client.wait_for_workers(2, timeout=120)
            yield client
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()


def test_a_sweep_with_relative_input_paths_runs_on_separate_workers(cluster, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("traces").mkdir()
    Path("traces/small.trace").write_text(TRACE)

    def point(trace: str, pcm_mb: int, seed: int) -> dict:
        config = {**SMALL_SSD, "buffer.kind": "pcm-log", "buffer.pcm_mb": pcm_mb, "seed": seed}
        result = nvmdb.ssd_replay(trace, "simple", config=config)
        time.sleep(0.2)  # long enough that the scheduler hands points to both workers
        return {**result, "pid": os.getpid()}

    grid = {"trace": [Path("traces/small.trace")], "pcm_mb": [1, 2, 4], "seed": [1, 2, 3, 4]}
    with distributed.get_task_stream(cluster) as stream:
        remote = nvmdb.sweep(point, grid, cluster, progress=False)
    local = nvmdb.sweep(point, grid, workers=2, progress=False)
    numbers = [c for c in local.columns if c not in ("pid",)]
    pdt.assert_frame_equal(remote[numbers], local[numbers])
    assert remote["trace"].tolist() == [Path("traces/small.trace")] * 12
    assert remote["host_page_writes"].gt(0).all()
    # Both workers ran points, and neither is this process.
    assert remote["pid"].nunique() == 2 and os.getpid() not in remote["pid"].tolist()
    keys = [task["key"] for task in stream.data]
    assert any(str(key).startswith("point(trace=PosixPath('traces/small.trace'), pcm_mb=4, seed=2)-") for key in keys)


def test_collect_keeps_the_finished_rows_and_names_the_failures(cluster, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("small.trace").write_text(TRACE)

    def point(trace: str, gc: str) -> dict:
        return nvmdb.ssd_replay(trace, "simple", config={**SMALL_SSD, "ftl.gc": gc})

    grid = {"trace": [Path("small.trace")], "gc": ["greedy", "lifo", "fifo"]}
    frame = nvmdb.sweep(point, grid, cluster, progress=False, on_error="collect")
    assert frame["gc"].tolist() == ["greedy", "lifo", "fifo"]
    assert frame["error"].isna().tolist() == [True, False, True]
    assert frame.loc[1, "error"].startswith("ValueError: ") and "lifo" in frame.loc[1, "error"]
    assert pd.isna(frame.loc[1, "host_page_writes"]) and frame.loc[[0, 2], "host_page_writes"].gt(0).all()
    with pytest.raises(nvmdb.SweepError, match=r"sweep point 1 \(trace=PosixPath\('small.trace'\), gc='lifo'\)"):
        nvmdb.sweep(point, grid, cluster, progress=False)


def test_a_shared_input_file_travels_as_its_absolute_path(cluster, tmp_path, monkeypatch):
    # The test's workers share this machine's file system: a shared path reaches them.
    monkeypatch.chdir(tmp_path)
    Path("shared.trace").write_text(TRACE)
    grid = {"trace": [nvmdb.InputFile("shared.trace", shared=True)], "n": [1, 2]}
    frame = nvmdb.sweep(lambda trace, n: {"path": trace}, grid, cluster, progress=False)
    assert frame["path"].tolist() == [str(tmp_path / "shared.trace")] * 2
