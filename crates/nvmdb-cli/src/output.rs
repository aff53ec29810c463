//! Writing to stdout and to output files. A closed stdout pipe (`nvmdb … | head -1`) ends
//! the program quietly; any other write failure (a full disk) is one error line, exit 1.
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
    if e.kind() == ErrorKind::BrokenPipe {
        CliError::closed_pipe()
    } else {
        CliError::failed(format!("stdout: cannot write: {e}"))
    }
}

/// Writes an output file, naming it on failure.
pub fn write_file(path: &str, contents: &str) -> Result<(), CliError> {
    std::fs::write(path, contents).map_err(|e| CliError::unwritable(path, &e))
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

    #[test]
    fn a_capture_inside_a_capture_is_refused() {
        let inner = capture(|| {
            let nested = capture(|| Ok(())).unwrap_err();
            Output::new().json(&nested.message)
        });
        assert!(inner.unwrap().contains("already being captured"));
    }
}
