//! The thesis's multi-user load (seed 000, Sections 5.2.1–5.2.2): every user runs the
//! three SSB queries and, "besides" them, insert, update and delete transactions on the
//! database that "could change the result of a same query for different users".
//!
//! The thesis gives neither the number of transactions per user nor their timing. Ours:
//! each user runs the three queries once and [`UserLoad::dml_per_user`] inserts, as many
//! updates and as many deletes on LINEORDER; each transaction arrives at a uniformly random
//! time in the run's window, and transactions run one at a time in arrival order. A
//! query holds its shared ("inclusive") lock until it ends and an update arriving
//! meanwhile "is held back", so no insert, update or delete runs inside a query; we also
//! run two users' queries one after the other, never interleaved join by join.
//!
//! An insert adds an order line with random customer, part, supplier, date and quantity
//! (its other attributes copied from a random line); an update sets a random line's
//! quantity and discount; a delete removes a random line (the last line moves into its
//! slot). Each changes both the native tables (which the query predicates read) and the
//! stored LINEORDER (which the joins read).

use nvmdb_device::index;
use nvmdb_memory::Memory;
use rand::Rng;
use serde::Serialize;

use crate::ssb::{Query, Ssb, StoredSsb};

/// What the users do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct UserLoad {
    /// Users running at the same time.
    pub users: u32,
    /// Inserts per user, and as many updates and as many deletes.
    pub dml_per_user: u32,
}

/// One transaction of a user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transaction {
    /// One of the three queries.
    Query(Query),
    /// Insert an order line.
    Insert,
    /// Update an order line's quantity and discount.
    Update,
    /// Delete an order line.
    Delete,
}

/// A transaction and the user who runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scheduled {
    /// The user, `0..users`.
    pub user: u32,
    /// What the user runs.
    pub transaction: Transaction,
}

impl UserLoad {
    /// One user's transactions, before arrival times order them.
    pub fn transactions_per_user(&self) -> Vec<Transaction> {
        let mut t: Vec<Transaction> = Query::ALL.into_iter().map(Transaction::Query).collect();
        for _ in 0..self.dml_per_user {
            t.extend([Transaction::Insert, Transaction::Update, Transaction::Delete]);
        }
        t
    }

    /// Inserts of the whole load (the spare LINEORDER rows it needs).
    pub fn inserts(&self) -> u64 {
        u64::from(self.users) * u64::from(self.dml_per_user)
    }

    /// Every user's transactions in arrival order: each arrives at a random time from
    /// `rng`; ties keep user order, then the user's own order.
    pub fn schedule(&self, rng: &mut impl Rng) -> Vec<Scheduled> {
        let mut arrivals = Vec::new();
        for user in 0..self.users {
            for transaction in self.transactions_per_user() {
                arrivals.push((rng.gen::<u64>(), Scheduled { user, transaction }));
            }
        }
        arrivals.sort_by_key(|&(at, s)| (at, s.user));
        arrivals.into_iter().map(|(_, s)| s).collect()
    }
}

/// Column index of `name` in LINEORDER.
fn lo(ssb: &Ssb, name: &str) -> usize {
    crate::ssb::index(&ssb.lineorder, name)
}

/// Runs an insert, update or delete on LINEORDER, in `ssb` and in `stored` alike, drawing
/// its rows and values from `rng`. A delete of the last remaining line does nothing.
/// Panics on a query (queries run through [`crate::ssb::run_query`]).
pub fn apply<M: Memory>(
    mem: &mut M,
    ssb: &mut Ssb,
    stored: &mut StoredSsb,
    transaction: Transaction,
    rng: &mut impl Rng,
) {
    let rows = ssb.lineorder.rows();
    match transaction {
        Transaction::Query(q) => panic!("{} is a query, not an insert, update or delete", q.name()),
        Transaction::Insert => {
            let template = index(rng.gen_range(0..rows));
            let mut values: Vec<u64> = ssb.lineorder.columns.iter().map(|c| c.values[template]).collect();
            let order_key = ssb.lineorder.columns[lo(ssb, "lo_orderkey")].values.iter().max().map_or(1, |k| k + 1);
            let date_keys = &ssb.date.columns[0].values;
            let date = date_keys[rng.gen_range(0..date_keys.len())];
            for (name, value) in [
                ("lo_orderkey", order_key),
                ("lo_linenumber", 1),
                ("lo_custkey", rng.gen_range(1..=ssb.customer.rows())),
                ("lo_partkey", rng.gen_range(1..=ssb.part.rows())),
                ("lo_suppkey", rng.gen_range(1..=ssb.supplier.rows())),
                ("lo_orderdate", date),
                ("lo_commitdate", date),
                ("lo_quantity", rng.gen_range(1..=50)),
            ] {
                values[lo(ssb, name)] = value;
            }
            for (column, &v) in ssb.lineorder.columns.iter_mut().zip(&values) {
                column.values.push(v);
            }
            stored.lineorder.write_row(mem, rows, &values);
            stored.lineorder.set_rows(rows + 1);
        }
        Transaction::Update => {
            let row = rng.gen_range(0..rows);
            for (name, value) in [("lo_quantity", rng.gen_range(1..=50)), ("lo_discount", rng.gen_range(0..=10))] {
                let c = lo(ssb, name);
                ssb.lineorder.columns[c].values[index(row)] = value;
                stored.lineorder.write_value(mem, row, c, value);
            }
        }
        Transaction::Delete => {
            if rows <= 1 {
                return;
            }
            let row = rng.gen_range(0..rows);
            for column in &mut ssb.lineorder.columns {
                column.values.swap_remove(index(row));
            }
            if row != rows - 1 {
                let values: Vec<u64> = ssb.lineorder.columns.iter().map(|c| c.values[index(row)]).collect();
                stored.lineorder.write_row(mem, row, &values);
            }
            stored.lineorder.set_rows(rows - 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::idlist::IdEncoding;
    use crate::join::{Algorithm, JoinOptions};
    use crate::relation::Layout;
    use crate::ssb::{expected_rows, run_query, ResultColumns};
    use nvmdb_memory::NativeMemory;
    use rand::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    #[test]
    fn the_schedule_holds_every_users_transactions_and_repeats_for_a_seed() {
        let load = UserLoad { users: 5, dml_per_user: 2 };
        let a = load.schedule(&mut Xoshiro256PlusPlus::seed_from_u64(9));
        assert_eq!(a, load.schedule(&mut Xoshiro256PlusPlus::seed_from_u64(9)));
        assert_ne!(a, load.schedule(&mut Xoshiro256PlusPlus::seed_from_u64(10)));
        for user in 0..5 {
            let mut mine: Vec<String> =
                a.iter().filter(|s| s.user == user).map(|s| format!("{:?}", s.transaction)).collect();
            let mut expected: Vec<String> = load.transactions_per_user().iter().map(|t| format!("{t:?}")).collect();
            mine.sort();
            expected.sort();
            assert_eq!(mine, expected, "user {user}");
        }
        // Users are interleaved, not run one after the other.
        assert!(a.windows(2).any(|w| w[0].user > w[1].user));
    }

    #[test]
    fn queries_after_inserts_updates_and_deletes_see_the_changed_tables() {
        let base = Ssb::generate(0.0005, &mut Xoshiro256PlusPlus::seed_from_u64(3));
        let load = UserLoad { users: 4, dml_per_user: 3 };
        for layout in [Layout::Row, Layout::Column] {
            let mut ssb = base.clone();
            let mut mem = NativeMemory::new(1 << 28);
            let mut stored = StoredSsb::load_with_spare(&mut mem, &ssb, layout, load.inserts()).unwrap();
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(4);
            let options = JoinOptions {
                algorithm: Algorithm::VirtualPartitioning,
                cache_bytes: 16 << 10,
                id_encoding: IdEncoding::Plain32,
                collect_pairs: true,
            };
            let (mut queries, mut changed) = (0, false);
            for s in load.schedule(&mut Xoshiro256PlusPlus::seed_from_u64(5)) {
                match s.transaction {
                    Transaction::Query(q) => {
                        let run = run_query(&mut mem, &ssb, &stored, q, &options, ResultColumns::Used, |_| {}).unwrap();
                        assert_eq!(run.result_rows, expected_rows(&ssb, q), "{layout:?} {q:?}");
                        changed |= run.result_rows != expected_rows(&base, q);
                        queries += 1;
                    }
                    t => apply(&mut mem, &mut ssb, &mut stored, t, &mut rng),
                }
            }
            assert_eq!(queries, 12);
            assert!(changed, "the inserts and deletes change a query's result");
            // Every change reached the stored relation: it holds the native table, row by row.
            assert_eq!(ssb.lineorder.rows(), base.lineorder.rows(), "as many inserts as deletes");
            assert_ne!(ssb.lineorder, base.lineorder);
            for row in 0..ssb.lineorder.rows() {
                for (c, column) in ssb.lineorder.columns.iter().enumerate() {
                    assert_eq!(stored.lineorder.read_value(&mut mem, row, c), column.values[index(row)]);
                }
            }
        }
    }
}
