"""The functions added beside the first ones (join_model, journal_sql, kv_demo, bench) give
the CLI's numbers; an interrupt stops a running call with KeyboardInterrupt and leaves no
output half-written; progress bars show only when asked."""

from __future__ import annotations

import _thread
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator

import pandas as pd
import pytest

import nvmdb


def test_join_model_is_the_cli(cli):
    expected = cli("join", "model", "--record-bytes", "20..60", "--match-per-r", "1..3", "--gamma", "0.5", "--json")
    assert nvmdb.join_model(record_bytes="20..60", match_per_r="1..3", gamma=0.5) == expected.json()
    assert len(expected.json()["rows"]) == 3 * 3 * 3


def test_journal_sql_is_the_cli(cli, tmp_path):
    script = tmp_path / "s.sql"
    script.write_text("CREATE TABLE t(a, b);\nINSERT INTO t VALUES (1, 'x');\nINSERT INTO t VALUES (2, 'y');\n"
                      "SELECT a, b FROM t ORDER BY a;\n")
    for name in ["cli", "py"]:
        (tmp_path / name).mkdir()
    expected = cli("journal", "sql", "--config", "RU20-S2X-WH64", "--db-dir", str(tmp_path / "cli"), "--script",
                   str(script), "--dump", str(tmp_path / "cli.dump"), "--json").json()
    got = nvmdb.journal_sql("RU20-S2X-WH64", tmp_path / "py", script, dump=tmp_path / "py.dump")
    assert got == expected and got["rows"]
    assert (tmp_path / "py.dump").read_text() == (tmp_path / "cli.dump").read_text()
    assert (tmp_path / "py" / "main.db").read_bytes() == (tmp_path / "cli" / "main.db").read_bytes()


def test_kv_demo_is_the_cli_without_its_server(cli):
    expected = cli("kv", "demo", "--records", "500", "--seed", "3", "--json").json()
    got = nvmdb.kv_demo(records=500, seed=3)
    assert got == expected and len(got) == 12


def test_bench_runs_the_cli_benchmarks(cli):
    # Times differ from run to run: compare the benchmarks run, not their speed.
    expected = cli("bench", "--filter", "memory-random-mix", "--exact", "--ops", "2000", "--mib", "1", "--json").json()
    got = nvmdb.bench(filter="memory-random-mix", exact=True, ops=2000, mib=1)
    assert isinstance(got, pd.DataFrame) and got["name"].tolist() == [r["name"] for r in expected]
    assert got["ns_per_op"].gt(0).all()


# Interrupts. The calls below would run for minutes: an interrupt ends them at the
# driver's next check. The tests assert on what is left, never on how long it took.


@contextlib.contextmanager
def interrupted_after(after_s: float = 0.5) -> Iterator[None]:
    """Expects KeyboardInterrupt from the block, raised in the main thread as Ctrl-C raises
    it (Python's SIGINT handler, run by the native call's watcher) ``after_s`` into it."""
    timer = threading.Timer(after_s, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            yield
    finally:
        timer.cancel()


def test_an_interrupt_stops_a_call_and_leaves_no_output(tmp_path):
    out = tmp_path / "t1.trace"
    with interrupted_after():
        nvmdb.trace_gen("t1", out, requests=10**9)
    assert list(tmp_path.iterdir()) == [], "nothing half-written is left"
    # The process goes on: the next call runs to its end.
    assert nvmdb.trace_gen("t1", out, requests=100) == str(out)
    assert len(out.read_text().splitlines()) >= 100


def test_an_interrupt_keeps_an_earlier_output_whole(tmp_path):
    out = tmp_path / "t1.trace"
    nvmdb.trace_gen("t1", out, requests=100)
    before = out.read_bytes()
    with interrupted_after():
        nvmdb.trace_gen("t1", out, requests=10**9)
    assert out.read_bytes() == before and list(tmp_path.iterdir()) == [out]


def test_an_interrupt_stops_the_simulation_drivers(tmp_path):
    # Each call would run far longer than the test: the interrupt ends it at the check
    # of its driver (kv per operation, envy per update, the B+-tree per operation).
    calls = [
        lambda: nvmdb.kv_run("flash-only", workload="insert", records=10_000_000),
        lambda: nvmdb.envy_run("uniform", flash_mb=64, turnovers=1000, no_page_bytes=True),
        lambda: nvmdb.btree_run("unsorted", 8, entries=100_000, op="search", count=20_000_000),
    ]
    for call in calls:
        with interrupted_after():
            call()


SCRIPT = textwrap.dedent(
    """
    import sys
    import nvmdb

    out = sys.argv[1]
    print("started", flush=True)
    try:
        nvmdb.run_experiment("cidr-fig8", out=out, progress=False)
    except KeyboardInterrupt:
        print("KeyboardInterrupt", flush=True)
        sys.exit(3)
    print("finished", flush=True)
    """
)


def test_ctrl_c_stops_an_experiment_run_in_a_script(tmp_path):
    # A real SIGINT to a Python process inside run_experiment.
    script = tmp_path / "run.py"
    script.write_text(SCRIPT)
    out = tmp_path / "report"
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    child = subprocess.Popen(
        [sys.executable, str(script), str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        # A shell without job control would have the child ignore SIGINT.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "started"
    time.sleep(1.0)
    child.send_signal(signal.SIGINT)
    stdout, stderr = child.communicate(timeout=600)
    assert child.returncode == 3 and stdout.strip() == "KeyboardInterrupt", (stdout, stderr)
    # Nothing half-written: no temporary file is left, and an experiment whose files were
    # written has all of them whole.
    partial = [p for p in out.rglob("*") if p.name.endswith(".partial")]
    assert partial == []
    results = out / "cidr-fig8" / "results.json"
    if results.exists():
        json.loads(results.read_text())


def test_progress_shows_only_when_asked(capfd):
    nvmdb.run_experiment("cidr-fig5", progress=False)
    assert "100%" not in capfd.readouterr().err
    nvmdb.run_experiment("cidr-fig5", progress=True)
    assert "cidr-fig5: 100%" in capfd.readouterr().err


def test_a_single_call_counts_its_steps_and_shows_them_only_when_asked(capfd):
    from nvmdb import _native

    seen: list[tuple[int, int]] = []
    args = ["kv", "run", "--engine", "ipl-p", "--workload", "insert", "--records", "3000", "--json"]
    _native.run(args, lambda done, total: seen.append((done, total)))
    # One step per operation (3,000 inserts and the syncs), the total not known ahead.
    assert seen and seen[-1][0] >= 3000 and all(total == 0 for _, total in seen)
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)
    nvmdb.kv_run("ipl-p", workload="insert", records=3000, progress=False)
    assert "steps" not in capfd.readouterr().err
    nvmdb.kv_run("ipl-p", workload="insert", records=3000, progress=True)
    shown = re.findall(r"kv_run: (\d+) steps", capfd.readouterr().err)
    assert shown and int(shown[-1]) == seen[-1][0]


def test_a_failing_progress_callback_stops_the_call(tmp_path):
    from nvmdb import _native

    def fail(done: int, total: int) -> None:
        raise RuntimeError(f"callback at {done} of {total}")

    with pytest.raises(RuntimeError, match="callback at"):
        _native.run(["run", "cidr-fig5", "--out", str(tmp_path)], fail)
