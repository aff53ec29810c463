//! Names the git commit the binary is built from (`NVMDB_GIT_COMMIT`, `unknown` outside a
//! git checkout), which every report it writes records; rebuilt when the checkout's HEAD
//! or the branch it names moves.

use std::path::Path;
use std::process::Command;

/// `git ARGS` in this crate's directory, trimmed, if git runs and succeeds.
fn git(args: &[&str]) -> Option<String> {
    let output = Command::new("git").args(args).current_dir(env!("CARGO_MANIFEST_DIR")).output().ok()?;
    if !output.status.success() {
        return None;
    }
    String::from_utf8(output.stdout).ok().map(|s| s.trim().to_string())
}

/// Rebuild when the file behind `git rev-parse --git-path NAME` changes.
fn watch(name: &str) {
    if let Some(path) = git(&["rev-parse", "--git-path", name]) {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
        if path.exists() {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let commit = git(&["rev-parse", "HEAD"]).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=NVMDB_GIT_COMMIT={commit}");
    watch("HEAD");
    watch("packed-refs");
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watch(&branch);
    }
}
