//! Writes an experiment's files and the combined report.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::outcome::{Cell, Outcome, Table};
use crate::scorecard::{scorecard, tally, tally_line, Claim, ScoreRow, Verdict};
use crate::{Experiment, LabError, Scale};

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

/// `scorecard.csv`: one row per claim.
fn scorecard_csv(rows: &[ScoreRow]) -> String {
    let mut out = String::from("claim_id,experiment,seed,figure,claim,paper,ours,value,tolerance,verdict,note\n");
    for r in rows {
        let value = r.value.map_or_else(String::new, |v| v.to_string());
        let fields = [
            &r.claim_id,
            &r.experiment,
            &r.seed,
            &r.figure,
            &r.claim,
            &r.paper,
            &r.ours,
            &value,
            &r.tolerance,
            r.verdict.label(),
            &r.note,
        ];
        let fields: Vec<String> = fields.iter().map(|f| csv_field(f)).collect();
        let _ = writeln!(out, "{}", fields.join(","));
    }
    out
}

/// `scorecard.json`: the run, the tally and the rows.
fn scorecard_json(rows: &[ScoreRow], meta: &RunMeta) -> String {
    #[derive(Serialize)]
    struct Tally {
        reproduces: usize,
        differs: usize,
        not_measured: usize,
    }
    #[derive(Serialize)]
    struct Json<'a> {
        meta: &'a RunMeta,
        tally: Tally,
        rows: &'a [ScoreRow],
    }
    let (reproduces, differs, not_measured) = tally(rows);
    let json = Json { meta, tally: Tally { reproduces, differs, not_measured }, rows };
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
        write_file(&exp_dir.join("scorecard.json"), &scorecard_json(&rows, meta))?;
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

fn md_cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn markdown_scorecard(rows: &[ScoreRow]) -> String {
    let mut out = String::from("## Scorecard\n\n");
    if rows.is_empty() {
        out.push_str("No claims of the papers are registered for these experiments.\n\n");
        return out;
    }
    let _ = writeln!(out, "**{}** ({} claims)\n", tally_line(rows), rows.len());
    out.push_str("| seed | figure | claim | paper | ours | tolerance | verdict | note |\n");
    out.push_str("|---|---|---|---|---|---|---|---|\n");
    for r in rows {
        let note = if r.note.is_empty() { format!("see {}", r.experiment) } else { r.note.clone() };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | [{}]({}) |",
            md_cell(&r.seed),
            md_cell(&r.figure),
            md_cell(&r.claim),
            md_cell(&r.paper),
            md_cell(&r.ours),
            md_cell(&r.tolerance),
            r.verdict.label(),
            md_cell(&note).replace(['[', ']'], ""),
            r.note_link
        );
    }
    out.push('\n');
    out
}

/// The Markdown report over all finished experiments, opened by the scorecard.
pub fn markdown(finished: &[Finished], meta: &RunMeta, scorecard: &[ScoreRow]) -> String {
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
    out.push_str(&markdown_scorecard(scorecard));
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
table.scorecard td,table.scorecard th{text-align:left;vertical-align:top}td.nowrap{white-space:nowrap}table.scorecard td.num{text-align:right;white-space:nowrap}\
td.verdict{font-weight:bold;white-space:nowrap}td.reproduces{background:#d7f0d8;color:#14532d}\
td.differs{background:#fde8b8;color:#713f12}td.not-measured{background:#e5e7eb;color:#374151}\
p.tally{font-size:1.1em}svg{max-width:100%;height:auto;display:block;margin:1em 0}";

fn verdict_class(v: Verdict) -> &'static str {
    match v {
        Verdict::Reproduces => "reproduces",
        Verdict::Differs => "differs",
        Verdict::NotMeasured => "not-measured",
    }
}

fn html_scorecard(rows: &[ScoreRow]) -> String {
    let mut out = String::from("<h2 id=\"scorecard\">Scorecard</h2>\n");
    if rows.is_empty() {
        out.push_str("<p>No claims of the papers are registered for these experiments.</p>\n");
        return out;
    }
    let _ = writeln!(out, "<p class=\"tally\"><strong>{}</strong> ({} claims)</p>", tally_line(rows), rows.len());
    out.push_str("<table class=\"scorecard\"><tr>");
    for c in ["seed", "figure", "claim", "paper", "ours", "tolerance", "verdict", "note"] {
        let _ = write!(out, "<th>{c}</th>");
    }
    out.push_str("</tr>\n");
    for r in rows {
        let note = if r.note.is_empty() { format!("see {}", r.experiment) } else { r.note.clone() };
        let _ = writeln!(
            out,
            "<tr><td class=\"nowrap\">{}</td><td class=\"nowrap\">{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td class=\"verdict {}\">{}</td><td><a href=\"{}\">{}</a></td></tr>",
            html_escape(&r.seed),
            html_escape(&r.figure),
            html_escape(&r.claim),
            html_escape(&r.paper),
            html_escape(&r.ours),
            html_escape(&r.tolerance),
            verdict_class(r.verdict),
            r.verdict.label(),
            html_escape(&r.note_link),
            html_escape(&note)
        );
    }
    out.push_str("</table>\n");
    out
}

/// The HTML report, opened by the scorecard, plots inlined.
pub fn html(finished: &[Finished], meta: &RunMeta, scorecard: &[ScoreRow]) -> String {
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
    out.push_str(&html_scorecard(scorecard));
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
/// over the finished experiments, and the scorecard alone as `DIR/scorecard.json` and
/// `DIR/scorecard.csv`. Fails when a measurement names no claim of its experiment or
/// measures one twice.
pub fn write_report(dir: &Path, finished: &[Finished], meta: &RunMeta, claims: &[Claim]) -> Result<(), LabError> {
    let rows = scorecard(claims, finished)?;
    std::fs::create_dir_all(dir).map_err(io_err(dir))?;
    write_file(&dir.join("scorecard.json"), &scorecard_json(&rows, meta))?;
    write_file(&dir.join("scorecard.csv"), &scorecard_csv(&rows))?;
    write_file(&dir.join("REPORT.md"), &markdown(finished, meta, &rows))?;
    write_file(&dir.join("index.html"), &html(finished, meta, &rows))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scorecard::{Stated, Tolerance};

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
        },
    ];

    fn meta() -> RunMeta {
        RunMeta { seed: 7, scale: Scale::Quick, git_commit: "abc".into(), version: "0.1.0".into() }
    }

    fn sample() -> Vec<Finished> {
        let mut alpha =
            Outcome { summary: "Alpha ran.".into(), notes: vec!["Why alpha.".into()], ..Outcome::default() };
        alpha.measure_noted("alpha-gain", 2.5, "more, because of X");
        alpha.holds("alpha-holds", true);
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

    #[test]
    fn report_opens_with_the_scorecard_and_writes_it_as_json_and_csv() {
        let dir = temp_dir("report");
        let finished = sample();
        write_report(&dir, &finished, &meta(), CLAIMS).unwrap();
        let expected = scorecard(CLAIMS, &finished).unwrap();
        let ids: Vec<&str> = expected.iter().map(|r| r.claim_id.as_str()).collect();
        assert_eq!(ids, ["alpha-gain", "beta-share", "alpha-holds"]);

        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("scorecard.json")).unwrap()).unwrap();
        let rows: Vec<ScoreRow> = serde_json::from_value(json["rows"].clone()).unwrap();
        assert_eq!(rows, expected);
        assert_eq!(json["tally"], serde_json::json!({"reproduces": 2, "differs": 1, "not_measured": 0}));
        assert_eq!(json["rows"][1]["verdict"], "differs");

        let csv = std::fs::read_to_string(dir.join("scorecard.csv")).unwrap();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 1 + expected.len(), "{csv}");
        assert!(lines[0].starts_with("claim_id,experiment,seed,figure,claim,paper,ours,value,tolerance,verdict,note"));
        assert_eq!(
            lines[1],
            "alpha-gain,alpha,CIDR 2011,Figure 6(a),\"wear falls by at least 2×, | in text\",≥ 2×,2.5×,2.5,±10%,\
             reproduces,\"more, because of X\""
        );
        assert!(lines[2].ends_with(",differs,"), "{}", lines[2]);

        let md = std::fs::read_to_string(dir.join("REPORT.md")).unwrap();
        let headings: Vec<&str> = md.lines().filter(|l| l.starts_with('#')).collect();
        assert_eq!(headings[..3], ["# nvmdb reproduction report", "## Scorecard", "## Experiments"]);
        assert!(md.contains("**2 reproduce, 1 differs, 0 not measured** (3 claims)"), "{md}");
        assert!(md.contains(
            "| CIDR 2011 | Figure 6(a) | wear falls by at least 2×, \\| in text | ≥ 2× | 2.5× | ±10% | reproduces | \
             [more, because of X](#notes-alpha) |"
        ));
        assert!(md.contains(
            "| Thesis | Table 4 | share of writes | 10–20% | 25% | exact | differs | [see beta](#exp-beta) |"
        ));

        let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
        let scorecard_at = html.find("<table class=\"scorecard\">").unwrap();
        assert!(scorecard_at < html.find("<section").unwrap());
        assert!(html.contains("2 reproduce, 1 differs, 0 not measured"));
        assert_eq!(html.matches("<td class=\"verdict reproduces\">").count(), 2);
        assert_eq!(html.matches("<td class=\"verdict differs\">").count(), 1);
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
    }

    #[test]
    fn report_without_claims_says_so() {
        let md = markdown(&sample(), &meta(), &[]);
        assert!(md.contains("## Scorecard\n\nNo claims"), "{md}");
    }

    #[test]
    fn a_misspelt_claim_fails_the_report() {
        let mut finished = sample();
        finished[1].outcome.measure("beta-shaer", 1.0);
        let dir = temp_dir("typo");
        let err = write_report(&dir, &finished, &meta(), CLAIMS).unwrap_err();
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
        assert_eq!(ids, ["alpha-gain", "alpha-holds"]);
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
