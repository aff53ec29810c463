//! The terminal view of the board: a progress bar per run (when stderr is a terminal) and,
//! every wall-clock second, one line with each engine's throughput since the last line.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::monitor::board::{Board, RunState};

/// Wall time between two throughput lines.
const LINE_INTERVAL: Duration = Duration::from_secs(1);

/// Bars and throughput lines on stderr.
#[derive(Debug)]
pub struct Terminal {
    multi: MultiProgress,
    bars: Vec<ProgressBar>,
    tty: bool,
    started: Instant,
    last_line: Instant,
    /// Per engine: the run and (ops, simulated ns) the previous line measured from.
    marks: Vec<Option<(usize, u64, u64)>>,
    seen: Vec<usize>,
}

impl Terminal {
    /// Bars for the board's runs, drawn only when stderr is a terminal.
    pub fn new(board: &Board) -> Terminal {
        let tty = std::io::stderr().is_terminal();
        let target = if tty { ProgressDrawTarget::stderr() } else { ProgressDrawTarget::hidden() };
        let multi = MultiProgress::with_draw_target(target);
        let style = ProgressStyle::with_template("{prefix:>18} [{bar:30}] {pos:>9}/{len:9} {msg}")
            .expect("static template")
            .progress_chars("=> ");
        let bars = board
            .snapshot()
            .runs
            .iter()
            .map(|run| {
                let bar = multi.add(ProgressBar::new(run.ops_total));
                bar.set_style(style.clone());
                bar.set_prefix(format!("{} {}", run.engine, run.benchmark));
                bar
            })
            .collect();
        let now = Instant::now();
        Terminal { multi, bars, tty, started: now, last_line: now, marks: Vec::new(), seen: Vec::new() }
    }

    /// Redraws the bars; prints a throughput line once a second has passed since the last.
    pub fn refresh(&mut self, board: &Board) {
        let delta = board.delta(&mut self.seen);
        for (bar, run) in self.bars.iter().zip(&delta.runs) {
            if bar.is_finished() {
                continue;
            }
            bar.set_position(run.ops_done);
            if run.finished {
                bar.finish_with_message(format!("{} ops/s", thousands(mean_ops_per_s(run))));
            } else if run.ops_done > 0 && run.sim_ns == 0 {
                // Operations served from the buffer pool take no simulated time.
                bar.set_message("no simulated time yet");
            } else if run.ops_done > 0 {
                bar.set_message(format!("{} ops/s so far", thousands(mean_ops_per_s(run))));
            } else if run.load_done > 0 {
                bar.set_message(format!("loading {}", percent(run.load_done, run.load_total)));
            }
        }
        if self.last_line.elapsed() >= LINE_INTERVAL {
            self.last_line = Instant::now();
            let line = throughput_line(self.started.elapsed().as_secs(), &delta.runs, &mut self.marks);
            if self.tty {
                // Printed above the bars.
                let _ = self.multi.println(line);
            } else {
                eprintln!("{line}");
            }
        }
    }

    /// The last redraw; the bars stay on screen, and what is printed next starts on a line
    /// of its own (the bars leave the cursor at the end of the last one).
    pub fn finish(&mut self, board: &Board) {
        self.refresh(board);
        if self.tty {
            eprintln!();
        }
    }
}

/// Operations per simulated second of a run so far.
pub fn mean_ops_per_s(run: &RunState) -> f64 {
    ops_per_s(run.ops_done, run.sim_ns)
}

fn ops_per_s(ops: u64, sim_ns: u64) -> f64 {
    if sim_ns == 0 {
        return 0.0;
    }
    ops as f64 * 1e9 / sim_ns as f64
}

/// `42%`: the share `done` of `total`, rounded down.
pub fn percent(done: u64, total: u64) -> String {
    format!("{}%", (done as f64 * 100.0 / total.max(1) as f64).floor())
}

/// `12,345` for 12345.4.
pub fn thousands(x: f64) -> String {
    let digits = format!("{:.0}", x.max(0.0));
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && digits.len().saturating_sub(i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `[  3 s] flash-only insert 1,234 ops/s | …`: for each engine (in the runs' order), the
/// run it is on (the first unfinished, else its last) and its operations per simulated
/// second since the previous line's mark in the same run, else since the run started.
fn throughput_line(elapsed_s: u64, runs: &[RunState], marks: &mut Vec<Option<(usize, u64, u64)>>) -> String {
    let mut engines: Vec<&str> = Vec::new();
    for run in runs {
        if !engines.contains(&run.engine.as_str()) {
            engines.push(&run.engine);
        }
    }
    marks.resize(engines.len(), None);
    let parts: Vec<String> = engines
        .iter()
        .zip(marks.iter_mut())
        .map(|(engine, mark)| {
            let mine: Vec<usize> = (0..runs.len()).filter(|&i| runs[i].engine == *engine).collect();
            let current = mine.iter().copied().find(|&i| !runs[i].finished).or(mine.last().copied());
            let Some(i) = current else { return format!("{engine} -") };
            let run = &runs[i];
            let (ops0, ns0) = match *mark {
                Some((j, ops, ns)) if j == i => (ops, ns),
                _ => (0, 0),
            };
            *mark = Some((i, run.ops_done, run.sim_ns));
            let rate = if run.finished {
                format!("{} ops/s (mean)", thousands(mean_ops_per_s(run)))
            } else if run.ops_done == 0 && run.load_done > 0 {
                format!("loading {}", percent(run.load_done, run.load_total))
            } else if run.sim_ns > ns0 {
                format!(
                    "{} ops/s",
                    thousands(ops_per_s(run.ops_done.saturating_sub(ops0), run.sim_ns.saturating_sub(ns0)))
                )
            } else {
                "-".to_string()
            };
            format!("{engine} {} {rate}", run.benchmark)
        })
        .collect();
    format!("[{elapsed_s:>3} s] {}", parts.join(" | "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(engine: &str, benchmark: &str, ops_done: u64, sim_ns: u64, finished: bool) -> RunState {
        RunState {
            engine: engine.into(),
            benchmark: benchmark.into(),
            load_total: 0,
            load_done: 0,
            ops_total: 100,
            ops_done,
            sim_ns,
            finished,
            samples: Vec::new(),
        }
    }

    #[test]
    fn thousands_groups_digits() {
        assert_eq!(thousands(0.0), "0");
        assert_eq!(thousands(999.4), "999");
        assert_eq!(thousands(1234.0), "1,234");
        assert_eq!(thousands(1_234_567.6), "1,234,568");
    }

    #[test]
    fn line_measures_since_the_previous_mark_of_the_same_run() {
        let mut marks = Vec::new();
        // a: 10 ops in 1 ms; b: nothing yet.
        let mut loading = run("b", "update", 0, 0, false);
        (loading.load_done, loading.load_total) = (40, 100);
        let runs = [run("a", "insert", 10, 1_000_000, false), loading];
        assert_eq!(throughput_line(1, &runs, &mut marks), "[  1 s] a insert 10,000 ops/s | b update loading 40%");
        // a: 20 more ops in 4 ms; b: 5 ops in 1 s, no time passed since.
        let runs = [run("a", "insert", 30, 5_000_000, false), run("b", "update", 5, 1_000_000_000, false)];
        assert_eq!(throughput_line(2, &runs, &mut marks), "[  2 s] a insert 5,000 ops/s | b update 5 ops/s");
        let runs = [run("a", "insert", 30, 5_000_000, false), run("b", "update", 5, 1_000_000_000, false)];
        assert_eq!(throughput_line(2, &runs, &mut marks), "[  2 s] a insert - | b update -");
        // a moved to its next run: measured from that run's start; b is over.
        let runs = [
            run("a", "insert", 100, 6_000_000, true),
            run("a", "search", 50, 500_000, false),
            run("b", "update", 100, 2_000_000_000, true),
        ];
        assert_eq!(throughput_line(3, &runs, &mut marks), "[  3 s] a search 100,000 ops/s | b update 50 ops/s (mean)");
    }
}
