//! Opening input files, reading small ones whole with a size cap, and refusing an output
//! that is an input. Line-oriented files are read by their crates' parsers, whose bounded
//! line reading refuses a huge or binary file at its first bad line instead of reading it
//! whole into memory.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::error::CliError;

/// The largest whole-file input (a configuration), bytes.
const MAX_SMALL_FILE_BYTES: u64 = 1 << 20;

/// Opens an input file, naming it on failure.
pub fn open(path: &str) -> Result<File, CliError> {
    let mut file = File::open(path).map_err(|e| CliError::unreadable(path, &e))?;
    if file.metadata().is_ok_and(|m| m.is_dir()) {
        // Reading it gives the OS's own error (EISDIR), kept for the Python package.
        return Err(match file.read(&mut [0u8; 1]) {
            Err(e) => CliError::unreadable(path, &e),
            Ok(_) => CliError::input(format!("{path}: cannot read: is a directory")),
        });
    }
    Ok(file)
}

/// Refuses a FIFO or socket for an input that is read more than once (a second open of a
/// FIFO would wait for a writer that has gone), naming it.
pub fn check_rereadable(path: &str) -> Result<(), CliError> {
    use std::os::unix::fs::FileTypeExt;
    let kind = std::fs::metadata(path).map_err(|e| CliError::unreadable(path, &e))?.file_type();
    if kind.is_fifo() || kind.is_socket() {
        return Err(CliError::input(format!("{path}: a pipe; it is read more than once, give a file")));
    }
    Ok(())
}

/// Reads a small text file whole (at most 1 MiB, UTF-8, no NUL byte), naming it on
/// failure: `FILE:LINE` for a bad byte.
pub fn read_small(path: &str) -> Result<String, CliError> {
    let mut bytes = Vec::new();
    open(path)?.take(MAX_SMALL_FILE_BYTES + 1).read_to_end(&mut bytes).map_err(|e| CliError::unreadable(path, &e))?;
    if bytes.len() as u64 > MAX_SMALL_FILE_BYTES {
        return Err(CliError::input(format!("{path}: larger than {MAX_SMALL_FILE_BYTES} bytes")));
    }
    if let Some(at) = bytes.iter().position(|&b| b == 0) {
        return Err(CliError::at_line(path, line_of(&bytes, at), "a NUL byte (a text file has none)"));
    }
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            let line = line_of(e.as_bytes(), e.utf8_error().valid_up_to());
            return Err(CliError::at_line(path, line, "not valid UTF-8"));
        }
    };
    Ok(text.strip_prefix('\u{feff}').map(str::to_string).unwrap_or(text))
}

/// The line of byte `at` of `bytes`: 1 plus the newlines before it.
fn line_of(bytes: &[u8], at: usize) -> u64 {
    1u64.saturating_add(bytes[..at].iter().filter(|&&b| b == b'\n').count() as u64)
}

/// What a path names, so that two names of one file compare equal: an existing file by its
/// device and inode (through symbolic links, `/dev/stdout` and hard links alike), a file
/// that does not exist yet by its directory, canonicalised, and its name.
#[derive(Debug, PartialEq, Eq)]
enum FileId {
    Inode { dev: u64, ino: u64 },
    Path(PathBuf),
}

/// The [`FileId`] of `path`, with whether it is something other than a regular file or a
/// directory (a device or a pipe, where a write replaces nothing); `None` where the path
/// cannot name a file at all (its directory is missing).
fn file_id(path: &Path) -> Option<(FileId, bool)> {
    match std::fs::metadata(path) {
        Ok(meta) => Some((inode(path, &meta)?, !meta.is_file() && !meta.is_dir())),
        Err(_) => {
            let name = path.file_name()?;
            let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
            Some((FileId::Path(dir.canonicalize().ok()?.join(name)), false))
        }
    }
}

#[cfg(unix)]
fn inode(_: &Path, meta: &std::fs::Metadata) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    Some(FileId::Inode { dev: meta.dev(), ino: meta.ino() })
}

#[cfg(not(unix))]
fn inode(path: &Path, _: &std::fs::Metadata) -> Option<FileId> {
    path.canonicalize().ok().map(FileId::Path)
}

/// Whether `a` and `b` name the same existing file or directory (by any names).
pub fn same_file(a: &Path, b: &Path) -> bool {
    matches!((file_id(a), file_id(b)), (Some((x @ FileId::Inode { .. }, _)), Some((y, _))) if x == y)
}

/// Refuses, before anything is written, an output (`(flag, path)`) that names one of the
/// inputs or another output: the same file by any name (a symbolic or hard link,
/// `/dev/stdout` redirected to it, `./a`), or, for files that do not exist yet, the same
/// path. An output that is a device or a pipe (`/dev/null`, `/dev/stdout` on a terminal
/// or pipe) replaces nothing and is not compared.
pub fn check_outputs(outputs: &[(&str, &str)], inputs: &[(&str, &str)]) -> Result<(), CliError> {
    for (i, (out_flag, out_path)) in outputs.iter().enumerate() {
        let Some((out, false)) = file_id(Path::new(out_path)) else { continue };
        for (flag, path) in inputs {
            // An input that does not exist is refused when it is opened, not here.
            if file_id(Path::new(path)).is_some_and(|(id, _)| matches!(id, FileId::Inode { .. }) && id == out) {
                return Err(CliError::input(format!(
                    "{out_flag} {out_path} is the {flag} input {path}; refusing to overwrite it"
                )));
            }
        }
        for (flag, path) in &outputs[..i] {
            if file_id(Path::new(path)).is_some_and(|(id, _)| id == out) {
                return Err(CliError::input(format!("{out_flag} {out_path} is also the {flag} output {path}")));
            }
        }
    }
    Ok(())
}

/// [`check_outputs`] of one output.
pub fn check_output_is_not_an_input(output: (&str, &str), inputs: &[(&str, &str)]) -> Result<(), CliError> {
    check_outputs(&[output], inputs)
}
