//! A script's text and SQLite's answers: statements split as SQLite's shell splits them,
//! values printed in list mode or as lossless SQL literals, a database's dump, and the
//! bounds on a statement's steps and a script's output.

use nvmdb_journal::rusqlite::types::ValueRef;
use nvmdb_journal::rusqlite::Connection;

/// One statement of a script and the line it starts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement {
    /// The SQL, without the `;`.
    pub sql: String,
    /// 1-based line of its first character.
    pub line: u64,
}

/// Splits a script at `;` outside quotes and comments. Empty statements are dropped.
pub fn split_statements(script: &str) -> Vec<Statement> {
    let mut out = Vec::new();
    let mut current = String::new();
    let (mut line, mut start_line) = (1u64, None);
    let mut chars = script.chars().peekable();
    let mut push = |current: &mut String, start: &mut Option<u64>| {
        let sql = current.trim();
        if !sql.is_empty() {
            out.push(Statement { sql: sql.to_string(), line: start.unwrap_or(1) });
        }
        current.clear();
        *start = None;
    };
    while let Some(c) = chars.next() {
        if c == '\n' {
            line = line.saturating_add(1);
        }
        if start_line.is_none() && !c.is_whitespace() {
            start_line = Some(line);
        }
        match c {
            // A trigger's body holds statements of its own: it ends at `; END ;`.
            ';' if is_trigger(&current) && !ends_trigger_body(&current) => current.push(c),
            ';' => push(&mut current, &mut start_line),
            '\'' | '"' | '`' | '[' => {
                let close = if c == '[' { ']' } else { c };
                current.push(c);
                for d in chars.by_ref() {
                    if d == '\n' {
                        line = line.saturating_add(1);
                    }
                    current.push(d);
                    if d == close {
                        break;
                    }
                }
            }
            '-' if chars.peek() == Some(&'-') => {
                for d in chars.by_ref() {
                    if d == '\n' {
                        line = line.saturating_add(1);
                        current.push('\n');
                        break;
                    }
                }
                if current.trim().is_empty() {
                    start_line = None;
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut prev = ' ';
                for d in chars.by_ref() {
                    if d == '\n' {
                        line = line.saturating_add(1);
                    }
                    if prev == '*' && d == '/' {
                        break;
                    }
                    prev = d;
                }
                current.push(' ');
                if current.trim().is_empty() {
                    start_line = None;
                }
            }
            _ => current.push(c),
        }
    }
    push(&mut current, &mut start_line);
    out
}

/// Whether `sql` starts `CREATE [TEMP|TEMPORARY] TRIGGER`.
pub(super) fn is_trigger(sql: &str) -> bool {
    let mut words = sql.split_whitespace().map(str::to_ascii_uppercase);
    words.next().as_deref() == Some("CREATE") && {
        let next = words.next();
        let next = if matches!(next.as_deref(), Some("TEMP" | "TEMPORARY")) { words.next() } else { next };
        next.as_deref() == Some("TRIGGER")
    }
}

/// Whether a trigger's text so far ends with its body's `; END` (SQLite's own rule,
/// `sqlite3_complete`: a `CASE … END` inside the body is not preceded by `;`).
pub(super) fn ends_trigger_body(sql: &str) -> bool {
    let sql = sql.trim_end();
    let Some(before) = sql.len().checked_sub(3).and_then(|cut| sql.get(..cut)) else { return false };
    sql[before.len()..].eq_ignore_ascii_case("END")
        && !before.ends_with(|c: char| c.is_alphanumeric() || c == '_')
        && before.trim_end().ends_with(';')
}

/// A value as sqlite3's list mode prints it.
pub(super) fn list_value(conn: &Connection, value: ValueRef<'_>) -> String {
    match value {
        ValueRef::Null => String::new(),
        ValueRef::Integer(v) => v.to_string(),
        // SQLite's own text conversion of a real.
        ValueRef::Real(v) => {
            conn.query_row("SELECT CAST(?1 AS TEXT)", [v], |r| r.get(0)).unwrap_or_else(|_| v.to_string())
        }
        ValueRef::Text(t) | ValueRef::Blob(t) => String::from_utf8_lossy(t).into_owned(),
    }
}

/// A value as an SQL literal that gives it back exactly (sqlite3's quote mode, but a
/// real with every digit it needs): `NULL`, an integer, a real (`1.0`, not `1`), text
/// quoted with `''` (`CAST(X'..' AS TEXT)` when not UTF-8), a blob as `X'FF00'`.
pub(super) fn sql_literal(value: ValueRef<'_>) -> String {
    let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02X}")).collect::<String>();
    match value {
        ValueRef::Null => "NULL".into(),
        ValueRef::Integer(v) => v.to_string(),
        ValueRef::Real(v) => format!("{v:?}"),
        ValueRef::Text(t) => match std::str::from_utf8(t) {
            Ok(text) => format!("'{}'", text.replace('\'', "''")),
            Err(_) => format!("CAST(X'{}' AS TEXT)", hex(t)),
        },
        ValueRef::Blob(b) => format!("X'{}'", hex(b)),
    }
}

/// Runs one statement, returning its rows in list format; more than `max_bytes` of them
/// is an error ("too big").
pub(super) fn execute(
    conn: &Connection,
    sql: &str,
    max_bytes: usize,
) -> Result<Vec<String>, nvmdb_journal::rusqlite::Error> {
    execute_as(conn, sql, &|v| list_value(conn, v), max_bytes)
}

/// Runs one statement, returning its rows with each value as `format` writes it, joined
/// by `|`; stops with SQLITE_TOOBIG once the rows pass `max_bytes`.
pub(super) fn execute_as(
    conn: &Connection,
    sql: &str,
    format: &dyn Fn(ValueRef<'_>) -> String,
    max_bytes: usize,
) -> Result<Vec<String>, nvmdb_journal::rusqlite::Error> {
    use nvmdb_journal::rusqlite::{ffi, Error};
    let mut stmt = conn.prepare(sql)?;
    let columns = stmt.column_count();
    let mut rows = stmt.query([])?;
    let (mut out, mut bytes) = (Vec::new(), 0usize);
    while let Some(row) = rows.next()? {
        let values: Vec<String> = (0..columns).map(|i| row.get_ref(i).map(format)).collect::<Result<_, _>>()?;
        if columns > 0 {
            let row = values.join("|");
            bytes = bytes.saturating_add(row.len()).saturating_add(1);
            if bytes > max_bytes {
                let what = format!("the rows printed pass the script's {MAX_OUTPUT_BYTES}-byte output limit");
                return Err(Error::SqliteFailure(ffi::Error::new(ffi::SQLITE_TOOBIG), Some(what)));
            }
            out.push(row);
        }
    }
    Ok(out)
}

pub(super) fn dump(conn: &Connection) -> Result<String, nvmdb_journal::rusqlite::Error> {
    let mut text = String::new();
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    for table in tables {
        text += &format!("-- {table}\n");
        let quoted = table.replace('"', "\"\"");
        let rows = execute_as(conn, &format!("SELECT * FROM \"{quoted}\" ORDER BY rowid"), &sql_literal, usize::MAX)
            .or_else(|_| execute_as(conn, &format!("SELECT * FROM \"{quoted}\""), &sql_literal, usize::MAX))?;
        for row in rows {
            text += &row;
            text.push('\n');
        }
    }
    Ok(text)
}

/// SQLite virtual-machine steps one statement may take (checked every 1000 steps), so a
/// runaway query (an unbounded recursive CTE) stops with an error instead of hanging.
pub(super) const MAX_VM_STEPS: u64 = 2_000_000_000;

/// Interrupts any statement of `conn` past [`MAX_VM_STEPS`]; the counter restarts with
/// every statement.
pub(super) fn limit_steps(conn: &Connection) -> std::sync::Arc<std::sync::atomic::AtomicU64> {
    use std::sync::atomic::{AtomicU64, Ordering};
    let steps = std::sync::Arc::new(AtomicU64::new(0));
    let counter = std::sync::Arc::clone(&steps);
    conn.progress_handler(
        1000,
        Some(move || counter.fetch_add(1000, Ordering::Relaxed).saturating_add(1000) > MAX_VM_STEPS),
    );
    steps
}

/// SQLite's heap in `journal sql`, bytes: at most 1 GiB, and a quarter of the memory
/// available now ([`crate::limits::memory_limit`]); and what bounds it, as a statement
/// that runs out of it is told.
pub(super) fn sqlite_heap_limit() -> (u64, String) {
    let available = crate::limits::memory_limit();
    if available.bytes / 4 < 1 << 30 {
        let why = format!("a quarter of the {} MiB available ({})", available.bytes >> 20, available.source);
        (available.bytes / 4, why)
    } else {
        (1 << 30, "1 GiB".to_string())
    }
}

/// The most output (rows printed) a script may produce, bytes: SQLite bounds each value
/// and row (at the device file's size) but not how many rows a script prints.
pub(super) const MAX_OUTPUT_BYTES: usize = 256 << 20;
