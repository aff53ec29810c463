//! `nvmdb bench --markdown FILE`: the table of today's figures in BENCHMARKS.md, rewritten
//! between its markers, and documented where a user looks for it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use nvmdb_experiments::bench::table::{BEGIN, END};

fn nvmdb(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nvmdb")).args(args).output().expect("nvmdb runs")
}

fn temp_path(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("nvmdb-bench-markdown-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn a_run_rewrites_the_rows_between_the_markers_and_nothing_else() {
    let path = temp_path("BENCHMARKS.md");
    let file = path.display().to_string();
    std::fs::write(&path, format!("# Benchmarks\n\n{BEGIN}\n{END}\n\n## History\n\nkept\n")).unwrap();
    let run = |filter: &str| {
        let out = nvmdb(&["bench", "--filter", filter, "--exact", "--ops", "2000", "--mib", "1", "--markdown", &file]);
        assert!(out.status.success(), "{}", stderr(&out));
        std::fs::read_to_string(&path).unwrap()
    };
    let text = run("memory-pointer-chase");
    // A 1 MiB chase has no goal (its goal is stated at 64 MiB).
    let head = format!("# Benchmarks\n\n{BEGIN}\n**Goals met: 0 of the 0 rows with a goal.**\n\n| benchmark |");
    assert!(text.starts_with(&head), "{text}");
    assert!(text.ends_with(&format!("{END}\n\n## History\n\nkept\n")), "{text}");
    let row = text.lines().find(|l| l.starts_with("| `memory-pointer-chase/cached-pcm` (1 MiB) |")).expect("a row");
    assert!(row.contains("| `memory-pointer-chase/native` "), "{row}");
    // The goal is stated at 64 MiB, so a 1 MiB run has none.
    let cells: Vec<&str> = row.trim_matches('|').split(" | ").map(str::trim).collect();
    assert_eq!(cells.len(), 7, "{row}");
    assert_eq!((cells[4], cells[5]), ("—", "—"), "{row}");
    assert!(text.contains("--filter memory-pointer-chase --exact"), "{text}");
    // A second benchmark adds its row and keeps the first.
    let text = run("memory-random-mix");
    assert!(text.contains("| `memory-pointer-chase/cached-pcm` (1 MiB) |"), "{text}");
    assert!(text.contains("| `memory-random-mix/cached-pcm` (1 MiB) |"), "{text}");
}

#[test]
fn bad_markdown_files_and_flag_combinations_are_refused_before_running() {
    let path = temp_path("no-markers.md");
    std::fs::write(&path, "# Benchmarks\n").unwrap();
    let file = path.display().to_string();
    let out = nvmdb(&["bench", "--filter", "memory-pointer-chase", "--exact", "--markdown", &file]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).starts_with(&format!("--markdown {file}: no line")), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "# Benchmarks\n");
    let out = nvmdb(&["bench", "--json", "--markdown", &file]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--json") && stderr(&out).contains("--markdown"), "{}", stderr(&out));
    let missing = temp_path("missing.md").display().to_string();
    let out = nvmdb(&["bench", "--markdown", &missing]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains(&missing), "{}", stderr(&out));
}

#[test]
fn the_flag_is_documented_in_the_help_the_readme_and_benchmarks_md() {
    let help = String::from_utf8(nvmdb(&["bench", "--help"]).stdout).unwrap();
    assert!(help.contains("--markdown <FILE>"), "{help}");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    assert!(readme.contains("| `--markdown FILE` |"), "the README's bench flag table");
    // BENCHMARKS.md carries the markers and names the command that fills them.
    let benchmarks = std::fs::read_to_string(root.join("BENCHMARKS.md")).unwrap();
    assert!(benchmarks.contains(BEGIN) && benchmarks.contains(END));
    assert!(benchmarks.contains("--markdown BENCHMARKS.md"));
}
