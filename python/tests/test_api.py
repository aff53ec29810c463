"""The package against the CLI: every wrapped function gives the CLI's `--json` on the same
inputs, errors are the CLI's one line as the right exception, experiments and their tables
are the CLI's, and the stubs and signatures mirror the CLI's flags."""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import pathlib
import re
import sys
import threading

import pandas as pd
import pytest

import nvmdb
from nvmdb import _native

PACKAGE = pathlib.Path(nvmdb.__file__).parent

PCM_TRACE = "W 0 ff00\nW 62 01030710\nR 100 70\nW 0x1000 deadbeef\n"
SSD_TRACE = "W 0 4096\nW 4096 8192\nW 100 10\nR 0 4096\nT 0 4096\nW 0 4096\nW 8192 4096\n"
SMALL_SSD = {
    "flash.packages": 1,
    "flash.planes_per_package": 2,
    "flash.blocks_per_plane": 32,
    "ftl.overprovision": 0.2,
}
ENVY_TRACE = "W 0 0102\nR 0 4\nB\nW 0xff aabbccdd\nC\nR 254 6\n"


@pytest.fixture
def write(tmp_path):
    def write(name: str, text: str) -> str:
        path = tmp_path / name
        path.write_text(text)
        return str(path)

    return write


def cli_set(config: dict) -> list[str]:
    args = []
    for key, value in config.items():
        args += ["--set", f"{key}={value}"]
    return args


def test_pcm_replay_is_the_cli(cli, write):
    trace = write("pcm.trace", PCM_TRACE)
    for fnw, bits in [(False, 64), (True, 64), (True, 8)]:
        flags = ["--flip-n-write", "--flip-bits", str(bits)] if fnw else []
        expected = cli("pcm", "replay", "--trace", trace, *flags, "--json").json()
        assert nvmdb.pcm_replay(trace, flip_n_write=fnw, flip_bits=bits) == expected
    assert expected["operations"] == 4 and expected["bits_written"] > 0


def test_trace_gen_writes_the_cli_trace(cli, tmp_path):
    ours, theirs = tmp_path / "ours.trace", tmp_path / "cli.trace"
    assert nvmdb.trace_gen("t1", ours, requests=200, seed=3, footprint_mb=64, buffer_pool_mb=4) == str(ours)
    ran = cli("trace", "gen", "--workload", "t1", "--requests", "200", "--seed", "3", "--out", str(theirs),
              "--footprint-mb", "64", "--buffer-pool-mb", "4")
    assert ran.code == 0, ran.stderr
    assert ours.read_bytes() == theirs.read_bytes() and len(ours.read_text().splitlines()) >= 200
    with pytest.raises(ValueError, match="--requests"):
        nvmdb.trace_gen("t1", tmp_path / "bad.trace", requests=0)


def test_ssd_replay_is_the_cli(cli, write):
    trace = write("ssd.trace", SSD_TRACE)
    configs = [
        SMALL_SSD,
        {**SMALL_SSD, "ftl.gc": "fifo", "buffer.kind": "pcm-log", "buffer.pcm_mb": 1},
        {**SMALL_SSD, "dedup.enabled": True, "content": "fingerprint"},
    ]
    for config in configs:
        cli_config = {k: ("true" if v is True else v) for k, v in config.items()}
        expected = cli(
            "ssd", "replay", "--trace", trace, "--format", "simple", "--warmup-requests", "1",
            *cli_set(cli_config), "--json",
        ).json()
        got = nvmdb.ssd_replay(trace, "simple", config=config, warmup_requests=1)
        assert got == expected
    assert got["host_page_writes"] > 0 and got["config"]["dedup"]["enabled"] is True


def test_ssd_replay_config_file_and_power_loss_are_the_cli(cli, write):
    trace = write("ssd.trace", SSD_TRACE)
    toml = write("ssd.toml", "[ftl]\ngc = \"greedy\"\n")
    expected = cli(
        "ssd", "replay", "--trace", trace, "--format", "simple", "--config", toml, *cli_set(SMALL_SSD),
        "--power-loss-at", "3", "--prefill", "false", "--json",
    ).json()
    got = nvmdb.ssd_replay(trace, "simple", config=SMALL_SSD, config_file=toml, power_loss_at=3, prefill=False)
    assert got == expected and got["power_cycles"] == 1


def test_ssd_replay_age_passes_and_drain_are_the_cli(cli, write):
    trace = write("ssd.trace", SSD_TRACE)
    config = {**SMALL_SSD, "buffer.kind": "dpram", "buffer.pcm_mb": 1}
    expected = cli(
        "ssd", "replay", "--trace", trace, "--format", "simple", *cli_set(config),
        "--age", "--passes", "3", "--drain", "--json",
    ).json()
    got = nvmdb.ssd_replay(trace, "simple", config=config, age=True, passes=3, drain=True)
    assert got == expected
    assert got["passes"] == 3 and got["drained"] is True and got["aged_pages"] > 0
    assert got["last_pass"]["requests"] == 7 and got["pending_log_records"] == 0
    for key in ["flash_page_reads", "flash_sector_programs", "gc_page_copies", "pending_log_pages"]:
        assert key in got and key in got["last_pass"]


def test_btree_run_is_the_cli(cli, write):
    expected = cli(
        "btree", "run", "--variant", "unsorted-leaf", "--node-lines", "4", "--entries", "2000", "--op", "insert",
        "--count", "500", "--seed", "7", "--json",
    ).json()
    got = nvmdb.btree_run("unsorted-leaf", 4, entries=2000, op="insert", count=500, seed=7)
    assert got == expected
    keys = write("keys.txt", "".join(f"{k} {k * 10}\n" for k in range(0, 400, 3)))
    ops = write("ops.txt", "I 5 50\nD 3\nG 6\nS 0 20\n")
    results = str(pathlib.Path(keys).with_name("results.txt"))
    expected = cli(
        "btree", "run", "--variant", "sorted", "--node-lines", "2", "--memory", "flat", "--flip-n-write",
        "--load", keys, "--ops", ops, "--results", results, "--json",
    ).json()
    cli_results = pathlib.Path(results).read_text()
    got = nvmdb.btree_run("sorted", 2, memory="flat", flip_n_write=True, load=keys, ops=ops, results=results)
    assert got == expected and pathlib.Path(results).read_text() == cli_results


def test_join_run_is_the_cli(cli, write):
    expected = cli(
        "join", "run", "--algo", "virtual-partitioning", "--generate", "--r-mb", "0.2", "--record-bytes", "60..100:40",
        "--json",
    ).json()
    got = nvmdb.join_run("virtual-partitioning", generate=True, r_mb=0.2, record_bytes="60..100:40")
    assert got == expected and isinstance(got, list) and len(got) == 2
    r = write("r.csv", "id,v\n1,10\n2,20\n3,30\n")
    s = write("s.csv", "rid,w\n2,1\n3,2\n3,3\n9,4\n")
    expected = cli(
        "join", "run", "--algo", "simple", "--layout", "column", "--r", r, "--s", s, "--r-key", "id", "--s-key",
        "rid", "--json",
    ).json()
    assert nvmdb.join_run("simple", layout="column", r=r, s=s, r_key="id", s_key="rid") == expected


def test_kv_run_is_the_cli(cli):
    for engine in ["ipl-p", "flash-only"]:
        expected = cli(
            "kv", "run", "--engine", engine, "--workload", "insert", "--records", "3000", "--buffer-kb", "64",
            "--seed", "3", "--json",
        ).json()
        assert nvmdb.kv_run(engine, workload="insert", records=3000, buffer_kb=64, seed=3) == expected


def test_journal_run_is_the_cli(cli):
    expected = cli("journal", "run", "--config", "RU20-S2X-WH64", "--workload", "kt", "--json").json()
    assert nvmdb.journal_run("RU20-S2X-WH64", "kt") == expected


def test_envy_run_is_the_cli(cli):
    expected = cli(
        "envy", "run", "--workload", "bimodal", "--flash-mb", "2", "--turnovers", "1", "--cleaning", "greedy",
        "--json",
    ).json()
    assert nvmdb.envy_run("bimodal", flash_mb=2, turnovers=1, cleaning="greedy") == expected
    # Without page bytes: the same report.
    assert nvmdb.envy_run("bimodal", flash_mb=2, turnovers=1, cleaning="greedy", no_page_bytes=True) == expected


def test_envy_replay_is_the_cli(cli, write):
    trace = write("envy.trace", ENVY_TRACE)
    ran = cli("envy", "replay", "--trace", trace, "--size-mb", "1", "--json")
    start = ran.stdout.find("{")
    got = nvmdb.envy_replay(trace, size_mb=1)
    assert got.pop("reads") == ran.stdout[:start].splitlines() == ["01020000", "00aabbccdd00"]
    assert got == json.loads(ran.stdout[start:])
    reads = str(pathlib.Path(trace).with_name("reads.txt"))
    got = nvmdb.envy_replay(trace, size_mb=1, reads=reads)
    assert "reads" not in got and pathlib.Path(reads).read_text() == "01020000\n00aabbccdd00\n"


def test_experiments_are_nvmdb_list(cli):
    listed = [line.split()[0] for line in cli("list").stdout.splitlines() if line.strip()]
    assert nvmdb.experiments() == listed and len(listed) > 10


def test_run_experiment_gives_the_tables_of_results_json(cli, tmp_path):
    out = tmp_path / "report"
    ran = cli("run", "cidr-fig5", "--out", str(out), "--paper-results", str(tmp_path / "none"))
    assert ran.code == 0, ran.stderr
    results = json.loads((out / "cidr-fig5" / "results.json").read_text())
    frames = nvmdb.run_experiment("cidr-fig5", scale="quick", seed=1)
    tables = results["outcome"]["tables"]
    assert list(frames) == [t["title"] for t in tables] and tables
    for frame, table in zip(frames.values(), tables):
        assert isinstance(frame, pd.DataFrame)
        assert list(frame.columns) == table["columns"]
        cells = frame.astype(object).where(frame.notna(), None).values.tolist()
        assert cells == table["rows"]


def test_scorecard_gives_the_rows_of_the_experiments_scorecard(cli, tmp_path):
    out = tmp_path / "report"
    ran = cli("run", "cidr-fig5", "--out", str(out), "--paper-results", str(tmp_path / "none"))
    assert ran.code == 0, ran.stderr
    rows = json.loads((out / "cidr-fig5" / "scorecard.json").read_text())["rows"]
    frame = nvmdb.scorecard(["cidr-fig5"])
    assert len(frame) == len(rows) > 0
    assert frame.astype(object).where(frame.notna(), None).to_dict("records") == rows


# Errors: the CLI's one line on stderr, as the exception's message.


def cli_error(ran) -> str:
    assert ran.code != 0 and ran.stdout == ""
    lines = ran.stderr.splitlines()
    assert len(lines) == 1, ran.stderr
    return lines[0]


def test_a_bad_flag_value_is_the_cli_line_as_value_error(cli, write):
    trace = write("pcm.trace", PCM_TRACE)
    line = cli_error(cli("pcm", "replay", "--trace", trace, "--flip-n-write", "--flip-bits", "12", "--json"))
    with pytest.raises(ValueError) as raised:
        nvmdb.pcm_replay(trace, flip_n_write=True, flip_bits=12)
    assert str(raised.value) == line and "--flip-bits" in line
    line = cli_error(cli("kv", "run", "--engine", "ipl-q", "--workload", "insert", "--records", "5", "--json"))
    with pytest.raises(ValueError) as raised:
        nvmdb.kv_run("ipl-q", workload="insert", records=5)
    assert str(raised.value) == line and "--engine" in line


def test_a_bad_config_key_names_the_key(cli, write):
    trace = write("ssd.trace", SSD_TRACE)
    line = cli_error(cli("ssd", "replay", "--trace", trace, "--format", "simple", "--set", "ftl.gcc=fifo", "--json"))
    with pytest.raises(ValueError) as raised:
        nvmdb.ssd_replay(trace, "simple", config={"ftl.gcc": "fifo"})
    assert str(raised.value) == line and "ftl.gcc" in line
    line = cli_error(cli("ssd", "replay", "--trace", trace, "--format", "simple", "--set", "ftl.gc=lifo", "--json"))
    with pytest.raises(ValueError) as raised:
        nvmdb.ssd_replay(trace, "simple", config={"ftl.gc": "lifo"})
    assert str(raised.value) == line


def test_a_bad_input_line_is_file_and_line_as_value_error(cli, write):
    trace = write("bad.trace", "W 0 4096\n\nW 0 x\n")
    line = cli_error(cli("ssd", "replay", "--trace", trace, "--format", "simple", "--json"))
    with pytest.raises(ValueError) as raised:
        nvmdb.ssd_replay(trace, "simple")
    assert str(raised.value) == line and line.startswith(f"{trace}:3:")


def test_a_missing_file_is_the_cli_line_as_file_not_found(cli, tmp_path):
    missing = str(tmp_path / "missing.trace")
    line = cli_error(cli("pcm", "replay", "--trace", missing, "--json"))
    with pytest.raises(FileNotFoundError) as raised:
        nvmdb.pcm_replay(missing)
    assert str(raised.value) == line and line.startswith(f"{missing}: cannot read")
    with pytest.raises(OSError):
        nvmdb.envy_replay(missing)


def test_an_unwritable_output_is_os_error(cli, write):
    trace = write("envy.trace", ENVY_TRACE)
    reads = "/nonexistent-dir/reads.txt"
    line = cli_error(cli("envy", "replay", "--trace", trace, "--size-mb", "1", "--reads", reads, "--json"))
    with pytest.raises(OSError) as raised:
        nvmdb.envy_replay(trace, size_mb=1, reads=reads)
    assert str(raised.value) == line and not isinstance(raised.value, ValueError)


def test_an_unknown_experiment_is_value_error(cli, tmp_path):
    line = cli_error(cli("run", "no-such-experiment", "--out", str(tmp_path)))
    with pytest.raises(ValueError) as raised:
        nvmdb.run_experiment("no-such-experiment")
    assert str(raised.value) == line


def test_flag_values_of_other_types_are_refused():
    with pytest.raises(TypeError):
        nvmdb.ssd_replay("t", "simple", config={"ftl.gc": ["fifo"]})


# The simulation runs without the GIL.


def test_simulations_in_parallel_threads_give_the_cli_numbers(cli, write):
    # Each thread's output is its own, and runs of real SQLite, which share its PRNG,
    # still give the binary's numbers.
    trace = write("pcm.trace", PCM_TRACE * 200)
    pcm = cli("pcm", "replay", "--trace", trace, "--json").json()
    journal = cli("journal", "run", "--config", "RR-S2X", "--workload", "fb", "--json").json()
    calls = [lambda: nvmdb.pcm_replay(trace), lambda: nvmdb.journal_run("RR-S2X", "fb")] * 3
    results = [None] * len(calls)
    inside = threading.Barrier(len(calls))

    def work(i):
        inside.wait()
        results[i] = calls[i]()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [pcm, journal] * 3


def test_the_native_call_releases_the_gil(write):
    # While one thread is inside the native call, another thread runs Python code: the
    # counter moves during the call only if the GIL was released. With a switch interval
    # of 1 s the main thread would not give the GIL up within the call otherwise. The OS
    # may not schedule the counter within one call on a loaded machine: a few tries.
    trace = write("ssd.trace", "".join(f"W {i % 64 * 4096} 4096\n" for i in range(50000)))
    ticks = []
    done = threading.Event()

    def count():
        while not done.is_set():
            ticks.append(1)

    counter = threading.Thread(target=count)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1.0)
    during = []
    try:
        counter.start()
        for _ in range(5):
            before = len(ticks)
            nvmdb.ssd_replay(trace, "simple", config=SMALL_SSD)
            during.append(len(ticks) - before)
            if during[-1] > 0:
                break
    finally:
        done.set()
        counter.join()
        sys.setswitchinterval(interval)
    assert during[-1] > 0, during


# Signatures, stubs and docstrings mirror the CLI's flags.

RENAMED = {("ssd_replay", "config"): "set", ("ssd_replay", "config_file"): "config"}
COMMANDS = {
    "pcm_replay": ["pcm", "replay"],
    "ssd_replay": ["ssd", "replay"],
    "btree_run": ["btree", "run"],
    "join_run": ["join", "run"],
    "kv_run": ["kv", "run"],
    "journal_run": ["journal", "run"],
    "envy_run": ["envy", "run"],
    "envy_replay": ["envy", "replay"],
    "trace_gen": ["trace", "gen"],
}


def help_flags(words: list[str]) -> dict[str, str | None]:
    """Each long flag of a command's --help and its default, if it shows one."""
    text = _native.run([*words, "--help"])
    flags: dict[str, str | None] = {}
    for block in re.split(r"\n(?=\s+(?:-\w, )?--)", text):
        m = re.match(r"\s+(?:-\w, )?--([a-z0-9-]+)", block)
        if m and m.group(1) not in ("json", "help", "version"):
            default = re.search(r"\[default: ([^\]]*)\]", block)
            flags[m.group(1)] = default.group(1) if default else None
    return flags


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_keywords_are_the_cli_flags_with_its_defaults(name):
    fn = getattr(nvmdb, name)
    flags = help_flags(COMMANDS[name])
    params = inspect.signature(fn).parameters
    mapped = {RENAMED.get((name, p), p).replace("_", "-"): params[p] for p in params}
    assert set(mapped) == set(flags), name
    for flag, param in mapped.items():
        default = param.default
        if default is inspect.Parameter.empty or default is None or default is False:
            assert flags[flag] in (None, "false"), (name, flag, flags[flag])
        elif isinstance(default, float):
            assert float(flags[flag]) == default, (name, flag, flags[flag], default)
        else:
            assert flags[flag] == nvmdb._text(default), (name, flag, flags[flag], default)
        assert param.name in fn.__doc__ or flag == "set", (name, param.name)


def test_the_stubs_declare_every_function_as_defined():
    stub = ast.parse((PACKAGE / "__init__.pyi").read_text())
    declared = {n.name: n for n in stub.body if isinstance(n, ast.FunctionDef)}
    # The sweep is typed in its own module and re-exported by the stub.
    reexported = [
        alias.asname or alias.name
        for n in stub.body
        if isinstance(n, ast.ImportFrom) and n.module == "sweep" and n.level == 1
        for alias in n.names
    ]
    assert sorted([*declared, *reexported]) == sorted(nvmdb.__all__)
    assert nvmdb.sweep is importlib.import_module("nvmdb.sweep").sweep
    source = ast.parse(inspect.getsource(nvmdb))
    for node in source.body:
        if isinstance(node, ast.FunctionDef) and node.name in declared:
            assert ast.unparse(node.args) == ast.unparse(declared[node.name].args), node.name
            assert ast.unparse(node.returns) == ast.unparse(declared[node.name].returns), node.name
            assert getattr(nvmdb, node.name).__doc__, node.name
    assert (PACKAGE / "py.typed").exists() and (PACKAGE / "_native.pyi").exists()
