//! A scratch directory per prefix (one per test module) and process, under Cargo's
//! temporary directory, and files written into it.

use std::path::PathBuf;

/// `CARGO_TARGET_TMPDIR/nvmdb-PREFIX-PID`, created.
pub fn dir(prefix: &str) -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("nvmdb-{prefix}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes `contents` to `name` in [`dir`]`(prefix)`; returns its path.
pub fn file(prefix: &str, name: &str, contents: &[u8]) -> String {
    let path = dir(prefix).join(name);
    std::fs::write(&path, contents).unwrap();
    path.display().to_string()
}
