//! Writing to stdout and to output files. A closed stdout pipe (`nvmdb … | head -1`) ends
//! the program quietly; any other write failure (a full disk) is one error line, exit 1.

use std::fmt::Display;
use std::io::{BufWriter, ErrorKind, Stdout, Write};

use crate::error::CliError;

/// Buffered stdout.
#[derive(Debug)]
pub struct Output {
    out: BufWriter<Stdout>,
}

impl Output {
    /// Stdout.
    pub fn new() -> Output {
        Output { out: BufWriter::new(std::io::stdout()) }
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
    std::fs::write(path, contents).map_err(|e| CliError::failed(format!("{path}: cannot write: {e}")))
}
