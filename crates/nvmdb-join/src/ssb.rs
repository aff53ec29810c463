//! The Star Schema Benchmark as the thesis uses it (seed 000, Section 2.2.5): the
//! LINEORDER fact table and the CUSTOMER, SUPPLIER, PART and DATE dimensions, at a
//! configurable scale factor, and the thesis's three queries, each run as hash joins of a
//! dimension (build, R) with LINEORDER (probe, S).
//!
//! Cardinalities follow the SSB specification (O'Neil et al.): LINEORDER 6,000,000·SF,
//! CUSTOMER 30,000·SF, SUPPLIER 2,000·SF; PART is 200,000·SF here (the specification's
//! 200,000·⌊1 + log2 SF⌋ is undefined below SF 1); DATE has 7 years of days, 2003–2009,
//! so that Query 1's `d.year = 2009` selects one of them. Text attributes are stored
//! dictionary-encoded (1–4 B codes), so a LINEORDER record is 47 B.

use nvmdb_memory::{Memory, MemoryError};
use rand::Rng;

use crate::join::{measured_join, JoinOptions, JoinOutput};
use crate::relation::{Column, Layout, StoredRelation, Table};

/// Region code of 'ASIA' (regions: AFRICA, AMERICA, ASIA, EUROPE, MIDDLE EAST).
pub const ASIA: u64 = 2;
/// Part-type code standing for the thesis's `'IC'` (one of 150 type codes).
pub const TYPE_IC: u64 = 0;
/// First year of the DATE table.
pub const FIRST_YEAR: u64 = 2003;
const YEARS: u64 = 7;

/// The five tables.
#[derive(Debug, Clone)]
pub struct Ssb {
    /// LINEORDER (17 columns).
    pub lineorder: Table,
    /// CUSTOMER (8 columns).
    pub customer: Table,
    /// SUPPLIER (7 columns).
    pub supplier: Table,
    /// PART (9 columns).
    pub part: Table,
    /// DATE (17 columns).
    pub date: Table,
}

/// A dimension table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dimension {
    /// CUSTOMER.
    Customer,
    /// SUPPLIER.
    Supplier,
    /// PART.
    Part,
    /// DATE.
    Date,
}

fn column(name: &str, width_bytes: u32, values: Vec<u64>) -> Column {
    Column { name: name.into(), width_bytes, values }
}

/// `base` rows scaled by `sf`, rounded, at least 1.
#[expect(
    clippy::cast_possible_truncation,
    reason = "sf is positive and finite (asserted by Ssb::generate); a product beyond u64 saturates, \
              and that many rows could not be generated anyway"
)]
fn scaled_rows(base: f64, sf: f64) -> u64 {
    ((base * sf).round() as u64).max(1)
}

fn random_column(rng: &mut impl Rng, name: &str, width: u32, rows: u64, below: u64) -> Column {
    column(name, width, (0..rows).map(|_| rng.gen_range(0..below)).collect())
}

impl Ssb {
    /// Generates the tables at scale factor `sf` (> 0).
    pub fn generate(sf: f64, rng: &mut impl Rng) -> Ssb {
        assert!(sf > 0.0 && sf.is_finite(), "scale factor must be positive");
        let rows = |base: f64| scaled_rows(base, sf);
        let (n_lo, n_c, n_s, n_p) = (rows(6_000_000.0), rows(30_000.0), rows(2_000.0), rows(200_000.0));
        let n_d = YEARS * 365;

        let geo = |rng: &mut dyn rand::RngCore, n: u64, key: &str, prefix: &str| -> Vec<Column> {
            let nations: Vec<u64> = (0..n).map(|_| rng.gen_range(0..25)).collect();
            let mut columns = vec![
                column(key, 4, (1..=n).collect()),
                column(&format!("{prefix}_name"), 4, (1..=n).collect()),
                column(
                    &format!("{prefix}_address"),
                    4,
                    (0..n).map(|_| rng.gen_range(0..u64::from(u32::MAX))).collect(),
                ),
                column(&format!("{prefix}_city"), 2, nations.iter().map(|&x| x * 10 + rng.gen_range(0..10)).collect()),
                column(&format!("{prefix}_nation"), 1, nations.clone()),
                column(&format!("{prefix}_region"), 1, nations.iter().map(|&x| x / 5).collect()),
                column(&format!("{prefix}_phone"), 4, (0..n).map(|_| rng.gen_range(0..u64::from(u32::MAX))).collect()),
            ];
            if prefix == "c" {
                columns.push(column("c_mktsegment", 1, (0..n).map(|_| rng.gen_range(0..5)).collect()));
            }
            columns
        };
        let customer = Table { columns: geo(rng, n_c, "c_custkey", "c") };
        let supplier = Table { columns: geo(rng, n_s, "s_suppkey", "s") };
        let part = Table {
            columns: vec![
                column("p_partkey", 4, (1..=n_p).collect()),
                column("p_name", 4, (0..n_p).map(|_| rng.gen_range(0..1_000_000)).collect()),
                random_column(rng, "p_mfgr", 1, n_p, 5),
                random_column(rng, "p_category", 1, n_p, 25),
                random_column(rng, "p_brand1", 2, n_p, 1000),
                random_column(rng, "p_color", 1, n_p, 92),
                random_column(rng, "p_type", 2, n_p, 150),
                random_column(rng, "p_size", 1, n_p, 50),
                random_column(rng, "p_container", 1, n_p, 40),
            ],
        };
        let date = date_table(n_d);
        let date_keys = date.columns[0].values.clone();
        let key = |rng: &mut dyn rand::RngCore, n: u64| rng.gen_range(1..=n);
        let orderdate: Vec<u64> = (0..n_lo).map(|_| date_keys[rng.gen_range(0..nvmdb_device::index(n_d))]).collect();
        let quantity: Vec<u64> = (0..n_lo).map(|_| rng.gen_range(1..=50)).collect();
        let price: Vec<u64> = quantity.iter().map(|&q| q * rng.gen_range(90_000..200_000) / 100).collect();
        let discount: Vec<u64> = (0..n_lo).map(|_| rng.gen_range(0..=10)).collect();
        let lineorder = Table {
            columns: vec![
                column("lo_orderkey", 4, (0..n_lo).map(|i| i / 4 + 1).collect()),
                column("lo_linenumber", 1, (0..n_lo).map(|i| i % 4 + 1).collect()),
                column("lo_custkey", 4, (0..n_lo).map(|_| key(rng, n_c)).collect()),
                column("lo_partkey", 4, (0..n_lo).map(|_| key(rng, n_p)).collect()),
                column("lo_suppkey", 4, (0..n_lo).map(|_| key(rng, n_s)).collect()),
                column("lo_orderdate", 4, orderdate.clone()),
                random_column(rng, "lo_orderpriority", 1, n_lo, 5),
                random_column(rng, "lo_shippriority", 1, n_lo, 2),
                column("lo_quantity", 1, quantity),
                column("lo_extendedprice", 4, price.clone()),
                column("lo_ordtotalprice", 4, price.iter().map(|&p| p * 3).collect()),
                column("lo_discount", 1, discount.clone()),
                column("lo_revenue", 4, price.iter().zip(&discount).map(|(&p, &d)| p * (100 - d) / 100).collect()),
                column("lo_supplycost", 4, price.iter().map(|&p| p * 6 / 10).collect()),
                random_column(rng, "lo_tax", 1, n_lo, 9),
                column("lo_commitdate", 4, orderdate),
                random_column(rng, "lo_shipmode", 1, n_lo, 7),
            ],
        };
        Ssb { lineorder, customer, supplier, part, date }
    }

    /// The table of a dimension.
    pub fn dimension(&self, d: Dimension) -> &Table {
        match d {
            Dimension::Customer => &self.customer,
            Dimension::Supplier => &self.supplier,
            Dimension::Part => &self.part,
            Dimension::Date => &self.date,
        }
    }

    /// Bytes of all tables in the row layout.
    pub fn bytes(&self) -> u64 {
        [&self.lineorder, &self.customer, &self.supplier, &self.part, &self.date]
            .iter()
            .map(|t| t.rows() * t.record_bytes())
            .sum()
    }
}

/// DATE: one row per day from 2003-01-01, 365-day years (the calendar does not matter to
/// the joins); `d_datekey` is `yyyymmdd`-like.
fn date_table(days: u64) -> Table {
    let year = |d: u64| FIRST_YEAR + d / 365;
    let day_of_year = |d: u64| d % 365;
    let month = |d: u64| (day_of_year(d) / 31).min(11) + 1;
    let key = |d: u64| year(d) * 10_000 + month(d) * 100 + day_of_year(d) % 31 + 1;
    let col = |name: &str, width: u32, f: &dyn Fn(u64) -> u64| column(name, width, (0..days).map(f).collect());
    Table {
        columns: vec![
            col("d_datekey", 4, &key),
            col("d_date", 4, &|d| d),
            col("d_dayofweek", 1, &|d| d % 7),
            col("d_month", 1, &month),
            col("d_year", 2, &year),
            col("d_yearmonthnum", 4, &|d| year(d) * 100 + month(d)),
            col("d_yearmonth", 4, &|d| year(d) * 100 + month(d)),
            col("d_daynuminweek", 1, &|d| d % 7 + 1),
            col("d_daynuminmonth", 1, &|d| day_of_year(d) % 31 + 1),
            col("d_daynuminyear", 2, &|d| day_of_year(d) + 1),
            col("d_monthnuminyear", 1, &month),
            col("d_weeknuminyear", 1, &|d| day_of_year(d) / 7 + 1),
            col("d_sellingseason", 1, &|d| month(d) / 3),
            col("d_lastdayinweekfl", 1, &|d| u64::from(d % 7 == 6)),
            col("d_lastdayinmonthfl", 1, &|d| u64::from(day_of_year(d) % 31 == 30)),
            col("d_holidayfl", 1, &|d| u64::from(day_of_year(d) % 50 == 0)),
            col("d_weekdayfl", 1, &|d| u64::from(d % 7 < 5)),
        ],
    }
}

/// One join of a query: dimension key = LINEORDER foreign key, the attributes its result
/// reads, and the dimension predicate the upper operator applies.
#[derive(Debug, Clone, Copy)]
pub struct JoinStep {
    /// The dimension (build side).
    pub dimension: Dimension,
    /// Its key column.
    pub dimension_key: &'static str,
    /// The LINEORDER foreign key.
    pub fact_key: &'static str,
    /// Dimension attributes the query uses.
    pub dimension_columns: &'static [&'static str],
    /// LINEORDER attributes the query uses.
    pub fact_columns: &'static [&'static str],
    /// `(dimension column, value)` equality predicate, if any.
    pub predicate: Option<(&'static str, u64)>,
}

/// The thesis's three queries (Section 2.2.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Query {
    /// Customer and supplier nations and order quantity, Asian customers and suppliers, year 2009.
    Q1,
    /// Customer nation and order quantity for parts of type 'IC'.
    Q2,
    /// Supplier name and region for orders with quantity above 500.
    Q3,
}

impl Query {
    /// All three.
    pub const ALL: [Query; 3] = [Query::Q1, Query::Q2, Query::Q3];

    /// `Q1`, `Q2`, `Q3`.
    pub fn name(self) -> &'static str {
        match self {
            Query::Q1 => "Q1",
            Query::Q2 => "Q2",
            Query::Q3 => "Q3",
        }
    }

    /// The joins of the query.
    pub fn steps(self) -> Vec<JoinStep> {
        let customer = |predicate| JoinStep {
            dimension: Dimension::Customer,
            dimension_key: "c_custkey",
            fact_key: "lo_custkey",
            dimension_columns: &["c_nation", "c_region"],
            fact_columns: &["lo_quantity"],
            predicate,
        };
        match self {
            Query::Q1 => vec![
                customer(Some(("c_region", ASIA))),
                JoinStep {
                    dimension: Dimension::Supplier,
                    dimension_key: "s_suppkey",
                    fact_key: "lo_suppkey",
                    dimension_columns: &["s_nation", "s_region"],
                    fact_columns: &["lo_quantity"],
                    predicate: Some(("s_region", ASIA)),
                },
                JoinStep {
                    dimension: Dimension::Date,
                    dimension_key: "d_datekey",
                    fact_key: "lo_orderdate",
                    dimension_columns: &["d_year"],
                    fact_columns: &["lo_quantity"],
                    predicate: Some(("d_year", 2009)),
                },
            ],
            Query::Q2 => vec![
                customer(None),
                JoinStep {
                    dimension: Dimension::Part,
                    dimension_key: "p_partkey",
                    fact_key: "lo_partkey",
                    dimension_columns: &["p_type"],
                    fact_columns: &["lo_quantity"],
                    predicate: Some(("p_type", TYPE_IC)),
                },
            ],
            Query::Q3 => vec![JoinStep {
                dimension: Dimension::Supplier,
                dimension_key: "s_suppkey",
                fact_key: "lo_suppkey",
                dimension_columns: &["s_name", "s_region"],
                fact_columns: &["lo_quantity"],
                predicate: None,
            }],
        }
    }

    /// Whether LINEORDER row `row` passes the query's own LINEORDER predicate.
    fn fact_passes(self, ssb: &Ssb, row: usize) -> bool {
        match self {
            // The thesis's `lo.qty > 500`; SSB quantities are 1–50, so nothing passes.
            Query::Q3 => ssb.lineorder.columns[8].values[row] > 500,
            _ => true,
        }
    }
}

/// The five tables stored in one memory.
#[derive(Debug, Clone)]
pub struct StoredSsb {
    pub(crate) lineorder: StoredRelation,
    dimensions: Vec<(Dimension, StoredRelation)>,
}

pub(crate) fn index(table: &Table, name: &str) -> usize {
    table.column_index(name).unwrap_or_else(|| panic!("SSB column {name} exists"))
}

impl StoredSsb {
    /// Stores every table in `layout`.
    pub fn load<M: Memory>(mem: &mut M, ssb: &Ssb, layout: Layout) -> Result<StoredSsb, MemoryError> {
        StoredSsb::load_with_spare(mem, ssb, layout, 0)
    }

    /// [`StoredSsb::load`] with room for `spare_rows` more LINEORDER rows (inserts).
    pub fn load_with_spare<M: Memory>(
        mem: &mut M,
        ssb: &Ssb,
        layout: Layout,
        spare_rows: u64,
    ) -> Result<StoredSsb, MemoryError> {
        let capacity = ssb.lineorder.rows() + spare_rows;
        let lineorder = StoredRelation::load_with_capacity(mem, &ssb.lineorder, layout, 0, capacity)?;
        let mut dimensions = Vec::new();
        for d in [Dimension::Customer, Dimension::Supplier, Dimension::Part, Dimension::Date] {
            dimensions.push((d, StoredRelation::load(mem, ssb.dimension(d), layout, 0)?));
        }
        Ok(StoredSsb { lineorder, dimensions })
    }
}

/// What one query did.
#[derive(Debug, Clone)]
pub struct QueryRun {
    /// Per join: its output (pairs collected) and its counters.
    pub joins: Vec<(JoinOutput, nvmdb_memory::MemoryReport)>,
    /// Rows of the query result.
    pub result_rows: u64,
}

/// What a column-store join result reads (a row-store result reads whole records).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultColumns {
    /// The attributes the query uses and the keys.
    Used,
    /// Every attribute, as a row store does.
    All,
}

/// Runs `query` as one hash join per step (counters reset before each join, all writes
/// flushed after), calling `after_join` on the memory after each, then evaluates the
/// predicates on the join results.
pub fn run_query<M: Memory>(
    mem: &mut M,
    ssb: &Ssb,
    stored: &StoredSsb,
    query: Query,
    options: &JoinOptions,
    columns: ResultColumns,
    mut after_join: impl FnMut(&M),
) -> Result<QueryRun, MemoryError> {
    let options = JoinOptions { collect_pairs: true, ..*options };
    let mut joins = Vec::new();
    let mut passing: Vec<bool> =
        (0..nvmdb_device::index(ssb.lineorder.rows())).map(|i| query.fact_passes(ssb, i)).collect();
    for step in query.steps() {
        let table = ssb.dimension(step.dimension);
        let (_, dim) = stored.dimensions.iter().find(|(d, _)| *d == step.dimension).expect("every dimension stored");
        let mut dim_columns: Vec<usize> = step.dimension_columns.iter().map(|c| index(table, c)).collect();
        dim_columns.push(index(table, step.dimension_key));
        let mut fact_columns: Vec<usize> = step.fact_columns.iter().map(|c| index(&ssb.lineorder, c)).collect();
        let fact_key = index(&ssb.lineorder, step.fact_key);
        fact_columns.push(fact_key);
        let mut r = dim.rekeyed(index(table, step.dimension_key));
        let mut s = stored.lineorder.rekeyed(fact_key);
        if columns == ResultColumns::Used {
            r = r.with_projection(&dim_columns);
            s = s.with_projection(&fact_columns);
        }
        let (output, report) = measured_join(mem, &r, &s, &options)?;
        after_join(mem);
        let mut matched = vec![false; passing.len()];
        let predicate = step.predicate.map(|(c, v)| (&table.columns[index(table, c)].values, v));
        for &(r_row, s_row) in &output.pairs {
            let ok = predicate.is_none_or(|(values, v)| values[nvmdb_device::index(r_row)] == v);
            matched[nvmdb_device::index(s_row)] |= ok;
        }
        for (p, m) in passing.iter_mut().zip(matched) {
            *p &= m;
        }
        joins.push((output, report));
    }
    Ok(QueryRun { joins, result_rows: passing.iter().filter(|&&p| p).count() as u64 })
}

/// The query result size computed directly on the tables, for checking.
pub fn expected_rows(ssb: &Ssb, query: Query) -> u64 {
    (0..nvmdb_device::index(ssb.lineorder.rows()))
        .filter(|&i| {
            query.fact_passes(ssb, i)
                && query.steps().iter().all(|step| {
                    let table = ssb.dimension(step.dimension);
                    let fk = ssb.lineorder.columns[index(&ssb.lineorder, step.fact_key)].values[i];
                    let key_col = &table.columns[index(table, step.dimension_key)].values;
                    key_col.iter().enumerate().any(|(r, &k)| {
                        k == fk && step.predicate.is_none_or(|(c, v)| table.columns[index(table, c)].values[r] == v)
                    })
                })
        })
        .count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::idlist::IdEncoding;
    use crate::join::Algorithm;
    use nvmdb_memory::NativeMemory;
    use rand::SeedableRng;

    #[test]
    fn queries_through_every_variant_match_a_direct_evaluation() {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(3);
        let ssb = Ssb::generate(0.0005, &mut rng);
        assert_eq!(ssb.lineorder.rows(), 3000);
        assert_eq!(ssb.lineorder.record_bytes(), 47);
        for query in Query::ALL {
            let expected = expected_rows(&ssb, query);
            match query {
                Query::Q1 => assert!(expected > 0, "Q1 selects about 1/175 of the orders"),
                Query::Q2 => {}
                Query::Q3 => assert_eq!(expected, 0),
            }
            for layout in [Layout::Row, Layout::Column] {
                for algorithm in [Algorithm::CachePartitioning, Algorithm::VirtualPartitioning] {
                    for columns in [ResultColumns::Used, ResultColumns::All] {
                        let mut mem = NativeMemory::new(1 << 28);
                        let stored = StoredSsb::load(&mut mem, &ssb, layout).unwrap();
                        let options = JoinOptions {
                            algorithm,
                            cache_bytes: 16 << 10,
                            id_encoding: IdEncoding::Plain32,
                            collect_pairs: false,
                        };
                        let run = run_query(&mut mem, &ssb, &stored, query, &options, columns, |_| {}).unwrap();
                        assert_eq!(run.result_rows, expected, "{query:?} {layout:?} {algorithm:?} {columns:?}");
                        assert!(run.joins.iter().all(|(o, _)| o.matches == 3000), "every order has its dimension rows");
                    }
                }
            }
        }
    }
}
