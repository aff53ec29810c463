"""The sweep benchmark: one sweep of 64 ``nvmdb.ssd_replay`` points, on 1 local worker
process, then on 2, then (``--dask``) on a Dask ``LocalCluster`` of 2 worker processes;
the times and each one's speed-up over the 1-worker run.

The points replay the vendored TPC-C trace ``data/mqsim/tpcc-small.trace`` (DiskSim; or
``--trace FILE:FORMAT``) on the default SSD (thesis Table 5.1: 40 GB of flash) with the
PCM log buffer: PCM sizes 1 to 128 MiB, both replacement policies, seeds 1 to 4
(8 x 2 x 4 = 64 points). Each time is the wall-clock time of the whole ``nvmdb.sweep``
call, starting the process pool included (a Dask cluster is started before its clock
starts: a cluster is usually started once for many sweeps); with ``--rounds N`` the
fastest of N. Every run's frame is checked to equal the 1-worker run's (the sweep's rows
are deterministic), so a speed-up never comes from doing different work.

Usage (from the repository root; BENCHMARKS.md says how its rows were taken)::

    python python/examples/bench_sweep.py [--dask] [--rounds N] [--json]

Flags:

- ``--trace FILE:FORMAT``: the trace to replay (default the vendored one above).
- ``--dask``: also time the sweep on a 2-worker ``LocalCluster`` (needs ``nvmdb[dask]``).
- ``--rounds N``: time each configuration N times and keep the fastest (default 1).
- ``--json``: print one JSON object instead of the table.

The load average is printed with the times: wall-clock ratios mean little on a loaded
machine. Bad flags print one line naming the flag and exit with status 2.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pandas.testing as pdt

import nvmdb
from nvmdb.sweep import sweep

# The examples' shared flag parsing, beside this script.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from example_flags import Parser, positive_int, trace_arg  # noqa: E402

DEFAULT_TRACE = Path(__file__).resolve().parents[2] / "data" / "mqsim" / "tpcc-small.trace"
GRID = {
    "pcm_mb": [1, 2, 4, 8, 16, 32, 64, 128],
    "replacement": ["least-popular", "lru"],
    "seed": [1, 2, 3, 4],
}


def replay_point(trace: str, format: str, pcm_mb: int, replacement: str, seed: int) -> dict:
    """One replay of ``trace`` with the PCM log buffer of ``pcm_mb`` MiB."""
    config = {"seed": seed, "buffer.kind": "pcm-log", "buffer.pcm_mb": pcm_mb, "buffer.replacement": replacement}
    return nvmdb.ssd_replay(trace, format, config=config)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = Parser(prog="bench_sweep.py", description="nvmdb.sweep of 64 ssd_replay points on 1 and 2 workers")
    parser.add_argument("--trace", type=trace_arg, metavar="FILE:FORMAT", help="the trace (default tpcc-small)")
    parser.add_argument("--dask", action="store_true", help="also time a 2-worker Dask LocalCluster")
    parser.add_argument("--rounds", type=positive_int, default=1, help="keep the fastest of N runs")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    args = parser.parse_args(argv)
    if args.trace is None:
        if not DEFAULT_TRACE.is_file():
            parser.error(f"--trace: not given, and the default trace {DEFAULT_TRACE} is not there")
        args.trace = (str(DEFAULT_TRACE), "disksim")
    return args


def timed(run: Callable[[], pd.DataFrame], rounds: int) -> tuple[float, pd.DataFrame]:
    """The fastest of ``rounds`` runs, seconds, and the frame of the last."""
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        frame = run()
        best = min(best, time.perf_counter() - start)
    return best, frame


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    trace, format = args.trace
    grid = {"trace": [trace], "format": [format], **GRID}
    load_before = os.getloadavg()[0]
    runs: list[dict[str, Any]] = []

    def local(workers: int) -> pd.DataFrame:
        return sweep(replay_point, grid, workers=workers, progress=False)

    baseline_s, baseline = timed(lambda: local(1), args.rounds)
    runs.append({"executor": "local processes", "workers": 1, "seconds": baseline_s})
    two_s, two = timed(lambda: local(2), args.rounds)
    pdt.assert_frame_equal(two, baseline)
    runs.append({"executor": "local processes", "workers": 2, "seconds": two_s})
    if args.dask:
        from distributed import Client, LocalCluster

        with (
            LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
            Client(cluster) as client,
        ):
            dask_s, on_dask = timed(lambda: sweep(replay_point, grid, client, progress=False), args.rounds)
        pdt.assert_frame_equal(on_dask, baseline)
        runs.append({"executor": "dask LocalCluster", "workers": 2, "seconds": dask_s})
    for run in runs:
        run["speedup"] = baseline_s / run["seconds"]
    report = {
        "points": len(baseline),
        "trace": Path(trace).name,
        "rounds": args.rounds,
        "cpus": os.cpu_count(),
        "load_average_1min": {"before": load_before, "after": os.getloadavg()[0]},
        "baseline": "local processes, 1 worker",
        "runs": runs,
        "frames_identical": True,
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"nvmdb.sweep of {report['points']} ssd_replay points ({report['trace']}), fastest of {args.rounds}")
    print(f"load average (1 min) {load_before:.2f} before, {report['load_average_1min']['after']:.2f} after")
    for run in runs:
        name = f"{run['executor']}, {run['workers']} worker{'s' if run['workers'] > 1 else ''}"
        print(f"  {name:<36} {run['seconds']:8.2f} s   {run['speedup']:5.2f}x")
    print("every frame equal to the 1-worker run's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
