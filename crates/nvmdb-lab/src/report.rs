//! Writes an experiment's files and the combined report.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::outcome::{Cell, Outcome, Table};
use crate::run::{io_err, write_file};
pub use crate::run::{Finished, RunMeta};
use crate::scorecard::{checks, scorecard, tally, tally_line, Claim, ClaimKind, ScoreRow, Unmeasured, Verdict};
use crate::stored::{PaperStore, StoredRun, NOT_STORED};
use crate::LabError;

/// CSV text of `records`, the header first, one line each; a field is quoted where it holds
/// a comma, a quote or a line break (the `csv` crate's necessary quoting).
fn csv_text<R: IntoIterator<Item = S>, S: AsRef<[u8]>>(records: impl IntoIterator<Item = R>) -> String {
    let mut writer = csv::Writer::from_writer(Vec::new());
    for record in records {
        writer.write_record(record).expect("writing CSV into memory cannot fail");
    }
    let bytes = writer.into_inner().expect("writing CSV into memory cannot fail");
    String::from_utf8(bytes).expect("CSV of UTF-8 fields is UTF-8")
}

/// `results.csv`: one row per table cell, `table,row,column,value`.
fn results_csv(outcome: &Outcome) -> String {
    let header = ["table", "row", "column", "value"].map(String::from);
    let cells = outcome.tables.iter().flat_map(|table| {
        table.rows.iter().enumerate().flat_map(move |(r, row)| {
            table.columns.iter().zip(row).map(move |(column, cell)| {
                let value = match cell {
                    Cell::Int(v) => v.to_string(),
                    Cell::Float(v) => v.to_string(),
                    Cell::Text(s) => s.clone(),
                    Cell::Typed(t) => t.text.clone(),
                    Cell::Missing => String::new(),
                };
                [table.title.clone(), r.to_string(), column.clone(), value]
            })
        })
    });
    csv_text(std::iter::once(header).chain(cells))
}

/// `scorecard.csv`: one row per claim.
fn scorecard_csv(rows: &[ScoreRow]) -> String {
    const HEADER: &str = "claim_id,experiment,seed,figure,claim,kind,paper,ours,value,tolerance,verdict,note,\
        paper_scale_ours,paper_scale_value,paper_scale_verdict,paper_scale_date,paper_scale_commit,\
        would_hold_parameter,would_hold_relation,would_hold_value,would_hold_unit,would_hold_range_lo,\
        would_hold_range_hi,would_hold_experiment,paper_scale_would_hold_value";
    let mut records = vec![HEADER.split(',').map(String::from).collect::<Vec<String>>()];
    let number = |v: Option<f64>| v.map_or_else(String::new, |v| v.to_string());
    for r in rows {
        let value = r.value.map_or_else(String::new, |v| v.to_string());
        let stored = r.paper_scale.as_ref();
        let stored_value = stored.and_then(|c| c.value).map_or_else(String::new, |v| v.to_string());
        let (stored_ours, stored_verdict, stored_date, stored_commit) = match stored {
            Some(c) => (c.ours.as_str(), c.verdict.label(), c.date.as_str(), c.commit.as_str()),
            None => (NOT_STORED, "", "", ""),
        };
        let held = r.would_hold_when.as_ref();
        let when = held.map(|w| &w.when);
        let (parameter, relation, unit) =
            when.map_or(("", "", ""), |w| (w.parameter.as_str(), w.relation.symbol(), w.unit.as_str()));
        let held_value = number(when.and_then(|w| w.value));
        let (range_lo, range_hi) = (number(when.map(|w| w.range_tried[0])), number(when.map(|w| w.range_tried[1])));
        let held_by = held.map_or("", |w| w.experiment.as_str());
        let stored_held = number(r.paper_scale_would_hold_when.as_ref().and_then(|w| w.when.value));
        let fields = [
            &r.claim_id,
            &r.experiment,
            &r.seed,
            &r.figure,
            &r.claim,
            r.kind.label(),
            &r.paper,
            &r.ours,
            &value,
            &r.tolerance,
            r.verdict.label(),
            &r.note,
            stored_ours,
            &stored_value,
            stored_verdict,
            stored_date,
            stored_commit,
            parameter,
            relation,
            &held_value,
            unit,
            &range_lo,
            &range_hi,
            held_by,
            &stored_held,
        ];
        records.push(fields.iter().map(|f| f.to_string()).collect());
    }
    csv_text(records)
}

/// `scorecard.json`: the run, the tally, the rows, the stored paper-scale runs they cite,
/// and the papers' statements not measured here (`not_measured_here`).
fn scorecard_json(rows: &[ScoreRow], meta: &RunMeta, store: &PaperStore, unmeasured: &[Unmeasured]) -> String {
    /// The verdicts of the measured rows, and how many rows are checks of the set-up.
    #[derive(Serialize)]
    struct Tally {
        measured: usize,
        reproduces: usize,
        differs: usize,
        not_measured: usize,
        checks: Checks,
    }
    #[derive(Serialize)]
    struct Checks {
        input: usize,
        constant: usize,
    }
    #[derive(Serialize)]
    struct Json<'a> {
        meta: &'a RunMeta,
        tally: Tally,
        rows: &'a [ScoreRow],
        paper_scale_runs: Vec<&'a StoredRun>,
        not_measured_here: &'a [Unmeasured],
    }
    let (reproduces, differs, not_measured) = tally(rows);
    let (input, constant) = checks(rows);
    let measured = reproduces + differs + not_measured;
    let paper_scale_runs = store.iter().collect();
    let tally = Tally { measured, reproduces, differs, not_measured, checks: Checks { input, constant } };
    let json = Json { meta, tally, rows, paper_scale_runs, not_measured_here: unmeasured };
    serde_json::to_string_pretty(&json).expect("scorecard serialises")
}

/// Writes `DIR/<id>/results.json`, `results.csv`, `plot-N.svg` and, when some of `claims`
/// belong to the experiment, `scorecard.json`.
pub fn write_experiment(
    dir: &Path,
    finished: &Finished,
    meta: &RunMeta,
    claims: &[Claim],
) -> Result<PathBuf, LabError> {
    let rows = scorecard(claims, std::slice::from_ref(finished))?;
    let exp_dir = dir.join(&finished.id);
    std::fs::create_dir_all(&exp_dir).map_err(io_err(&exp_dir))?;
    #[derive(Serialize)]
    struct Json<'a> {
        meta: &'a RunMeta,
        #[serde(flatten)]
        finished: &'a Finished,
    }
    let json = serde_json::to_string_pretty(&Json { meta, finished }).expect("results serialise");
    write_file(&exp_dir.join("results.json"), &json)?;
    write_file(&exp_dir.join("results.csv"), &results_csv(&finished.outcome))?;
    for (i, plot) in finished.outcome.plots.iter().enumerate() {
        write_file(&exp_dir.join(format!("plot-{}.svg", i + 1)), &plot.to_svg())?;
    }
    if !rows.is_empty() {
        write_file(&exp_dir.join("scorecard.json"), &scorecard_json(&rows, meta, &PaperStore::default(), &[]))?;
    }
    Ok(exp_dir)
}

/// An experiment's results as data, for programs (`nvmdb run --json`): what its
/// `results.json` holds, except that each table has its `key` (`null` when the
/// experiment gives none) and a typed cell is the object of its values
/// ([`Cell::data`]); then its scorecard rows and `files`, the files written for it.
pub fn data_json(finished: &Finished, meta: &RunMeta, rows: &[ScoreRow], files: &[PathBuf]) -> serde_json::Value {
    let outcome = &finished.outcome;
    let tables: Vec<serde_json::Value> = outcome
        .tables
        .iter()
        .map(|t| {
            let cells: Vec<Vec<serde_json::Value>> =
                t.rows.iter().map(|r| r.iter().map(Cell::data).collect()).collect();
            serde_json::json!({"key": t.key, "title": t.title, "columns": t.columns, "rows": cells})
        })
        .collect();
    serde_json::json!({
        "meta": meta,
        "id": finished.id,
        "title": finished.title,
        "source": finished.source,
        "summary": outcome.summary,
        "config": outcome.config,
        "notes": outcome.notes,
        "tables": tables,
        "plots": outcome.plots,
        "measurements": outcome.measurements,
        "scorecard": rows,
        "files": files,
    })
}

fn markdown_table(table: &Table) -> String {
    let mut out =
        format!("**{}**\n\n| {} |\n|{}\n", table.title, table.columns.join(" | "), "---|".repeat(table.columns.len()));
    for row in &table.rows {
        let cells: Vec<String> = row.iter().map(|c| c.display().replace('|', "\\|")).collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    out
}

fn md_cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn paper_scale_display(r: &ScoreRow) -> String {
    r.paper_scale.as_ref().map_or_else(|| NOT_STORED.into(), |c| c.display())
}

/// The stored paper-scale runs the scorecard cites, one row each.
fn markdown_stored_runs(store: &PaperStore) -> String {
    let dir = store.dir.display();
    if store.runs.is_empty() {
        return format!("No paper-scale runs are stored in `{dir}`.\n\n");
    }
    let mut out = format!(
        "The \"paper scale (stored)\" column cites these runs, stored in `{dir}`:\n\n\
         | experiment | date (UTC) | commit | seed | wall, s | machine | command |\n|---|---|---|---|---|---|---|\n"
    );
    for run in store.iter() {
        let _ = writeln!(
            out,
            "| {} | {} | `{}` | {} | {:.0} | {} | `{}` |",
            md_cell(&run.experiment),
            md_cell(&run.date),
            md_cell(&run.commit),
            run.seed,
            run.wall_s,
            md_cell(&run.machine),
            md_cell(&run.command)
        );
    }
    out.push('\n');
    out
}

/// The would-hold cell: this run's, then the stored paper-scale run's with its citation;
/// `—` when neither looked. Each part with the experiment whose sweep found it.
fn would_hold_parts(r: &ScoreRow, store: &PaperStore) -> Vec<(String, String)> {
    let mut parts = Vec::new();
    if let Some(w) = &r.would_hold_when {
        parts.push((w.when.display(), w.experiment.clone()));
    }
    if let Some(w) = &r.paper_scale_would_hold_when {
        let cited = store.citation(&w.experiment).map_or_else(String::new, |c| format!(" ({c})"));
        parts.push((format!("paper scale: {}{cited}", w.when.display()), w.experiment.clone()));
    }
    parts
}

/// The sentence that introduces the checks of the set-up, or `None` when there are none.
fn checks_line(rows: &[ScoreRow]) -> Option<String> {
    let (input, constant) = checks(rows);
    if input + constant == 0 {
        return None;
    }
    let verb = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    Some(format!(
        "Checks of the set-up, not counted above: {} back an input of the run, {} from preset parameters alone.",
        verb(input, "reads", "read"),
        verb(constant, "follows", "follow")
    ))
}

fn markdown_scorecard(rows: &[ScoreRow], store: &PaperStore) -> String {
    let mut out = String::from("## Scorecard\n\n");
    if rows.is_empty() {
        out.push_str("No claims of the papers are registered for these experiments.\n\n");
        return out;
    }
    let _ = writeln!(out, "**{}** ({} claims)\n", tally_line(rows), rows.len());
    out.push_str(
        "| seed | figure | claim | paper | ours | paper scale (stored) | tolerance | verdict | would hold when | note |\n",
    );
    out.push_str("|---|---|---|---|---|---|---|---|---|---|\n");
    let note_cell = |r: &ScoreRow| {
        let note = if r.note.is_empty() { format!("see {}", r.experiment) } else { r.note.clone() };
        format!("[{}]({})", md_cell(&note).replace(['[', ']'], ""), r.note_link)
    };
    for r in rows.iter().filter(|r| r.kind == ClaimKind::Measured) {
        let parts = would_hold_parts(r, store);
        let would_hold = if parts.is_empty() {
            "—".to_string()
        } else {
            parts.iter().map(|(text, at)| format!("[{}](#exp-{at})", md_cell(text))).collect::<Vec<_>>().join("; ")
        };
        let stored = paper_scale_display(r);
        let cells = [&r.seed, &r.figure, &r.claim, &r.paper, &r.ours, &stored, &r.tolerance];
        let _ = writeln!(out, "{} | {} | {would_hold} | {} |", md_row(&cells), r.verdict.label(), note_cell(r));
    }
    out.push('\n');
    if let Some(line) = checks_line(rows) {
        let _ = writeln!(out, "{line}\n");
        out.push_str(
            "| seed | figure | claim | kind | paper | ours | paper scale (stored) | tolerance | verdict | note |\n",
        );
        out.push_str("|---|---|---|---|---|---|---|---|---|---|\n");
        for r in rows.iter().filter(|r| r.kind != ClaimKind::Measured) {
            let (kind, stored) = (r.kind.label().to_string(), paper_scale_display(r));
            let cells = [&r.seed, &r.figure, &r.claim, &kind, &r.paper, &r.ours, &stored, &r.tolerance];
            let _ = writeln!(out, "{} | {} | {} |", md_row(&cells), r.verdict.label(), note_cell(r));
        }
        out.push('\n');
    }
    out.push_str(&markdown_stored_runs(store));
    out
}

/// The papers' statements not measured here, and why, as a Markdown section; empty when
/// there are none.
/// The first cells of a scorecard row in Markdown, each escaped: `| a | b | c` (the
/// caller writes the rest and the closing `|`).
fn md_row(cells: &[&String]) -> String {
    let cells: Vec<String> = cells.iter().map(|c| md_cell(c)).collect();
    format!("| {}", cells.join(" | "))
}

fn markdown_unmeasured(unmeasured: &[Unmeasured]) -> String {
    if unmeasured.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "## Not measured here, and why\n\nStatements and comparisons of the papers' evaluations that no row of the \
         scorecard measures.\n\n| seed | where | statement | why not measured here |\n|---|---|---|---|\n",
    );
    for u in unmeasured {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            md_cell(u.seed),
            md_cell(u.figure),
            md_cell(u.statement),
            md_cell(u.why)
        );
    }
    out.push('\n');
    out
}

/// The Markdown report over all finished experiments, opened by the scorecard (whose
/// rows carry their stored paper-scale values, see [`PaperStore::attach`]; `store` lists
/// the runs cited), then the papers' statements not measured here (`unmeasured`).
pub fn markdown(
    finished: &[Finished],
    meta: &RunMeta,
    scorecard: &[ScoreRow],
    unmeasured: &[Unmeasured],
    store: &PaperStore,
) -> String {
    let mut out = String::from("# nvmdb reproduction report\n\n");
    let _ = writeln!(
        out,
        "Scale `{}`, seed `{}`, commit `{}`, nvmdb {}. Re-run with `nvmdb reproduce --scale {} --seed {}`.\n",
        meta.scale.name(),
        meta.seed,
        meta.git_commit,
        meta.version,
        meta.scale.name(),
        meta.seed
    );
    out.push_str(&markdown_scorecard(scorecard, store));
    out.push_str(&markdown_unmeasured(unmeasured));
    out.push_str("## Experiments\n\n| experiment | reproduces |\n|---|---|\n");
    for f in finished {
        let _ = writeln!(out, "| [{}](#exp-{}) | {} |", f.id, f.id, md_cell(&f.source));
    }
    for f in finished {
        let _ = writeln!(
            out,
            "\n## {}\n\n<a id=\"exp-{}\"></a>*{}* — {}\n\n{}\n",
            f.id, f.id, f.title, f.source, f.outcome.summary
        );
        for table in &f.outcome.tables {
            out.push_str(&markdown_table(table));
            out.push('\n');
        }
        for (i, plot) in f.outcome.plots.iter().enumerate() {
            let _ = writeln!(out, "![{}]({}/plot-{}.svg)\n", plot.title, f.id, i + 1);
        }
        if !f.outcome.notes.is_empty() {
            let _ = writeln!(out, "<a id=\"notes-{}\"></a>Notes:\n", f.id);
            for note in &f.outcome.notes {
                let _ = writeln!(out, "- {note}");
            }
            out.push('\n');
        }
        let config = serde_json::to_string(&f.outcome.config).expect("config serialises");
        let _ = writeln!(out, "Configuration: `{config}`\n");
    }
    out
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

const STYLE: &str = "body{font-family:sans-serif;max-width:1100px;margin:auto;padding:0 1em}\
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}\
th{background:#f4f4f4}caption{font-weight:bold;text-align:left;padding:4px 0}\
table.scorecard td,table.scorecard th,table.runs td,table.runs th,table.unmeasured td,table.unmeasured th{text-align:left;vertical-align:top}td.nowrap{white-space:nowrap}table.scorecard td.num,table.runs td.num{text-align:right;white-space:nowrap}\
td.verdict{font-weight:bold;white-space:nowrap}td.reproduces{background:#d7f0d8;color:#14532d}\
td.differs{background:#fde8b8;color:#713f12}td.would-hold{min-width:9em}td.not-measured{background:#e5e7eb;color:#374151}\
p.tally{font-size:1.1em}svg{max-width:100%;height:auto;display:block;margin:1em 0}";

fn verdict_class(v: Verdict) -> &'static str {
    match v {
        Verdict::Reproduces => "reproduces",
        Verdict::Differs => "differs",
        Verdict::NotMeasured => "not-measured",
    }
}

/// The stored paper-scale runs the scorecard cites.
fn html_stored_runs(store: &PaperStore) -> String {
    let dir = html_escape(&store.dir.display().to_string());
    if store.runs.is_empty() {
        return format!("<p id=\"paper-scale-runs\">No paper-scale runs are stored in <code>{dir}</code>.</p>\n");
    }
    let mut out = format!(
        "<table id=\"paper-scale-runs\" class=\"runs\"><caption>The \"paper scale (stored)\" column cites \
         these runs, stored in <code>{dir}</code></caption><tr>"
    );
    for c in ["experiment", "date (UTC)", "commit", "seed", "wall, s", "machine", "command"] {
        let _ = write!(out, "<th>{c}</th>");
    }
    out.push_str("</tr>\n");
    for run in store.iter() {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td class=\"nowrap\">{}</td><td><code>{}</code></td><td class=\"num\">{}</td>\
             <td class=\"num\">{:.0}</td><td>{}</td><td><code>{}</code></td></tr>",
            html_escape(&run.experiment),
            html_escape(&run.date),
            html_escape(&run.commit),
            run.seed,
            run.wall_s,
            html_escape(&run.machine),
            html_escape(&run.command)
        );
    }
    out.push_str("</table>\n");
    out
}

fn html_scorecard(rows: &[ScoreRow], store: &PaperStore) -> String {
    let mut out = String::from("<h2 id=\"scorecard\">Scorecard</h2>\n");
    if rows.is_empty() {
        out.push_str("<p>No claims of the papers are registered for these experiments.</p>\n");
        return out;
    }
    let _ = writeln!(out, "<p class=\"tally\"><strong>{}</strong> ({} claims)</p>", tally_line(rows), rows.len());
    let head = |out: &mut String, class: &str, columns: &[&str]| {
        let _ = write!(out, "<table class=\"{class}\"><tr>");
        for c in columns {
            let _ = write!(out, "<th>{c}</th>");
        }
        out.push_str("</tr>\n");
    };
    // The cells from the claim to the verdict, with the kind when `kind` is set.
    let cells = |r: &ScoreRow, kind: bool| {
        let kind = if kind { format!("<td class=\"nowrap\">{}</td>", r.kind.label()) } else { String::new() };
        format!(
            "<tr><td class=\"nowrap\">{}</td><td class=\"nowrap\">{}</td><td>{}</td>{kind}<td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td class=\"stored\">{}</td><td class=\"num\">{}</td><td class=\"verdict {}\">{}</td>",
            html_escape(&r.seed),
            html_escape(&r.figure),
            html_escape(&r.claim),
            html_escape(&r.paper),
            html_escape(&r.ours),
            html_escape(&paper_scale_display(r)),
            html_escape(&r.tolerance),
            verdict_class(r.verdict),
            r.verdict.label(),
        )
    };
    let note = |r: &ScoreRow| {
        let note = if r.note.is_empty() { format!("see {}", r.experiment) } else { r.note.clone() };
        format!("<td><a href=\"{}\">{}</a></td></tr>", html_escape(&r.note_link), html_escape(&note))
    };
    head(
        &mut out,
        "scorecard",
        &[
            "seed",
            "figure",
            "claim",
            "paper",
            "ours",
            "paper scale (stored)",
            "tolerance",
            "verdict",
            "would hold when",
            "note",
        ],
    );
    for r in rows.iter().filter(|r| r.kind == ClaimKind::Measured) {
        let parts = would_hold_parts(r, store);
        let would_hold = if parts.is_empty() {
            "—".to_string()
        } else {
            parts
                .iter()
                .map(|(text, at)| format!("<a href=\"#exp-{}\">{}</a>", html_escape(at), html_escape(text)))
                .collect::<Vec<_>>()
                .join("; ")
        };
        let _ = writeln!(out, "{}<td class=\"would-hold\">{would_hold}</td>{}", cells(r, false), note(r));
    }
    out.push_str("</table>\n");
    if let Some(line) = checks_line(rows) {
        let _ = writeln!(out, "<p id=\"checks\">{}</p>", html_escape(&line));
        head(
            &mut out,
            "scorecard checks",
            &[
                "seed",
                "figure",
                "claim",
                "kind",
                "paper",
                "ours",
                "paper scale (stored)",
                "tolerance",
                "verdict",
                "note",
            ],
        );
        for r in rows.iter().filter(|r| r.kind != ClaimKind::Measured) {
            let _ = writeln!(out, "{}{}", cells(r, true), note(r));
        }
        out.push_str("</table>\n");
    }
    out.push_str(&html_stored_runs(store));
    out
}

/// The papers' statements not measured here, and why, as an HTML section; empty when
/// there are none.
fn html_unmeasured(unmeasured: &[Unmeasured]) -> String {
    if unmeasured.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "<h2 id=\"not-measured-here\">Not measured here, and why</h2>\n<p>Statements and comparisons of the papers' \
         evaluations that no row of the scorecard measures.</p>\n<table class=\"unmeasured\"><tr>",
    );
    for c in ["seed", "where", "statement", "why not measured here"] {
        let _ = write!(out, "<th>{c}</th>");
    }
    out.push_str("</tr>\n");
    for u in unmeasured {
        let _ = writeln!(
            out,
            "<tr><td class=\"nowrap\">{}</td><td class=\"nowrap\">{}</td><td>{}</td><td>{}</td></tr>",
            html_escape(u.seed),
            html_escape(u.figure),
            html_escape(u.statement),
            html_escape(u.why)
        );
    }
    out.push_str("</table>\n");
    out
}

/// The HTML report, opened by the scorecard (with its stored paper-scale values, as in
/// [`markdown`]) and the papers' statements not measured here, plots inlined.
pub fn html(
    finished: &[Finished],
    meta: &RunMeta,
    scorecard: &[ScoreRow],
    unmeasured: &[Unmeasured],
    store: &PaperStore,
) -> String {
    let mut out = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>nvmdb report</title><style>{STYLE}</style></head><body>\n"
    );
    let _ = writeln!(
        out,
        "<h1>nvmdb reproduction report</h1><p>Scale <code>{}</code>, seed <code>{}</code>, commit <code>{}</code>, \
         nvmdb {}.</p>",
        meta.scale.name(),
        meta.seed,
        html_escape(&meta.git_commit),
        html_escape(&meta.version)
    );
    out.push_str(&html_scorecard(scorecard, store));
    out.push_str(&html_unmeasured(unmeasured));
    for f in finished {
        let id = html_escape(&f.id);
        let _ = writeln!(
            out,
            "<section id=\"exp-{id}\"><h2>{id}</h2><p><em>{}</em> — {}</p><p>{}</p>",
            html_escape(&f.title),
            html_escape(&f.source),
            html_escape(&f.outcome.summary)
        );
        for table in &f.outcome.tables {
            let _ = write!(out, "<table><caption>{}</caption><tr>", html_escape(&table.title));
            for c in &table.columns {
                let _ = write!(out, "<th>{}</th>", html_escape(c));
            }
            out.push_str("</tr>\n");
            for row in &table.rows {
                out.push_str("<tr>");
                for c in row {
                    let _ = write!(out, "<td>{}</td>", html_escape(&c.display()));
                }
                out.push_str("</tr>\n");
            }
            out.push_str("</table>\n");
        }
        for plot in &f.outcome.plots {
            out.push_str(&plot.to_svg());
        }
        if !f.outcome.notes.is_empty() {
            let _ = write!(out, "<ul id=\"notes-{id}\">");
            for note in &f.outcome.notes {
                let _ = write!(out, "<li>{}</li>", html_escape(note));
            }
            out.push_str("</ul>\n");
        }
        out.push_str("</section>\n");
    }
    out.push_str("</body></html>\n");
    out
}

/// Writes `DIR/REPORT.md` and `DIR/index.html`, both opened by the scorecard of `claims`
/// over the finished experiments with the stored paper-scale values of `store` beside
/// ours and the statements of the papers not measured here (`unmeasured`), and the
/// scorecard alone as `DIR/scorecard.json` and `DIR/scorecard.csv`. Fails when a
/// measurement names no claim of its experiment or measures one twice.
pub fn write_report(
    dir: &Path,
    finished: &[Finished],
    meta: &RunMeta,
    claims: &[Claim],
    unmeasured: &[Unmeasured],
    store: &PaperStore,
) -> Result<(), LabError> {
    let mut rows = scorecard(claims, finished)?;
    store.attach(&mut rows, claims);
    std::fs::create_dir_all(dir).map_err(io_err(dir))?;
    write_file(&dir.join("scorecard.json"), &scorecard_json(&rows, meta, store, unmeasured))?;
    write_file(&dir.join("scorecard.csv"), &scorecard_csv(&rows))?;
    write_file(&dir.join("REPORT.md"), &markdown(finished, meta, &rows, unmeasured, store))?;
    write_file(&dir.join("index.html"), &html(finished, meta, &rows, unmeasured, store))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scorecard::{ClaimKind, Relation, Stated, Tolerance, WouldHold, WouldHoldWhen};
    use crate::Scale;

    const CLAIMS: &[Claim] = &[
        Claim {
            id: "alpha-gain",
            experiment: "alpha",
            seed: "CIDR 2011",
            figure: "Figure 6(a)",
            claim: "wear falls by at least 2×, | in text",
            stated: Stated::AtLeast(2.0),
            tolerance: Tolerance::Relative(0.1),
            unit: "×",
            kind: ClaimKind::Measured,
        },
        Claim {
            id: "beta-share",
            experiment: "beta",
            seed: "Thesis",
            figure: "Table 4",
            claim: "share of writes",
            stated: Stated::Range { lo: 10.0, hi: 20.0 },
            tolerance: Tolerance::Exact,
            unit: "%",
            kind: ClaimKind::Measured,
        },
        Claim {
            id: "alpha-holds",
            experiment: "alpha",
            seed: "CIDR 2011",
            figure: "Figure 6(b)",
            claim: "the order of variants holds",
            stated: Stated::Holds,
            tolerance: Tolerance::Exact,
            unit: "",
            kind: ClaimKind::Measured,
        },
        Claim {
            id: "gamma-never-run",
            experiment: "gamma",
            seed: "Thesis",
            figure: "Figure 1",
            claim: "not in this run",
            stated: Stated::Value(1.0),
            tolerance: Tolerance::Exact,
            unit: "",
            kind: ClaimKind::Measured,
        },
        Claim {
            id: "alpha-ratio",
            experiment: "alpha",
            seed: "CIDR 2011",
            figure: "Table 2",
            claim: "a write is 3× a read",
            stated: Stated::Value(3.0),
            tolerance: Tolerance::Exact,
            unit: "×",
            kind: ClaimKind::Constant,
        },
    ];

    /// Where `beta-share` would hold, as `alpha`'s sweep found it.
    fn pool_at(mb: f64) -> WouldHoldWhen {
        WouldHoldWhen {
            parameter: "buffer pool".into(),
            value: Some(mb),
            unit: "MB".into(),
            range_tried: [8.0, 128.0],
            relation: Relation::AtLeast,
        }
    }
    const UNMEASURED: &[Unmeasured] =
        &[Unmeasured { seed: "CIDR 2011", figure: "Section 2", statement: "PCM is | denser", why: "no density model" }];

    fn meta() -> RunMeta {
        RunMeta { seed: 7, scale: Scale::Quick, git_commit: "abc".into(), version: "0.1.0".into() }
    }

    fn sample() -> Vec<Finished> {
        let mut alpha =
            Outcome { summary: "Alpha ran.".into(), notes: vec!["Why alpha.".into()], ..Outcome::default() };
        alpha.measure_noted("alpha-gain", 2.5, "more, because of X");
        alpha.holds("alpha-holds", true);
        alpha.measure_noted("alpha-ratio", 3.0, "follows from Table 2");
        alpha.would_hold_when("beta-share", pool_at(40.0));
        let mut beta = Outcome { summary: "Beta ran.".into(), ..Outcome::default() };
        beta.measure("beta-share", 25.0);
        let finished = |id: &str, outcome| Finished { id: id.into(), title: id.into(), source: "S".into(), outcome };
        vec![finished("alpha", alpha), finished("beta", beta), finished("delta", Outcome::default())]
    }

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("nvmdb-lab-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    /// A store holding a paper-scale run of `alpha` that measured `alpha-gain` only.
    fn alpha_store(dir: &Path) -> PaperStore {
        let run = StoredRun {
            experiment: "alpha".into(),
            command: "nvmdb run alpha --scale paper --seed 7 --store".into(),
            date: "2026-11-22T20:11:05Z".into(),
            commit: "0123456789abcdef".into(),
            machine: "2 cores".into(),
            seed: 7,
            wall_s: 431.2,
            values: vec![crate::stored::StoredValue { claim: "alpha-gain".into(), value: Some(1.5) }],
            would_hold: vec![WouldHold { claim: "beta-share".into(), when: pool_at(48.0) }],
        };
        crate::stored::store(dir, &run).unwrap();
        PaperStore::load(dir, CLAIMS).unwrap()
    }

    #[test]
    fn report_opens_with_the_scorecard_and_writes_it_as_json_and_csv() {
        let dir = temp_dir("report");
        let store = alpha_store(&temp_dir("report-store"));
        let finished = sample();
        write_report(&dir, &finished, &meta(), CLAIMS, UNMEASURED, &store).unwrap();
        let mut expected = scorecard(CLAIMS, &finished).unwrap();
        store.attach(&mut expected, CLAIMS);
        let ids: Vec<&str> = expected.iter().map(|r| r.claim_id.as_str()).collect();
        assert_eq!(ids, ["alpha-gain", "beta-share", "alpha-holds", "alpha-ratio"]);

        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("scorecard.json")).unwrap()).unwrap();
        let rows: Vec<ScoreRow> = serde_json::from_value(json["rows"].clone()).unwrap();
        assert_eq!(rows, expected);
        assert_eq!(
            json["tally"],
            serde_json::json!({"measured": 3, "reproduces": 2, "differs": 1, "not_measured": 0,
                               "checks": {"input": 0, "constant": 1}}),
            "the constant row is not counted"
        );
        assert_eq!(json["rows"][1]["verdict"], "differs");
        assert_eq!(json["rows"][3]["kind"], "constant");
        assert_eq!(json["rows"][0]["paper_scale"]["verdict"], "differs", "1.5 < 2 − 10 %");
        assert_eq!(json["rows"][0]["paper_scale"]["commit"], "0123456789abcdef");
        assert_eq!(json["rows"][1]["paper_scale"], serde_json::Value::Null);
        assert_eq!(
            json["rows"][1]["would_hold_when"],
            serde_json::json!({"parameter": "buffer pool", "value": 40.0, "unit": "MB", "range_tried": [8.0, 128.0],
                               "relation": "at-least", "experiment": "alpha"}),
            "found by alpha for beta's claim"
        );
        assert_eq!(json["rows"][1]["paper_scale_would_hold_when"]["value"], 48.0);
        assert_eq!(json["rows"][0]["would_hold_when"], serde_json::Value::Null);
        assert_eq!(json["paper_scale_runs"][0]["date"], "2026-11-22T20:11:05Z");
        assert_eq!(
            json["not_measured_here"],
            serde_json::json!([{"seed": "CIDR 2011", "figure": "Section 2", "statement": "PCM is | denser",
                                "why": "no density model"}])
        );

        let csv = std::fs::read_to_string(dir.join("scorecard.csv")).unwrap();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 1 + expected.len(), "{csv}");
        assert_eq!(
            lines[0],
            "claim_id,experiment,seed,figure,claim,kind,paper,ours,value,tolerance,verdict,note,paper_scale_ours,\
             paper_scale_value,paper_scale_verdict,paper_scale_date,paper_scale_commit,would_hold_parameter,\
             would_hold_relation,would_hold_value,would_hold_unit,would_hold_range_lo,would_hold_range_hi,\
             would_hold_experiment,paper_scale_would_hold_value"
        );
        assert_eq!(
            lines[1],
            "alpha-gain,alpha,CIDR 2011,Figure 6(a),\"wear falls by at least 2×, | in text\",measured,≥ 2×,2.5×,2.5,\
             ±10%,reproduces,\"more, because of X\",1.5×,1.5,differs,2026-11-22T20:11:05Z,0123456789abcdef,,,,,,,,"
        );
        assert!(lines[2].ends_with(",differs,,not stored,,,,,buffer pool,≥,40,MB,8,128,alpha,48"), "{}", lines[2]);
        assert!(lines[3].ends_with(",reproduces,,not stored,,,,,,,,,,,,"), "alpha's stored run lacks it: {}", lines[3]);
        assert!(lines[4].contains(",Table 2,a write is 3× a read,constant,"), "{}", lines[4]);

        let md = std::fs::read_to_string(dir.join("REPORT.md")).unwrap();
        let headings: Vec<&str> = md.lines().filter(|l| l.starts_with('#')).collect();
        assert_eq!(
            headings[..4],
            ["# nvmdb reproduction report", "## Scorecard", "## Not measured here, and why", "## Experiments"]
        );
        assert!(md.contains("| CIDR 2011 | Section 2 | PCM is \\| denser | no density model |"), "{md}");
        assert!(md.contains("**3 measured claims: 2 reproduce, 1 differs, 0 not measured** (4 claims)"), "{md}");
        assert!(md.contains(
            "| CIDR 2011 | Figure 6(a) | wear falls by at least 2×, \\| in text | ≥ 2× | 2.5× | 1.5× differs \
             (2026-11-22, 0123456) | ±10% | reproduces | — | [more, because of X](#notes-alpha) |"
        ));
        assert!(md.contains(
            "| Thesis | Table 4 | share of writes | 10–20% | 25% | not stored | exact | differs | [buffer pool ≥ 40 MB \
             (tried 8–128 MB)](#exp-alpha); [paper scale: buffer pool ≥ 48 MB (tried 8–128 MB) (2026-11-22, \
             0123456)](#exp-alpha) | [see beta](#exp-beta) |"
        ));
        let checks_at = md
            .find(
                "Checks of the set-up, not counted above: 0 read back an input of the run, 1 follows \
                                 from preset parameters alone.",
            )
            .expect("the checks follow the measured rows");
        let constant_row = "| CIDR 2011 | Table 2 | a write is 3× a read | constant | 3× | 3× | not stored | exact | \
                            reproduces | [follows from Table 2](#notes-alpha) |";
        assert!(md.find(constant_row).is_some_and(|at| at > checks_at), "{md}");
        assert!(md.contains(
            "| alpha | 2026-11-22T20:11:05Z | `0123456789abcdef` | 7 | 431 | 2 cores | `nvmdb run alpha --scale paper \
             --seed 7 --store` |"
        ));

        let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
        let scorecard_at = html.find("<table class=\"scorecard\">").unwrap();
        let checks_at = html.find("<table class=\"scorecard checks\">").unwrap();
        assert!(scorecard_at < checks_at && checks_at < html.find("<section").unwrap());
        assert!(html.contains("3 measured claims: 2 reproduce, 1 differs, 0 not measured"));
        assert_eq!(html[..checks_at].matches("<td class=\"verdict reproduces\">").count(), 2);
        assert_eq!(html[checks_at..].matches("<td class=\"verdict reproduces\">").count(), 1);
        assert_eq!(html.matches("<td class=\"verdict differs\">").count(), 1);
        assert!(html.contains("<td class=\"stored\">1.5× differs (2026-11-22, 0123456)</td>"));
        assert_eq!(html.matches("<td class=\"stored\">not stored</td>").count(), 3);
        assert!(
            html.contains("<td class=\"would-hold\"><a href=\"#exp-alpha\">buffer pool ≥ 40 MB (tried 8–128 MB)</a>; ")
        );
        assert!(html.contains("<td class=\"nowrap\">constant</td>"));
        assert!(html.contains("<table id=\"paper-scale-runs\""));
        assert!(html.contains("<h2 id=\"not-measured-here\">"));
        // Its list is a table of its own kind: the scorecard's tables hold claims only.
        assert_eq!(html.matches("<table class=\"scorecard").count(), 2);
        assert!(html.contains("<table class=\"unmeasured\">"));
        assert!(html.contains("<td>PCM is | denser</td><td>no density model</td>"));
        // Every note link lands on an anchor, in both formats.
        for r in &expected {
            let target = r.note_link.strip_prefix('#').unwrap();
            assert!(html.contains(&format!("id=\"{target}\"")), "{target} missing in HTML");
            assert!(md.contains(&format!("<a id=\"{target}\"></a>")), "{target} missing in Markdown");
        }
        for f in &finished {
            assert!(html.contains(&format!("<section id=\"exp-{}\">", f.id)));
        }
        std::fs::remove_dir_all(&dir).unwrap();
        std::fs::remove_dir_all(&store.dir).unwrap();
    }

    #[test]
    fn report_without_stored_runs_says_so() {
        let store = PaperStore { dir: PathBuf::from("data/paper-scale"), ..PaperStore::default() };
        let rows = scorecard(CLAIMS, &sample()).unwrap();
        let md = markdown(&sample(), &meta(), &rows, &[], &store);
        assert!(!md.contains("Not measured here"), "an empty list has no section");
        assert!(md.contains("No paper-scale runs are stored in `data/paper-scale`."), "{md}");
        assert_eq!(md.matches("| not stored |").count(), 4, "{md}");
        assert!(html(&sample(), &meta(), &rows, &[], &store).contains("No paper-scale runs are stored in"));
    }

    #[test]
    fn report_without_claims_says_so() {
        let md = markdown(&sample(), &meta(), &[], &[], &PaperStore::default());
        assert!(md.contains("## Scorecard\n\nNo claims"), "{md}");
    }

    #[test]
    fn a_misspelt_claim_fails_the_report() {
        let mut finished = sample();
        finished[1].outcome.measure("beta-shaer", 1.0);
        let dir = temp_dir("typo");
        let err = write_report(&dir, &finished, &meta(), CLAIMS, &[], &PaperStore::default()).unwrap_err();
        assert!(
            matches!(&err, LabError::UnknownClaim { claim, experiment } if claim == "beta-shaer" && experiment == "beta")
        );
        assert!(!dir.join("index.html").exists());
    }

    #[test]
    fn experiment_directory_gets_its_own_scorecard_when_it_has_claims() {
        let dir = temp_dir("experiment");
        let finished = sample();
        for f in &finished {
            write_experiment(&dir, f, &meta(), CLAIMS).unwrap();
        }
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("alpha/scorecard.json")).unwrap()).unwrap();
        let rows: Vec<ScoreRow> = serde_json::from_value(json["rows"].clone()).unwrap();
        let ids: Vec<&str> = rows.iter().map(|r| r.claim_id.as_str()).collect();
        assert_eq!(ids, ["alpha-gain", "alpha-holds", "alpha-ratio"]);
        assert!(dir.join("beta/scorecard.json").exists());
        assert!(dir.join("delta/results.json").exists());
        assert!(!dir.join("delta/scorecard.json").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn csv_and_markdown_carry_every_cell() {
        let mut table = Table::new("Fig. X, a,b", &["name", "paper", "ours"]);
        table.row(vec!["plain".into(), Cell::Missing, 64.5.into()]);
        let outcome = Outcome { tables: vec![table.clone()], ..Outcome::default() };
        let csv = results_csv(&outcome);
        assert_eq!(csv.lines().nth(1), Some("\"Fig. X, a,b\",0,name,plain"));
        assert_eq!(csv.lines().nth(3), Some("\"Fig. X, a,b\",0,ours,64.5"));
        let md = markdown_table(&table);
        assert!(md.contains("| plain | — | 64.50 |"), "{md}");
        assert!(md.contains("\n|---|---|---|\n"), "{md}");
    }
}
