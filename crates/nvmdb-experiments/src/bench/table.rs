//! The speed goals of `nvmdb bench` and the table of today's figures at the top of
//! BENCHMARKS.md (`nvmdb bench --markdown FILE`), which rewrites the rows a run measured
//! between the markers [`BEGIN`] and [`END`] and keeps the rows of other runs, each row
//! naming the run (date, machine, command) it came from.

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The line that opens the generated section.
pub const BEGIN: &str = "<!-- nvmdb bench --markdown: begin (generated; edits between the markers are lost) -->";
/// The line that closes it.
pub const END: &str = "<!-- nvmdb bench --markdown: end -->";

/// A speed goal of one benchmark: a most ratio to its baseline, a least rate, or both.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Goal {
    /// The measured benchmark's result name, as `nvmdb bench` prints it.
    pub name: &'static str,
    /// The working set (`--mib`) the goal is stated for; `None`: any.
    pub mib: Option<u64>,
    /// Its time per operation at most this many times its baseline's.
    pub ratio_max: Option<f64>,
    /// At least this many operations a second.
    pub ops_per_s_min: Option<f64>,
    /// Where the goal was set.
    pub issue: u32,
}

const fn goal(
    name: &'static str,
    mib: Option<u64>,
    ratio_max: Option<f64>,
    ops_per_s_min: Option<f64>,
    issue: u32,
) -> Goal {
    Goal { name, mib, ratio_max, ops_per_s_min, issue }
}

/// Every speed goal: issue 13's (write-backs, the cached memory, B+-tree inserts, the
/// page-FTL replay) and issue 8's (the PCM log's hot-stream replay within 2× of the plain
/// FTL's time, that is, at least half its rate).
pub const GOALS: &[Goal] = &[
    goal("pcm-writeback/one-word-changed", Some(1), Some(4.0), Some(10e6), 13),
    goal("pcm-writeback/random-line", Some(1), Some(4.0), None, 13),
    goal("pcm-writeback/one-word-changed", Some(64), Some(4.0), Some(5e6), 13),
    goal("pcm-writeback/random-line", Some(64), Some(4.0), None, 13),
    // Issue 13 measured these at the default working set.
    goal("memory-random-mix/cached-pcm", Some(64), Some(6.0), None, 13),
    goal("memory-pointer-chase/cached-pcm", Some(64), Some(2.0), None, 13),
    goal("btree-insert/cached-pcm", None, Some(4.0), None, 13),
    goal("ssd-page-ftl-replay", None, None, Some(6e6), 13),
    goal("ssd-pcm-log-replay-hot", None, Some(2.0), None, 8),
    goal("ssd-pcm-log-words-replay-hot", None, Some(2.0), None, 8),
];

/// Whether a benchmark's working set is `--mib` (the memory, write-back and eNVy memory
/// benchmarks); the others ignore it.
pub fn uses_working_set(name: &str) -> bool {
    ["memory-", "pcm-writeback/", "line-diff/", "envy-memory-"].iter().any(|p| name.starts_with(p))
}

/// One benchmark's figures from one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    pub name: String,
    pub ns_per_op: f64,
    /// The baseline's name and time per operation, measured in the same run.
    pub baseline: Option<(String, f64)>,
    pub peak_memory_bytes: Option<u64>,
}

/// The run the figures came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    /// UTC, `YYYY-MM-DDTHH:MM:SSZ`: also the run's name in the table.
    pub date: String,
    pub machine: String,
    pub command: String,
    /// `--mib`.
    pub mib: u64,
}

/// The goal of `name` at working set `mib`, if it has one.
pub fn goal_of(name: &str, mib: u64) -> Option<&'static Goal> {
    GOALS.iter().find(|g| g.name == name && g.mib.is_none_or(|m| m == mib))
}

fn goal_text(goal: &Goal) -> String {
    let mut parts = Vec::new();
    if let Some(rate) = goal.ops_per_s_min {
        parts.push(format!("≥ {} M/s", rate / 1e6));
    }
    if let Some(ratio) = goal.ratio_max {
        parts.push(format!("≤ {ratio}×"));
    }
    format!("{} (issue {})", parts.join(", "), goal.issue)
}

/// "yes", or "no" with the parts missed.
fn verdict(goal: &Goal, ops_per_s: f64, ratio: Option<f64>) -> String {
    let mut missed = Vec::new();
    if goal.ops_per_s_min.is_some_and(|min| ops_per_s < min) {
        missed.push("rate");
    }
    if let Some(max) = goal.ratio_max {
        if ratio.is_none_or(|r| r > max) {
            missed.push(if ratio.is_some() { "ratio" } else { "ratio (baseline not run)" });
        }
    }
    if missed.is_empty() {
        "**yes**".into()
    } else {
        format!("no ({})", missed.join(", "))
    }
}

/// The row's key: the name, with the working set where it has one.
fn row_key(name: &str, mib: u64) -> String {
    if uses_working_set(name) {
        format!("`{name}` ({mib} MiB)")
    } else {
        format!("`{name}`")
    }
}

fn rate_text(ops_per_s: f64) -> String {
    if ops_per_s >= 1e6 {
        format!("{:.2} M/s", ops_per_s / 1e6)
    } else {
        format!("{:.1} K/s", ops_per_s / 1e3)
    }
}

/// The table rows of one run: every measured benchmark but those that are only another's
/// baseline (a baseline with a baseline of its own, as the plain FTL's replay, keeps its
/// row), keyed by [`row_key`].
pub fn rows(measured: &[Measured], run: &Run) -> BTreeMap<String, String> {
    let baselines: Vec<&str> = measured.iter().filter_map(|m| m.baseline.as_ref().map(|(b, _)| b.as_str())).collect();
    measured
        .iter()
        .filter(|m| m.baseline.is_some() || !baselines.contains(&m.name.as_str()))
        .map(|m| {
            let ops_per_s = 1e9 / m.ns_per_op;
            let ratio = m.baseline.as_ref().map(|(_, base_ns)| m.ns_per_op / base_ns);
            let mut figure = format!("{:.1} ns ({})", m.ns_per_op, rate_text(ops_per_s));
            if let Some(bytes) = m.peak_memory_bytes {
                figure = format!("{:.2} GiB peak resident", bytes as f64 / f64::from(1u32 << 30));
            }
            let baseline = m.baseline.as_ref().map_or_else(|| "—".into(), |(b, ns)| format!("`{b}` {ns:.1} ns"));
            let ratio_text = ratio.map_or_else(|| "—".into(), |r| format!("{r:.2}×"));
            let (goal, met) = goal_of(&m.name, run.mib)
                .map_or_else(|| ("—".into(), "—".into()), |g| (goal_text(g), verdict(g, ops_per_s, ratio)));
            let key = row_key(&m.name, run.mib);
            let row = format!("| {key} | {figure} | {baseline} | {ratio_text} | {goal} | {met} | {} |", run.date);
            (key, row)
        })
        .collect()
}

/// Where a row's goal stands in [`GOALS`]; after them all if it has none.
fn goal_rank(key: &str) -> usize {
    GOALS.iter().position(|g| row_key(g.name, g.mib.unwrap_or(0)) == key).unwrap_or(GOALS.len())
}

/// The line naming a run below the table.
fn run_line(run: &Run) -> String {
    format!("- {}: {}; `{}`", run.date, run.machine, run.command)
}

/// The first cell of a table row, and its last (the run).
fn row_cells(line: &str) -> Option<(&str, &str)> {
    let cells: Vec<&str> = line.strip_prefix("| ")?.strip_suffix(" |")?.split(" | ").collect();
    (cells.len() == 7 && cells[0].starts_with('`')).then(|| (cells[0], cells[6]))
}

/// The section between the markers: `old` (the previous section's lines, without the
/// markers) with the rows of `run` replacing those of the same benchmarks, and the runs
/// no row names any more dropped.
pub fn section(old: &str, measured: &[Measured], run: &Run) -> String {
    let mut table: BTreeMap<String, String> = BTreeMap::new();
    let mut runs: BTreeMap<String, String> = BTreeMap::new();
    for line in old.lines() {
        if let Some((key, _)) = row_cells(line) {
            table.insert(key.to_owned(), line.to_owned());
        } else if let Some((date, _)) = line.strip_prefix("- ").and_then(|rest| rest.split_once(": ")) {
            runs.insert(date.to_owned(), line.to_owned());
        }
    }
    table.extend(rows(measured, run));
    runs.insert(run.date.clone(), run_line(run));
    runs.retain(|date, _| table.values().any(|row| row_cells(row).is_some_and(|(_, d)| d == date)));
    // The rows with a goal first, in the order of [`GOALS`], then the others by name.
    let mut ordered: Vec<(&String, &String)> = table.iter().collect();
    ordered.sort_by_key(|(key, _)| (goal_rank(key), *key));
    let verdicts: Vec<&str> = ordered.iter().filter_map(|(_, row)| row.split(" | ").nth(5)).collect();
    let with_goal = verdicts.iter().filter(|v| **v != "—").count();
    let met = verdicts.iter().filter(|v| **v == "**yes**").count();
    let mut out = format!("**Goals met: {met} of the {with_goal} rows with a goal.**\n\n");
    out.push_str("| benchmark | time per operation (rate) | baseline, same run | ratio | goal | met? | run |\n");
    out.push_str("|---|---|---|---|---|---|---|\n");
    for (_, row) in ordered {
        out.push_str(row);
        out.push('\n');
    }
    out.push_str("\nRuns (machine; command):\n\n");
    for line in runs.values() {
        let _ = writeln!(out, "{line}");
    }
    out
}

/// Where the generated section's markers are: the begin marker's start, and the end
/// marker's; an error if either is missing or they are out of order.
fn markers(text: &str) -> Result<(usize, usize), String> {
    let begin = text.find(BEGIN).ok_or_else(|| format!("no line {BEGIN:?}"))?;
    let after_begin = begin + BEGIN.len();
    let end = text[after_begin..].find(END).ok_or_else(|| format!("no line {END:?} after the begin marker"))?;
    Ok((begin, after_begin + end))
}

/// Whether `text` has the generated section's markers, in order.
pub fn check_markers(text: &str) -> Result<(), String> {
    markers(text).map(|_| ())
}

/// `text` (a whole BENCHMARKS.md) with its generated section rewritten by [`section`];
/// an error if the markers are missing or out of order.
pub fn rewrite(text: &str, measured: &[Measured], run: &Run) -> Result<String, String> {
    let (begin, end) = markers(text)?;
    let old = &text[begin + BEGIN.len()..end];
    Ok(format!("{}{BEGIN}\n{}{}", &text[..begin], section(old, measured, run), &text[end..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(date: &str, mib: u64) -> Run {
        Run {
            date: date.into(),
            machine: "a CPU, 2 logical cores".into(),
            command: format!("nvmdb bench --mib {mib}"),
            mib,
        }
    }

    fn measured(name: &str, ns: f64, baseline: Option<(&str, f64)>) -> Measured {
        Measured {
            name: name.into(),
            ns_per_op: ns,
            baseline: baseline.map(|(b, n)| (b.into(), n)),
            peak_memory_bytes: None,
        }
    }

    #[test]
    fn a_row_gives_the_ratio_and_the_verdict_of_each_part_of_the_goal() {
        let m = [
            measured("pcm-writeback/one-word-changed", 80.0, Some(("line-diff/native/one-word-changed", 25.0))),
            measured("line-diff/native/one-word-changed", 25.0, None),
            measured("pcm-writeback/random-line", 120.0, Some(("line-diff/native/random-line", 25.0))),
            measured("line-diff/native/random-line", 25.0, None),
        ];
        let rows = rows(&m, &run("2026-01-01T00:00:00Z", 1));
        // The baselines get no rows of their own.
        assert_eq!(rows.len(), 2, "{rows:?}");
        let one = &rows["`pcm-writeback/one-word-changed` (1 MiB)"];
        // 80 ns is 12.5 M/s (≥ 10) and 3.20× (≤ 4): met.
        assert!(one.contains("| 80.0 ns (12.50 M/s) |"), "{one}");
        assert!(one.contains("| 3.20× | ≥ 10 M/s, ≤ 4× (issue 13) | **yes** |"), "{one}");
        let random = &rows["`pcm-writeback/random-line` (1 MiB)"];
        assert!(random.contains("| 4.80× | ≤ 4× (issue 13) | no (ratio) |"), "{random}");
    }

    #[test]
    fn a_baseline_with_a_baseline_of_its_own_keeps_its_row() {
        let m = [
            measured("ssd-page-ftl-replay", 100.0, Some(("page-remap/native", 20.0))),
            measured("page-remap/native", 20.0, None),
            measured("ssd-pcm-log-replay", 300.0, Some(("ssd-page-ftl-replay", 100.0))),
        ];
        let keys: Vec<String> = rows(&m, &run("d", 64)).into_keys().collect();
        assert_eq!(keys, ["`ssd-page-ftl-replay`", "`ssd-pcm-log-replay`"]);
    }

    #[test]
    fn goals_follow_the_working_set_and_a_missing_baseline_misses_a_ratio_goal() {
        let m = [measured("pcm-writeback/one-word-changed", 250.0, Some(("line-diff/native/one-word-changed", 100.0)))];
        let at_64 = rows(&m, &run("d", 64));
        // 4 M/s is below the 64 MiB goal's 5 M/s; the ratio 2.5× is within it.
        assert!(at_64["`pcm-writeback/one-word-changed` (64 MiB)"].contains("| ≥ 5 M/s, ≤ 4× (issue 13) | no (rate) |"));
        assert!(rows(&m, &run("d", 16))["`pcm-writeback/one-word-changed` (16 MiB)"].contains("| — | — | d |"));
        let alone = rows(&[measured("ssd-pcm-log-replay-hot", 500.0, None)], &run("d", 64));
        assert!(alone["`ssd-pcm-log-replay-hot`"].contains("no (ratio (baseline not run))"));
    }

    #[test]
    fn a_rewrite_replaces_the_runs_rows_keeps_the_others_and_drops_unnamed_runs() {
        let text = format!("# Benchmarks\n\nintro\n\n{BEGIN}\n{END}\n\n## History\n");
        let first = [measured("ssd-page-ftl-replay", 100.0, Some(("page-remap/native", 10.0)))];
        let once = rewrite(&text, &first, &run("2026-01-01T00:00:00Z", 64)).expect("markers present");
        assert!(once.starts_with("# Benchmarks\n\nintro\n\n"));
        assert!(once.ends_with(&format!("{END}\n\n## History\n")));
        assert!(once.contains("| `ssd-page-ftl-replay` | 100.0 ns (10.00 M/s) | `page-remap/native` 10.0 ns | 10.00× | ≥ 6 M/s (issue 13) | **yes** | 2026-01-01T00:00:00Z |"), "{once}");
        // A second run of another benchmark keeps the first row and both runs.
        let second = [measured("memory-pointer-chase/cached-pcm", 30.0, Some(("memory-pointer-chase/native", 10.0)))];
        let twice = rewrite(&once, &second, &run("2026-01-02T00:00:00Z", 64)).expect("markers present");
        assert!(twice.contains("`ssd-page-ftl-replay` |"));
        assert!(twice.contains("| `memory-pointer-chase/cached-pcm` (64 MiB) | 30.0 ns (33.33 M/s) |"));
        assert!(twice.contains("- 2026-01-01T00:00:00Z: a CPU, 2 logical cores; `nvmdb bench --mib 64`"));
        assert!(twice.contains("- 2026-01-02T00:00:00Z: "));
        // The chase (3× against ≤ 2×) misses its goal, the replay meets its own; the row
        // whose goal comes first in GOALS is first.
        assert!(twice.contains("**Goals met: 1 of the 2 rows with a goal.**"), "{twice}");
        let chase = twice.find("| `memory-pointer-chase/cached-pcm`").expect("row");
        assert!(chase < twice.find("| `ssd-page-ftl-replay`").expect("row"));
        // A third run of the first benchmark replaces its row; the first run is named by no
        // row any more and goes.
        let thrice = rewrite(&twice, &first, &run("2026-01-03T00:00:00Z", 64)).expect("markers present");
        assert_eq!(thrice.matches("`ssd-page-ftl-replay` |").count(), 1);
        assert!(!thrice.contains("2026-01-01"), "{thrice}");
        assert!(thrice.contains("- 2026-01-02T00:00:00Z: ") && thrice.contains("- 2026-01-03T00:00:00Z: "));
        // Idempotent in shape: the same run again gives the same text.
        assert_eq!(rewrite(&thrice, &first, &run("2026-01-03T00:00:00Z", 64)), Ok(thrice.clone()));
    }

    #[test]
    fn a_file_without_the_markers_is_refused() {
        assert!(rewrite("# Benchmarks\n", &[], &run("d", 64)).is_err());
        assert!(rewrite(&format!("{END}\n{BEGIN}\n"), &[], &run("d", 64)).is_err());
    }

    #[test]
    fn every_goal_states_a_bound_and_a_working_set_where_it_has_one() {
        for g in GOALS {
            assert!(g.ratio_max.is_some() || g.ops_per_s_min.is_some(), "{g:?}");
            assert_eq!(g.mib.is_some(), uses_working_set(g.name), "{g:?}");
        }
    }
}
