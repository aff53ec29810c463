"""nvmdb from Python: the ``nvmdb`` command line's simulations, run in this process.

Each function builds the command line of one ``nvmdb`` command from its keyword arguments
(``flip_n_write=True`` is ``--flip-n-write``; a keyword left at ``None`` is a flag not
given), runs it through the native module with ``--json`` and returns the JSON as plain
Python values: the same code, the same numbers and the same keys as the CLI's ``--json``.
The simulation runs on a thread of its own without the GIL, so several threads can
simulate at once, and Ctrl-C (or a Jupyter interrupt) stops it within about a second,
raising ``KeyboardInterrupt`` with no output file half-written.

Arguments are Python's: any ``numbers.Integral`` where an ``int`` is asked for (numpy's
included), any ``numbers.Real`` for a ``float``; a value of the wrong type raises
``TypeError`` naming the keyword. Errors are the CLI's one line, with the keyword named
in place of the CLI's flag: bad input (a value out of range, a bad ``config`` key, a bad
line of an input file; the CLI's exit code 2) raises ``ValueError``; a file that cannot
be read or written raises the ``OSError`` subclass of its error number
(``FileNotFoundError``, ``IsADirectoryError``, ...) with ``errno`` and ``filename`` set;
any other failure ``RuntimeError``.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd

from . import _cli, _native, _results
from ._cli import checked
from ._results import Experiment, Plot

__version__: str = _native.__version__

__all__ = [
    "__version__",
    "bench",
    "btree_run",
    "envy_replay",
    "envy_run",
    "Experiment",
    "experiments",
    "InputFile",
    "join_model",
    "join_run",
    "journal_run",
    "journal_sql",
    "kv_demo",
    "kv_run",
    "pcm_replay",
    "Plot",
    "run_experiment",
    "scorecard",
    "ssd_replay",
    "sweep",
    "SweepError",
    "trace_gen",
]

from .sweep import InputFile, SweepError, sweep  # noqa: E402  (after __all__, which names them)


def _run(
    function: str,
    words: Sequence[str],
    flags: Mapping[str, Any],
    *,
    renamed: Mapping[str, str] | None = None,
    extra: Sequence[str] = (),
    positional: Sequence[str] = (),
    progress: Callable[[int, int], None] | None = None,
    steps: bool | None = False,
) -> str:
    """Runs the command of ``function`` with its keywords as flags (``renamed``: keyword
    -> the CLI's flag name, where they differ) and returns its stdout. ``progress`` is
    called with (done, total) as the command counts; without it, ``steps`` (a function's
    ``progress`` keyword) shows a bar of the command's steps."""
    renamed = renamed or {}
    keywords = {renamed.get(name, name).replace("_", "-"): name for name in flags}
    args = _cli.command(words, flags, renamed) + list(extra) + (["--", *positional] if positional else [])
    if progress is not None or not _cli.show_progress(steps):
        return _cli.run(args, keywords, function, progress)
    with _cli.step_bar(function) as update:
        return _cli.run(args, keywords, function, update)


def _json(function: str, words: Sequence[str], flags: Mapping[str, Any], **options: Any) -> Any:
    """Runs the command with ``--json`` and parses its output."""
    return json.loads(_run(function, words, flags, extra=["--json"], **options))


@checked
def pcm_replay(
    trace: str | os.PathLike[str],
    flip_n_write: bool = False,
    flip_bits: int = 64,
    progress: bool | None = None,
) -> dict[str, Any]:
    """``nvmdb pcm replay``: replay a PCM access trace at device level.

    Keywords (the CLI's flags):
      trace: the trace file (``R addr len`` / ``W addr hexbytes`` lines).
      flip_n_write: enable Flip-N-Write (``--flip-n-write``).
      flip_bits: data bits per flip cell with flip_n_write: 8, 16, 32 or 64.
      progress: a progress bar of the call's steps on stderr (tqdm; a widget in Jupyter):
        requests, operations, transactions or statements done and their rate (the total
        is not known ahead); ``None``: only on a terminal or in Jupyter.

    Returns the CLI's ``--json`` object: operations, lines, words and bits written,
    energy_pj, latency_cycles, max_cell_writes.
    """
    flags = dict(trace=trace, flip_n_write=flip_n_write, flip_bits=flip_bits)
    return _json("pcm_replay", ["pcm", "replay"], flags, steps=progress)


@checked
def trace_gen(
    workload: str,
    out: str | os.PathLike[str],
    requests: int | None = None,
    seed: int = 1,
    footprint_mb: int = 1024,
    buffer_pool_mb: int = 60,
    progress: bool | None = None,
) -> str:
    """``nvmdb trace gen``: write a synthetic trace modelled on the thesis's workloads (FIU
    format, one line per 4 KB block; replay it with ``ssd_replay(path, "fiu")``).

    Keywords (the CLI's flags):
      workload: d1, d2 (desktop) or t1, t2, t3 (TPC-C-like page updates).
      out: the trace file to write (replaced if it exists, as the CLI does; written under
        a temporary name and renamed when complete).
      requests: requests to generate, 1 to 10^9 (default: the workload's own length).
      seed: the generator's seed; the same seed gives the same trace.
      footprint_mb: database size (t1–t3) or desktop footprint (d1, d2), MB, at least 4.
      buffer_pool_mb: the DBMS buffer pool (t1–t3), MB, at most a quarter of footprint_mb.
      progress: a progress bar of the call's steps on stderr (tqdm; a widget in Jupyter):
        requests, operations, transactions or statements done and their rate (the total
        is not known ahead); ``None``: only on a terminal or in Jupyter.

    Returns ``out`` as a str.
    """
    flags = dict(
        workload=workload,
        requests=requests,
        seed=seed,
        out=out,
        footprint_mb=footprint_mb,
        buffer_pool_mb=buffer_pool_mb,
    )
    _run("trace_gen", ["trace", "gen"], flags, steps=progress)
    return os.fspath(out)


def _config_value(key: str, value: Any) -> str:
    """A ``config`` value as ``--set`` reads it."""
    if isinstance(value, str):
        return value
    for kind in ("bool", "int", "float"):
        try:
            return _cli.text(_cli._convert(f"config[{key!r}]", kind, False, value))
        except TypeError:
            continue
    raise TypeError(f"config[{key!r}] must be a str, int, float or bool, not {type(value).__name__} {value!r}")


@checked
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
    reads: str | os.PathLike[str] | None = None,
    power_loss_at_write: int | None = None,
    power_loss_during_recovery: int | None = None,
    progress: bool | None = None,
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
      reads: write the bytes of every read request to this file, one hex line each
        (needs ``content = "bytes"``).
      power_loss_at_write: cut power before the N-th device write of the trace (inside
        whatever the store is doing), recover and check; not with power_loss_at.
      power_loss_during_recovery: a second cut, before the M-th device write of the
        recovery.
      progress: a progress bar of the call's steps on stderr (tqdm; a widget in Jupyter):
        requests, operations, transactions or statements done and their rate (the total
        is not known ahead); ``None``: only on a terminal or in Jupyter.

    Returns the CLI's ``--json`` object: the trace, the figures (among them
    ``flash_page_reads``, ``flash_sector_programs``, ``gc_page_copies``,
    ``pending_log_records``, ``pending_log_pages``) and the full configuration.
    """
    sets = [f"--set={key}={_config_value(key, value)}" for key, value in (config or {}).items()]
    flags = dict(
        trace=trace,
        format=format,
        warmup_requests=warmup_requests,
        config_file=config_file,
        power_loss_at=power_loss_at,
        prefill=None if prefill is None else _cli.text(prefill),
        disksim_devices=disksim_devices,
        age=age,
        passes=passes,
        drain=drain,
        reads=reads,
        power_loss_at_write=power_loss_at_write,
        power_loss_during_recovery=power_loss_during_recovery,
        config=None,
    )
    renamed = {"config_file": "config", "config": "set"}
    return _json("ssd_replay", ["ssd", "replay", *sets], flags, renamed=renamed, steps=progress)


@checked
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
    progress: bool | None = None,
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
      progress: a progress bar of the call's steps on stderr (tqdm; a widget in Jupyter):
        requests, operations, transactions or statements done and their rate (the total
        is not known ahead); ``None``: only on a terminal or in Jupyter.

    Returns the CLI's ``--json`` object.
    """
    flags = dict(
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
    return _json("btree_run", ["btree", "run"], flags, steps=progress)


@checked
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
    progress: bool | None = None,
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
      progress: a progress bar of the call's steps on stderr (tqdm; a widget in Jupyter):
        requests, operations, transactions or statements done and their rate (the total
        is not known ahead); ``None``: only on a terminal or in Jupyter.

    Returns the CLI's ``--json``: one object, or a list of them when record_bytes or
    match_per_r is a range.
    """
    flags = dict(
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
    return _json("join_run", ["join", "run"], flags, steps=progress)


@checked
def join_model(
    r_mb: float = 50.0,
    record_bytes: str | int = "20..100",
    match_per_r: str | int = "1",
    n_h: float = 1.8,
    hash_table_lw: float = 1.5,
    hash_table_w: float = 5.0,
    gamma: float = 32.0,
) -> dict[str, Any]:
    """``nvmdb join model``: the CIDR 2011 analytic model of the three hash joins
    (Table 4, Figure 5) over a range of record sizes and MatchPerR.

    Keywords (the CLI's flags):
      r_mb: the size of R, MB (10^6 bytes).
      record_bytes: bytes per record, ``N`` or ``A..B[:STEP]`` (default step 20).
      match_per_r: S records per R record, ``N`` or ``A..B[:STEP]`` (default step 1).
      n_h: N_hR = N_hS, cache lines per hash-table visit.
      hash_table_lw: line write-backs per hash-table insertion.
      hash_table_w: words modified per hash-table insertion.
      gamma: modified bits per modified word (32 reads Figure 5's 0.5 as half a word).

    Returns the CLI's ``--json`` object: ``params``, ``rows`` (one per record size,
    MatchPerR and algorithm: line counts, wear_bits, energy_pj, latency_cycles and the
    metrics it is best for) and ``wear_crossover``.
    """
    flags = dict(
        r_mb=r_mb,
        record_bytes=record_bytes,
        match_per_r=match_per_r,
        n_h=n_h,
        hash_table_lw=hash_table_lw,
        hash_table_w=hash_table_w,
        gamma=gamma,
    )
    return _json("join_model", ["join", "model"], flags)


@checked
def kv_run(
    engine: str,
    workload: str | None = None,
    records: int | None = None,
    buffer_kb: int = 1024,
    page_kb: int = 8,
    sync_every: int | None = None,
    power_loss_at: int | None = None,
    preset: str = "board",
    flash_time: str | None = None,
    pcm_write_bytes: int = 128,
    seed: int = 1,
    load: str | os.PathLike[str] | None = None,
    ops: str | os.PathLike[str] | None = None,
    results: str | os.PathLike[str] | None = None,
    power_loss_at_write: int | None = None,
    power_loss_during_recovery: int | None = None,
    progress: bool | None = None,
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
      flash_time: where flash time comes from: measured (the board SSD's, garbage
        collection inside it; the default with board) or chip (the NAND chip's, garbage
        collection timed; the default with chips).
      pcm_write_bytes: the PCM write granularity, bytes (a power of two, 8 to 4096).
      seed: the benchmark's key order, update and search keys and values.
      load, ops, results: file mode: the records to load, the operations, and where to
        write the answers of G and S operations.
      power_loss_at_write: the same cut as power_loss_at (not with it).
      power_loss_during_recovery: a second cut, before the M-th device write of the
        recovery.
      progress: a progress bar of the call's steps on stderr (tqdm; a widget in Jupyter):
        requests, operations, transactions or statements done and their rate (the total
        is not known ahead); ``None``: only on a terminal or in Jupyter.

    Returns the CLI's ``--json`` object.
    """
    flags = dict(
        engine=engine,
        workload=workload,
        records=records,
        buffer_kb=buffer_kb,
        page_kb=page_kb,
        sync_every=sync_every,
        power_loss_at=power_loss_at,
        preset=preset,
        flash_time=flash_time,
        pcm_write_bytes=pcm_write_bytes,
        seed=seed,
        load=load,
        ops=ops,
        results=results,
        power_loss_at_write=power_loss_at_write,
        power_loss_during_recovery=power_loss_during_recovery,
    )
    return _json("kv_run", ["kv", "run"], flags, steps=progress)


@checked
def kv_demo(records: int = 50_000, seed: int = 1) -> list[dict[str, Any]]:
    """``nvmdb kv demo`` without its web page: the four engines side by side, one thread
    each, on the seed's insert, update and search benchmarks (a live board on stderr when
    it is a terminal).

    Keywords (the CLI's flags):
      records: records of each benchmark, 1 to 10,000,000.
      seed: the run's one seed; the same seed gives the same numbers.

    Returns the CLI's ``--json``: one report per engine and benchmark (engine,
    benchmark, records, the measured counters, ops_per_s).
    """
    result: list[dict[str, Any]] = _json("kv_demo", ["kv", "demo"], dict(records=records, seed=seed))
    return result


@checked
def journal_run(
    config: str, workload: str, length: int = 1, seed: int = 1, pcm_write_time: str = "chunks",
    power_loss_at: int | None = None, power_loss_at_write: int | None = None,
    power_loss_during_recovery: int | None = None, progress: bool | None = None,
) -> dict[str, Any]:
    """``nvmdb journal run``: real SQLite with its rollback journal in simulated PCM.

    Keywords (the CLI's flags):
      config: the journal configuration in the paper's grammar, e.g. ``RU20-S2X-WH64``.
      workload: fb, tw, kt or gm.
      length: the trace length, 1 to 4.
      seed: the workload's seed and SQLite's randomness.
      pcm_write_time: chunks (7.1 µs per changed 128 B step) or cells (by the cells each
        write programs, 64 per 444 ns iteration).
      power_loss_at: cut power after the N-th transaction of the workload (from 1),
        recover and check every DB file against the model of acknowledged state.
      power_loss_at_write: cut power before the N-th device write (from 1, the setup's
        included), inside whatever SQLite is doing; not with power_loss_at.
      power_loss_during_recovery: a second cut, before the M-th device write of the
        recovery.
      progress: a progress bar of the call's steps on stderr (tqdm; a widget in Jupyter):
        requests, operations, transactions or statements done and their rate (the total
        is not known ahead); ``None``: only on a terminal or in Jupyter.

    Returns the CLI's ``--json`` object (with a cut, also ``power_loss``,
    ``integrity_check`` and ``acknowledged``). A recovered DB file that differs from the
    acknowledged state raises (the CLI's exit 1).
    """
    flags = dict(
        config=config,
        workload=workload,
        length=length,
        seed=seed,
        pcm_write_time=pcm_write_time,
        power_loss_at=power_loss_at,
        power_loss_at_write=power_loss_at_write,
        power_loss_during_recovery=power_loss_during_recovery,
    )
    return _json("journal_run", ["journal", "run"], flags, steps=progress)


@checked
def journal_sql(
    config: str,
    db_dir: str | os.PathLike[str],
    script: str | os.PathLike[str],
    power_loss_at: int | None = None,
    dump: str | os.PathLike[str] | None = None,
    journal_mode: str = "delete",
    seed: int = 1,
    pcm_write_time: str = "chunks",
    power_loss_at_write: int | None = None,
    power_loss_during_recovery: int | None = None,
    expect: str | os.PathLike[str] | None = None,
    progress: bool | None = None,
) -> dict[str, Any]:
    """``nvmdb journal sql``: run an SQL script on real SQLite with its rollback journal in
    simulated PCM.

    Keywords (the CLI's flags):
      config: the journal configuration in the paper's grammar, e.g. ``RU20-S2X-WH64``.
      db_dir: an existing directory holding the database image ``main.db``: loaded before
        the run if present, saved there after it (after recovery when there was a cut).
      script: the SQL script: statements separated by ``;``, run in order.
      power_loss_at: cut the power after the N-th statement (from 1); the database is
        reopened, recovered and checked against the model of acknowledged state.
      dump: write the final database here (per table, ``-- NAME`` then its rows, each
        value an SQL literal: blobs as ``X'FF00'``).
      journal_mode: SQLite's journal mode: delete, truncate or persist.
      seed: the seed of SQLite's randomness (journal nonces).
      pcm_write_time: chunks (7.1 µs per changed 128 B step) or cells (by the cells each
        write programs, 64 per 444 ns iteration).
      power_loss_at_write: cut power before the N-th device write (from 1), inside
        whatever SQLite is doing; not with power_loss_at.
      power_loss_during_recovery: a second cut, before the M-th device write of the
        recovery.
      expect: a dump (as ``dump`` writes it) the final database must equal.
      progress: a progress bar of the call's steps on stderr (tqdm; a widget in Jupyter):
        requests, operations, transactions or statements done and their rate (the total
        is not known ahead); ``None``: only on a terminal or in Jupyter.

    Returns the CLI's ``--json`` object (the SELECT rows under ``rows``; ``power_loss``,
    ``acknowledged``, ``expect``). A final database that differs from the acknowledged
    state or from ``expect`` raises (the CLI's exit 1).
    """
    flags = dict(
        config=config,
        db_dir=db_dir,
        script=script,
        power_loss_at=power_loss_at,
        dump=dump,
        journal_mode=journal_mode,
        seed=seed,
        pcm_write_time=pcm_write_time,
        power_loss_at_write=power_loss_at_write,
        power_loss_during_recovery=power_loss_during_recovery,
        expect=expect,
    )
    return _json("journal_sql", ["journal", "sql"], flags, steps=progress)


@checked
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
    erase_ms: float | None = None,
    program_us: float | None = None,
    banks: int | None = None,
    parallel_banks: bool = False,
    redistribution_divisor: int | None = None,
    converge: bool = False,
    tolerance: float | None = None,
    max_turnovers: float | None = None,
    seed: int = 1,
    progress: bool | None = None,
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
      erase_ms, program_us: the segment erase time, ms, and the page program time, µs
        (None: the 28F008SA's 1600 ms and 9 µs).
      banks, parallel_banks: banks the segments are spread over, and program and erase
        in different banks at once (banks only with parallel_banks).
      redistribution_divisor: locality and hybrid: a clean moves its victim's live pages
        divided by it between partitions; 0 turns it off (None: 8).
      converge: TPC-A: measure until the throughput has converged, after
        ``transactions`` of warm-up.
      tolerance, max_turnovers: with converge: the largest difference of two successive
        windows' throughputs (None: 0.02), and the flash turnovers after which an
        unconverged run stops (None: 4).
      seed: the run's seed.
      progress: a progress bar of the call's steps on stderr (tqdm; a widget in Jupyter):
        requests, operations, transactions or statements done and their rate (the total
        is not known ahead); ``None``: only on a terminal or in Jupyter.

    Returns the CLI's ``--json`` object.
    """
    flags = dict(
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
        erase_ms=erase_ms,
        program_us=program_us,
        banks=banks,
        parallel_banks=parallel_banks,
        redistribution_divisor=redistribution_divisor,
        converge=converge,
        tolerance=tolerance,
        max_turnovers=max_turnovers,
        seed=seed,
    )
    return _json("envy_run", ["envy", "run"], flags, steps=progress)


@checked
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
    power_loss_at_write: int | None = None,
    power_loss_during_recovery: int | None = None,
    progress: bool | None = None,
) -> dict[str, Any]:
    """``nvmdb envy replay``: replay a byte-level trace (with transactions) on eNVy.

    Keywords (the CLI's flags):
      trace: the trace file (``pcm replay`` lines, and ``B``, ``C``, ``A``).
      size_mb: the logical (address space) size, MiB.
      power_loss_at: cut the power after the N-th operation, recover and continue.
      reads: write the reads' hex lines to this file. When None, the lines the CLI prints
        on stdout are returned under the key ``"reads"`` (a list of hex strings).
      utilization, cleaning, partition_segments, sram_mb, spare_segments: as envy_run.
      power_loss_at_write: cut the power before the N-th device write of the trace
        (inside whatever the controller is doing), recover and check; not with
        power_loss_at.
      power_loss_during_recovery: a second cut, before the M-th device write of the
        recovery.
      progress: a progress bar of the call's steps on stderr (tqdm; a widget in Jupyter):
        requests, operations, transactions or statements done and their rate (the total
        is not known ahead); ``None``: only on a terminal or in Jupyter.

    Returns the CLI's ``--json`` object (plus ``"reads"`` when reads is None).
    """
    flags = dict(
        trace=trace,
        size_mb=size_mb,
        power_loss_at=power_loss_at,
        reads=reads,
        utilization=utilization,
        cleaning=cleaning,
        partition_segments=partition_segments,
        sram_mb=sram_mb,
        spare_segments=spare_segments,
        power_loss_at_write=power_loss_at_write,
        power_loss_during_recovery=power_loss_during_recovery,
    )
    text = _run("envy_replay", ["envy", "replay"], flags, extra=["--json"], steps=progress)
    # The read lines (hex digits) come first, then the JSON object.
    start = text.find("{")
    report: dict[str, Any] = json.loads(text[start:])
    if reads is None:
        report["reads"] = text[:start].splitlines()
    return report


@checked
def bench(
    filter: str | None = None,
    exact: bool = False,
    ops: int = 5_000_000,
    mib: int = 64,
    kv_records: int = 100_000,
    progress: bool | None = None,
) -> pd.DataFrame:
    """``nvmdb bench``: the simulator's own speed (BENCHMARKS.md says how its figures are
    taken: on a quiet machine, as ratios to a baseline measured in the same run).

    Keywords (the CLI's flags):
      filter: run only the benchmarks whose name contains this text.
      exact: run only the benchmark whose name is exactly ``filter``.
      ops: operations per measurement.
      mib: working-set size of the memory benchmarks, MiB.
      kv_records: records of the kv benchmarks.
      progress: a progress bar of the call's steps on stderr (tqdm; a widget in Jupyter):
        requests, operations, transactions or statements done and their rate (the total
        is not known ahead); ``None``: only on a terminal or in Jupyter.

    Returns one row per benchmark: the CLI's ``--json`` fields (name, ns_per_op,
    ops_per_second, ratio to its baseline where it has one, peak_memory_bytes, ...).
    """
    flags = dict(filter=filter, exact=exact, ops=ops, mib=mib, kv_records=kv_records)
    return pd.DataFrame(_json("bench", ["bench"], flags, steps=progress))


def experiments() -> list[str]:
    """The ids of the registered experiments, in registry order (``nvmdb list``)."""
    return [line.split()[0] for line in _native.run(["list"]).splitlines() if line.strip()]


def _lab(
    function: str,
    words: Sequence[str],
    positional: Sequence[str],
    flags: Mapping[str, Any],
    out: str,
    progress: bool | None,
    description: str,
    json_output: bool,
) -> str:
    """``nvmdb run``/``reproduce`` into ``out``, with a progress bar of experiments and
    parts (and no stored paper-scale runs: ``--paper-results`` names a missing one)."""
    stored = os.path.join(out, "no-stored-runs")
    bar = _cli.progress_bar(0, description, progress)

    def update(done: int, total: int) -> None:
        bar.total = total
        bar.n = done
        bar.refresh()

    with bar:
        return _run(
            function,
            words,
            {**flags, "out": out, "paper_results": stored},
            extra=["--json"] if json_output else [],
            positional=positional,
            progress=update,
        )


@checked
def run_experiment(
    id: str,
    scale: str = "quick",
    seed: int = 1,
    jobs: int | None = None,
    out: str | os.PathLike[str] | None = None,
    progress: bool | None = None,
) -> Experiment:
    """``nvmdb run ID``: run one experiment and return its results as data.

    Keywords (the CLI's flags, and two of the package's):
      id: the experiment's id (see experiments()).
      scale: quick or paper.
      seed: the run's one seed.
      jobs: threads for the experiment's independent parts (None: the machine's cores).
      out: a directory to keep the experiment's files in (``OUT/ID/results.json``,
        ``results.csv``, ``plot-N.svg``, ``scorecard.json``; created if missing). None:
        they go to a temporary directory, removed before the call returns.
      progress: a progress bar of the experiment's parts on stderr (tqdm; a widget in
        Jupyter with ``nvmdb[jupyter]``). None: only on a terminal or in Jupyter.

    Returns an ``nvmdb.Experiment``: ``tables`` (one long-form DataFrame per table, by a
    short key, numeric columns with their unit in the name), ``scorecard`` (DataFrame),
    ``notes``, ``config``, ``summary``, ``plots`` (their data) and ``files`` (the kept
    files' paths when ``out`` is given). See ``help(nvmdb.Experiment)``.
    """
    flags = dict(scale=scale, seed=seed, jobs=jobs)
    if out is not None:
        text = _lab("run_experiment", ["run"], [id], flags, out, progress, id, json_output=True)
        return _results.experiment_of(json.loads(text), keep_files=True)
    with tempfile.TemporaryDirectory(prefix="nvmdb-") as directory:
        text = _lab("run_experiment", ["run"], [id], flags, directory, progress, id, json_output=True)
        return _results.experiment_of(json.loads(text), keep_files=False)


@checked
def scorecard(
    experiments: Sequence[str] | None = None,
    scale: str = "quick",
    seed: int = 1,
    jobs: int | None = None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """The scorecard: the papers' claims beside our values, with a verdict.

    Keywords:
      experiments: a list of experiment ids to run, each with ``nvmdb run`` (None: every
        experiment, with ``nvmdb reproduce``, the report's scorecard).
      scale: quick or paper.
      seed: the run's one seed.
      jobs: threads (None: the machine's cores).
      progress: a progress bar of experiments and parts, as run_experiment's.

    Returns one row per claim (the ``rows`` of ``scorecard.json``): claim_id, experiment,
    seed, figure, claim, kind (a category: measured, input or constant; only measured
    claims count in the tally), paper, ours, value, tolerance, verdict (a category),
    note, note_link, paper_scale, would_hold_when and paper_scale_would_hold_when (where
    a differing claim would hold: a dict of parameter, value, unit, range_tried, relation
    and experiment, or None), and any key the scorecard adds; an experiment with no
    claims adds no rows.
    """
    flags = dict(scale=scale, seed=seed, jobs=jobs)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="nvmdb-") as out:
        if experiments is None:
            _lab("scorecard", ["reproduce"], [], flags, out, progress, "experiments", json_output=False)
            with open(os.path.join(out, "scorecard.json"), encoding="utf-8") as f:
                rows = json.load(f)["rows"]
        else:
            for id in experiments:
                text = _lab("scorecard", ["run"], [id], flags, out, progress, id, json_output=True)
                rows += json.loads(text)["scorecard"]
    return _results.scorecard_frame(rows)
