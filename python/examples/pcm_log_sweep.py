"""The PCM log buffer's lifetime and energy against PCM size and replacement policy.

Replays the thesis's TPC-C-like workloads (seed 000, Section 5.1.1: ``t1``, ``t2``,
``t3``, one model in three lengths) on a simulated SSD whose page-mapped FTL has the
thesis's PCM log buffer above it (``buffer.kind = "pcm-log"``, Section 3.2.3), at several
PCM sizes (``buffer.pcm_mb``) with both P-block replacement policies
(``buffer.replacement``: ``least-popular``, the thesis's, and ``lru``), and once per
workload with no buffer (the baseline). The points run with ``nvmdb.sweep`` on a Dask
``LocalCluster`` of ``--workers`` processes (2 by default). It prints the table and plots
two panels to a PNG:

- lifetime: ``lifetime_host_bytes`` (host bytes written before the most-erased block
  wears out) as a multiple of the same workload's baseline. A run with no block erase has
  no lifetime estimate (``None``) and is not drawn;
- energy: ``energy_pj`` (flash and PCM) as a percentage of the baseline's.

Scale: the quick scale's database, 1/16 of the thesis's: 64 MB behind a 4 MB DBMS buffer
pool (the thesis: 1 GB and 20-100 MB; the experiments' quick scale: 3.75 MB), and
``t1``, ``t2``, ``t3`` of ``nvmdb trace gen``'s default lengths, 50,000, 200,000 and
400,000 requests (the experiments' quick scale runs 1/12 of them). The flash is sized to
the data as in the thesis experiments (2 packages x 4 planes x ``--blocks-per-plane``
blocks of 64 pages of 4 KB, 10% over-provisioning; thesis Table 5.1's timing and energy,
the PCM's Table 2.2), so that merges turn into erases. The runs are whole traces from a
prefilled flash, not the steady state of ``nvmdb run thesis-pcm-capacity`` and
``thesis-replacement``, the registered experiments behind this question.

The workloads' traces are generated with ``nvmdb.trace_gen`` (``nvmdb trace gen``) into a
temporary directory removed at the end. Other traces are added with ``--trace
FILE:FORMAT``, e.g. the vendored ``data/mqsim/tpcc-small.trace:disksim``.

``pcm_log_sweep.png`` beside this script is the default run's plot (seed 1), made with
``cd python/examples && python pcm_log_sweep.py``.

Usage (with the package and Dask installed: ``pip install './python[dask]'``)::

    python python/examples/pcm_log_sweep.py                  # t1; 1, 4, 16 MiB: 7 points
    python python/examples/pcm_log_sweep.py --full --force   # t1-t3; 1-64 MiB: 45 points
    python python/examples/pcm_log_sweep.py --out fig.png --trace data/mqsim/tpcc-small.trace:disksim

Flags:

- ``--out PNG``: where the plot goes (default ``pcm_log_sweep.png`` in the current
  directory). An existing file is never overwritten without ``--force``: the script then
  exits with status 2 before running anything.
- ``--force``: overwrite ``--out``.
- ``--full``: workloads t1, t2 and t3, PCM sizes 1, 2, 4, 8, 16, 32 and 64 MiB (the
  default: t1; 1, 4 and 16 MiB).
- ``--trace FILE:FORMAT``: also replay this trace (format disksim, msr, spc, fiu or
  simple); repeatable.
- ``--blocks-per-plane N``: the flash's size (default 40: 80 MiB, 72 MiB of it logical,
  which holds the 64 MB database).
- ``--workers N``: Dask worker processes (default 2).
- ``--seed N``: the seed of the trace generator and of the SSD configuration (default 1).

Bad flags print one line naming the flag and exit with status 2.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

import nvmdb
from nvmdb.sweep import sweep

# The examples' shared flag parsing, beside this script.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from example_flags import Parser, positive_int, trace_arg  # noqa: E402

WORKLOADS_SHORT = ["t1"]
WORKLOADS_FULL = ["t1", "t2", "t3"]
PCM_MB_SHORT = [1, 4, 16]
PCM_MB_FULL = [1, 2, 4, 8, 16, 32, 64]
POLICIES = ["least-popular", "lru"]
# The thesis's 1 GB database and 60 MB pool divided by 16, and the generator's lengths.
FOOTPRINT_MB = 64
BUFFER_POOL_MB = 4
REQUESTS = {"t1": 50_000, "t2": 200_000, "t3": 400_000}


def replay_point(
    workload: str, trace: str, format: str, pcm_mb: int, replacement: str, blocks_per_plane: int, seed: int
) -> dict:
    """One replay of ``trace``: the PCM log with ``pcm_mb`` MiB and ``replacement``, or
    with ``pcm_mb == 0`` the baseline (no buffer). Returns ``nvmdb.ssd_replay``'s dict;
    ``workload`` only labels the row."""
    config: dict[str, Any] = {
        "seed": seed,
        "flash.packages": 2,
        "flash.planes_per_package": 4,
        "flash.blocks_per_plane": blocks_per_plane,
        "ftl.overprovision": 0.1,
    }
    if pcm_mb > 0:
        config |= {"buffer.kind": "pcm-log", "buffer.pcm_mb": pcm_mb, "buffer.replacement": replacement}
    return nvmdb.ssd_replay(trace, format, config=config)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = Parser(prog="pcm_log_sweep.py", description="PCM log lifetime and energy against PCM size and policy")
    parser.add_argument("--out", type=Path, default=Path("pcm_log_sweep.png"), help="the PNG to write")
    parser.add_argument("--force", action="store_true", help="overwrite --out if it exists")
    parser.add_argument("--full", action="store_true", help="t1-t3 and PCM sizes 1 to 64 MiB (default t1; 1, 4, 16)")
    parser.add_argument(
        "--trace", type=trace_arg, action="append", default=[], metavar="FILE:FORMAT", help="also replay this trace"
    )
    parser.add_argument("--blocks-per-plane", type=positive_int, default=40, help="flash blocks per plane (8 planes)")
    parser.add_argument("--workers", type=positive_int, default=2, help="Dask worker processes")
    parser.add_argument("--seed", type=positive_int, default=1, help="the generator's and the SSD's seed")
    args = parser.parse_args(argv)
    if args.out.exists() and not args.force:
        parser.error(f"--out {args.out}: the file exists; pass --force to overwrite it")
    if not args.out.parent.is_dir():
        parser.error(f"--out {args.out}: no such directory {args.out.parent}")
    return args


def generate(workload: str, seed: int, directory: Path) -> str:
    """The workload's trace (FIU format), written by ``nvmdb.trace_gen``."""
    out = directory / f"{workload}.trace"
    return nvmdb.trace_gen(
        workload,
        out,
        requests=REQUESTS[workload],
        seed=seed,
        footprint_mb=FOOTPRINT_MB,
        buffer_pool_mb=BUFFER_POOL_MB,
    )


def grid(args: argparse.Namespace, traces: list[tuple[str, str, str]]) -> list[dict[str, Any]]:
    """Per trace: the baseline, then every PCM size with every policy."""
    common = {"blocks_per_plane": args.blocks_per_plane, "seed": args.seed}
    points = []
    for name, trace, format in traces:
        for pcm_mb in [0] + (PCM_MB_FULL if args.full else PCM_MB_SHORT):
            for replacement in ["none"] if pcm_mb == 0 else POLICIES:
                point = {"workload": name, "trace": trace, "format": format, "pcm_mb": pcm_mb}
                points.append({**point, "replacement": replacement, **common})
    return points


def against_baseline(frame: Any) -> Any:
    """Adds each point's lifetime (x baseline) and energy (% of baseline) on its workload."""
    base = frame[frame["pcm_mb"] == 0].set_index("workload")
    frame = frame.copy()
    frame["lifetime_x_baseline"] = frame["lifetime_host_bytes"] / frame["workload"].map(base["lifetime_host_bytes"])
    frame["energy_pct_baseline"] = 100.0 * frame["energy_pj"] / frame["workload"].map(base["energy_pj"])
    return frame


def plot(frame: Any, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    fig, (life, energy) = plt.subplots(1, 2, figsize=(10, 4), constrained_layout=True)
    logged = frame[frame["pcm_mb"] > 0]
    for (workload, replacement), line in logged.groupby(["workload", "replacement"], sort=False):
        label = f"{workload}, {replacement}"
        style = "-" if replacement == "least-popular" else "--"
        life.plot(line["pcm_mb"], line["lifetime_x_baseline"], style, marker="o", label=label)
        energy.plot(line["pcm_mb"], line["energy_pct_baseline"], style, marker="o", label=label)
    for axes, title, ylabel in [
        (life, "Lifetime (runs with no erase not drawn)", "lifetime × baseline (no buffer)"),
        (energy, "Energy (flash + PCM)", "% of baseline"),
    ]:
        axes.set_xscale("log", base=2)
        axes.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda value, _: f"{value:g}"))
        axes.set_yscale("log")
        axes.set_xlabel("PCM log size (MiB)")
        axes.set_ylabel(ylabel)
        axes.set_title(title)
        axes.grid(True, alpha=0.3)
    energy.axhline(100.0, color="grey", linewidth=0.8)
    life.axhline(1.0, color="grey", linewidth=0.8)
    life.legend(fontsize="small")
    fig.savefig(out, dpi=80)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from distributed import Client, LocalCluster

    with tempfile.TemporaryDirectory(prefix="pcm-log-sweep-") as directory:
        workloads = WORKLOADS_FULL if args.full else WORKLOADS_SHORT
        traces = [(w, generate(w, args.seed, Path(directory)), "fiu") for w in workloads]
        traces += [(Path(trace).name, trace, format) for trace, format in args.trace]
        with (
            LocalCluster(
                n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None
            ) as cluster,
            Client(cluster) as client,
        ):
            frame = sweep(replay_point, grid(args, traces), client, description="pcm-log points")
    wrapped = frame[frame["wrapped_pages"] > 0].groupby("workload", sort=False)["wrapped_pages"].max()
    for workload, pages in wrapped.items():
        print(
            f"pcm_log_sweep.py: warning: {workload} wrapped up to {pages} pages at --blocks-per-plane"
            f" {args.blocks_per_plane}: the flash is smaller than the trace's addresses",
            file=sys.stderr,
        )
    frame = against_baseline(frame)
    columns = ["workload", "pcm_mb", "replacement", "merges", "block_erases", "lifetime_host_bytes"]
    columns += ["lifetime_x_baseline", "energy_pj", "pcm_energy_pj", "energy_pct_baseline"]
    print(frame[columns].to_string(index=False))
    plot(frame, args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
