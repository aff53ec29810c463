//! What the papers state: one table of [`Claim`]s per paper, next to the experiments
//! that measure them. Experiments report their values with `Outcome::measure` under
//! these ids, the scorecard computes each verdict, and tables and summaries quote the
//! stated values from here (`stated(id)`, `claim(id).paper_display()`) instead of
//! retyping them.
//!
//! # Tolerance policy
//!
//! Fixed before any of our numbers were compared, and applied to every claim by its kind
//! alone:
//!
//! - a single value the paper states from its simulations or measurements, whether in
//!   the text or read off a figure (including "about", "almost" and "as much as"): ±20 %
//!   relative ([`VALUE`]);
//! - a single value the paper derives from its own analytic formulas, which we evaluate
//!   with the same parameters: exact ([`MODEL_VALUE`]);
//! - a stated range: the range widened by 10 % of each end ([`RANGE`]); where our
//!   measurement is itself a range over configurations, its minimum and its maximum are
//!   two claims, each judged against the paper's range;
//! - a bound (at least / at most): 10 % slack ([`BOUND`]);
//! - a qualitative statement (an ordering, a trend): holds or not, no tolerance. What
//!   "every size", "rises" and the like mean is spelt out in the claim's text.
//!
//! Where a paper gives one value for a quantity we measure over several configurations,
//! the claim's text says which of ours is compared (e.g. the largest over sizes), and
//! where that is a largest or smallest, why the paper's sentence reduces them so.
//!
//! Beside each paper's claims, its statements that no experiment here measures, each
//! with the reason ([`Unmeasured`]); the report lists them under the scorecard.

#![warn(clippy::cast_possible_truncation, clippy::unwrap_used)]

mod cidr2011;
mod envy;
mod iplp;
mod journal;
mod thesis;

use nvmdb_lab::{Cell, Claim, ClaimKind, Outcome, Stated, Tolerance, Unmeasured, Verdict};

pub use cidr2011::{CIDR2011, CIDR2011_UNMEASURED};
pub use envy::{ENVY, ENVY_UNMEASURED};
pub use iplp::{IPLP, IPLP_UNMEASURED};
pub use journal::{JOURNAL, JOURNAL_UNMEASURED};
pub use thesis::{THESIS, THESIS_UNMEASURED};

/// A single stated value from a simulation or measurement: ±20 %.
pub const VALUE: Tolerance = Tolerance::Relative(0.2);
/// A single value of the paper's analytic model, recomputed from the same formulas: exact.
pub const MODEL_VALUE: Tolerance = Tolerance::Exact;
/// A stated range: widened by 10 % at each end.
pub const RANGE: Tolerance = Tolerance::Relative(0.1);
/// An at-least or at-most bound: 10 % slack.
pub const BOUND: Tolerance = Tolerance::Relative(0.1);

/// The papers, by the seed name their claims carry, in report order.
pub const PAPERS: [(&str, &[Claim]); 5] = [
    ("CIDR 2011", CIDR2011),
    ("Thesis 2011", THESIS),
    ("IPL-P 2011", IPLP),
    ("SQLite journal 2016", JOURNAL),
    ("eNVy 1994", ENVY),
];

/// Each paper's statements not measured here, by seed name, in report order.
pub const NOT_MEASURED_HERE: [(&str, &[Unmeasured]); 5] = [
    ("CIDR 2011", CIDR2011_UNMEASURED),
    ("Thesis 2011", THESIS_UNMEASURED),
    ("IPL-P 2011", IPLP_UNMEASURED),
    ("SQLite journal 2016", JOURNAL_UNMEASURED),
    ("eNVy 1994", ENVY_UNMEASURED),
];

/// Every paper's claims, in report order.
pub fn all() -> Vec<Claim> {
    PAPERS.iter().flat_map(|(_, claims)| claims.iter().copied()).collect()
}

/// Every paper's statements not measured here, in report order.
pub fn unmeasured() -> Vec<Unmeasured> {
    NOT_MEASURED_HERE.iter().flat_map(|(_, list)| list.iter().copied()).collect()
}

/// The claim with this id; a missing id is a programming error.
pub fn claim(id: &str) -> Claim {
    *nvmdb_lab::scorecard::claim(&all(), id)
}

/// The stated value of a claim, as a table cell.
pub fn stated(id: &str) -> Cell {
    claim(id).stated_cell()
}

/// A stated single value, for arithmetic; a claim of another kind is a programming error.
pub fn stated_value(id: &str) -> f64 {
    match claim(id).stated {
        Stated::Value(v) | Stated::AtLeast(v) | Stated::AtMost(v) => v,
        other => panic!("claim '{id}' states {other:?}, not one value"),
    }
}

/// Records our value for a claim, with `note` (a measured explanation from the
/// experiment's notes) only when the value differs from what the paper states. A claim
/// that is a check of the set-up is a programming error: it goes through [`measure_check`].
pub fn measure_explained(outcome: &mut Outcome, id: &str, value: f64, note: &str) {
    let claim = claim(id);
    assert_eq!(claim.kind, ClaimKind::Measured, "claim '{id}' is a check of the set-up: use measure_check");
    if claim.verdict(Some(value)) == Verdict::Differs {
        outcome.measure_noted(id, value, note);
    } else {
        outcome.measure(id, value);
    }
}

/// Records whether a qualitative claim holds, with `note` (a measured explanation from
/// the experiment's notes) only when it does not.
pub fn holds_explained(outcome: &mut Outcome, id: &str, holds: bool, note: &str) {
    measure_explained(outcome, id, if holds { 1.0 } else { 0.0 }, note);
}

/// Records our value for a claim that is a check of the set-up (kind input or constant),
/// always with `note`: what the value reads back or follows from, and why it differs when
/// it does. A measured claim is a programming error: its note goes through
/// [`measure_explained`].
pub fn measure_check(outcome: &mut Outcome, id: &str, value: f64, note: &str) {
    assert_ne!(claim(id).kind, ClaimKind::Measured, "claim '{id}' is measured, not a check of the set-up");
    outcome.measure_noted(id, value, note);
}

/// [`measure_check`] for a qualitative claim.
pub fn holds_check(outcome: &mut Outcome, id: &str, holds: bool, note: &str) {
    measure_check(outcome, id, if holds { 1.0 } else { 0.0 }, note);
}

/// A paper's claims (by seed name) as a Markdown table: id, figure, claim, stated,
/// tolerance, kind, experiment. An unknown seed gives the header alone.
pub fn markdown(seed: &str) -> String {
    let mut out = String::from(
        "| id | figure | claim | stated | tolerance | kind | experiment |\n|---|---|---|---|---|---|---|\n",
    );
    for c in all().iter().filter(|c| c.seed == seed) {
        let cell = |s: &str| s.replace('|', "\\|");
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} | {} | `{}` |\n",
            c.id,
            cell(c.figure),
            cell(c.claim),
            cell(&c.paper_display()),
            cell(&c.tolerance_display()),
            c.kind.label(),
            c.experiment
        ));
    }
    out
}

/// A paper's statements not measured here (by seed name) as a Markdown table: where,
/// statement, why. An unknown seed gives the header alone.
pub fn unmeasured_markdown(seed: &str) -> String {
    let mut out = String::from("| where | not measured here | why |\n|---|---|---|\n");
    for u in unmeasured().iter().filter(|u| u.seed == seed) {
        let cell = |s: &str| s.replace('|', "\\|");
        out.push_str(&format!("| {} | {} | {} |\n", cell(u.figure), cell(u.statement), cell(u.why)));
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn ids_are_unique() {
        let mut seen = BTreeSet::new();
        for c in all() {
            assert!(seen.insert(c.id), "claim id '{}' appears twice", c.id);
        }
        assert_eq!(seen.len(), PAPERS.iter().map(|(_, claims)| claims.len()).sum::<usize>());
    }

    #[test]
    fn claims_name_a_registered_experiment_and_start_with_its_id() {
        let experiments: BTreeSet<&str> = crate::all().iter().map(|e| e.id()).collect();
        for c in all() {
            assert!(experiments.contains(c.experiment), "claim '{}' names unknown experiment '{}'", c.id, c.experiment);
            assert!(c.id.starts_with(&format!("{}-", c.experiment)), "claim '{}' is not '<experiment>-…'", c.id);
        }
    }

    #[test]
    fn every_claim_carries_its_papers_seed_name() {
        for (seed, claims) in PAPERS {
            assert!(!claims.is_empty(), "{seed} has no claims");
            for c in claims {
                assert_eq!(c.seed, seed, "claim '{}'", c.id);
            }
        }
    }

    #[test]
    fn unmeasured_statements_carry_their_papers_seed_name_and_are_one_line() {
        assert_eq!(NOT_MEASURED_HERE.map(|(seed, _)| seed), PAPERS.map(|(seed, _)| seed));
        for (seed, list) in NOT_MEASURED_HERE {
            assert!(!list.is_empty(), "{seed} lists nothing not measured here");
            for u in list {
                assert_eq!(u.seed, seed, "{}", u.statement);
                for text in [u.figure, u.statement, u.why] {
                    assert!(!text.is_empty() && !text.contains('\n'), "'{}' must be one line", u.statement);
                }
            }
            assert_eq!(unmeasured_markdown(seed).lines().count(), 2 + list.len(), "{seed}");
        }
    }

    #[test]
    fn claims_are_well_formed() {
        for c in all() {
            assert!(!c.claim.contains('\n') && !c.claim.is_empty(), "claim '{}' must be one line", c.id);
            match c.stated {
                Stated::Holds => assert!(c.unit.is_empty(), "qualitative claim '{}' has unit '{}'", c.id, c.unit),
                Stated::Range { lo, hi } => assert!(lo <= hi, "claim '{}' has range {lo}–{hi}", c.id),
                Stated::Value(v) | Stated::AtLeast(v) | Stated::AtMost(v) => {
                    assert!(v.is_finite(), "claim '{}' states {v}", c.id)
                }
            }
        }
    }

    #[test]
    fn tolerances_follow_the_policy() {
        for c in all() {
            let allowed: &[Tolerance] = match c.stated {
                Stated::Value(_) => &[VALUE, MODEL_VALUE],
                Stated::Range { .. } => &[RANGE],
                Stated::AtLeast(_) | Stated::AtMost(_) => &[BOUND],
                Stated::Holds => &[Tolerance::Exact],
            };
            assert!(allowed.contains(&c.tolerance), "claim '{}' has tolerance {:?}", c.id, c.tolerance);
        }
    }

    #[test]
    fn markdown_has_a_row_per_claim() {
        for (seed, claims) in PAPERS {
            let table = markdown(seed);
            assert_eq!(table.lines().count(), 2 + claims.len(), "{seed}");
            for c in claims {
                assert!(table.contains(&format!("| `{}` |", c.id)), "{} missing from {seed}'s table", c.id);
            }
        }
    }

    #[test]
    fn cidr_fig5_measures_all_its_claims() {
        let experiment = crate::all().into_iter().find(|e| e.id() == "cidr-fig5").expect("registered");
        let ctx = nvmdb_lab::RunContext::new(nvmdb_lab::Scale::Quick, 1);
        let outcome = experiment.run(&ctx).expect("cidr-fig5 runs");
        let finished = nvmdb_lab::report::Finished::new(experiment.as_ref(), outcome);
        let rows = nvmdb_lab::scorecard(&all(), &[finished]).expect("scorecard");
        let ids: Vec<&str> = CIDR2011.iter().filter(|c| c.experiment == "cidr-fig5").map(|c| c.id).collect();
        assert!(!ids.is_empty());
        assert_eq!(rows.len(), ids.len());
        for row in rows {
            assert!(row.value.is_some(), "{} not measured", row.claim_id);
        }
    }
}
