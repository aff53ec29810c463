//! What an experiment reports for the papers' claims: a measured value per claim id, and
//! where a claim ours does not reproduce would hold.

use serde::{Deserialize, Serialize};

use crate::format::number;

/// A measured value an experiment reports for a claim id (for [`Stated::Holds`] claims,
/// 1.0 means it holds and 0.0 that it does not).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    /// The claim's id.
    pub claim: String,
    /// Our value, in the claim's unit.
    pub value: f64,
    /// Why ours is what it is, when that needs saying.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// On which side of a [`WouldHoldWhen`] boundary a claim would hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Relation {
    /// At the value (a stated value, reached where ours crosses it).
    At,
    /// At the value or above it.
    AtLeast,
    /// At the value or below it.
    AtMost,
}

impl Relation {
    /// `=`, `≥` or `≤`.
    pub fn symbol(self) -> &'static str {
        match self {
            Relation::At => "=",
            Relation::AtLeast => "≥",
            Relation::AtMost => "≤",
        }
    }
}

/// Where a claim ours does not reproduce would hold: the value of the one parameter that
/// decides it, found by a sweep or a bisection in an experiment (never typed in), or
/// `None` when no value in the range tried makes it hold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WouldHoldWhen {
    /// The parameter, e.g. `PCM capacity`.
    pub parameter: String,
    /// The boundary; `None` when no value in `range_tried` makes the claim hold.
    pub value: Option<f64>,
    /// The parameter's unit, e.g. `MB`.
    pub unit: String,
    /// The lowest and highest values the sweep tried.
    pub range_tried: [f64; 2],
    /// Where the claim holds against `value`.
    pub relation: Relation,
}

impl WouldHoldWhen {
    /// For display: `PCM capacity ≥ 60 MB (tried 16–128 MB)`, or `PCM capacity: none in
    /// 16–128 MB`.
    pub fn display(&self) -> String {
        let unit = |s: String| if self.unit.is_empty() { s } else { format!("{s} {}", self.unit) };
        let range = unit(format!("{}–{}", number(self.range_tried[0]), number(self.range_tried[1])));
        match self.value {
            Some(v) => format!("{} {} {} (tried {range})", self.parameter, self.relation.symbol(), unit(number(v))),
            None => format!("{}: none in {range}", self.parameter),
        }
    }
}

/// A [`WouldHoldWhen`] an experiment found for a claim (carried in
/// [`Outcome::would_hold`](crate::Outcome)); the claim may belong to another experiment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WouldHold {
    /// The claim's id.
    pub claim: String,
    /// Where it would hold.
    pub when: WouldHoldWhen,
}
