//! What an experiment produces: tables (with the paper's values beside ours) and plots.

use serde::{Deserialize, Serialize, Serializer};

use crate::measured::{Measured, WouldHold, WouldHoldWhen};

/// One table cell. In `results.json` a number is a JSON number, text a string, a missing
/// value `null`, and a [`Cell::Typed`] cell its text alone.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum Cell {
    /// An integer.
    Int(i64),
    /// A real number.
    Float(f64),
    /// Text.
    Text(String),
    /// No value (e.g. the paper states none).
    Missing,
    /// Text for the report that stands for typed values (`"V 1.04×"`: the best scheme and
    /// its gain): the report shows the text, and programs get the values
    /// ([`Cell::data`], `nvmdb run --json`). Read back from a stored file as its text.
    #[serde(skip_deserializing)]
    Typed(Box<Typed>),
}

/// The values behind a [`Cell::Typed`] cell's text.
#[derive(Debug, Clone, PartialEq)]
pub struct Typed {
    /// What the report shows.
    pub text: String,
    /// Each value with its short name, the unit last in the name (`gain_x`,
    /// `energy_mj`); none of them typed again.
    pub fields: Vec<(String, Cell)>,
}

impl Serialize for Cell {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Cell::Int(v) => serializer.serialize_i64(*v),
            Cell::Float(v) => serializer.serialize_f64(*v),
            Cell::Text(s) => serializer.serialize_str(s),
            Cell::Missing => serializer.serialize_unit(),
            Cell::Typed(t) => serializer.serialize_str(&t.text),
        }
    }
}

impl Cell {
    /// A cell showing `text` for the values `fields` (see [`Cell::Typed`]).
    pub fn typed<const N: usize>(text: impl Into<String>, fields: [(&str, Cell); N]) -> Cell {
        let fields = fields.into_iter().map(|(name, value)| (name.to_string(), value)).collect();
        Cell::Typed(Box::new(Typed { text: text.into(), fields }))
    }

    /// Text for reports: floats with 4 significant digits.
    pub fn display(&self) -> String {
        match self {
            Cell::Int(v) => v.to_string(),
            Cell::Float(v) => format_float(*v),
            Cell::Text(s) => s.clone(),
            Cell::Missing => "—".into(),
            Cell::Typed(t) => t.text.clone(),
        }
    }

    /// The cell as data: as in `results.json`, except that a typed cell is an object of
    /// its values and its text (`{"best": "virtual partitioning", "gain_x": 1.04, "text":
    /// "V 1.04×"}`).
    pub fn data(&self) -> serde_json::Value {
        match self {
            Cell::Typed(t) => {
                let mut object: serde_json::Map<String, serde_json::Value> =
                    t.fields.iter().map(|(name, value)| (name.clone(), value.data())).collect();
                object.insert("text".into(), t.text.clone().into());
                object.into()
            }
            other => serde_json::to_value(other).expect("a cell serialises"),
        }
    }
}

fn format_float(v: f64) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    let magnitude = v.abs();
    if magnitude != 0.0 && !(1e-3..1e7).contains(&magnitude) {
        format!("{v:.3e}")
    } else {
        let digits = if magnitude >= 1000.0 {
            0
        } else if magnitude >= 10.0 {
            2
        } else {
            3
        };
        format!("{v:.digits$}")
    }
}

impl From<u64> for Cell {
    fn from(v: u64) -> Cell {
        i64::try_from(v).map_or(Cell::Float(v as f64), Cell::Int)
    }
}
impl From<i64> for Cell {
    fn from(v: i64) -> Cell {
        Cell::Int(v)
    }
}
impl From<u32> for Cell {
    fn from(v: u32) -> Cell {
        Cell::Int(i64::from(v))
    }
}
impl From<usize> for Cell {
    fn from(v: usize) -> Cell {
        Cell::from(v as u64)
    }
}
impl From<f64> for Cell {
    fn from(v: f64) -> Cell {
        Cell::Float(v)
    }
}
impl From<&str> for Cell {
    fn from(v: &str) -> Cell {
        Cell::Text(v.into())
    }
}
impl From<String> for Cell {
    fn from(v: String) -> Cell {
        Cell::Text(v)
    }
}
impl<T: Into<Cell>> From<Option<T>> for Cell {
    fn from(v: Option<T>) -> Cell {
        v.map_or(Cell::Missing, Into::into)
    }
}

/// A table of results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Table {
    /// Title, naming the figure or table reproduced and the configuration.
    pub title: String,
    /// Column headers.
    pub columns: Vec<String>,
    /// Rows, each as long as `columns`.
    pub rows: Vec<Vec<Cell>>,
    /// A short stable name for programs (`nvmdb run --json`), when the experiment gives
    /// one; not in `results.json`.
    #[serde(skip)]
    pub key: Option<String>,
}

impl Table {
    /// An empty table.
    pub fn new(title: impl Into<String>, columns: &[&str]) -> Table {
        Table {
            title: title.into(),
            columns: columns.iter().map(|c| c.to_string()).collect(),
            rows: Vec::new(),
            key: None,
        }
    }

    /// The same table with a short stable name for programs (see [`Table::key`]).
    pub fn keyed(mut self, key: impl Into<String>) -> Table {
        self.key = Some(key.into());
        self
    }

    /// Appends a row; panics when its length differs from the header's (a bug).
    pub fn row(&mut self, cells: Vec<Cell>) {
        assert_eq!(cells.len(), self.columns.len(), "row length differs from header in table '{}'", self.title);
        self.rows.push(cells);
    }
}

/// One line of a plot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// Legend name.
    pub name: String,
    /// Points `(x, y)`.
    pub points: Vec<(f64, f64)>,
}

/// How an axis maps values to positions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AxisScale {
    /// Evenly spaced values.
    #[default]
    Linear,
    /// Evenly spaced doublings, for sizes that double.
    Log2,
    /// Evenly spaced decades.
    Log10,
}

/// A line plot, rendered as SVG by [`Plot::to_svg`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plot {
    /// Title.
    pub title: String,
    /// X axis label.
    pub x_label: String,
    /// Y axis label.
    pub y_label: String,
    /// Log-scale Y axis: kept for existing code, `true` means [`AxisScale::Log10`] when
    /// `y_scale` is left linear.
    #[serde(default)]
    pub log_y: bool,
    /// X axis scale. Left linear, an axis whose values are all powers of two spanning at
    /// least 8× is drawn log₂ anyway: linear would crush the small sizes into one corner.
    #[serde(default)]
    pub x_scale: AxisScale,
    /// Y axis scale.
    #[serde(default)]
    pub y_scale: AxisScale,
    /// Our lines.
    pub series: Vec<Series>,
    /// The paper's stated values, drawn as markers without lines.
    #[serde(default)]
    pub paper: Vec<Series>,
}

impl Plot {
    /// An empty plot.
    pub fn new(title: impl Into<String>, x_label: impl Into<String>, y_label: impl Into<String>) -> Plot {
        Plot {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            log_y: false,
            x_scale: AxisScale::Linear,
            y_scale: AxisScale::Linear,
            series: Vec::new(),
            paper: Vec::new(),
        }
    }

    /// A log₂ X axis.
    pub fn log2_x(mut self) -> Plot {
        self.x_scale = AxisScale::Log2;
        self
    }

    /// A log₁₀ Y axis.
    pub fn log10_y(mut self) -> Plot {
        self.y_scale = AxisScale::Log10;
        self
    }

    /// Adds a line.
    pub fn series(&mut self, name: impl Into<String>, points: Vec<(f64, f64)>) {
        self.series.push(Series { name: name.into(), points });
    }

    /// Adds the paper's values for a line, shown as `paper: NAME`.
    pub fn paper_series(&mut self, name: impl Into<String>, points: Vec<(f64, f64)>) {
        self.paper.push(Series { name: name.into(), points });
    }
}

/// An experiment's result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    /// A few sentences: what ran and what it found, including where ours differs from
    /// the paper and why.
    pub summary: String,
    /// The full configuration, so the run can be repeated.
    pub config: serde_json::Value,
    /// Tables.
    pub tables: Vec<Table>,
    /// Plots.
    pub plots: Vec<Plot>,
    /// Notes: modelling choices, deviations and their reasons.
    pub notes: Vec<String>,
    /// Our values for the papers' claims (see [`mod@crate::scorecard`]).
    #[serde(default)]
    pub measurements: Vec<Measured>,
    /// Where claims ours does not reproduce would hold, as this experiment's sweeps found
    /// (the claims may be other experiments').
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub would_hold: Vec<WouldHold>,
}

impl Outcome {
    /// Records our value for a claim.
    pub fn measure(&mut self, claim_id: impl Into<String>, value: f64) {
        self.measurements.push(Measured { claim: claim_id.into(), value, note: None });
    }

    /// Records our value for a claim with a note on why it is what it is.
    pub fn measure_noted(&mut self, claim_id: impl Into<String>, value: f64, note: impl Into<String>) {
        self.measurements.push(Measured { claim: claim_id.into(), value, note: Some(note.into()) });
    }

    /// Records whether a qualitative claim holds.
    pub fn holds(&mut self, claim_id: impl Into<String>, holds: bool) {
        self.measure(claim_id, if holds { 1.0 } else { 0.0 });
    }

    /// Records where a claim (this experiment's or another's) would hold, as a sweep or a
    /// bisection of this experiment found.
    pub fn would_hold_when(&mut self, claim_id: impl Into<String>, when: WouldHoldWhen) {
        self.would_hold.push(WouldHold { claim: claim_id.into(), when });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typed_cell_is_its_text_in_results_json_and_its_values_as_data() {
        let cell = Cell::typed("V 1.04×", [("best", "virtual".into()), ("gain_x", 1.04.into())]);
        assert_eq!(serde_json::to_string(&cell).unwrap(), "\"V 1.04×\"");
        assert_eq!(cell.display(), "V 1.04×");
        assert_eq!(cell.data(), serde_json::json!({"best": "virtual", "gain_x": 1.04, "text": "V 1.04×"}));
        // Read back (a stored run), it is its text.
        assert_eq!(serde_json::from_str::<Cell>("\"V 1.04×\"").unwrap(), Cell::Text("V 1.04×".into()));
        // Other cells are the same in both, as the derived form wrote them.
        for (plain, json) in [
            (Cell::Int(-3), "-3"),
            (Cell::Float(1.0), "1.0"),
            (Cell::Float(0.1), "0.1"),
            (Cell::Text("a".into()), "\"a\""),
            (Cell::Missing, "null"),
        ] {
            assert_eq!(serde_json::to_string(&plain).unwrap(), json);
            assert_eq!(plain.data().to_string(), json);
            assert_eq!(serde_json::from_str::<Cell>(json).unwrap(), plain);
        }
        // A table's key is for programs only: not in results.json.
        let table = Table::new("t", &["a"]).keyed("k");
        assert_eq!(serde_json::to_string(&table).unwrap(), r#"{"title":"t","columns":["a"],"rows":[]}"#);
    }
}
