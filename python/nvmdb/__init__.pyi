"""Type stubs of the nvmdb package (the functions are in __init__.py)."""

import os
from typing import Any, Mapping, Sequence

import pandas as pd

# The sweep is typed in nvmdb/sweep.py, the results in nvmdb/_results.py.
from ._results import Experiment as Experiment, Plot as Plot
from .sweep import InputFile as InputFile, SweepError as SweepError, sweep as sweep

__version__: str

def pcm_replay(trace: str | os.PathLike[str], flip_n_write: bool=False, flip_bits: int=64, progress: bool | None=None) -> dict[str, Any]:
    ...

def trace_gen(workload: str, out: str | os.PathLike[str], requests: int | None=None, seed: int=1, footprint_mb: int=1024, buffer_pool_mb: int=60, progress: bool | None=None) -> str:
    ...

def ssd_replay(trace: str | os.PathLike[str], format: str, config: Mapping[str, str | int | float | bool] | None=None, warmup_requests: int=0, config_file: str | os.PathLike[str] | None=None, power_loss_at: int | None=None, prefill: bool | None=None, disksim_devices: str='separate', age: bool=False, passes: int=1, drain: bool=False, reads: str | os.PathLike[str] | None=None, power_loss_at_write: int | None=None, power_loss_during_recovery: int | None=None, progress: bool | None=None) -> dict[str, Any]:
    ...

def btree_run(variant: str, node_lines: int, memory: str='cached', flip_n_write: bool=False, load: str | os.PathLike[str] | None=None, ops: str | os.PathLike[str] | None=None, results: str | os.PathLike[str] | None=None, entries: int | None=None, fill: float=0.75, op: str | None=None, count: int | None=None, seed: int=1, progress: bool | None=None) -> dict[str, Any]:
    ...

def join_run(algo: str, layout: str='row', r: str | os.PathLike[str] | None=None, s: str | os.PathLike[str] | None=None, r_key: str | None=None, s_key: str | None=None, output: str | os.PathLike[str] | None=None, generate: bool=False, r_mb: float=50.0, record_bytes: str | int='100', match_per_r: str | int='1', seed: int=1, memory: str='cached', id_encoding: str='delta16', progress: bool | None=None) -> dict[str, Any] | list[dict[str, Any]]:
    ...

def join_model(r_mb: float=50.0, record_bytes: str | int='20..100', match_per_r: str | int='1', n_h: float=1.8, hash_table_lw: float=1.5, hash_table_w: float=5.0, gamma: float=32.0) -> dict[str, Any]:
    ...

def kv_run(engine: str, workload: str | None=None, records: int | None=None, buffer_kb: int=1024, page_kb: int=8, sync_every: int | None=None, power_loss_at: int | None=None, preset: str='board', flash_time: str | None=None, pcm_write_bytes: int=128, seed: int=1, load: str | os.PathLike[str] | None=None, ops: str | os.PathLike[str] | None=None, results: str | os.PathLike[str] | None=None, power_loss_at_write: int | None=None, power_loss_during_recovery: int | None=None, progress: bool | None=None) -> dict[str, Any]:
    ...

def kv_demo(records: int=50000, seed: int=1) -> list[dict[str, Any]]:
    ...

def journal_run(config: str, workload: str, length: int=1, seed: int=1, pcm_write_time: str='chunks', power_loss_at: int | None=None, power_loss_at_write: int | None=None, power_loss_during_recovery: int | None=None, progress: bool | None=None) -> dict[str, Any]:
    ...

def journal_sql(config: str, db_dir: str | os.PathLike[str], script: str | os.PathLike[str], power_loss_at: int | None=None, dump: str | os.PathLike[str] | None=None, journal_mode: str='delete', seed: int=1, pcm_write_time: str='chunks', power_loss_at_write: int | None=None, power_loss_during_recovery: int | None=None, expect: str | os.PathLike[str] | None=None, progress: bool | None=None) -> dict[str, Any]:
    ...

def envy_run(workload: str, tps: float=50.0, transactions: int=5000, turnovers: int=4, hot_access: float=0.9, hot_data: float=0.1, flash_mb: int=32, utilization: float=0.8, cleaning: str='hybrid', partition_segments: int=8, sram_mb: float | None=None, spare_segments: int=1, no_page_bytes: bool=False, erase_ms: float | None=None, program_us: float | None=None, banks: int | None=None, parallel_banks: bool=False, redistribution_divisor: int | None=None, converge: bool=False, tolerance: float | None=None, max_turnovers: float | None=None, seed: int=1, progress: bool | None=None) -> dict[str, Any]:
    ...

def envy_replay(trace: str | os.PathLike[str], size_mb: int=16, power_loss_at: int | None=None, reads: str | os.PathLike[str] | None=None, utilization: float=0.8, cleaning: str='hybrid', partition_segments: int=8, sram_mb: float | None=None, spare_segments: int=1, power_loss_at_write: int | None=None, power_loss_during_recovery: int | None=None, progress: bool | None=None) -> dict[str, Any]:
    ...

def bench(filter: str | None=None, exact: bool=False, ops: int=5000000, mib: int=64, kv_records: int=100000, progress: bool | None=None) -> pd.DataFrame:
    ...

def experiments() -> list[str]:
    ...

def run_experiment(id: str, scale: str='quick', seed: int=1, jobs: int | None=None, out: str | os.PathLike[str] | None=None, progress: bool | None=None) -> Experiment:
    ...

def scorecard(experiments: Sequence[str] | None=None, scale: str='quick', seed: int=1, jobs: int | None=None, progress: bool | None=None) -> pd.DataFrame:
    ...
