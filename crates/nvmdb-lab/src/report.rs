//! Writes an experiment's files and the combined report.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::outcome::{Cell, Outcome, Table};
use crate::{svg, Experiment, LabError, Scale};

/// What identifies a run.
#[derive(Debug, Clone, Serialize)]
pub struct RunMeta {
    /// The seed.
    pub seed: u64,
    /// The scale.
    pub scale: Scale,
    /// The git commit of the code, or `unknown`.
    pub git_commit: String,
    /// The nvmdb version.
    pub version: String,
}

impl RunMeta {
    /// Metadata for a run; the commit is asked of git in the current directory.
    pub fn new(seed: u64, scale: Scale) -> RunMeta {
        let git_commit = std::process::Command::new("git")
            .args(["rev-parse", "HEAD"])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .map_or_else(|| "unknown".into(), |s| s.trim().to_string());
        RunMeta { seed, scale, git_commit, version: env!("CARGO_PKG_VERSION").into() }
    }
}

/// One finished experiment.
#[derive(Debug, Clone, Serialize)]
pub struct Finished {
    /// Experiment id.
    pub id: String,
    /// Title.
    pub title: String,
    /// Source in the seeds.
    pub source: String,
    /// Its result.
    pub outcome: Outcome,
}

impl Finished {
    /// Bundles an experiment's identity with its outcome.
    pub fn new(experiment: &dyn Experiment, outcome: Outcome) -> Finished {
        Finished {
            id: experiment.id().into(),
            title: experiment.title().into(),
            source: experiment.source().into(),
            outcome,
        }
    }
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> LabError + '_ {
    move |source| LabError::Io { path: path.display().to_string(), source }
}

fn write_file(path: &Path, contents: &str) -> Result<(), LabError> {
    std::fs::write(path, contents).map_err(io_err(path))
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// `results.csv`: one row per table cell, `table,row,column,value`.
fn results_csv(outcome: &Outcome) -> String {
    let mut out = String::from("table,row,column,value\n");
    for table in &outcome.tables {
        for (r, row) in table.rows.iter().enumerate() {
            for (column, cell) in table.columns.iter().zip(row) {
                let value = match cell {
                    Cell::Int(v) => v.to_string(),
                    Cell::Float(v) => v.to_string(),
                    Cell::Text(s) => s.clone(),
                    Cell::Missing => String::new(),
                };
                let _ = writeln!(out, "{},{r},{},{}", csv_field(&table.title), csv_field(column), csv_field(&value));
            }
        }
    }
    out
}

/// Writes `DIR/<id>/results.json`, `results.csv` and `plot-N.svg`.
pub fn write_experiment(dir: &Path, finished: &Finished, meta: &RunMeta) -> Result<PathBuf, LabError> {
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
        write_file(&exp_dir.join(format!("plot-{}.svg", i + 1)), &svg::render(plot))?;
    }
    Ok(exp_dir)
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

/// The Markdown report over all finished experiments.
pub fn markdown(finished: &[Finished], meta: &RunMeta) -> String {
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
    out.push_str("| experiment | reproduces |\n|---|---|\n");
    for f in finished {
        let _ = writeln!(out, "| [{}](#{}) | {} |", f.id, f.id, f.source);
    }
    for f in finished {
        let _ = writeln!(
            out,
            "\n## {}\n\n<a id=\"{}\"></a>*{}* — {}\n\n{}\n",
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
            out.push_str("Notes:\n\n");
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
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// The HTML report, plots inlined.
pub fn html(finished: &[Finished], meta: &RunMeta) -> String {
    let mut out = String::from(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>nvmdb report</title><style>body{font-family:sans-serif;max-width:1000px;margin:auto}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}th{background:#f4f4f4}</style></head><body>\n",
    );
    let _ = writeln!(
        out,
        "<h1>nvmdb reproduction report</h1><p>Scale <code>{}</code>, seed <code>{}</code>, commit <code>{}</code>.</p>",
        meta.scale.name(),
        meta.seed,
        html_escape(&meta.git_commit)
    );
    for f in finished {
        let _ = writeln!(
            out,
            "<h2 id=\"{}\">{}</h2><p><em>{}</em> — {}</p><p>{}</p>",
            f.id,
            f.id,
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
            out.push_str(&svg::render(plot));
        }
        if !f.outcome.notes.is_empty() {
            out.push_str("<ul>");
            for note in &f.outcome.notes {
                let _ = write!(out, "<li>{}</li>", html_escape(note));
            }
            out.push_str("</ul>\n");
        }
    }
    out.push_str("</body></html>\n");
    out
}

/// Writes `DIR/REPORT.md` and `DIR/index.html`.
pub fn write_report(dir: &Path, finished: &[Finished], meta: &RunMeta) -> Result<(), LabError> {
    std::fs::create_dir_all(dir).map_err(io_err(dir))?;
    write_file(&dir.join("REPORT.md"), &markdown(finished, meta))?;
    write_file(&dir.join("index.html"), &html(finished, meta))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::Plot;

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

    #[test]
    fn svg_has_one_polyline_per_series() {
        let mut plot = Plot::new("t", "x", "y");
        plot.series("a", vec![(0.0, 1.0), (1.0, 2.0)]);
        plot.series("b", vec![(0.0, 3.0)]);
        let svg = svg::render(&plot);
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(svg.starts_with("<svg"));
    }
}
