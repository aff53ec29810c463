//! The bad-input contract, one test per kind of check: each refusal exits 2 with one
//! stderr line naming the file:line or the flag at fault, and leaves every input
//! byte-identical; a closed stdout ends quietly with exit 0.

use std::path::PathBuf;
use std::process::{Command, Stdio};

fn dir() -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("nvmdb-contract-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn file(name: &str, contents: &[u8]) -> String {
    let path = dir().join(name);
    std::fs::write(&path, contents).unwrap();
    path.display().to_string()
}

/// Exit code, stdout, stderr.
fn nvmdb(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_nvmdb")).args(args).stdin(Stdio::null()).output().unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

/// Asserts exit 2 and one stderr line holding every needle, and that each of `inputs` is
/// byte-identical afterwards; returns the line.
fn refused(args: &[&str], needles: &[&str], inputs: &[&str]) -> String {
    let before: Vec<Vec<u8>> = inputs.iter().map(|p| std::fs::read(p).unwrap()).collect();
    let (code, _, stderr) = nvmdb(args);
    assert!(!stderr.contains("panicked"), "{args:?} panicked: {stderr}");
    assert_eq!(code, Some(2), "{args:?}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    for needle in needles {
        assert!(stderr.contains(needle), "{args:?}: {stderr:?} lacks {needle:?}");
    }
    for (path, bytes) in inputs.iter().zip(before) {
        assert_eq!(std::fs::read(path).unwrap(), bytes, "{args:?} changed {path}");
    }
    stderr.trim_end().to_string()
}

/// A second name for `path` (a hard link), fresh.
fn hard_link(path: &str, name: &str) -> String {
    let link = dir().join(name);
    let _ = std::fs::remove_file(&link);
    std::fs::hard_link(path, &link).unwrap();
    link.display().to_string()
}

#[test]
fn an_output_that_is_an_input_by_another_name_is_refused() {
    let load = file("hl.load", b"1 a\n2 b\n");
    let ops = file("hl.ops", b"G 1\nS 0 5\n");
    let both = [load.as_str(), ops.as_str()];
    let kv = ["kv", "run", "--engine", "ipl", "--load", &load, "--ops", &ops, "--results"];
    let tree =
        ["btree", "run", "--variant", "sorted", "--node-lines", "1", "--load", &load, "--ops", &ops, "--results"];
    for (base, input, flag) in [(&kv[..], &ops, "--ops"), (&kv[..], &load, "--load"), (&tree[..], &load, "--load")] {
        let link = hard_link(input, "hl.link");
        refused(&[base, &[link.as_str()]].concat(), &["--results", &link, flag], &both);
    }
    // Through a symbolic link, and through /dev/stdout redirected to an input.
    let symlink = dir().join("hl.sym");
    let _ = std::fs::remove_file(&symlink);
    std::os::unix::fs::symlink(&ops, &symlink).unwrap();
    refused(&[&kv[..], &[symlink.to_str().unwrap()]].concat(), &["--results", "--ops"], &both);
    let appended = Command::new(env!("CARGO_BIN_EXE_nvmdb"))
        .args([&kv[..], &["/dev/stdout"]].concat())
        .stdout(std::fs::OpenOptions::new().append(true).open(&ops).unwrap())
        .output()
        .unwrap();
    assert_eq!(appended.status.code(), Some(2), "{}", String::from_utf8_lossy(&appended.stderr));
    assert_eq!(std::fs::read(&ops).unwrap(), b"G 1\nS 0 5\n");

    let r = file("hl-r.csv", b"a,b\n1,2\n");
    let s = file("hl-s.csv", b"c,d\n1,5\n");
    let link = hard_link(&s, "hl-out.csv");
    let join = ["join", "run", "--algo", "simple", "--r", &r, "--s", &s, "--r-key", "a", "--s-key", "c", "--output"];
    refused(&[&join[..], &[link.as_str()]].concat(), &["--output", &link, "--s"], &[&r, &s]);

    let trace = file("hl.envy", b"W 0 0102\nR 0 2\n");
    let link = hard_link(&trace, "hl-reads.txt");
    refused(
        &["envy", "replay", "--trace", &trace, "--size-mb", "1", "--reads", &link],
        &["--reads", "--trace"],
        &[&trace],
    );

    let ssd = file("hl.simple", b"W 0 4096\nR 0 4096\n");
    let link = hard_link(&ssd, "hl-ssd-reads.txt");
    let args = ["ssd", "replay", "--trace", &ssd, "--format", "simple", "--set", "content=bytes", "--reads", &link];
    refused(&args, &["--reads", "--trace"], &[&ssd]);

    let script = file("hl.sql", b"CREATE TABLE t(x);\nINSERT INTO t VALUES(1);\n");
    let db = dir().join("hl-db");
    std::fs::create_dir_all(&db).unwrap();
    let db = db.display().to_string();
    let sql = ["journal", "sql", "--config", "RR-S2X", "--db-dir", &db, "--script", &script, "--dump"];
    let link = hard_link(&script, "hl-dump.txt");
    refused(&[&sql[..], &[link.as_str()]].concat(), &["--dump", "--script"], &[&script]);
    // The dump may not be the database image (even before it exists) or its directory.
    let image = format!("{db}/main.db");
    refused(&[&sql[..], &[image.as_str()]].concat(), &["--dump", "--db-dir"], &[&script]);
    assert!(!std::path::Path::new(&image).exists());
    refused(&[&sql[..], &[db.as_str()]].concat(), &["--dump", "--db-dir"], &[&script]);
}
