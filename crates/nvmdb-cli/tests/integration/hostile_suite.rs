//! The hostile-input suite: every subcommand tried as a hostile user would, class by
//! class (huge, negative, NaN and infinite numbers; zero sizes; overflowing products;
//! empty, binary, non-UTF-8 and 2 MB-line files; directories, FIFOs and devices as
//! inputs; outputs that are inputs by another name, on /dev/full or in a missing
//! directory; a closed stdout; power-loss indices beyond the workload; sizes that would
//! exhaust memory; Ctrl-C). Each invocation runs the release binary under an address-space
//! limit (`ulimit -v`, 2 GiB), so a runaway allocation fails instead of swamping the
//! machine, and a kill deadline, so a hang ends as a violation. Every invocation must end
//! without a panic or a signal, with exit 0 or 2 (1 for a full disk; 130 after Ctrl-C),
//! a refusal being exactly one stderr line naming the flag or file at fault, and leave
//! its inputs byte-identical. The test prints how many invocations each class tried
//! (`--nocapture`) and fails listing every violation.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The address-space limit of every invocation, KiB (2 GiB).
const ULIMIT_V_KIB: u64 = 2 << 20;
/// A run still going after this is a hang (a bound, not a timing assertion: every case
/// finishes or is refused in well under a second when the contract holds).
const DEADLINE: Duration = Duration::from_secs(20);
/// Ctrl-C is sent this long after the start, to a run that would go on for minutes.
const SIGINT_AFTER: Duration = Duration::from_millis(1500);

#[derive(Clone, Copy, PartialEq)]
enum Stdout {
    /// To a file.
    File,
    /// A pipe whose reading end is closed at once.
    Closed,
    /// /dev/full.
    Full,
}

struct Case {
    class: &'static str,
    args: Vec<String>,
    /// Exit codes allowed.
    codes: &'static [i32],
    /// On a nonzero exit, the one stderr line contains one of these (a flag or a path).
    names: Vec<String>,
    /// Files that must be byte-identical afterwards (besides every existing file given to
    /// an input flag).
    inputs: Vec<String>,
    stdout: Stdout,
    sigint: bool,
    /// A FIFO given as an input, and a file a writer process copies into it (a FIFO that no
    /// process writes would block the open, as for any reader).
    fifo: Option<(String, String)>,
}

const OK_OR_REFUSED: &[i32] = &[0, 2];
const REFUSED: &[i32] = &[2];
/// A full disk or an unwritable output is a failure while running (exit 1) or refused
/// up front (exit 2).
const FAILED_OR_REFUSED: &[i32] = &[1, 2];
const QUIET: &[i32] = &[0];
const STOPPED: &[i32] = &[0, 130];

fn case(class: &'static str, args: &[&str], codes: &'static [i32], names: &[&str]) -> Case {
    Case {
        class,
        args: args.iter().map(|s| s.to_string()).collect(),
        codes,
        names: names.iter().map(|s| s.to_string()).collect(),
        inputs: Vec::new(),
        stdout: Stdout::File,
        sigint: false,
        fifo: None,
    }
}

/// Flags whose value is written, not read.
const OUTPUT_FLAGS: &[&str] = &["--out", "--results", "--output", "--reads", "--dump"];

struct Fixtures {
    dir: PathBuf,
}

impl Fixtures {
    fn new() -> Fixtures {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("nvmdb-hostile-suite-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Fixtures { dir }
    }

    fn path(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }

    fn file(&self, name: &str, contents: &[u8]) -> String {
        let path = self.path(name);
        std::fs::write(&path, contents).unwrap();
        path
    }
}

/// `sh -c 'ulimit -v N; exec nvmdb ARGS'`: the limit applies to nvmdb itself.
fn command(args: &[String]) -> Command {
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(format!("ulimit -v {ULIMIT_V_KIB} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_nvmdb"))
        .args(args)
        .stdin(Stdio::null());
    command
}

/// The files a case must leave untouched, with their bytes now.
fn snapshot(case: &Case) -> Vec<(String, Vec<u8>)> {
    let mut paths: Vec<String> = case.inputs.clone();
    for (i, arg) in case.args.iter().enumerate() {
        let after_output_flag = i > 0 && OUTPUT_FLAGS.contains(&case.args[i - 1].as_str());
        if !after_output_flag && !arg.starts_with("/dev/") && Path::new(arg).is_file() {
            paths.push(arg.clone());
        }
    }
    paths.into_iter().filter_map(|p| Some((p.clone(), std::fs::read(&p).ok()?))).collect()
}

/// Runs one case; returns its violations and its exit code.
fn run(case: &Case, scratch: &Path, id: usize) -> (Vec<String>, Option<i32>) {
    let shown = format!("[{}] nvmdb {}", case.class, case.args.join(" "));
    let before = snapshot(case);
    let (out_path, err_path) = (scratch.join(format!("out-{id}")), scratch.join(format!("err-{id}")));
    let mut cmd = command(&case.args);
    cmd.stderr(File::create(&err_path).unwrap());
    match case.stdout {
        Stdout::File => cmd.stdout(File::create(&out_path).unwrap()),
        Stdout::Closed => cmd.stdout(Stdio::piped()),
        Stdout::Full => cmd.stdout(File::options().write(true).open("/dev/full").unwrap()),
    };
    let mut writer = case
        .fifo
        .as_ref()
        .map(|(fifo, source)| Command::new("sh").args(["-c", "cat \"$1\" > \"$0\"", fifo, source]).spawn().unwrap());
    let mut child = cmd.spawn().unwrap();
    drop(child.stdout.take());
    let start = Instant::now();
    let mut signalled = false;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if case.sigint && !signalled && start.elapsed() >= SIGINT_AFTER {
            Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
            signalled = true;
        }
        if start.elapsed() > DEADLINE {
            child.kill().unwrap();
            child.wait().unwrap();
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    if let Some(writer) = writer.as_mut() {
        // A writer still blocked (nvmdb never opened the FIFO) ends here.
        let _ = writer.kill();
        let _ = writer.wait();
    }
    let stderr = String::from_utf8_lossy(&std::fs::read(&err_path).unwrap_or_default()).into_owned();
    let mut violations = Vec::new();
    let mut fail = |what: String| violations.push(format!("{shown}: {what}"));
    match status {
        None => fail(format!("still running after {DEADLINE:?} (a hang)")),
        Some(status) => match status.code() {
            None => fail(format!("killed by a signal ({status}); stderr {:?}", last_chars(&stderr))),
            Some(code) => {
                if !case.codes.contains(&code) {
                    fail(format!("exit {code}, expected one of {:?}; stderr {:?}", case.codes, last_chars(&stderr)));
                }
                if code != 0 {
                    let lines = stderr.lines().count();
                    if lines != 1 {
                        fail(format!("{lines} stderr lines, expected 1: {:?}", last_chars(&stderr)));
                    } else if code == 130 {
                        if !stderr.contains("interrupted") {
                            fail(format!("stopped without saying so: {stderr:?}"));
                        }
                    } else if !case.names.is_empty() && !case.names.iter().any(|n| stderr.contains(n.as_str())) {
                        fail(format!("{:?} names none of {:?}", stderr.trim_end(), case.names));
                    }
                } else if case.stdout == Stdout::Closed && !stderr.is_empty() {
                    fail(format!("a closed stdout is not a quiet end: {stderr:?}"));
                }
            }
        },
    }
    if stderr.contains("panicked") {
        fail(format!("panicked: {}", last_chars(&stderr)));
    }
    for (path, bytes) in before {
        if std::fs::read(&path).ok().as_deref() != Some(bytes.as_slice()) {
            fail(format!("input {path} changed"));
        }
    }
    let _ = std::fs::remove_file(&out_path);
    let _ = std::fs::remove_file(&err_path);
    (violations, status.and_then(|s| s.code()))
}

fn last_chars(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    chars[chars.len().saturating_sub(300)..].iter().collect()
}

/// Numeric flags of each subcommand, with a base invocation that runs in well under a
/// second.
fn numeric_flags(f: &Fixtures) -> Vec<(Vec<String>, Vec<&'static str>)> {
    let pcm = f.file("ok.pcm", b"W 0 ff\nR 0 1\nW 4096 0102\n");
    let simple = f.file("ok.simple", b"W 0 4096\nR 0 4096\nW 8192 4096\n");
    let fiu = f.path("numeric.fiu");
    let s = |args: &[&str]| args.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    vec![
        (
            s(&[
                "btree",
                "run",
                "--variant",
                "sorted",
                "--node-lines",
                "1",
                "--entries",
                "1000",
                "--op",
                "search",
                "--count",
                "10",
            ]),
            vec!["--entries", "--count", "--fill", "--seed"],
        ),
        (
            s(&["kv", "run", "--engine", "ipl", "--workload", "insert", "--records", "1000"]),
            vec![
                "--records",
                "--buffer-kb",
                "--page-kb",
                "--sync-every",
                "--power-loss-at",
                "--pcm-write-bytes",
                "--seed",
            ],
        ),
        (s(&["kv", "demo", "--records", "100"]), vec!["--records", "--seed"]),
        (s(&["join", "run", "--algo", "simple", "--generate", "--r-mb", "1"]), vec!["--r-mb", "--seed"]),
        (s(&["join", "model"]), vec!["--r-mb", "--n-h", "--hash-table-lw", "--hash-table-w", "--gamma"]),
        (
            s(&[
                "trace",
                "gen",
                "--workload",
                "t1",
                "--requests",
                "100",
                "--footprint-mb",
                "16",
                "--buffer-pool-mb",
                "1",
                "--out",
                &fiu,
            ]),
            vec!["--requests", "--footprint-mb", "--buffer-pool-mb", "--seed"],
        ),
        (
            s(&["envy", "run", "--workload", "tpca", "--transactions", "1000"]),
            vec![
                "--transactions",
                "--tps",
                "--flash-mb",
                "--utilization",
                "--sram-mb",
                "--spare-segments",
                "--partition-segments",
                "--erase-ms",
                "--program-us",
                "--banks",
                "--redistribution-divisor",
                "--seed",
            ],
        ),
        (
            s(&["envy", "run", "--workload", "bimodal", "--turnovers", "1", "--flash-mb", "2"]),
            vec!["--turnovers", "--hot-access", "--hot-data"],
        ),
        (
            s(&["envy", "replay", "--trace", &pcm]),
            vec![
                "--size-mb",
                "--utilization",
                "--sram-mb",
                "--spare-segments",
                "--power-loss-at",
                "--partition-segments",
            ],
        ),
        (
            s(&["journal", "run", "--config", "RU20-S2X-WH64", "--workload", "kt", "--length", "1"]),
            vec!["--length", "--seed"],
        ),
        (
            s(&["ssd", "replay", "--trace", &simple, "--format", "simple"]),
            vec!["--warmup-requests", "--power-loss-at", "--power-loss-at-write", "--passes"],
        ),
    ]
}

fn numeric_cases(f: &Fixtures, cases: &mut Vec<Case>) {
    let classes: [(&str, &[&str]); 4] = [
        ("huge numbers", &["18446744073709551615", "18446744073709551616", "1e308", "99999999999999999999999"]),
        ("negative numbers", &["-1", "-1e9"]),
        ("NaN and infinite numbers", &["NaN", "inf", "-inf"]),
        ("zero sizes", &["0"]),
    ];
    for (base, flags) in numeric_flags(f) {
        for flag in flags {
            for (class, values) in classes {
                for value in values {
                    let mut args = base.clone();
                    match args.iter().position(|a| a == flag) {
                        Some(at) => args[at + 1] = value.to_string(),
                        None => args.extend([flag.to_string(), value.to_string()]),
                    }
                    let args: Vec<&str> = args.iter().map(String::as_str).collect();
                    cases.push(case(class, &args, OK_OR_REFUSED, &[flag]));
                }
            }
        }
    }
}

fn product_cases(f: &Fixtures, cases: &mut Vec<Case>) {
    let simple = f.file("product.simple", b"W 0 4096\n");
    let out = f.path("product.fiu");
    let class = "overflowing products";
    let big = "4294967296";
    cases.push(case(
        class,
        &[
            "btree",
            "run",
            "--variant",
            "sorted",
            "--node-lines",
            "8",
            "--entries",
            big,
            "--op",
            "insert",
            "--count",
            big,
        ],
        REFUSED,
        &["--entries", "--count"],
    ));
    cases.push(case(
        class,
        &["join", "run", "--algo", "simple", "--generate", "--r-mb", big, "--match-per-r", "1000"],
        REFUSED,
        &["--r-mb"],
    ));
    cases.push(case(
        class,
        &["join", "model", "--r-mb", "1e300", "--record-bytes", "1e300"],
        OK_OR_REFUSED,
        &["--r-mb", "--record-bytes"],
    ));
    cases.push(case(
        class,
        &[
            "trace",
            "gen",
            "--workload",
            "d1",
            "--requests",
            "1000000000",
            "--footprint-mb",
            "1099511627776",
            "--out",
            &out,
        ],
        REFUSED,
        &["--requests", "--footprint-mb"],
    ));
    cases.push(case(
        class,
        &["envy", "run", "--workload", "tpca", "--flash-mb", "18446744073709551615", "--utilization", "0.9"],
        REFUSED,
        &["--flash-mb"],
    ));
    cases.push(case(
        class,
        &["kv", "run", "--engine", "ipl-p", "--workload", "insert", "--records", big, "--page-kb", big],
        REFUSED,
        &["--records", "--page-kb"],
    ));
    let replay = ["ssd", "replay", "--trace", &simple, "--format", "simple"];
    for set in [
        ["--set", "flash.packages=4294967295", "--set", "flash.blocks_per_plane=4294967295"],
        ["--set", "flash.pages_per_block=4294967295", "--set", "flash.planes_per_package=4294967295"],
        ["--set", "buffer.pcm_mb=18446744073709551615", "--set", "buffer.kind=pcm-log"],
    ] {
        cases.push(case(class, &[&replay[..], &set[..]].concat(), REFUSED, &["flash.", "buffer."]));
    }
}

/// Every flag that reads a file, with a base invocation whose other inputs are valid.
fn file_flags(f: &Fixtures) -> Vec<(Vec<String>, &'static str)> {
    let simple = f.file("in.simple", b"W 0 4096\nR 0 4096\n");
    let pcm = f.file("in.pcm", b"W 0 ff\nR 0 1\n");
    let keys = f.file("in-keys.txt", b"1 1\n2 2\n");
    let ops = f.file("in-ops.txt", b"G 1\nS 0 5\n");
    let kv_keys = f.file("in-kv-keys.txt", b"1 a\n2 b\n");
    let kv_ops = f.file("in-kv-ops.txt", b"G 1\nS 0 5\n");
    let r = f.file("in-r.csv", b"a,b\n1,2\n");
    let s_csv = f.file("in-s.csv", b"c,d\n1,5\n");
    let script = f.file("in.sql", b"CREATE TABLE t(a);\nINSERT INTO t VALUES(1);\nSELECT * FROM t;\n");
    let config = f.file("in.toml", b"[ftl]\nmapping = \"page\"\n");
    let db_dir = f.path("in-db");
    std::fs::create_dir_all(&db_dir).unwrap();
    let s = |args: &[&str]| args.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    let mut flags = Vec::new();
    for format in ["simple", "disksim", "msr", "spc", "fiu"] {
        flags.push((s(&["ssd", "replay", "--trace", &simple, "--format", format]), "--trace"));
    }
    flags.push((s(&["ssd", "replay", "--trace", &simple, "--format", "simple", "--config", &config]), "--config"));
    flags.push((s(&["pcm", "replay", "--trace", &pcm]), "--trace"));
    flags.push((s(&["envy", "replay", "--trace", &pcm]), "--trace"));
    let btree = ["btree", "run", "--variant", "sorted", "--node-lines", "1", "--load", &keys, "--ops", &ops];
    flags.push((s(&btree), "--load"));
    flags.push((s(&btree), "--ops"));
    let kv = ["kv", "run", "--engine", "ipl", "--load", &kv_keys, "--ops", &kv_ops];
    flags.push((s(&kv), "--load"));
    flags.push((s(&kv), "--ops"));
    let join = ["join", "run", "--algo", "simple", "--r", &r, "--s", &s_csv, "--r-key", "a", "--s-key", "c"];
    flags.push((s(&join), "--r"));
    flags.push((s(&join), "--s"));
    flags.push((
        s(&["journal", "sql", "--config", "RU20-S2X-WH64", "--db-dir", &db_dir, "--script", &script]),
        "--script",
    ));
    flags
}

fn file_cases(f: &Fixtures, cases: &mut Vec<Case>) {
    let mut long_line = b"W 0 ".to_vec();
    long_line.extend(vec![b'0'; 2 << 20]);
    long_line.push(b'\n');
    let contents: [(&str, &str, Vec<u8>); 4] = [
        ("empty files", "empty", Vec::new()),
        ("binary files", "binary", (0..=255u8).cycle().take(4096).collect()),
        ("non-UTF-8 files", "latin1", b"W 0 4096\n\xe9t\xe9 \xff\xfe\n".to_vec()),
        ("2 MB-line files", "longline", long_line),
    ];
    let fifo_source = f.file("fifo-source", b"garbage \xff\n");
    let mut specials: Vec<(&str, String)> = vec![("directories as inputs", f.dir.display().to_string())];
    for device in ["/dev/null", "/dev/zero", "/dev/urandom"] {
        if Path::new(device).exists() {
            specials.push(("devices as inputs", device.to_string()));
        }
    }
    for (n, (base, flag)) in file_flags(f).into_iter().enumerate() {
        let at = base.iter().position(|a| a == flag).unwrap() + 1;
        for (class, name, bytes) in &contents {
            let mut args = base.clone();
            args[at] = f.file(&format!("{name}-{n}"), bytes);
            let shown = args[at].clone();
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            cases.push(case(class, &args, OK_OR_REFUSED, &[flag, &shown]));
        }
        for (class, path) in &specials {
            let mut args = base.clone();
            args[at] = path.clone();
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            cases.push(case(class, &args, OK_OR_REFUSED, &[flag, path]));
        }
        let fifo = f.path(&format!("fifo-{n}"));
        if Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success()) {
            let mut args = base.clone();
            args[at] = fifo.clone();
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let mut c = case("FIFOs as inputs", &args, OK_OR_REFUSED, &[flag, &fifo]);
            c.fifo = Some((fifo, fifo_source.clone()));
            cases.push(c);
        }
    }
    // A stored paper-scale directory: a file, and a run linked to a device.
    let class = "devices as inputs";
    let out = f.path("report-out");
    let stored = f.path("stored-devices");
    std::fs::create_dir_all(&stored).unwrap();
    let linked = Path::new(&stored).join("cidr-fig5.json");
    if std::os::unix::fs::symlink("/dev/zero", &linked).is_ok() {
        cases.push(case(
            class,
            &["run", "cidr-fig5", "--paper-results", &stored, "--out", &out],
            REFUSED,
            &["cidr-fig5.json"],
        ));
    }
    let not_dir = f.file("not-a-dir", b"x");
    cases.push(case(
        "directories as inputs",
        &["run", "cidr-fig5", "--paper-results", &not_dir, "--out", &out],
        REFUSED,
        &["--paper-results", &not_dir],
    ));
}

/// Outputs that are inputs by another name (the same path, `./`, a symbolic and a hard
/// link), outputs on /dev/full and in a missing directory.
fn output_cases(f: &Fixtures, cases: &mut Vec<Case>) {
    let keys = f.file("out-keys.txt", b"1 1\n2 2\n");
    let ops = f.file("out-ops.txt", b"G 1\nS 0 5\n");
    let kv_keys = f.file("out-kv-keys.txt", b"1 a\n2 b\n");
    let kv_ops = f.file("out-kv-ops.txt", b"G 1\nS 0 5\n");
    let r = f.file("out-r.csv", b"a,b\n1,2\n");
    let s_csv = f.file("out-s.csv", b"c,d\n1,5\n");
    let pcm = f.file("out.pcm", b"W 0 ff\nR 0 1\n");
    let script = f.file("out.sql", b"CREATE TABLE IF NOT EXISTS t(a);\nINSERT INTO t VALUES(1);\n");
    let db_dir = f.path("out-db");
    std::fs::create_dir_all(&db_dir).unwrap();
    // (command without its output flag, the output flag, the input it is aimed at)
    let commands: Vec<(Vec<&str>, &str, &str)> = vec![
        (
            vec!["btree", "run", "--variant", "sorted", "--node-lines", "1", "--load", &keys, "--ops", &ops],
            "--results",
            &keys,
        ),
        (
            vec!["btree", "run", "--variant", "sorted", "--node-lines", "1", "--load", &keys, "--ops", &ops],
            "--results",
            &ops,
        ),
        (vec!["kv", "run", "--engine", "ipl", "--load", &kv_keys, "--ops", &kv_ops], "--results", &kv_ops),
        (
            vec!["join", "run", "--algo", "simple", "--r", &r, "--s", &s_csv, "--r-key", "a", "--s-key", "c"],
            "--output",
            &s_csv,
        ),
        (vec!["envy", "replay", "--trace", &pcm], "--reads", &pcm),
        (
            vec!["journal", "sql", "--config", "RU20-S2X-WH64", "--db-dir", &db_dir, "--script", &script],
            "--dump",
            &script,
        ),
    ];
    for (n, (base, flag, input)) in commands.iter().enumerate() {
        let dir = Path::new(input).parent().unwrap();
        let name = Path::new(input).file_name().unwrap().to_str().unwrap();
        let dotted = format!("{}/./{name}", dir.display());
        let symlink = f.path(&format!("symlink-{n}"));
        let hardlink = f.path(&format!("hardlink-{n}"));
        std::os::unix::fs::symlink(input, &symlink).unwrap();
        std::fs::hard_link(input, &hardlink).unwrap();
        for output in [input.to_string(), dotted, symlink, hardlink] {
            let mut c = case("outputs equal to inputs", &[&base[..], &[flag, &output]].concat(), REFUSED, &[flag]);
            c.inputs.push(input.to_string());
            cases.push(c);
        }
        if Path::new("/dev/full").exists() {
            cases.push(case(
                "outputs on /dev/full",
                &[&base[..], &[flag, "/dev/full"]].concat(),
                FAILED_OR_REFUSED,
                &["/dev/full"],
            ));
        }
        let missing = f.path(&format!("no-such-dir/out-{n}"));
        cases.push(case(
            "outputs in missing directories",
            &[&base[..], &[flag, &missing]].concat(),
            FAILED_OR_REFUSED,
            &[flag, &missing],
        ));
    }
    let missing = f.path("no-such-dir/trace.fiu");
    let gen = ["trace", "gen", "--workload", "d1", "--requests", "10", "--footprint-mb", "4", "--out"];
    cases.push(case(
        "outputs in missing directories",
        &[&gen[..], &[&missing]].concat(),
        FAILED_OR_REFUSED,
        &["--out", &missing],
    ));
    if Path::new("/dev/full").exists() {
        cases.push(case(
            "outputs on /dev/full",
            &[&gen[..], &["/dev/full"]].concat(),
            FAILED_OR_REFUSED,
            &["/dev/full"],
        ));
        for args in [&["list"][..], &["join", "model"][..]] {
            let mut c = case("outputs on /dev/full", args, FAILED_OR_REFUSED, &["stdout", "/dev/full"]);
            c.stdout = Stdout::Full;
            cases.push(c);
        }
    }
    // Closed stdout: a pipe whose reader has gone ends the run quietly.
    let simple = f.file("closed.simple", b"W 0 4096\nR 0 4096\n");
    for args in [
        vec!["list"],
        vec!["join", "model", "--record-bytes", "1..10000:1"],
        vec!["btree", "run", "--variant", "sorted", "--node-lines", "1", "--load", &keys, "--ops", &ops],
        vec![
            "btree",
            "run",
            "--variant",
            "sorted",
            "--node-lines",
            "1",
            "--load",
            &keys,
            "--ops",
            &ops,
            "--results",
            "/dev/stdout",
        ],
        vec!["kv", "run", "--engine", "ipl", "--load", &kv_keys, "--ops", &kv_ops, "--results", "/dev/stdout"],
        vec!["envy", "replay", "--trace", &pcm],
        vec!["ssd", "replay", "--trace", &simple, "--format", "simple", "--json"],
        vec!["pcm", "replay", "--trace", &pcm],
    ] {
        let mut c = case("closed stdout", &args, QUIET, &[]);
        c.stdout = Stdout::Closed;
        cases.push(c);
    }
}

fn power_loss_cases(f: &Fixtures, cases: &mut Vec<Case>) {
    let class = "power-loss indices beyond the workload";
    let simple = f.file("cut.simple", b"W 0 4096\nW 4096 4096\nW 8192 4096\nW 0 4096\nR 0 4096\n");
    let pcm = f.file("cut.pcm", b"W 0 ff\nR 0 1\n");
    let script = f.file("cut.sql", b"CREATE TABLE t(a);\nINSERT INTO t VALUES(1);\n");
    let db_dir = f.path("cut-db");
    std::fs::create_dir_all(&db_dir).unwrap();
    let kv_keys = f.file("cut-kv-keys.txt", b"1 a\n2 b\n");
    let kv_ops = f.file("cut-kv-ops.txt", b"G 1\n");
    for at in ["1000", "18446744073709551615"] {
        let replay = ["ssd", "replay", "--trace", &simple, "--format", "simple"];
        cases.push(case(class, &[&replay[..], &["--power-loss-at", at]].concat(), REFUSED, &["--power-loss-at"]));
        cases.push(case(
            class,
            &[&replay[..], &["--power-loss-at-write", at]].concat(),
            REFUSED,
            &["--power-loss-at-write"],
        ));
        cases.push(case(
            class,
            &["envy", "replay", "--trace", &pcm, "--power-loss-at", at],
            REFUSED,
            &["--power-loss-at"],
        ));
        cases.push(case(
            class,
            &[
                "journal",
                "sql",
                "--config",
                "RU20-S2X-WH64",
                "--db-dir",
                &db_dir,
                "--script",
                &script,
                "--power-loss-at",
                at,
            ],
            REFUSED,
            &["--power-loss-at"],
        ));
        cases.push(case(
            class,
            &["kv", "run", "--engine", "ipl", "--load", &kv_keys, "--ops", &kv_ops, "--power-loss-at", at],
            REFUSED,
            &["--power-loss-at"],
        ));
        cases.push(case(
            class,
            &["kv", "run", "--engine", "ipl-p", "--workload", "insert", "--records", "100", "--power-loss-at", at],
            REFUSED,
            &["--power-loss-at"],
        ));
    }
}

/// Sizes that would take more memory than the address-space limit allows: refused up
/// front or stopped when the measured image outgrows it, never an allocation failure.
fn memory_cases(f: &Fixtures, cases: &mut Vec<Case>) {
    let class = "memory without bound";
    cases.push(case(
        class,
        &[
            "btree",
            "run",
            "--variant",
            "sorted",
            "--node-lines",
            "1",
            "--entries",
            "100000000",
            "--op",
            "search",
            "--count",
            "10",
        ],
        REFUSED,
        &["--entries"],
    ));
    let out = f.path("memory.fiu");
    cases.push(case(
        class,
        &[
            "trace",
            "gen",
            "--workload",
            "t2",
            "--requests",
            "10",
            "--footprint-mb",
            "1000000",
            "--buffer-pool-mb",
            "250000",
            "--out",
            &out,
        ],
        REFUSED,
        &["--buffer-pool-mb"],
    ));
    cases.push(case(
        class,
        &[
            "trace",
            "gen",
            "--workload",
            "t2",
            "--requests",
            "10",
            "--footprint-mb",
            "65536",
            "--buffer-pool-mb",
            "8192",
            "--out",
            &out,
        ],
        REFUSED,
        &["--buffer-pool-mb"],
    ));
    let blobs = ["zeroblob(900000000)"; 6].join(",");
    let script =
        f.file("zeroblob.sql", format!("CREATE TABLE t(a,b,c,d,e,f);\nINSERT INTO t VALUES({blobs});\n").as_bytes());
    let db_dir = f.path("zeroblob-db");
    std::fs::create_dir_all(&db_dir).unwrap();
    cases.push(case(
        class,
        &["journal", "sql", "--config", "RU20-S2X-WH64", "--db-dir", &db_dir, "--script", &script],
        REFUSED,
        &[&format!("{script}:2:")],
    ));
    let rows = "SELECT zeroblob(200000000);\n".repeat(8);
    let script = f.file("rows.sql", rows.as_bytes());
    cases.push(case(
        class,
        &["journal", "sql", "--config", "RU20-S2X-WH64", "--db-dir", &db_dir, "--script", &script],
        REFUSED,
        &[&script],
    ));
    // One-byte writes 64 KiB apart: each allocates a chunk of line records.
    let mut sparse = String::new();
    for i in 0..120_000u64 {
        sparse.push_str(&format!("W {} ff\n", i << 16));
    }
    let trace = f.file("sparse.pcm", sparse.as_bytes());
    cases.push(case(class, &["pcm", "replay", "--trace", &trace], REFUSED, &[&trace]));
}

/// Runs that would go on for minutes: Ctrl-C stops them with exit 130 and one line.
fn sigint_cases(f: &Fixtures, cases: &mut Vec<Case>) {
    let out = f.path("sigint.fiu");
    let tpcc = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/mqsim/tpcc-small.trace");
    // One key on both sides: each probe walks a chain of every R row (2.5e9 pairs).
    let mut one_key = String::from("k,v\n");
    for i in 0..50_000 {
        one_key.push_str(&format!("1,{i}\n"));
    }
    let one_key = f.file("one-key.csv", one_key.as_bytes());
    for args in [
        vec!["envy", "run", "--workload", "tpca", "--transactions", "50000000"],
        vec![
            "btree",
            "run",
            "--variant",
            "sorted",
            "--node-lines",
            "8",
            "--entries",
            "1000000",
            "--op",
            "insert",
            "--count",
            "1000000",
        ],
        vec!["trace", "gen", "--workload", "d1", "--requests", "1000000000", "--out", &out],
        vec!["kv", "run", "--engine", "ipl-p", "--workload", "update", "--records", "2000000"],
        vec!["join", "run", "--algo", "simple", "--generate", "--r-mb", "200"],
        vec!["join", "run", "--algo", "simple", "--r", &one_key, "--s", &one_key, "--r-key", "k", "--s-key", "k"],
        vec![
            "join",
            "run",
            "--algo",
            "virtual-partitioning",
            "--r",
            &one_key,
            "--s",
            &one_key,
            "--r-key",
            "k",
            "--s-key",
            "k",
        ],
        vec!["ssd", "replay", "--trace", tpcc, "--format", "disksim", "--passes", "10000"],
    ] {
        let mut c = case("SIGINT", &args, STOPPED, &[]);
        c.sigint = true;
        cases.push(c);
    }
}

#[test]
fn hostile_input_breaks_no_contract() {
    let f = Fixtures::new();
    let mut cases = Vec::new();
    numeric_cases(&f, &mut cases);
    product_cases(&f, &mut cases);
    file_cases(&f, &mut cases);
    output_cases(&f, &mut cases);
    power_loss_cases(&f, &mut cases);
    memory_cases(&f, &mut cases);
    sigint_cases(&f, &mut cases);
    let scratch = f.dir.join("scratch");
    std::fs::create_dir_all(&scratch).unwrap();
    let next = AtomicUsize::new(0);
    let violations = Mutex::new(Vec::new());
    let interrupted = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(c) = cases.get(i) else { break };
                let (found, code) = run(c, &scratch, i);
                if c.sigint && code == Some(130) {
                    interrupted.fetch_add(1, Ordering::Relaxed);
                }
                violations.lock().unwrap().extend(found);
            });
        }
    });
    let mut tried: BTreeMap<&str, usize> = BTreeMap::new();
    for c in &cases {
        *tried.entry(c.class).or_default() += 1;
    }
    for (class, n) in &tried {
        println!("{n:>5}  {class}");
    }
    println!("{:>5}  in all", cases.len());
    let sigint = cases.iter().filter(|c| c.sigint).count();
    println!("SIGINT: {} of {sigint} runs stopped by it (the others finished first)", interrupted.into_inner());
    let violations = violations.into_inner().unwrap();
    let _ = std::fs::remove_dir_all(&f.dir);
    assert!(violations.is_empty(), "{} violations:\n{}", violations.len(), violations.join("\n"));
}
