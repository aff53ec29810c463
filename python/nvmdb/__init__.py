"""nvmdb from Python: the ``nvmdb`` command line's simulations, run in this process.

Each function builds the command line of one ``nvmdb`` command from its keyword arguments
(``flip_n_write=True`` is ``--flip-n-write``; a keyword left at ``None`` is a flag not
given), runs it through the native module with ``--json`` and returns the JSON as plain
Python values: the same code, the same numbers and the same keys as the CLI's ``--json``.
The simulation runs without the GIL, so several threads can simulate at once.

Errors are the CLI's one line: bad input (a bad flag value, a bad ``--set`` key, a bad
line of an input file; the CLI's exit code 2) raises ``ValueError``, a file that cannot be
read or written ``OSError`` (``FileNotFoundError`` for a missing file), any other failure
``RuntimeError``.
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any, Mapping, Sequence

import pandas as pd

from . import _native

__all__ = [
    "btree_run",
    "envy_replay",
    "envy_run",
    "experiments",
    "join_run",
    "journal_run",
    "kv_run",
    "pcm_replay",
    "run_experiment",
    "scorecard",
    "ssd_replay",
    "sweep",
    "SweepError",
    "trace_gen",
]

from .sweep import SweepError, sweep  # noqa: E402  (after __all__, which names them)


def _text(value: Any) -> str:
    """A value as the CLI reads it: booleans as ``true``/``false``, numbers as Python
    writes them (``0.75``, ``1e-05``), anything else as its ``str``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str, os.PathLike)):
        return os.fspath(value) if isinstance(value, os.PathLike) else str(value)
    raise TypeError(f"{value!r}: a flag value must be a str, int, float, bool or path")


def _command(words: Sequence[str], **flags: Any) -> list[str]:
    """``words`` then one flag per keyword: ``True`` is a switch given, ``False`` and
    ``None`` a flag not given, anything else ``--flag VALUE``."""
    args = list(words)
    for name, value in flags.items():
        flag = "--" + name.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            args.append(flag)
        else:
            args += [flag, _text(value)]
    return args


def _json(words: Sequence[str], **flags: Any) -> Any:
    """Runs the command with ``--json`` and parses its output."""
    return json.loads(_native.run(_command(words, **flags) + ["--json"]))


def pcm_replay(trace: str | os.PathLike[str], flip_n_write: bool = False, flip_bits: int = 64) -> dict[str, Any]:
    """``nvmdb pcm replay``: replay a PCM access trace at device level.

    Keywords (the CLI's flags):
      trace: the trace file (``R addr len`` / ``W addr hexbytes`` lines).
      flip_n_write: enable Flip-N-Write (``--flip-n-write``).
      flip_bits: data bits per flip cell with flip_n_write: 8, 16, 32 or 64.

    Returns the CLI's ``--json`` object: operations, lines, words and bits written,
    energy_pj, latency_cycles, max_cell_writes.
    """
    return _json(["pcm", "replay"], trace=trace, flip_n_write=flip_n_write, flip_bits=flip_bits)


def trace_gen(
    workload: str,
    out: str | os.PathLike[str],
    requests: int | None = None,
    seed: int = 1,
    footprint_mb: int = 1024,
    buffer_pool_mb: int = 60,
) -> str:
    """``nvmdb trace gen``: write a synthetic trace modelled on the thesis's workloads (FIU
    format, one line per 4 KB block; replay it with ``ssd_replay(path, "fiu")``).

    Keywords (the CLI's flags):
      workload: d1, d2 (desktop) or t1, t2, t3 (TPC-C-like page updates).
      out: the trace file to write (replaced if it exists, as the CLI does).
      requests: requests to generate, 1 to 10^9 (default: the workload's own length).
      seed: the generator's seed; the same seed gives the same trace.
      footprint_mb: database size (t1–t3) or desktop footprint (d1, d2), MB, at least 4.
      buffer_pool_mb: the DBMS buffer pool (t1–t3), MB, at most a quarter of footprint_mb.

    Returns ``out`` as a str.
    """
    _native.run(
        _command(
            ["trace", "gen"],
            workload=workload,
            requests=requests,
            seed=seed,
            out=out,
            footprint_mb=footprint_mb,
            buffer_pool_mb=buffer_pool_mb,
        )
    )
    return os.fspath(out)


def ssd_replay(
    trace: str | os.PathLike[str],
    format: str,
    config: Mapping[str, str | int | float | bool] | None = None,
    warmup_requests: int = 0,
    config_file: str | os.PathLike[str] | None = None,
    power_loss_at: int | None = None,
    prefill: bool | None = None,
    disksim_devices: str = "separate",
    age: bool = False,
    passes: int = 1,
    drain: bool = False,
) -> dict[str, Any]:
    """``nvmdb ssd replay``: replay a block trace on a simulated SSD stack.

    Keywords (the CLI's flags):
      trace: the trace file.
      format: the trace format: disksim, msr, spc, fiu or simple.
      config: configuration keys, each given as ``--set KEY=VALUE`` in the dict's order,
        e.g. ``{"ftl.gc": "fifo", "buffer.kind": "pcm-log", "buffer.pcm_mb": 4}``; the
        keys are ``--set``'s dotted keys (crates/nvmdb-flash/CONFIG.md), booleans are
        written ``true``/``false``. An unknown key raises ValueError naming it.
      warmup_requests: leave the first N requests out of every statistic.
      config_file: an SSD configuration file in TOML (``--config``), applied before config.
      power_loss_at: cut power after the N-th request, recover and check.
      prefill: write every page the trace touches once before the replay (``None``: the
        CLI's default, true without ``age``; not with ``age``).
      disksim_devices: DiskSim traces: ``separate`` or ``shared`` address ranges.
      age: age the device first (fill, then random whole-page overwrites), not measured.
      passes: replay the trace this many times; ``"last_pass"`` holds the last alone.
      drain: merge every pending log record (and write the DRAM buffer down) at the end.

    Returns the CLI's ``--json`` object: the trace, the figures (among them
    ``flash_page_reads``, ``flash_sector_programs``, ``gc_page_copies``,
    ``pending_log_records``, ``pending_log_pages``) and the full configuration.
    """
    words = ["ssd", "replay"]
    for key, value in (config or {}).items():
        words += ["--set", f"{key}={_text(value)}"]
    return _json(
        words,
        trace=trace,
        format=format,
        warmup_requests=warmup_requests,
        config=config_file,
        power_loss_at=power_loss_at,
        prefill=None if prefill is None else _text(prefill),
        disksim_devices=disksim_devices,
        age=age,
        passes=passes,
        drain=drain,
    )


def btree_run(
    variant: str,
    node_lines: int,
    memory: str = "cached",
    flip_n_write: bool = False,
    load: str | os.PathLike[str] | None = None,
    ops: str | os.PathLike[str] | None = None,
    results: str | os.PathLike[str] | None = None,
    entries: int | None = None,
    fill: float = 0.75,
    op: str | None = None,
    count: int | None = None,
    seed: int = 1,
) -> dict[str, Any]:
    """``nvmdb btree run``: a B+-tree workload on simulated PCM.

    Keywords (the CLI's flags):
      variant: sorted, unsorted, unsorted-leaf, unsorted-leaf-bitmap or nvmdb-leaf.
      node_lines: node size in cache lines: 1, 2, 4 or 8.
      memory: cached (the CIDR 2011 hierarchy over PCM) or flat (PCM, no cache).
      flip_n_write: enable Flip-N-Write (one flip cell per 64-bit word).
      load, ops, results: file mode: the keys to bulk-load, the operations, and where to
        write the answers of G and S operations.
      entries, op, count: generator mode: random keys to load; insert, delete or search;
        operations to run.
      fill: bulk-load fill factor, in (0, 1].
      seed: the generator keys and the shuffling of unsorted nodes.

    Returns the CLI's ``--json`` object.
    """
    return _json(
        ["btree", "run"],
        variant=variant,
        node_lines=node_lines,
        memory=memory,
        flip_n_write=flip_n_write,
        load=load,
        ops=ops,
        results=results,
        entries=entries,
        fill=fill,
        op=op,
        count=count,
        seed=seed,
    )


def join_run(
    algo: str,
    layout: str = "row",
    r: str | os.PathLike[str] | None = None,
    s: str | os.PathLike[str] | None = None,
    r_key: str | None = None,
    s_key: str | None = None,
    output: str | os.PathLike[str] | None = None,
    generate: bool = False,
    r_mb: float = 50.0,
    record_bytes: str | int = "100",
    match_per_r: str | int = "1",
    seed: int = 1,
    memory: str = "cached",
    id_encoding: str = "delta16",
) -> dict[str, Any] | list[dict[str, Any]]:
    """``nvmdb join run``: a hash join on simulated PCM.

    Keywords (the CLI's flags):
      algo: simple, cache-partitioning or virtual-partitioning.
      layout: row or column.
      r, s, r_key, s_key: CSV relations (with a header row) and their join columns.
      output: write every match as ``r_row,s_row`` to this file.
      generate: use the synthetic relations instead of CSV files.
      r_mb: with generate, the size of R in MB (10^6 bytes).
      record_bytes: with generate, bytes per record, ``N`` or ``A..B[:STEP]``.
      match_per_r: with generate, S records per R record, ``N`` or ``A..B[:STEP]``.
      seed: with generate, the seed of the synthetic data.
      memory: the memory model (cached or flat).
      id_encoding: the encoding of virtual partitioning's record-ID lists.

    Returns the CLI's ``--json``: one object, or a list of them when record_bytes or
    match_per_r is a range.
    """
    return _json(
        ["join", "run"],
        algo=algo,
        layout=layout,
        r=r,
        s=s,
        r_key=r_key,
        s_key=s_key,
        output=output,
        generate=generate,
        r_mb=r_mb,
        record_bytes=record_bytes,
        match_per_r=match_per_r,
        seed=seed,
        memory=memory,
        id_encoding=id_encoding,
    )


def kv_run(
    engine: str,
    workload: str | None = None,
    records: int | None = None,
    buffer_kb: int = 1024,
    page_kb: int = 8,
    sync_every: int | None = None,
    power_loss_at: int | None = None,
    preset: str = "board",
    pcm_write_bytes: int = 128,
    seed: int = 1,
    load: str | os.PathLike[str] | None = None,
    ops: str | os.PathLike[str] | None = None,
    results: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """``nvmdb kv run``: the IPL-P key-value engine.

    Keywords (the CLI's flags):
      engine: flash-only, pcm-only, ipl or ipl-p.
      workload, records: benchmark mode: insert, update or search, and N records.
      buffer_kb: the buffer pool, KB (at least 3 pages).
      page_kb: the page size, KB, 1 to 64.
      sync_every: sync after every K operations.
      power_loss_at: cut the power before the N-th device write, recover and finish.
      preset: device timing: board or chips.
      pcm_write_bytes: the PCM write granularity, bytes (a power of two, 8 to 4096).
      seed: the benchmark's key order, update and search keys and values.
      load, ops, results: file mode: the records to load, the operations, and where to
        write the answers of G and S operations.

    Returns the CLI's ``--json`` object.
    """
    return _json(
        ["kv", "run"],
        engine=engine,
        workload=workload,
        records=records,
        buffer_kb=buffer_kb,
        page_kb=page_kb,
        sync_every=sync_every,
        power_loss_at=power_loss_at,
        preset=preset,
        pcm_write_bytes=pcm_write_bytes,
        seed=seed,
        load=load,
        ops=ops,
        results=results,
    )


def journal_run(config: str, workload: str, length: int = 1, seed: int = 1) -> dict[str, Any]:
    """``nvmdb journal run``: real SQLite with its rollback journal in simulated PCM.

    Keywords (the CLI's flags):
      config: the journal configuration in the paper's grammar, e.g. ``RU20-S2X-WH64``.
      workload: fb, tw, kt or gm.
      length: the trace length, 1 to 4.
      seed: the workload's seed and SQLite's randomness.

    Returns the CLI's ``--json`` object.
    """
    return _json(["journal", "run"], config=config, workload=workload, length=length, seed=seed)


def envy_run(
    workload: str,
    tps: float = 50.0,
    transactions: int = 5000,
    turnovers: int = 4,
    hot_access: float = 0.9,
    hot_data: float = 0.1,
    flash_mb: int = 32,
    utilization: float = 0.8,
    cleaning: str = "hybrid",
    partition_segments: int = 8,
    sram_mb: float | None = None,
    spare_segments: int = 1,
    no_page_bytes: bool = False,
    seed: int = 1,
) -> dict[str, Any]:
    """``nvmdb envy run``: eNVy, flash as persistent byte-addressable memory.

    Keywords (the CLI's flags):
      workload: tpca, uniform or bimodal.
      tps: the TPC-A arrival rate, per second.
      transactions: TPC-A transactions measured (as many again run first as warm-up).
      turnovers: page updates of uniform and bimodal, in turnovers of the flash.
      hot_access, hot_data: bimodal: the share of accesses to the hot data, and its share.
      flash_mb: the flash array size, MiB.
      utilization: the share of the flash the logical space fills, in (0, 1).
      cleaning: greedy, fifo, locality or hybrid.
      partition_segments: segments per partition of the hybrid policy.
      sram_mb: the SRAM write buffer, MiB (None: 1/256 of the flash).
      spare_segments: erased segments kept in reserve for cleaning.
      no_page_bytes: uniform and bimodal: keep no page bytes in flash (``--no-page-bytes``;
        the same results, less host memory, faster on large arrays).
      seed: the run's seed.

    Returns the CLI's ``--json`` object.
    """
    return _json(
        ["envy", "run"],
        workload=workload,
        tps=tps,
        transactions=transactions,
        turnovers=turnovers,
        hot_access=hot_access,
        hot_data=hot_data,
        flash_mb=flash_mb,
        utilization=utilization,
        cleaning=cleaning,
        partition_segments=partition_segments,
        sram_mb=sram_mb,
        spare_segments=spare_segments,
        no_page_bytes=no_page_bytes,
        seed=seed,
    )


def envy_replay(
    trace: str | os.PathLike[str],
    size_mb: int = 16,
    power_loss_at: int | None = None,
    reads: str | os.PathLike[str] | None = None,
    utilization: float = 0.8,
    cleaning: str = "hybrid",
    partition_segments: int = 8,
    sram_mb: float | None = None,
    spare_segments: int = 1,
) -> dict[str, Any]:
    """``nvmdb envy replay``: replay a byte-level trace (with transactions) on eNVy.

    Keywords (the CLI's flags):
      trace: the trace file (``pcm replay`` lines, and ``B``, ``C``, ``A``).
      size_mb: the logical (address space) size, MiB.
      power_loss_at: cut the power after the N-th operation, recover and continue.
      reads: write the reads' hex lines to this file. When None, the lines the CLI prints
        on stdout are returned under the key ``"reads"`` (a list of hex strings).
      utilization, cleaning, partition_segments, sram_mb, spare_segments: as envy_run.

    Returns the CLI's ``--json`` object (plus ``"reads"`` when reads is None).
    """
    args = _command(
        ["envy", "replay"],
        trace=trace,
        size_mb=size_mb,
        power_loss_at=power_loss_at,
        reads=reads,
        utilization=utilization,
        cleaning=cleaning,
        partition_segments=partition_segments,
        sram_mb=sram_mb,
        spare_segments=spare_segments,
    )
    text = _native.run(args + ["--json"])
    # The read lines (hex digits) come first, then the JSON object.
    start = text.find("{")
    report: dict[str, Any] = json.loads(text[start:])
    if reads is None:
        report["reads"] = text[:start].splitlines()
    return report


def experiments() -> list[str]:
    """The ids of the registered experiments, in registry order (``nvmdb list``)."""
    return [line.split()[0] for line in _native.run(["list"]).splitlines() if line.strip()]


def _run_dir(words: list[str], scale: str, seed: int, jobs: int | None, out: str) -> None:
    # No stored paper-scale runs: the directory does not exist.
    stored = os.path.join(out, "no-stored-runs")
    _native.run(
        _command(words, scale=scale, seed=seed, out=out, paper_results=stored, jobs=jobs)
    )


def _frames(results: Mapping[str, Any]) -> dict[str, pd.DataFrame]:
    frames: dict[str, pd.DataFrame] = {}
    for table in results["outcome"]["tables"]:
        title, n = table["title"], 2
        while title in frames:
            title, n = f"{table['title']} [{n}]", n + 1
        frames[title] = pd.DataFrame(table["rows"], columns=table["columns"])
    return frames


def run_experiment(id: str, scale: str = "quick", seed: int = 1, jobs: int | None = None) -> dict[str, pd.DataFrame]:
    """``nvmdb run ID``: run one experiment and return its tables.

    Keywords (the CLI's flags):
      id: the experiment's id (see experiments()).
      scale: quick or paper.
      seed: the run's one seed.
      jobs: threads for the experiment's independent parts (None: the machine's cores).

    Returns one DataFrame per table of the experiment's results (``results.json``), keyed
    by the table's title (a repeated title gets `` [2]``, `` [3]``, ...); the columns are
    the table's, a missing value is None or NaN.
    """
    with tempfile.TemporaryDirectory(prefix="nvmdb-") as out:
        _run_dir(["run", id], scale, seed, jobs, out)
        with open(os.path.join(out, id, "results.json"), encoding="utf-8") as f:
            return _frames(json.load(f))


def scorecard(
    experiments: Sequence[str] | None = None, scale: str = "quick", seed: int = 1, jobs: int | None = None
) -> pd.DataFrame:
    """The scorecard: the papers' claims beside our values, with a verdict.

    Keywords:
      experiments: the experiment ids to run, each with ``nvmdb run`` (None: every
        experiment, with ``nvmdb reproduce``, the report's scorecard).
      scale: quick or paper.
      seed: the run's one seed.
      jobs: threads (None: the machine's cores).

    Returns one row per claim (the ``rows`` of ``scorecard.json``): claim_id, experiment,
    seed, figure, claim, paper, ours, value, tolerance, verdict, note, note_link,
    paper_scale; an experiment with no claims adds no rows.
    """
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="nvmdb-") as out:
        if experiments is None:
            _run_dir(["reproduce"], scale, seed, jobs, out)
            paths = [os.path.join(out, "scorecard.json")]
        else:
            paths = []
            for id in experiments:
                _run_dir(["run", id], scale, seed, jobs, out)
                paths.append(os.path.join(out, id, "scorecard.json"))
        for path in paths:
            if os.path.exists(path):
                with open(path, encoding="utf-8") as f:
                    rows += json.load(f)["rows"]
    columns = ["claim_id", "experiment", "seed", "figure", "claim", "paper", "ours", "value", "tolerance",
               "verdict", "note", "note_link", "paper_scale"]
    return pd.DataFrame(rows, columns=columns)
