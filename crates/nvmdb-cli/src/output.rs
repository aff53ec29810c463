//! Writing to stdout and to output files. A closed pipe (`nvmdb … | head -1`, an output
//! file `/dev/stdout` so read) ends the program quietly ([`CliError::unwritable`]); any
//! other write failure (a full disk) is one error line naming the file, exit 1.
//!
//! Stdout is this module's [`Stdout`]: the process's stdout, or, inside [`capture`] on the
//! same thread, a buffer that `capture` returns (how a program runs a command and gets its
//! output, `crate::run_captured`).

use std::cell::RefCell;
use std::fmt::Display;
use std::io::{BufWriter, ErrorKind, Write};

use crate::error::CliError;

thread_local! {
    /// The captured stdout of the command running on this thread, if one is captured.
    static CAPTURED: RefCell<Option<Vec<u8>>> = const { RefCell::new(None) };
}

/// Runs `command` with this thread's stdout (every [`Stdout`] written on it) going to a
/// buffer, and returns what was written. Nested captures are refused (a bug: exit 1).
pub fn capture(command: impl FnOnce() -> Result<(), CliError>) -> Result<String, CliError> {
    /// Ends the capture however `command` ends, a panic included.
    struct Guard;
    impl Drop for Guard {
        fn drop(&mut self) {
            CAPTURED.with(|c| c.borrow_mut().take());
        }
    }
    let nested = CAPTURED.with(|c| c.borrow_mut().replace(Vec::new()).is_some());
    if nested {
        return Err(CliError::failed("a command's output is already being captured on this thread"));
    }
    let guard = Guard;
    command()?;
    let bytes = CAPTURED.with(|c| c.borrow_mut().take()).unwrap_or_default();
    drop(guard);
    String::from_utf8(bytes).map_err(|_| CliError::failed("stdout: the output is not UTF-8"))
}

/// Stdout: the process's, or the buffer of a [`capture`] running on this thread.
#[derive(Debug, Clone, Copy)]
pub struct Stdout;

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let captured = CAPTURED.with(|c| c.borrow_mut().as_mut().map(|b| b.extend_from_slice(buf)).is_some());
        if captured {
            Ok(buf.len())
        } else {
            std::io::stdout().write(buf)
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stdout().flush()
    }
}

/// Buffered stdout.
#[derive(Debug)]
pub struct Output {
    out: BufWriter<Stdout>,
}

impl Output {
    /// Stdout.
    pub fn new() -> Output {
        Output { out: BufWriter::new(Stdout) }
    }

    /// Writes one line.
    pub fn line(&mut self, text: impl Display) -> Result<(), CliError> {
        writeln!(self.out, "{text}").map_err(stdout_error)
    }

    /// Writes a value as pretty JSON, then flushes.
    pub fn json(mut self, value: &impl serde::Serialize) -> Result<(), CliError> {
        let text = serde_json::to_string_pretty(value).map_err(|e| CliError::failed(format!("JSON: {e}")))?;
        self.line(text)?;
        self.finish()
    }

    /// Writes a report: pretty JSON with `json`, else one `key  value` line per field.
    pub fn report(mut self, value: &impl serde::Serialize, json: bool) -> Result<(), CliError> {
        if json {
            return self.json(value);
        }
        let value = serde_json::to_value(value).map_err(|e| CliError::failed(format!("JSON: {e}")))?;
        for (key, v) in value.as_object().into_iter().flatten() {
            self.line(format_args!("{key:>18}  {v}"))?;
        }
        self.finish()
    }

    /// Flushes; every write is only certain after this.
    pub fn finish(mut self) -> Result<(), CliError> {
        self.out.flush().map_err(stdout_error)
    }
}

fn stdout_error(e: std::io::Error) -> CliError {
    CliError::unwritable("stdout", &e)
}

/// Writes an output file whole, naming it on failure: see [`OutputFile`].
pub fn write_file(path: &str, contents: &str) -> Result<(), CliError> {
    write_bytes(path, contents.as_bytes())
}

/// Writes an output file of bytes whole, naming it on failure: see [`OutputFile`].
pub fn write_bytes(path: &str, contents: &[u8]) -> Result<(), CliError> {
    let mut file = OutputFile::create(path).map_err(|e| CliError::unwritable(path, &e))?;
    file.write_all(contents).map_err(|e| CliError::unwritable(path, &e))?;
    file.finish()
}

/// Writes `bytes` as lowercase hex, two digits a byte (the read-back lines of
/// `envy replay` and `ssd replay`).
pub fn write_hex(out: &mut dyn Write, bytes: &[u8]) -> std::io::Result<()> {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut text = [0u8; 512];
    for chunk in bytes.chunks(256) {
        for (pair, &b) in text.chunks_exact_mut(2).zip(chunk) {
            pair[0] = DIGITS[usize::from(b >> 4)];
            pair[1] = DIGITS[usize::from(b & 15)];
        }
        out.write_all(&text[..chunk.len().saturating_mul(2)])?;
    }
    Ok(())
}

/// An output file written under a temporary name in its directory
/// (`.NAME.PID-N.partial`) and renamed to its path by [`OutputFile::finish`]: a run that
/// fails or is interrupted before then leaves the path as it was (the temporary file is
/// removed when this is dropped), never a half-written file. A path that names a symbolic
/// link gets the file it links to replaced; one that names something other than a file
/// (`/dev/null`, a pipe) is written in place, as there is nothing to rename onto it.
#[derive(Debug)]
pub struct OutputFile {
    path: String,
    /// The temporary file and the file it becomes; `None` when written in place.
    rename: Option<(std::path::PathBuf, std::path::PathBuf)>,
    file: Option<BufWriter<std::fs::File>>,
}

impl OutputFile {
    /// A new file for `path` (nothing is at `path` until [`OutputFile::finish`]); the
    /// error is the operating system's (a missing directory, no permission).
    pub fn create(path: &str) -> std::io::Result<OutputFile> {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let given = std::path::Path::new(path);
        if std::fs::metadata(given).is_ok_and(|m| !m.is_file()) {
            let file = std::fs::OpenOptions::new().write(true).truncate(true).open(given)?;
            return Ok(OutputFile { path: path.to_string(), rename: None, file: Some(BufWriter::new(file)) });
        }
        // An existing path is resolved through its links; a new one is taken as given.
        let target = given.canonicalize().unwrap_or_else(|_| given.to_path_buf());
        let Some(name) = target.file_name() else {
            // No file name ("dir/", ".."): the OS says why it cannot be written.
            std::fs::OpenOptions::new().write(true).open(&target)?;
            return Err(std::io::Error::new(ErrorKind::InvalidInput, "not a file name"));
        };
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let partial = target.with_file_name(format!(".{}.{}-{n}.partial", name.to_string_lossy(), std::process::id()));
        let file = std::fs::OpenOptions::new().write(true).create_new(true).open(&partial)?;
        Ok(OutputFile { path: path.to_string(), rename: Some((partial, target)), file: Some(BufWriter::new(file)) })
    }

    /// Flushes the file and renames it to its path, replacing what was there.
    pub fn finish(mut self) -> Result<(), CliError> {
        let unwritable = |e: std::io::Error| CliError::unwritable(&self.path, &e);
        let file = self.file.take().expect("an output file is finished once");
        drop(file.into_inner().map_err(|e| unwritable(e.into_error()))?);
        match self.rename.take() {
            Some((partial, target)) => std::fs::rename(partial, target).map_err(unwritable),
            None => Ok(()),
        }
    }

    fn file(&mut self) -> &mut BufWriter<std::fs::File> {
        self.file.as_mut().expect("an output file is written before it is finished")
    }
}

impl Drop for OutputFile {
    fn drop(&mut self) {
        // Not finished (an error, an interrupt): the path stays as it was.
        if let (Some(_), Some((partial, _))) = (self.file.take(), &self.rename) {
            let _ = std::fs::remove_file(partial);
        }
    }
}

impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.file().write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file().flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capture_gets_what_the_command_wrote_and_ends_with_it() {
        let text = capture(|| {
            let mut out = Output::new();
            out.line("one")?;
            out.finish()?;
            let mut raw = BufWriter::new(Stdout);
            raw.write_all(b"two\n").map_err(stdout_error)?;
            raw.flush().map_err(stdout_error)
        });
        assert_eq!(text.unwrap(), "one\ntwo\n");
        assert!(CAPTURED.with(|c| c.borrow().is_none()), "the capture ended");
        let failed = capture(|| {
            Output::new().line("lost")?;
            Err(CliError::input("bad"))
        });
        assert_eq!(failed.unwrap_err().message, "bad");
        assert!(CAPTURED.with(|c| c.borrow().is_none()), "a failed command's capture ended too");
    }

    /// A directory removed at the end of the test.
    struct Dir(std::path::PathBuf);
    impl Dir {
        fn path(&self) -> &std::path::Path {
            &self.0
        }
    }
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[cfg(unix)]
    #[test]
    fn an_output_file_appears_only_when_finished() {
        let dir = std::env::temp_dir().join(format!("nvmdb-output-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let dir = Dir(dir);
        let path = dir.path().join("out.txt").display().to_string();
        std::fs::write(&path, "earlier").unwrap();
        let mut file = OutputFile::create(&path).unwrap();
        file.write_all(b"new").unwrap();
        drop(file);
        let names = || std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!((std::fs::read_to_string(&path).unwrap().as_str(), names()), ("earlier", 1), "dropped: untouched");
        write_file(&path, "whole").unwrap();
        assert_eq!((std::fs::read_to_string(&path).unwrap().as_str(), names()), ("whole", 1));
        // Through a link, the file it names is replaced and the link stays.
        let link = dir.path().join("link.txt").display().to_string();
        std::os::unix::fs::symlink(&path, &link).unwrap();
        write_file(&link, "linked").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "linked");
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        // Something other than a file is written in place and stays what it is.
        write_file("/dev/null", "gone").unwrap();
        assert!(!std::fs::metadata("/dev/null").unwrap().is_file());
        let missing = dir.path().join("no/dir/out.txt").display().to_string();
        let e = write_file(&missing, "x").unwrap_err();
        assert!(e.message.starts_with(&format!("{missing}: cannot write:")), "{}", e.message);
        assert_eq!(e.kind, crate::error::ErrorKind::Io(std::io::ErrorKind::NotFound));
    }

    #[test]
    fn a_capture_inside_a_capture_is_refused() {
        let inner = capture(|| {
            let nested = capture(|| Ok(())).unwrap_err();
            Output::new().json(&nested.message)
        });
        assert!(inner.unwrap().contains("already being captured"));
    }
}
