"""The package against the CLI: every wrapped function gives the CLI's `--json` on the same
inputs, errors are the CLI's one line as the right exception, experiments and their tables
are the CLI's, and the stubs and signatures mirror the CLI's flags."""

from __future__ import annotations

import ast
import errno
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
from nvmdb import _cli, _native

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
        keywords = dict(flip_n_write=True, flip_bits=bits) if fnw else {}
        assert nvmdb.pcm_replay(trace, **keywords) == expected
    assert expected["operations"] == 4 and expected["bits_written"] > 0


def test_a_keyword_becomes_a_flag_only_when_the_caller_gives_it(write, monkeypatch):
    trace = write("pcm.trace", PCM_TRACE)
    # Left at its default, flip_bits is not on the command line; given, even at its
    # default, it is, and the CLI refuses it without flip_n_write as it refuses the flag.
    nvmdb.pcm_replay(trace)
    with pytest.raises(ValueError, match="^flip_bits has no effect without flip_n_write"):
        nvmdb.pcm_replay(trace, flip_bits=64)
    seen = []
    monkeypatch.setattr(_native, "run", lambda args, progress=None: seen.append(args) or "{}")
    nvmdb.pcm_replay(trace)
    nvmdb.pcm_replay(trace, flip_n_write=True, flip_bits=64)
    assert seen == [
        ["pcm", "replay", f"--trace={trace}", "--json"],
        ["pcm", "replay", f"--trace={trace}", "--flip-n-write", "--flip-bits=64", "--json"],
    ]


def test_trace_gen_writes_the_cli_trace(cli, tmp_path):
    ours, theirs = tmp_path / "ours.trace", tmp_path / "cli.trace"
    assert nvmdb.trace_gen("t1", ours, requests=200, seed=3, footprint_mb=64, buffer_pool_mb=4) == str(ours)
    ran = cli("trace", "gen", "--workload", "t1", "--requests", "200", "--seed", "3", "--out", str(theirs),
              "--footprint-mb", "64", "--buffer-pool-mb", "4")
    assert ran.code == 0, ran.stderr
    assert ours.read_bytes() == theirs.read_bytes() and len(ours.read_text().splitlines()) >= 200
    with pytest.raises(ValueError, match="^requests must be 1 to"):
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
    got = nvmdb.run_experiment("cidr-fig5", scale="quick", seed=1, progress=False)
    tables = results["outcome"]["tables"]
    # The report's tables, cell for cell, under the short keys.
    assert [got.titles[key] for key in got.display] == [t["title"] for t in tables] and tables
    for frame, table in zip(got.display.values(), tables):
        assert list(frame.columns) == table["columns"]
        assert frame.astype(object).where(frame.notna(), None).values.tolist() == table["rows"]
    assert got.notes == results["outcome"]["notes"] and got.config == results["outcome"]["config"]
    assert got.files == {} and got.meta["seed"] == 1 and got.id == "cidr-fig5"
    assert [p.title for p in got.plots] == [p["title"] for p in results["outcome"]["plots"]]
    assert len(got.plots[0].data) == sum(len(s["points"]) for s in results["outcome"]["plots"][0]["series"])


def test_run_experiment_tables_are_tidy_with_numeric_columns():
    got = nvmdb.run_experiment("cidr-fig5", progress=False)
    assert list(got.tables) == [
        "wins",
        "wear_crossover",
        "gamma_regions",
        "gamma_energy_gain",
        "best_scheme_cache_misses",
        "best_scheme_wear",
        "best_scheme_energy",
        "best_scheme_latency",
    ]
    # A grid "MatchPerR \\ record B" of "V 1.04×" cells: one row per cell, typed.
    wear = got.tables["best_scheme_wear"]
    assert list(wear.columns) == ["match_per_r", "record_b", "best", "gain_x"]
    assert len(wear) == 11 * 12
    for column in ["match_per_r", "record_b", "gain_x"]:
        assert pd.api.types.is_numeric_dtype(wear[column]), column
    assert isinstance(wear["best"].dtype, pd.CategoricalDtype)
    shown = got.display["best_scheme_wear"]
    cell = shown.loc[shown["MatchPerR \\ record B"] == 1, "4"].item()
    row = wear[(wear["match_per_r"] == 1) & (wear["record_b"] == 4)].iloc[0]
    assert cell == f"V {row['gain_x']:.2f}×" and row["best"] == "virtual-partitioning"
    crossover = got.tables["wear_crossover"]
    assert list(crossover.columns) == ["record_size_b", "ours", "paper"]
    assert all(pd.api.types.is_numeric_dtype(crossover[c]) for c in crossover.columns)
    regions = got.tables["gamma_regions"]
    points = "figure_7_points_where_virtual_partitioning_wins_every_metric"
    assert regions[f"{points}_points"].tolist() == [11, 12] and regions[f"{points}_of_points"].tolist() == [12, 12]
    assert isinstance(got.scorecard, pd.DataFrame) and len(got.scorecard) > 0


def test_run_experiment_keeps_its_files_in_out(tmp_path):
    got = nvmdb.run_experiment("cidr-fig5", out=tmp_path / "kept", progress=False)
    assert sorted(got.files) == ["plot-1.svg", "results.csv", "results.json", "scorecard.json"]
    for name, path in got.files.items():
        assert pathlib.Path(path) == tmp_path / "kept" / "cidr-fig5" / name and pathlib.Path(path).stat().st_size > 0


def test_scorecard_gives_the_rows_of_the_experiments_scorecard(cli, tmp_path):
    out = tmp_path / "report"
    ran = cli("run", "cidr-fig5", "--out", str(out), "--paper-results", str(tmp_path / "none"))
    assert ran.code == 0, ran.stderr
    rows = json.loads((out / "cidr-fig5" / "scorecard.json").read_text())["rows"]
    frame = nvmdb.scorecard(["cidr-fig5"], progress=False)
    assert len(frame) == len(rows) > 0
    assert frame.astype(object).where(frame.notna(), None).to_dict("records") == rows
    with pytest.raises(TypeError, match="experiments must be a list of str"):
        nvmdb.scorecard("cidr-fig5")


# Errors: the CLI's one line on stderr, as the exception's message, naming the keyword.


def cli_error(ran) -> str:
    assert ran.code != 0 and ran.stdout == ""
    lines = ran.stderr.splitlines()
    assert len(lines) == 1, ran.stderr
    return lines[0]


def keyword_line(line: str, fn, renamed=None) -> str:
    """The CLI's line as the package words it: the function's keywords for its flags."""
    keywords = {(renamed or {}).get(p, p).replace("_", "-"): p for p in inspect.signature(fn).parameters}
    return _cli.keyword_message(line, keywords, fn.__name__)


def test_a_bad_flag_value_is_the_cli_line_as_value_error(cli, write):
    trace = write("pcm.trace", PCM_TRACE)
    line = cli_error(cli("pcm", "replay", "--trace", trace, "--flip-n-write", "--flip-bits", "12", "--json"))
    with pytest.raises(ValueError) as raised:
        nvmdb.pcm_replay(trace, flip_n_write=True, flip_bits=12)
    assert str(raised.value) == keyword_line(line, nvmdb.pcm_replay) and "--flip-bits" in line
    assert "flip_bits" in str(raised.value) and "--" not in str(raised.value)
    line = cli_error(cli("kv", "run", "--engine", "ipl-q", "--workload", "insert", "--records", "5", "--json"))
    with pytest.raises(ValueError) as raised:
        nvmdb.kv_run("ipl-q", workload="insert", records=5)
    assert str(raised.value) == keyword_line(line, nvmdb.kv_run) and "--engine" in line
    assert str(raised.value).startswith("invalid value 'ipl-q' for engine") and "help(nvmdb.kv_run)" in str(raised.value)


def test_a_bad_config_key_names_the_key(cli, write):
    trace = write("ssd.trace", SSD_TRACE)
    renamed = {"config": "set", "config_file": "config"}
    line = cli_error(cli("ssd", "replay", "--trace", trace, "--format", "simple", "--set", "ftl.gcc=fifo", "--json"))
    with pytest.raises(ValueError) as raised:
        nvmdb.ssd_replay(trace, "simple", config={"ftl.gcc": "fifo"})
    assert str(raised.value) == keyword_line(line, nvmdb.ssd_replay, renamed) and "ftl.gcc" in line
    line = cli_error(cli("ssd", "replay", "--trace", trace, "--format", "simple", "--set", "ftl.gc=lifo", "--json"))
    with pytest.raises(ValueError) as raised:
        nvmdb.ssd_replay(trace, "simple", config={"ftl.gc": "lifo"})
    assert str(raised.value) == keyword_line(line, nvmdb.ssd_replay, renamed)


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
    assert line.startswith(f"{missing}: cannot read: ")
    assert raised.value.errno == errno.ENOENT and raised.value.filename == missing
    assert raised.value.strerror == line.removeprefix(f"{missing}: ")
    with pytest.raises(FileNotFoundError) as raised:
        nvmdb.envy_replay(missing)
    assert raised.value.filename == missing


def test_a_directory_given_as_input_is_is_a_directory_error(tmp_path):
    with pytest.raises(IsADirectoryError) as raised:
        nvmdb.pcm_replay(tmp_path)
    assert raised.value.errno == errno.EISDIR and raised.value.filename == str(tmp_path)


def test_an_unwritable_output_is_os_error(cli, write):
    trace = write("envy.trace", ENVY_TRACE)
    reads = "/nonexistent-dir/reads.txt"
    line = cli_error(cli("envy", "replay", "--trace", trace, "--size-mb", "1", "--reads", reads, "--json"))
    with pytest.raises(FileNotFoundError) as raised:
        nvmdb.envy_replay(trace, size_mb=1, reads=reads)
    assert raised.value.strerror == line.removeprefix(f"{reads}: ") and raised.value.filename == reads
    assert raised.value.errno == errno.ENOENT
    # An output in a missing directory, given by a flag whose bad value is exit code 2.
    with pytest.raises(FileNotFoundError) as raised:
        nvmdb.trace_gen("t1", "/nonexistent-dir/t1.trace", requests=10)
    assert raised.value.filename == "/nonexistent-dir/t1.trace"


def test_an_unknown_experiment_is_value_error(cli, tmp_path):
    line = cli_error(cli("run", "no-such-experiment", "--out", str(tmp_path)))
    with pytest.raises(ValueError) as raised:
        nvmdb.run_experiment("no-such-experiment", progress=False)
    assert str(raised.value) == line


def test_flag_values_of_other_types_are_refused_naming_the_keyword():
    with pytest.raises(TypeError, match=r"config\['ftl.gc'\] must be a str, int, float or bool, not list"):
        nvmdb.ssd_replay("t", "simple", config={"ftl.gc": ["fifo"]})
    with pytest.raises(TypeError, match="^config must be a dict or None, not list"):
        nvmdb.ssd_replay("t", "simple", config=[("ftl.gc", "fifo")])
    with pytest.raises(TypeError, match="^records must be an int or None, not str '10'"):
        nvmdb.kv_run("ipl-p", workload="insert", records="10")
    with pytest.raises(TypeError, match="^records must be an int or None, not bool True"):
        nvmdb.kv_run("ipl-p", workload="insert", records=True)
    with pytest.raises(TypeError, match="^fill must be a real number, not str"):
        nvmdb.btree_run("sorted", 2, entries=10, op="insert", count=1, fill="0.5")
    with pytest.raises(TypeError, match="^flip_n_write must be True or False, not int 1"):
        nvmdb.pcm_replay("t", flip_n_write=1)
    with pytest.raises(TypeError, match="^trace must be a path"):
        nvmdb.pcm_replay(b"t")


def test_numpy_numbers_are_accepted_wherever_python_numbers_are(cli):
    np = pytest.importorskip("numpy")
    expected = cli("btree", "run", "--variant", "sorted", "--node-lines", "2", "--entries", "300", "--op", "insert",
                   "--count", "50", "--fill", "0.5", "--json").json()
    got = nvmdb.btree_run("sorted", np.int64(2), entries=np.int32(300), op="insert", count=np.uint16(50),
                          fill=np.float32(0.5), flip_n_write=np.bool_(False))
    assert got == expected


def test_negative_numbers_and_values_starting_with_a_dash_are_values(tmp_path):
    with pytest.raises(ValueError) as raised:
        nvmdb.btree_run("sorted", 2, entries=-5, op="insert", count=1)
    message = str(raised.value)
    assert message.startswith("invalid value '-5' for entries") and "--" not in message, message
    with pytest.raises(ValueError, match="^invalid value '-1' for jobs"):
        nvmdb.run_experiment("cidr-fig5", jobs=-1, progress=False)
    with pytest.raises(ValueError, match="^invalid value '--help' for engine"):
        nvmdb.kv_run("--help")
    with pytest.raises(ValueError, match="unknown experiment '--help'"):
        nvmdb.run_experiment("--help", progress=False)
    # A file whose name starts with "-" is a file.
    trace = tmp_path / "-pcm.trace"
    trace.write_text(PCM_TRACE)
    assert nvmdb.pcm_replay(trace)["operations"] == 4


def test_the_version_is_the_package_s():
    from importlib.metadata import version

    assert nvmdb.__version__ == version("nvmdb") == _native.__version__


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
    "join_model": ["join", "model"],
    "journal_sql": ["journal", "sql"],
    "kv_demo": ["kv", "demo"],
    "bench": ["bench"],
}
# Flags a function leaves out on purpose: the demo's web server, and the bench's rewrite of
# BENCHMARKS.md's table (not with --json, which the function reads).
LEFT_OUT = {"kv_demo": {"serve"}, "bench": {"markdown"}}
# Keywords of Python's own, with no flag: the bar of a call's steps.
PYTHON_ONLY = {"progress"}


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
    mapped = {RENAMED.get((name, p), p).replace("_", "-"): params[p] for p in params if p not in PYTHON_ONLY}
    assert set(mapped) == set(flags) - LEFT_OUT.get(name, set()), name
    for flag, param in mapped.items():
        default = param.default
        if default is inspect.Parameter.empty or default is None or default is False:
            assert flags[flag] in (None, "false"), (name, flag, flags[flag])
        elif isinstance(default, float):
            assert float(flags[flag]) == default, (name, flag, flags[flag], default)
        elif isinstance(default, int) and not isinstance(default, bool):
            assert int(flags[flag].replace(",", "")) == default, (name, flag, flags[flag], default)
        else:
            assert flags[flag] == _cli.text(default), (name, flag, flags[flag], default)
        assert param.name in fn.__doc__ or flag == "set", (name, param.name)


def test_the_stubs_declare_every_function_as_defined():
    stub = ast.parse((PACKAGE / "__init__.pyi").read_text())
    declared = {n.name: n for n in stub.body if isinstance(n, ast.FunctionDef)}
    # The sweep and the results are typed in their own modules and re-exported.
    reexported = [
        alias.asname or alias.name
        for n in stub.body
        if isinstance(n, ast.ImportFrom) and n.module in ("sweep", "_results") and n.level == 1
        for alias in n.names
    ]
    variables = [n.target.id for n in stub.body if isinstance(n, ast.AnnAssign)]
    assert sorted([*declared, *reexported, *variables]) == sorted(nvmdb.__all__)
    assert nvmdb.sweep is importlib.import_module("nvmdb.sweep").sweep
    source = ast.parse(inspect.getsource(nvmdb))
    for node in source.body:
        if isinstance(node, ast.FunctionDef) and node.name in declared:
            assert ast.unparse(node.args) == ast.unparse(declared[node.name].args), node.name
            assert ast.unparse(node.returns) == ast.unparse(declared[node.name].returns), node.name
            assert getattr(nvmdb, node.name).__doc__, node.name
    assert (PACKAGE / "py.typed").exists() and (PACKAGE / "_native.pyi").exists()
