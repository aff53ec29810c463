//! Opening input files, reading small ones whole with a size cap, and refusing an output
//! that is an input. Line-oriented files are read by their crates' parsers, whose bounded
//! line reading refuses a huge or binary file at its first bad line instead of reading it
//! whole into memory.

use std::fs::File;
use std::io::Read;
use std::path::Path;

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

/// Reads a small file whole (at most 1 MiB), naming it on failure.
pub fn read_small(path: &str) -> Result<String, CliError> {
    let mut bytes = Vec::new();
    open(path)?.take(MAX_SMALL_FILE_BYTES + 1).read_to_end(&mut bytes).map_err(|e| CliError::unreadable(path, &e))?;
    if bytes.len() as u64 > MAX_SMALL_FILE_BYTES {
        return Err(CliError::input(format!("{path}: larger than {MAX_SMALL_FILE_BYTES} bytes")));
    }
    let text = String::from_utf8(bytes).map_err(|_| CliError::input(format!("{path}: not valid UTF-8")))?;
    Ok(text.strip_prefix('\u{feff}').map(str::to_string).unwrap_or(text))
}

/// Refuses an output path that is one of the inputs (compared canonicalised, so `./a` and
/// a symlink to `a` count), before anything is written.
pub fn check_output_is_not_an_input(output: (&str, &str), inputs: &[(&str, &str)]) -> Result<(), CliError> {
    let (out_flag, out_path) = output;
    let Ok(out) = Path::new(out_path).canonicalize() else {
        // A file that does not exist yet is no input.
        return Ok(());
    };
    for (flag, path) in inputs {
        if Path::new(path).canonicalize().is_ok_and(|p| p == out) {
            return Err(CliError::input(format!(
                "{out_flag} {out_path} is the {flag} input; refusing to overwrite it"
            )));
        }
    }
    Ok(())
}
