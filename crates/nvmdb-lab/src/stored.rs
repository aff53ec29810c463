//! Paper-scale runs kept in the repository, so that a quick report can cite them: one
//! JSON file per experiment, `DIR/<experiment>.json` (the repository's is
//! `data/paper-scale/`), holding the run's scorecard values with the command, date,
//! commit and machine that produced them. `nvmdb run ID --scale paper --store` writes
//! one; every report reads the directory and adds a "paper scale (stored)" column to its
//! scorecard.
//!
//! A file that does not parse, or that names another experiment or a claim the claim
//! table does not give that experiment, is an error naming `FILE:LINE`: a report never
//! silently drops a stored run.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use crate::measured::WouldHold;
use crate::run::{write_file, Finished, RunMeta};
use crate::scorecard::{citation, Claim, FoundWouldHold, PaperScaleCell, ScoreRow};
use crate::LabError;

/// Stored files larger than this are refused before they are read: one experiment's
/// claims take a few KB.
pub const STORED_FILE_MAX_BYTES: u64 = 1 << 20;

/// One experiment's paper-scale run, as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoredRun {
    /// The experiment id; the file is `<experiment>.json`.
    pub experiment: String,
    /// The command that produced it, e.g. `nvmdb run cidr-fig6 --scale paper --seed 1 --store`.
    pub command: String,
    /// When the run ended, UTC, `YYYY-MM-DDTHH:MM:SSZ`.
    pub date: String,
    /// The git commit of the code that ran.
    pub commit: String,
    /// The machine it ran on, in words.
    pub machine: String,
    /// The run's seed.
    pub seed: u64,
    /// Wall-clock seconds the experiment took (a record, not a measurement of a claim).
    pub wall_s: f64,
    /// The scorecard's values, one per claim of the experiment, in claim-table order.
    pub values: Vec<StoredValue>,
    /// Where claims (this experiment's or others') would hold, as the run found; absent
    /// when it found none (files stored before it existed have none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub would_hold: Vec<WouldHold>,
}

/// One claim's value in a stored run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoredValue {
    /// The claim id.
    pub claim: String,
    /// Our value at paper scale; `null` when the run did not measure it.
    pub value: Option<f64>,
}

impl StoredRun {
    /// The stored form of `finished`'s scorecard `rows` (those of its experiment).
    pub fn new(finished: &Finished, rows: &[ScoreRow], meta: &RunMeta, provenance: Provenance) -> StoredRun {
        StoredRun {
            experiment: finished.id.clone(),
            command: provenance.command,
            date: provenance.date,
            commit: meta.git_commit.clone(),
            machine: provenance.machine,
            seed: meta.seed,
            wall_s: provenance.wall_s,
            values: rows
                .iter()
                .filter(|r| r.experiment == finished.id)
                .map(|r| StoredValue { claim: r.claim_id.clone(), value: r.value })
                .collect(),
            would_hold: finished.outcome.would_hold.clone(),
        }
    }

    /// The date part of [`StoredRun::date`] and the commit's first 7 characters, e.g.
    /// `2026-11-22, 5be0fd8`.
    pub fn citation(&self) -> String {
        citation(&self.date, &self.commit)
    }
}

/// Where a stored run came from, beyond what [`RunMeta`] says.
#[derive(Debug, Clone)]
pub struct Provenance {
    /// The command, as a user would type it.
    pub command: String,
    /// UTC, `YYYY-MM-DDTHH:MM:SSZ` (see [`utc_timestamp`]).
    pub date: String,
    /// The machine, in words.
    pub machine: String,
    /// Wall-clock seconds.
    pub wall_s: f64,
}

/// What a scorecard shows for a claim without a stored paper-scale value.
pub const NOT_STORED: &str = "not stored";

/// The stored runs of a directory, by experiment id.
#[derive(Debug, Clone, Default)]
pub struct PaperStore {
    /// The directory they were read from.
    pub dir: PathBuf,
    /// The runs, by experiment id.
    pub runs: BTreeMap<String, StoredRun>,
}

fn stored_err(path: &Path, line: usize, message: impl Into<String>) -> LabError {
    LabError::StoredRun { path: path.display().to_string(), line, message: message.into() }
}

/// The 1-based line of the first occurrence of `needle` in `text`, or 1.
fn line_of(text: &str, needle: &str) -> usize {
    text.find(needle).map_or(1, |at| 1 + text[..at].matches('\n').count())
}

/// Reads and checks one stored file.
fn read_run(path: &Path, claims: &[Claim]) -> Result<StoredRun, LabError> {
    let io = |source| LabError::Io { path: path.display().to_string(), source };
    // A device or FIFO (a link to /dev/zero, say) is refused before it is opened: its
    // length says nothing, and opening a FIFO waits for a writer.
    let meta = std::fs::metadata(path).map_err(io)?;
    if !meta.is_file() {
        return Err(stored_err(path, 1, "not a regular file"));
    }
    // The read is capped too: the file may grow after the check.
    let mut bytes = Vec::new();
    std::fs::File::open(path).and_then(|f| f.take(STORED_FILE_MAX_BYTES + 1).read_to_end(&mut bytes)).map_err(io)?;
    if bytes.len() as u64 > STORED_FILE_MAX_BYTES {
        let len = meta.len().max(bytes.len() as u64);
        return Err(stored_err(path, 1, format!("{len} bytes, more than a stored run's {STORED_FILE_MAX_BYTES}")));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        stored_err(path, 1 + e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count(), "not UTF-8")
    })?;
    let run: StoredRun = serde_json::from_str(&text).map_err(|e| {
        // serde_json ends its message with the position, which the error names already.
        let message = e.to_string();
        let what = message.rsplit_once(" at line ").map_or(message.as_str(), |(what, _)| what);
        stored_err(path, e.line().max(1), format!("{what} (column {})", e.column()))
    })?;
    if let Err(e) = parse_utc(&run.date) {
        let what = format!("date '{}' is not a UTC time such as 2026-11-22T20:11:05Z ({e})", run.date);
        return Err(stored_err(path, line_of(&text, "\"date\""), what));
    }
    if !(run.wall_s.is_finite() && run.wall_s >= 0.0) {
        let what = format!("wall_s {} is not a number of seconds (0 or more)", run.wall_s);
        return Err(stored_err(path, line_of(&text, "\"wall_s\""), what));
    }
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
    if run.experiment != stem {
        return Err(stored_err(
            path,
            line_of(&text, "\"experiment\""),
            format!("experiment '{}' stored in a file named for '{stem}'", run.experiment),
        ));
    }
    let mut seen = BTreeSet::new();
    for v in &run.values {
        let line = line_of(&text, &format!("\"{}\"", v.claim));
        match claims.iter().find(|c| c.id == v.claim) {
            None => return Err(stored_err(path, line, format!("claim '{}' is not in the claim table", v.claim))),
            Some(c) if c.experiment != run.experiment => {
                return Err(stored_err(
                    path,
                    line,
                    format!("claim '{}' belongs to experiment {}, not {}", v.claim, c.experiment, run.experiment),
                ))
            }
            Some(_) => {}
        }
        if !seen.insert(v.claim.as_str()) {
            return Err(stored_err(path, line, format!("claim '{}' stored twice", v.claim)));
        }
    }
    let mut seen = BTreeSet::new();
    for w in &run.would_hold {
        let after = text.find("\"would_hold\"").unwrap_or(0);
        let line = line_of(&text[after..], &format!("\"{}\"", w.claim)) + line_of(&text, "\"would_hold\"") - 1;
        if !claims.iter().any(|c| c.id == w.claim) {
            return Err(stored_err(path, line, format!("would-hold claim '{}' is not in the claim table", w.claim)));
        }
        if !seen.insert(w.claim.as_str()) {
            return Err(stored_err(path, line, format!("where claim '{}' would hold is stored twice", w.claim)));
        }
    }
    Ok(run)
}

impl PaperStore {
    /// Reads every `*.json` file of `dir` (other files are left alone; a missing
    /// directory is an empty store), checking each against `claims`.
    pub fn load(dir: &Path, claims: &[Claim]) -> Result<PaperStore, LabError> {
        let mut store = PaperStore { dir: dir.to_path_buf(), runs: BTreeMap::new() };
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(store),
            Err(source) => return Err(LabError::Io { path: dir.display().to_string(), source }),
        };
        let mut paths = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|source| LabError::Io { path: dir.display().to_string(), source })?;
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "json") {
                paths.push(path);
            }
        }
        paths.sort();
        let mut would_hold_by: BTreeMap<String, String> = BTreeMap::new();
        for path in paths {
            let run = read_run(&path, claims)?;
            for w in &run.would_hold {
                if let Some(other) = would_hold_by.insert(w.claim.clone(), run.experiment.clone()) {
                    return Err(stored_err(
                        &path,
                        1,
                        format!("where claim '{}' would hold is stored by {other} too", w.claim),
                    ));
                }
            }
            store.runs.insert(run.experiment.clone(), run);
        }
        Ok(store)
    }

    /// Fills each row's paper-scale cell from the stored run of its experiment (rows
    /// whose claim no stored run holds stay `None`, "not stored"), and its paper-scale
    /// would-hold from the stored run that found one for it, whichever experiment's.
    pub fn attach(&self, rows: &mut [ScoreRow], claims: &[Claim]) {
        for row in rows.iter_mut() {
            row.paper_scale_would_hold_when = self.iter().find_map(|run| {
                let w = run.would_hold.iter().find(|w| w.claim == row.claim_id)?;
                Some(FoundWouldHold { when: w.when.clone(), experiment: run.experiment.clone() })
            });
        }
        for row in rows {
            let Some(run) = self.runs.get(&row.experiment) else { continue };
            let Some(stored) = run.values.iter().find(|v| v.claim == row.claim_id) else { continue };
            let Some(claim) = claims.iter().find(|c| c.id == row.claim_id) else { continue };
            let value = stored.value.filter(|v| !v.is_nan());
            row.paper_scale = Some(PaperScaleCell {
                ours: claim.ours_display(value),
                value,
                verdict: claim.verdict(value),
                date: run.date.clone(),
                commit: run.commit.clone(),
            });
        }
    }

    /// The citation (`date, commit`) of `experiment`'s stored run.
    pub fn citation(&self, experiment: &str) -> Option<String> {
        self.runs.get(experiment).map(StoredRun::citation)
    }

    /// The runs, in experiment-id order.
    pub fn iter(&self) -> impl Iterator<Item = &StoredRun> {
        self.runs.values()
    }
}

/// Writes `run` to `DIR/<experiment>.json`, replacing an earlier stored run of the
/// experiment only once the new file is complete (written beside it, then renamed).
pub fn store(dir: &Path, run: &StoredRun) -> Result<PathBuf, LabError> {
    let io = |path: &Path| {
        let path = path.display().to_string();
        move |source| LabError::Io { path, source }
    };
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let path = dir.join(format!("{}.json", run.experiment));
    let mut json = serde_json::to_string_pretty(run).expect("a stored run serialises");
    json.push('\n');
    write_file(&path, &json)?;
    Ok(path)
}

/// `YYYY-MM-DDTHH:MM:SSZ` (RFC 3339, UTC) for seconds since the Unix epoch; `None` past
/// the year 9999.
pub fn utc_timestamp(unix_s: u64) -> Option<String> {
    let time = OffsetDateTime::from_unix_timestamp(i64::try_from(unix_s).ok()?).ok()?;
    time.format(&Rfc3339).ok()
}

/// A stored date: an RFC 3339 time in UTC (`2026-11-22T20:11:05Z`).
fn parse_utc(date: &str) -> Result<OffsetDateTime, String> {
    let time = OffsetDateTime::parse(date, &Rfc3339).map_err(|e| e.to_string())?;
    if !time.offset().is_utc() {
        return Err(format!("offset {} is not UTC (Z)", time.offset()));
    }
    Ok(time)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scorecard::{scorecard, ClaimKind, Relation, Stated, Tolerance, Verdict, WouldHoldWhen};
    use crate::{Outcome, Scale};

    const CLAIMS: &[Claim] = &[
        Claim {
            id: "alpha-gain",
            experiment: "alpha",
            seed: "P",
            figure: "Fig. 1",
            claim: "gains",
            stated: Stated::AtLeast(2.0),
            tolerance: Tolerance::Exact,
            unit: "×",
            kind: ClaimKind::Measured,
        },
        Claim {
            id: "alpha-holds",
            experiment: "alpha",
            seed: "P",
            figure: "Fig. 1",
            claim: "holds",
            stated: Stated::Holds,
            tolerance: Tolerance::Exact,
            unit: "",
            kind: ClaimKind::Measured,
        },
        Claim {
            id: "beta-gain",
            experiment: "beta",
            seed: "P",
            figure: "Fig. 2",
            claim: "gains",
            stated: Stated::Value(3.0),
            tolerance: Tolerance::Exact,
            unit: "",
            kind: ClaimKind::Measured,
        },
    ];

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("nvmdb-stored-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn alpha() -> (Finished, Vec<ScoreRow>) {
        let mut outcome = Outcome::default();
        outcome.measure("alpha-gain", 2.5);
        let finished = Finished { id: "alpha".into(), title: "a".into(), source: "P".into(), outcome };
        let rows = scorecard(CLAIMS, std::slice::from_ref(&finished)).unwrap();
        (finished, rows)
    }

    fn provenance() -> Provenance {
        Provenance {
            command: "nvmdb run alpha --scale paper --seed 1 --store".into(),
            date: utc_timestamp(1_795_378_265).unwrap(),
            machine: "test machine".into(),
            wall_s: 12.5,
        }
    }

    #[test]
    fn timestamps_are_utc_civil_dates() {
        let utc = |s| utc_timestamp(s).unwrap();
        assert_eq!(utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc(1_795_378_265), "2026-11-22T20:11:05Z");
        assert_eq!(utc(4_107_542_399), "2100-02-28T23:59:59Z");
        assert_eq!(utc_timestamp(u64::MAX), None);
        for s in [0, 951_782_400, 1_795_378_265] {
            assert_eq!(parse_utc(&utc(s)).map(OffsetDateTime::unix_timestamp), Ok(i64::try_from(s).unwrap()));
        }
        assert!(parse_utc("yesterday").is_err());
        assert!(parse_utc("2026-11-22T20:11:05+01:00").unwrap_err().contains("not UTC"));
    }

    fn beta_gain_when() -> WouldHoldWhen {
        WouldHoldWhen {
            parameter: "node size".into(),
            value: Some(6.0),
            unit: "lines".into(),
            range_tried: [2.0, 16.0],
            relation: Relation::AtLeast,
        }
    }

    #[test]
    fn a_stored_run_round_trips_and_fills_the_rows_of_its_experiment() {
        let dir = temp_dir("round-trip");
        let (mut finished, rows) = alpha();
        finished.outcome.would_hold_when("beta-gain", beta_gain_when());
        let meta = RunMeta { seed: 1, scale: Scale::Paper, git_commit: "0123456789abcdef".into(), version: "0".into() };
        let run = StoredRun::new(&finished, &rows, &meta, provenance());
        assert_eq!(
            run.values,
            [
                StoredValue { claim: "alpha-gain".into(), value: Some(2.5) },
                StoredValue { claim: "alpha-holds".into(), value: None }
            ]
        );
        let path = store(&dir, &run).unwrap();
        assert_eq!(path, dir.join("alpha.json"));
        std::fs::write(dir.join("README.md"), "not a stored run").unwrap();
        let loaded = PaperStore::load(&dir, CLAIMS).unwrap();
        assert_eq!(loaded.runs.get("alpha"), Some(&run));
        assert_eq!(loaded.citation("alpha").as_deref(), Some("2026-11-22, 0123456"));

        let mut beta = Outcome::default();
        beta.measure("beta-gain", 3.0);
        let both = [finished, Finished { id: "beta".into(), title: "b".into(), source: "P".into(), outcome: beta }];
        let mut rows = scorecard(CLAIMS, &both).unwrap();
        loaded.attach(&mut rows, CLAIMS);
        let cell = rows[0].paper_scale.clone().unwrap();
        assert_eq!((cell.ours.as_str(), cell.verdict), ("2.5×", Verdict::Reproduces));
        assert_eq!(cell.display(), "2.5× reproduces (2026-11-22, 0123456)");
        assert_eq!(rows[1].paper_scale.as_ref().map(|c| c.verdict), Some(Verdict::NotMeasured));
        assert_eq!(rows[2].paper_scale, None, "beta has no stored run");
        assert_eq!(
            rows[2].paper_scale_would_hold_when,
            Some(FoundWouldHold { when: beta_gain_when(), experiment: "alpha".into() }),
            "alpha's stored run found where beta's claim would hold"
        );
        assert_eq!(rows[0].paper_scale_would_hold_when, None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_stored_value_reads_back_to_the_same_double() {
        // A value whose shortest digits the fast float parser reads one unit in the last
        // place off (measured: cidr-fig6-wear-gain-min).
        let dir = temp_dir("exact");
        let value = 2.399_799_891_097_252_2_f64;
        let mut outcome = Outcome::default();
        outcome.measure("alpha-gain", value);
        let finished = Finished { id: "alpha".into(), title: "a".into(), source: "P".into(), outcome };
        let rows = scorecard(CLAIMS, std::slice::from_ref(&finished)).unwrap();
        let meta = RunMeta { seed: 1, scale: Scale::Paper, git_commit: "0".into(), version: "0".into() };
        store(&dir, &StoredRun::new(&finished, &rows, &meta, provenance())).unwrap();
        let loaded = PaperStore::load(&dir, CLAIMS).unwrap();
        let read = loaded.runs["alpha"].values[0].value.unwrap();
        assert_eq!(read.to_bits(), value.to_bits(), "{read:?} read back for {value:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_missing_directory_is_an_empty_store() {
        let store = PaperStore::load(Path::new("/nonexistent/nvmdb/paper-scale"), CLAIMS).unwrap();
        assert!(store.runs.is_empty());
    }

    /// Each malformed file is one error naming the file and line at fault.
    #[test]
    fn malformed_files_name_file_and_line() {
        let good = serde_json::to_string_pretty(&StoredRun::new(
            &alpha().0,
            &alpha().1,
            &RunMeta { seed: 1, scale: Scale::Paper, git_commit: "c".into(), version: "0".into() },
            provenance(),
        ))
        .unwrap();
        let half = good[..good.len() / 2].to_string();
        let mut held = alpha().0;
        held.outcome.would_hold_when("beta-gian", beta_gain_when());
        let held = serde_json::to_string_pretty(&StoredRun::new(
            &held,
            &alpha().1,
            &RunMeta { seed: 1, scale: Scale::Paper, git_commit: "c".into(), version: "0".into() },
            provenance(),
        ))
        .unwrap();
        let line_at = |needle: &str| 1 + held[..held.find(needle).unwrap()].matches('\n').count();
        let (held_line, relation_line) = (line_at("beta-gian"), line_at("\"relation\""));
        let date = good.replacen("2026-11-22T20:11:05Z", "yesterday", 1);
        let wall = good.replacen("\"wall_s\": 12.5", "\"wall_s\": -5", 1);
        assert!(date != good && wall != good);
        let cases: [(&str, String, usize, &str); 10] = [
            ("alpha", date, line_at("\"date\""), "date 'yesterday' is not a UTC time"),
            ("alpha", wall, 8, "wall_s -5 is not a number of seconds"),
            ("alpha", good.replacen("\"seed\": 1", "\"seed\": \"one\"", 1), 7, "invalid type"),
            ("alpha", good.replacen("\"wall_s\"", "\"wall\"", 1), 8, "unknown field `wall`"),
            (
                "alpha",
                good.replacen("alpha-holds", "alpha-hods", 1),
                15,
                "claim 'alpha-hods' is not in the claim table",
            ),
            ("alpha", good.replacen("alpha-holds", "beta-gain", 1), 15, "belongs to experiment beta"),
            ("beta", good.clone(), 2, "experiment 'alpha' stored in a file named for 'beta'"),
            ("alpha", half.clone(), half.lines().count(), "EOF while parsing"),
            ("alpha", held.clone(), held_line, "would-hold claim 'beta-gian' is not in the claim table"),
            ("alpha", held.replacen("\"relation\"", "\"side\"", 1), relation_line, "unknown field `side`"),
        ];
        for (i, (name, text, line, what)) in cases.into_iter().enumerate() {
            let dir = temp_dir(&format!("bad-{i}"));
            let path = dir.join(format!("{name}.json"));
            std::fs::write(&path, &text).unwrap();
            let err = PaperStore::load(&dir, CLAIMS).unwrap_err();
            let message = err.to_string();
            assert!(message.starts_with(&format!("{}:{line}: ", path.display())), "case {i}: {message}\n{text}");
            assert!(message.contains(what), "case {i}: {message}");
            assert_eq!(message.lines().count(), 1, "case {i}: {message}");
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }

    #[test]
    fn an_oversized_file_is_refused_unread() {
        let dir = temp_dir("big");
        let file = std::fs::File::create(dir.join("alpha.json")).unwrap();
        file.set_len(STORED_FILE_MAX_BYTES + 1).unwrap();
        let message = PaperStore::load(&dir, CLAIMS).unwrap_err().to_string();
        assert!(message.contains("alpha.json:1: ") && message.contains("more than"), "{message}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A link to an endless device would be read without end (its length is 0): it is
    /// refused before it is opened.
    #[cfg(unix)]
    #[test]
    fn a_device_is_refused_unread() {
        for device in ["/dev/zero", "/dev/urandom"] {
            let dir = temp_dir("device");
            std::os::unix::fs::symlink(device, dir.join("alpha.json")).unwrap();
            let message = PaperStore::load(&dir, CLAIMS).unwrap_err().to_string();
            assert!(message.contains("alpha.json:1: not a regular file"), "{message}");
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }
}
