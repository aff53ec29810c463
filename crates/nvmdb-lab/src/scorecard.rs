//! Does it reproduce? Each paper's quantitative claims as a static table of [`Claim`]s,
//! the values experiments measure for them ([`Measured`], carried in
//! [`Outcome::measurements`](crate::Outcome)), and the [`scorecard`] that judges one
//! against the other.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::format::number;
pub use crate::measured::{Measured, Relation, WouldHold, WouldHoldWhen};
use crate::outcome::Cell;
use crate::run::Finished;
use crate::LabError;

/// What a paper states.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stated {
    /// One value.
    Value(f64),
    /// A range, both ends included.
    Range {
        /// Lower end.
        lo: f64,
        /// Upper end.
        hi: f64,
    },
    /// At least this much.
    AtLeast(f64),
    /// At most this much.
    AtMost(f64),
    /// A qualitative statement that either holds or does not.
    Holds,
}

/// How far ours may be from the stated value and still reproduce it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Tolerance {
    /// Not at all.
    Exact,
    /// A fraction of the bound it is applied to: `Relative(0.1)` is ±10 %.
    Relative(f64),
    /// In the claim's unit.
    Absolute(f64),
}

impl Tolerance {
    /// The allowed distance from `bound`.
    fn around(self, bound: f64) -> f64 {
        match self {
            Tolerance::Exact => 0.0,
            Tolerance::Relative(f) => f * bound.abs(),
            Tolerance::Absolute(a) => a,
        }
    }
}

/// What a claim's verdict rests on. Only [`ClaimKind::Measured`] rows count in the
/// scorecard's tally; the others are checks of the set-up, listed under it (their
/// measurement's note says what they read back or follow from).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClaimKind {
    /// The verdict comes from a simulation and could come out either way.
    Measured,
    /// The run reads back one of its own inputs (e.g. a generator's duplicate share).
    Input,
    /// The value follows from preset parameters alone.
    Constant,
}

impl ClaimKind {
    /// `measured`, `input` or `constant`.
    pub fn label(self) -> &'static str {
        match self {
            ClaimKind::Measured => "measured",
            ClaimKind::Input => "input",
            ClaimKind::Constant => "constant",
        }
    }
}

/// A scorecard row's [`WouldHoldWhen`] with the experiment whose sweep found it (where its
/// plot is).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FoundWouldHold {
    /// Where the claim would hold.
    #[serde(flatten)]
    pub when: WouldHoldWhen,
    /// The experiment that found it.
    pub experiment: String,
}

/// One quantitative claim of a paper, as a static table entry.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Claim {
    /// Unique, e.g. `cidr-fig6-wear-gain`.
    pub id: &'static str,
    /// The experiment id that measures it, e.g. `cidr-fig6`.
    pub experiment: &'static str,
    /// The paper, e.g. `CIDR 2011`.
    pub seed: &'static str,
    /// E.g. `Figure 6(a)`.
    pub figure: &'static str,
    /// One line.
    pub claim: &'static str,
    /// What the paper states.
    pub stated: Stated,
    /// How close ours must be.
    pub tolerance: Tolerance,
    /// E.g. `×`, `%`, or empty.
    pub unit: &'static str,
    /// What the verdict rests on.
    pub kind: ClaimKind,
}

/// A quantitative statement or comparison of a paper's evaluation that no experiment here
/// measures, and why: the report lists these under the scorecard, so that every statement
/// of a paper's evaluation has a row or a reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Unmeasured {
    /// The paper, as in [`Claim::seed`].
    pub seed: &'static str,
    /// Where the paper says it, e.g. `Section 4.4`.
    pub figure: &'static str,
    /// What the paper states, one line.
    pub statement: &'static str,
    /// Why no experiment here measures it, one line.
    pub why: &'static str,
}

/// Whether a measurement reproduces its claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Within tolerance of what the paper states.
    Reproduces,
    /// Measured, and outside the tolerance.
    Differs,
    /// No (finite) measurement.
    NotMeasured,
}

impl Verdict {
    /// `reproduces`, `differs` or `not measured`.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Reproduces => "reproduces",
            Verdict::Differs => "differs",
            Verdict::NotMeasured => "not measured",
        }
    }
}

/// The scorecard cell of a stored paper-scale value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PaperScaleCell {
    /// Our stored value for display, `—` when the stored run did not measure it.
    pub ours: String,
    /// The stored value.
    pub value: Option<f64>,
    /// The verdict of the stored value against the claim.
    pub verdict: Verdict,
    /// The stored run's date (UTC).
    pub date: String,
    /// The stored run's commit.
    pub commit: String,
}

impl PaperScaleCell {
    /// For display: `1.77× reproduces (2026-11-22, 5be0fd8)`.
    pub fn display(&self) -> String {
        format!("{} {} ({})", self.ours, self.verdict.label(), citation(&self.date, &self.commit))
    }
}

/// `2026-11-22, 5be0fd8`: the date part of a timestamp and a commit's first 7 characters.
pub(crate) fn citation(date: &str, commit: &str) -> String {
    let day = date.split('T').next().unwrap_or(date);
    let commit: String = commit.chars().take(7).collect();
    format!("{day}, {commit}")
}

/// One line of the scorecard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScoreRow {
    /// The claim's id.
    pub claim_id: String,
    /// The experiment that measures it.
    pub experiment: String,
    /// The paper.
    pub seed: String,
    /// The figure or table.
    pub figure: String,
    /// The claim, one line.
    pub claim: String,
    /// What the verdict rests on.
    pub kind: ClaimKind,
    /// What the paper states, for display.
    pub paper: String,
    /// Our value for display, `—` when not measured.
    pub ours: String,
    /// Our value.
    pub value: Option<f64>,
    /// The tolerance, for display.
    pub tolerance: String,
    /// The verdict.
    pub verdict: Verdict,
    /// The measurement's note; may be empty.
    pub note: String,
    /// A fragment link (`#notes-ID` or `#exp-ID`) to where the report explains the
    /// experiment.
    pub note_link: String,
    /// The claim's value in the stored paper-scale run of its experiment; `None` when
    /// none is stored ("not stored"). Filled by [`PaperStore::attach`](crate::PaperStore::attach).
    #[serde(default)]
    pub paper_scale: Option<PaperScaleCell>,
    /// Where the claim would hold, as this run found it; `None` when no experiment of
    /// the run looked.
    #[serde(default)]
    pub would_hold_when: Option<FoundWouldHold>,
    /// The same in a stored paper-scale run; filled by
    /// [`PaperStore::attach`](crate::PaperStore::attach).
    #[serde(default)]
    pub paper_scale_would_hold_when: Option<FoundWouldHold>,
}

/// A number for people: integers without decimals, others with up to 4 significant
/// digits and no trailing zeros.
/// `⌊log₁₀ |v|⌋`, the power of ten of `v`'s leading digit: `i32::MIN` for zero,
/// `i32::MAX` for an infinity, 0 for NaN.
impl Claim {
    /// The verdict for our value; `None` and NaN are [`Verdict::NotMeasured`].
    pub fn verdict(&self, value: Option<f64>) -> Verdict {
        let Some(ours) = value.filter(|v| !v.is_nan()) else {
            return Verdict::NotMeasured;
        };
        let tol = |bound: f64| self.tolerance.around(bound);
        let ok = match self.stated {
            Stated::Value(v) => (ours - v).abs() <= tol(v),
            Stated::Range { lo, hi } => lo - tol(lo) <= ours && ours <= hi + tol(hi),
            Stated::AtLeast(x) => ours >= x - tol(x),
            Stated::AtMost(x) => ours <= x + tol(x),
            Stated::Holds => ours == 1.0,
        };
        if ok {
            Verdict::Reproduces
        } else {
            Verdict::Differs
        }
    }

    fn with_unit(&self, s: String) -> String {
        format!("{s}{}", self.unit)
    }

    /// What the paper states, for display, e.g. `≥ 2×` or `10–20%`.
    pub fn paper_display(&self) -> String {
        match self.stated {
            Stated::Value(v) => self.with_unit(number(v)),
            Stated::Range { lo, hi } => self.with_unit(format!("{}–{}", number(lo), number(hi))),
            Stated::AtLeast(x) => self.with_unit(format!("≥ {}", number(x))),
            Stated::AtMost(x) => self.with_unit(format!("≤ {}", number(x))),
            Stated::Holds => "holds".into(),
        }
    }

    /// Our value for display; `—` when not measured.
    pub fn ours_display(&self, value: Option<f64>) -> String {
        match value.filter(|v| !v.is_nan()) {
            None => "—".into(),
            Some(v) if self.stated == Stated::Holds => if v == 1.0 { "holds" } else { "does not hold" }.into(),
            Some(v) => self.with_unit(number(v)),
        }
    }

    /// The tolerance for display, e.g. `±10%`; `—` for [`Stated::Holds`], which has none.
    pub fn tolerance_display(&self) -> String {
        match (self.stated, self.tolerance) {
            (Stated::Holds, _) => "—".into(),
            (_, Tolerance::Exact) => "exact".into(),
            (_, Tolerance::Relative(f)) => format!("±{}%", number(f * 100.0)),
            (_, Tolerance::Absolute(a)) => self.with_unit(format!("±{}", number(a))),
        }
    }

    /// What the paper states as a table cell, so experiments can show it beside ours
    /// without retyping it: a value is a float; a range or bound is a typed cell, its text
    /// as in [`paper_display`](Claim::paper_display) without the unit and its numbers as
    /// data (`lo` and `hi`, `at_least`, `at_most`); "holds" is text.
    pub fn stated_cell(&self) -> Cell {
        match self.stated {
            Stated::Value(v) => Cell::Float(v),
            Stated::Range { lo, hi } => {
                Cell::typed(format!("{}–{}", number(lo), number(hi)), [("lo", lo.into()), ("hi", hi.into())])
            }
            Stated::AtLeast(x) => Cell::typed(format!("≥ {}", number(x)), [("at_least", x.into())]),
            Stated::AtMost(x) => Cell::typed(format!("≤ {}", number(x)), [("at_most", x.into())]),
            Stated::Holds => Cell::Text("holds".into()),
        }
    }
}

/// The claim with this id. Panics naming the id when there is none: ids are static, so a
/// missing one is a programming error, and the experiment's tests catch it.
pub fn claim<'a>(claims: &'a [Claim], id: &str) -> &'a Claim {
    claims.iter().find(|c| c.id == id).unwrap_or_else(|| panic!("no claim with id '{id}' in the claim table"))
}

/// Tallies the verdicts of the [`ClaimKind::Measured`] rows: `(reproduce, differ, not
/// measured)`. The other rows are checks of the set-up and are not counted.
pub fn tally(rows: &[ScoreRow]) -> (usize, usize, usize) {
    let count = |v: Verdict| rows.iter().filter(|r| r.kind == ClaimKind::Measured && r.verdict == v).count();
    (count(Verdict::Reproduces), count(Verdict::Differs), count(Verdict::NotMeasured))
}

/// One line, e.g. `20 measured claims: 12 reproduce, 5 differ, 3 not measured`.
pub fn tally_line(rows: &[ScoreRow]) -> String {
    let (reproduce, differ, not_measured) = tally(rows);
    let measured = reproduce + differ + not_measured;
    let (r_verb, d_verb) =
        (if reproduce == 1 { "reproduces" } else { "reproduce" }, if differ == 1 { "differs" } else { "differ" });
    let claims = if measured == 1 { "claim" } else { "claims" };
    format!("{measured} measured {claims}: {reproduce} {r_verb}, {differ} {d_verb}, {not_measured} not measured")
}

/// The rows that are checks of the set-up (kind [`ClaimKind::Input`] or
/// [`ClaimKind::Constant`]), counted by kind: `(input, constant)`.
pub fn checks(rows: &[ScoreRow]) -> (usize, usize) {
    let count = |k: ClaimKind| rows.iter().filter(|r| r.kind == k).count();
    (count(ClaimKind::Input), count(ClaimKind::Constant))
}

/// Judges every claim of the finished experiments, in claim-table order. A claim without a
/// measurement is [`Verdict::NotMeasured`]; a measurement of an unknown claim, of another
/// experiment's claim, or of an already measured claim is an error, and so is a claim id
/// that the table holds twice: these are typos. A [`WouldHold`] may come from any
/// experiment (the one whose sweep found it), but names a claim of the table, once.
pub fn scorecard(claims: &[Claim], finished: &[Finished]) -> Result<Vec<ScoreRow>, LabError> {
    let mut ids = BTreeSet::new();
    for c in claims {
        if !ids.insert(c.id) {
            return Err(LabError::DuplicateClaim { claim: c.id.into() });
        }
    }
    let mut measured: BTreeMap<&str, &Measured> = BTreeMap::new();
    for f in finished {
        for m in &f.outcome.measurements {
            let err = |claim: &str| (claim.to_string(), f.id.clone());
            let Some(c) = claims.iter().find(|c| c.id == m.claim) else {
                let (claim, experiment) = err(&m.claim);
                return Err(LabError::UnknownClaim { claim, experiment });
            };
            if c.experiment != f.id {
                let (claim, experiment) = err(&m.claim);
                return Err(LabError::MisplacedClaim { claim, experiment, owner: c.experiment.into() });
            }
            if measured.insert(c.id, m).is_some() {
                let (claim, experiment) = err(&m.claim);
                return Err(LabError::DuplicateMeasurement { claim, experiment });
            }
        }
    }
    let mut would_hold: BTreeMap<&str, FoundWouldHold> = BTreeMap::new();
    for f in finished {
        for w in &f.outcome.would_hold {
            let (claim, experiment) = (w.claim.clone(), f.id.clone());
            let Some(c) = claims.iter().find(|c| c.id == w.claim) else {
                return Err(LabError::UnknownClaim { claim, experiment });
            };
            let found = FoundWouldHold { when: w.when.clone(), experiment: f.id.clone() };
            if would_hold.insert(c.id, found).is_some() {
                return Err(LabError::DuplicateWouldHold { claim, experiment });
            }
        }
    }
    let rows = claims
        .iter()
        .filter_map(|c| {
            let f = finished.iter().find(|f| f.id == c.experiment)?;
            let m = measured.get(c.id);
            let value = m.map(|m| m.value).filter(|v| !v.is_nan());
            let note_link =
                if f.outcome.notes.is_empty() { format!("#exp-{}", f.id) } else { format!("#notes-{}", f.id) };
            Some(ScoreRow {
                claim_id: c.id.into(),
                experiment: c.experiment.into(),
                seed: c.seed.into(),
                figure: c.figure.into(),
                claim: c.claim.into(),
                kind: c.kind,
                paper: c.paper_display(),
                ours: c.ours_display(value),
                value,
                tolerance: c.tolerance_display(),
                verdict: c.verdict(value),
                note: m.and_then(|m| m.note.clone()).unwrap_or_default(),
                note_link,
                paper_scale: None,
                would_hold_when: would_hold.get(c.id).cloned(),
                paper_scale_would_hold_when: None,
            })
        })
        .collect();
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Outcome;

    fn claim_of(stated: Stated, tolerance: Tolerance) -> Claim {
        Claim {
            id: "c",
            experiment: "e",
            seed: "P",
            figure: "Fig. 1",
            claim: "x",
            stated,
            tolerance,
            unit: "×",
            kind: ClaimKind::Measured,
        }
    }

    fn check(c: &Claim, cases: &[(f64, Verdict)]) {
        for &(v, want) in cases {
            assert_eq!(c.verdict(Some(v)), want, "{:?} with {v}", c.stated);
        }
    }

    use Verdict::{Differs as D, NotMeasured, Reproduces as R};

    #[test]
    fn value_boundaries() {
        // 0.25 · 8 = 2 exactly, so 6 and 10 are on the boundary.
        let c = claim_of(Stated::Value(8.0), Tolerance::Relative(0.25));
        check(&c, &[(8.0, R), (10.0, R), (6.0, R), (10.001, D), (5.999, D)]);
        let c = claim_of(Stated::Value(-8.0), Tolerance::Relative(0.25));
        check(&c, &[(-10.0, R), (-6.0, R), (-10.001, D), (-5.999, D)]);
        let c = claim_of(Stated::Value(3.0), Tolerance::Absolute(0.5));
        check(&c, &[(3.5, R), (2.5, R), (3.501, D), (2.499, D)]);
        let c = claim_of(Stated::Value(3.0), Tolerance::Exact);
        check(&c, &[(3.0, R), (3.000001, D), (2.999999, D)]);
    }

    #[test]
    fn range_boundaries() {
        let c = claim_of(Stated::Range { lo: 4.0, hi: 16.0 }, Tolerance::Relative(0.25));
        // lo − 1 = 3, hi + 4 = 20: each end gets its own tolerance.
        check(&c, &[(3.0, R), (20.0, R), (10.0, R), (2.999, D), (20.001, D)]);
        let c = claim_of(Stated::Range { lo: 4.0, hi: 16.0 }, Tolerance::Exact);
        check(&c, &[(4.0, R), (16.0, R), (3.999, D), (16.001, D)]);
    }

    #[test]
    fn at_least_and_at_most_boundaries() {
        let c = claim_of(Stated::AtLeast(2.0), Tolerance::Absolute(0.5));
        check(&c, &[(1.5, R), (1000.0, R), (f64::INFINITY, R), (1.499, D), (f64::NEG_INFINITY, D)]);
        let c = claim_of(Stated::AtMost(2.0), Tolerance::Relative(0.5));
        check(&c, &[(3.0, R), (-1000.0, R), (3.001, D)]);
    }

    #[test]
    fn holds_ignores_tolerance() {
        let c = claim_of(Stated::Holds, Tolerance::Absolute(0.5));
        check(&c, &[(1.0, R), (0.0, D), (0.9, D), (1.1, D)]);
    }

    #[test]
    fn nan_and_none_are_not_measured() {
        for stated in [Stated::Value(1.0), Stated::AtLeast(0.0), Stated::Holds] {
            let c = claim_of(stated, Tolerance::Relative(1.0));
            assert_eq!(c.verdict(None), NotMeasured);
            assert_eq!(c.verdict(Some(f64::NAN)), NotMeasured);
            assert_eq!(c.ours_display(Some(f64::NAN)), "—");
        }
    }

    #[test]
    fn displays() {
        let mut c = claim_of(Stated::Range { lo: 10.0, hi: 20.0 }, Tolerance::Relative(0.1));
        c.unit = "%";
        assert_eq!(c.paper_display(), "10–20%");
        assert_eq!(c.tolerance_display(), "±10%");
        assert_eq!(c.ours_display(Some(12.3456)), "12.35%");
        assert_eq!(c.stated_cell(), Cell::typed("10–20", [("lo", 10.0.into()), ("hi", 20.0.into())]));
        assert_eq!(c.stated_cell().display(), "10–20");
        let c = claim_of(Stated::AtLeast(2.5), Tolerance::Absolute(0.25));
        assert_eq!(c.paper_display(), "≥ 2.5×");
        assert_eq!(c.stated_cell(), Cell::typed("≥ 2.5", [("at_least", 2.5.into())]));
        assert_eq!(c.tolerance_display(), "±0.25×");
        let c = claim_of(Stated::AtMost(7.8), Tolerance::Exact);
        assert_eq!(c.stated_cell(), Cell::typed("≤ 7.8", [("at_most", 7.8.into())]));
        assert_eq!(claim_of(Stated::Value(3.0), Tolerance::Exact).stated_cell(), Cell::Float(3.0));
        let c = claim_of(Stated::Holds, Tolerance::Exact);
        assert_eq!((c.paper_display(), c.ours_display(Some(0.0))), ("holds".into(), "does not hold".into()));
        assert_eq!(number(0.125), "0.125");
        assert_eq!(number(1234.56), "1235");
        assert_eq!(number(1.5e12), "1.500e12");
    }

    const CLAIMS: &[Claim] = &[
        Claim {
            id: "b-gain",
            experiment: "b",
            seed: "P",
            figure: "Fig. 2",
            claim: "B gains",
            stated: Stated::AtLeast(2.0),
            tolerance: Tolerance::Exact,
            unit: "×",
            kind: ClaimKind::Measured,
        },
        Claim {
            id: "a-holds",
            experiment: "a",
            seed: "P",
            figure: "Fig. 1",
            claim: "A holds",
            stated: Stated::Holds,
            tolerance: Tolerance::Exact,
            unit: "",
            kind: ClaimKind::Measured,
        },
        Claim {
            id: "z-other",
            experiment: "z",
            seed: "Q",
            figure: "Tab. 9",
            claim: "not run",
            stated: Stated::Value(1.0),
            tolerance: Tolerance::Exact,
            unit: "",
            kind: ClaimKind::Measured,
        },
        Claim {
            id: "a-value",
            experiment: "a",
            seed: "P",
            figure: "Fig. 1",
            claim: "A is 3",
            stated: Stated::Value(3.0),
            tolerance: Tolerance::Relative(0.1),
            unit: "",
            kind: ClaimKind::Measured,
        },
    ];

    fn finished(id: &str, outcome: Outcome) -> Finished {
        Finished { id: id.into(), title: id.into(), source: "P".into(), outcome }
    }

    #[test]
    fn rows_follow_the_claim_table_and_skip_experiments_not_run() {
        let mut a = Outcome { notes: vec!["why".into()], ..Outcome::default() };
        a.holds("a-holds", false);
        a.measure_noted("a-value", 3.2, "close");
        let mut b = Outcome::default();
        b.measure("b-gain", f64::NAN);
        let rows = scorecard(CLAIMS, &[finished("a", a), finished("b", b)]).unwrap();
        let got: Vec<(&str, Verdict)> = rows.iter().map(|r| (r.claim_id.as_str(), r.verdict)).collect();
        assert_eq!(got, [("b-gain", NotMeasured), ("a-holds", D), ("a-value", R)]);
        assert_eq!(rows[2].note, "close");
        assert_eq!(rows[2].note_link, "#notes-a");
        assert_eq!(rows[0].note_link, "#exp-b");
        assert_eq!(rows[0].ours, "—");
        assert_eq!(rows[0].value, None);
        assert_eq!(tally_line(&rows), "3 measured claims: 1 reproduces, 1 differs, 1 not measured");
        // A check of the set-up is listed but not counted.
        let mut constant = CLAIMS.to_vec();
        constant[3].kind = ClaimKind::Constant;
        let mut a = Outcome::default();
        a.measure("a-value", 3.0);
        let rows = scorecard(&constant, &[finished("a", a)]).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(tally_line(&rows), "1 measured claim: 0 reproduce, 0 differ, 1 not measured");
        assert_eq!(checks(&rows), (0, 1));
    }

    fn at_least(value: Option<f64>) -> WouldHoldWhen {
        WouldHoldWhen {
            parameter: "PCM capacity".into(),
            value,
            unit: "MB".into(),
            range_tried: [16.0, 128.0],
            relation: Relation::AtLeast,
        }
    }

    #[test]
    fn would_hold_comes_from_any_experiment_once() {
        let mut a = Outcome::default();
        a.measure("a-value", 5.0);
        let mut b = Outcome::default();
        b.would_hold_when("a-value", at_least(Some(60.0)));
        let rows = scorecard(CLAIMS, &[finished("a", a.clone()), finished("b", b.clone())]).unwrap();
        let row = rows.iter().find(|r| r.claim_id == "a-value").unwrap();
        assert_eq!(row.would_hold_when, Some(FoundWouldHold { when: at_least(Some(60.0)), experiment: "b".into() }));
        assert!(rows.iter().filter(|r| r.claim_id != "a-value").all(|r| r.would_hold_when.is_none()));

        let mut twice = a.clone();
        twice.would_hold_when("a-value", at_least(None));
        let err = scorecard(CLAIMS, &[finished("a", twice), finished("b", b)]).unwrap_err();
        assert!(
            matches!(&err, LabError::DuplicateWouldHold { claim, experiment } if claim == "a-value" && experiment == "b")
        );
        let mut typo = Outcome::default();
        typo.would_hold_when("a-valeu", at_least(None));
        let err = scorecard(CLAIMS, &[finished("a", a), finished("b", typo)]).unwrap_err();
        assert!(matches!(&err, LabError::UnknownClaim { claim, .. } if claim == "a-valeu"));
    }

    #[test]
    fn would_hold_displays() {
        assert_eq!(at_least(Some(60.0)).display(), "PCM capacity ≥ 60 MB (tried 16–128 MB)");
        assert_eq!(at_least(None).display(), "PCM capacity: none in 16–128 MB");
        let at = WouldHoldWhen { unit: String::new(), relation: Relation::At, value: Some(0.2339), ..at_least(None) };
        assert_eq!(at.display(), "PCM capacity = 0.2339 (tried 16–128)");
    }

    #[test]
    fn typos_are_errors() {
        let mut a = Outcome::default();
        a.measure("a-valeu", 3.0);
        let err = scorecard(CLAIMS, &[finished("a", a)]).unwrap_err();
        assert!(
            matches!(&err, LabError::UnknownClaim { claim, experiment } if claim == "a-valeu" && experiment == "a")
        );
        assert!(err.to_string().contains("a-valeu"), "{err}");

        let mut a = Outcome::default();
        a.measure("a-value", 3.0);
        a.measure("a-value", 3.1);
        let err = scorecard(CLAIMS, &[finished("a", a)]).unwrap_err();
        assert!(
            matches!(&err, LabError::DuplicateMeasurement { claim, experiment } if claim == "a-value" && experiment == "a")
        );

        let mut a = Outcome::default();
        a.measure("b-gain", 3.0);
        let err = scorecard(CLAIMS, &[finished("a", a)]).unwrap_err();
        assert!(matches!(&err, LabError::MisplacedClaim { claim, owner, .. } if claim == "b-gain" && owner == "b"));

        let twice = [CLAIMS[0], CLAIMS[0]];
        assert!(matches!(scorecard(&twice, &[]), Err(LabError::DuplicateClaim { claim }) if claim == "b-gain"));
    }

    #[test]
    fn claim_lookup() {
        assert_eq!(claim(CLAIMS, "a-value").figure, "Fig. 1");
    }

    #[test]
    #[should_panic(expected = "no claim with id 'nope'")]
    fn claim_lookup_panics_with_the_id() {
        claim(CLAIMS, "nope");
    }
}
