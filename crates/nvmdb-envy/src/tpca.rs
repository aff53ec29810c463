//! TPC-A as the paper describes it: branch, teller and account records of 100 B, each
//! table indexed by its own B+-tree living in eNVy; a history append per transaction;
//! uniform account choice; exponentially distributed arrivals at a given rate.

use std::cell::RefCell;
use std::rc::Rc;

use nvmdb_btree::{BTree, Variant};
use nvmdb_memory::{Memory, MemoryError, MemoryReport, Scalar};
use rand::Rng;
use rand_distr::{Distribution, Exp};
use serde::Serialize;

use crate::engine::Envy;
use crate::error::EnvyError;
use crate::memory::EnvyMemory;

/// One eNVy memory shared by the three trees and the record tables.
#[derive(Debug, Clone)]
pub struct SharedEnvy(Rc<RefCell<EnvyMemory>>);

impl Memory for SharedEnvy {
    fn read_bytes(&mut self, addr: u64, buf: &mut [u8]) {
        self.0.borrow_mut().read_bytes(addr, buf);
    }
    fn write_bytes(&mut self, addr: u64, data: &[u8]) {
        self.0.borrow_mut().write_bytes(addr, data);
    }
    #[inline]
    fn load<T: Scalar>(&mut self, addr: u64) -> T {
        self.0.borrow_mut().load(addr)
    }
    fn alloc(&mut self, size: u64, align: u64) -> Result<u64, MemoryError> {
        self.0.borrow_mut().alloc(size, align)
    }
    fn free(&mut self, addr: u64, size: u64) {
        self.0.borrow_mut().free(addr, size);
    }
    fn report(&self) -> MemoryReport {
        self.0.borrow().report()
    }
}

/// TPC-A parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TpcaConfig {
    /// Account records (TPC-A: 100,000 per branch; branches and tellers follow).
    pub accounts: u64,
    /// Record size, bytes (TPC-A: 100).
    pub record_bytes: u64,
    /// History record size, bytes (TPC-A: 50).
    pub history_bytes: u64,
    /// History records kept (a circular area; TPC-A keeps 90 days, far beyond a run).
    pub history_records: u64,
    /// B+-tree node size in 64 B lines (4: 256 B, one eNVy page).
    pub node_lines: u32,
}

impl TpcaConfig {
    /// Branches (one per 100,000 accounts, at least one).
    pub fn branches(&self) -> u64 {
        self.accounts.div_ceil(100_000).max(1)
    }
    /// Tellers (ten per branch).
    pub fn tellers(&self) -> u64 {
        10 * self.branches()
    }
    /// Bytes the loaded database needs, about: records, history, and tree nodes at
    /// 70 % fill (16 B per entry).
    pub fn bytes_needed(&self) -> u64 {
        let records = self.accounts + self.tellers() + self.branches();
        records * self.record_bytes + self.history_records * self.history_bytes + records * 16 * 10 / 7 * 11 / 10
    }
}

/// What a run measured.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TpcaReport {
    /// Transactions measured.
    pub transactions: u64,
    /// Offered rate, per second.
    pub offered_tps: f64,
    /// Completed transactions per second of simulated time.
    pub throughput_tps: f64,
    /// Mean host read latency, ns.
    pub mean_read_ns: f64,
    /// Mean host write latency, ns.
    pub mean_write_ns: f64,
    /// Mean transaction response time, ns.
    pub mean_response_ns: f64,
    /// Flash cleaning cost.
    pub cleaning_cost: f64,
    /// Pages flushed from the buffer per second of simulated time.
    pub flushed_pages_per_s: f64,
    /// Flash programs (flush and clean) per second of simulated time.
    pub programs_per_s: f64,
}

/// Accounts that fill `share` of a `logical_bytes` address space (records, history of
/// `history_records`, and trees).
pub fn accounts_to_fill(logical_bytes: u64, share: f64, template: &TpcaConfig) -> u64 {
    let probe = TpcaConfig { accounts: 1_000_000, ..*template };
    let history = template.history_records * template.history_bytes;
    let per_account = (probe.bytes_needed() - history) as f64 / 1e6;
    ((logical_bytes as f64 * share - history as f64) / per_account).max(1.0) as u64
}

/// A loaded TPC-A database in eNVy.
#[derive(Debug)]
pub struct Tpca {
    memory: SharedEnvy,
    tables: Vec<(BTree<SharedEnvy>, u64)>,
    history: u64,
    config: TpcaConfig,
    next_transaction: u64,
    /// One past the database's last byte.
    end: u64,
}

impl Tpca {
    /// Loads the database: zeroed records, bulk-loaded trees (70 % full) and a zeroed
    /// history area, all written into `envy`.
    pub fn load(envy: Envy, config: &TpcaConfig, rng: &mut impl Rng) -> Result<Tpca, EnvyError> {
        let memory = SharedEnvy(Rc::new(RefCell::new(EnvyMemory::new(envy))));
        let fail = |e: String| EnvyError::Config(format!("TPC-A: {e}"));
        let mut m = memory.clone();
        let zeroed = |m: &mut SharedEnvy, bytes: u64| -> Result<u64, EnvyError> {
            let base = m.alloc(bytes, 64).map_err(|e| fail(e.to_string()))?;
            let chunk = vec![0u8; 1 << 16];
            for at in (0..bytes).step_by(chunk.len()) {
                m.write_bytes(base + at, &chunk[..(bytes - at).min(chunk.len() as u64) as usize]);
            }
            Ok(base)
        };
        let mut tables = Vec::new();
        for rows in [config.branches(), config.tellers(), config.accounts] {
            let base = zeroed(&mut m, rows * config.record_bytes)?;
            let pairs = (0..rows).map(|id| (id, base + id * config.record_bytes));
            let tree = BTree::bulk_load(m.clone(), Variant::Sorted, config.node_lines, pairs, 0.7, rng)
                .map_err(|e| fail(e.to_string()))?;
            tables.push((tree, rows));
        }
        let history_bytes = config.history_records * config.history_bytes;
        let history = zeroed(&mut m, history_bytes)?;
        let end = history + history_bytes;
        Ok(Tpca { memory, tables, history, config: *config, next_transaction: 0, end })
    }

    /// Ages the flash as uniform updates would: `updates` rewrites of one byte with its
    /// own value on pages of the database drawn uniformly (each a copy-on-write that
    /// leaves the data unchanged), then waits until the flash is idle.
    pub fn age(&mut self, updates: u64, rng: &mut impl Rng) {
        let mut memory = self.memory.0.borrow_mut();
        let page = u64::from(memory.envy().config().page_bytes);
        let pages = self.end.div_ceil(page);
        for _ in 0..updates {
            let addr = rng.gen_range(0..pages) * page;
            let byte: u8 = memory.load(addr);
            memory.store(addr, byte);
        }
        let idle = memory.envy().flash_idle_at_ns();
        memory.envy_mut().advance_to(idle);
    }

    fn now_ns(&self) -> u64 {
        self.memory.0.borrow().envy().now_ns()
    }

    /// Runs one transaction arriving at `arrival_ns`; returns its completion time.
    fn transaction(&mut self, arrival_ns: u64, rng: &mut impl Rng) -> u64 {
        self.memory.0.borrow_mut().envy_mut().advance_to(arrival_ns);
        let delta = rng.gen_range(1..=999_999u64);
        for (tree, rows) in self.tables.iter_mut() {
            let id = rng.gen_range(0..*rows);
            let addr = tree.get(id).expect("loaded ids are in their tree");
            let mem = tree.memory_mut();
            let balance: u64 = mem.load(addr);
            mem.store(addr, balance.wrapping_add(delta));
        }
        let i = self.next_transaction;
        self.next_transaction += 1;
        let mut record = [i.to_le_bytes(), delta.to_le_bytes()].concat();
        record.resize(self.config.history_bytes as usize, 0);
        let at = self.history + (i % self.config.history_records) * self.config.history_bytes;
        self.memory.write_bytes(at, &record);
        self.now_ns()
    }

    /// Runs `warmup` then `transactions` transactions arriving as a Poisson process at
    /// `tps` per second, measuring the second part. A stop asked for ([`nvmdb_cancel`])
    /// ends it before its next transaction with [`EnvyError::Interrupted`].
    pub fn run(
        &mut self,
        tps: f64,
        warmup: u64,
        transactions: u64,
        rng: &mut impl Rng,
    ) -> Result<TpcaReport, EnvyError> {
        let arrivals = Exp::new(tps).map_err(|e| EnvyError::Config(format!("TPC-A rate {tps}: {e}")))?;
        let mut arrival_ns = self.now_ns();
        let gap = |rng: &mut dyn rand::RngCore| (arrivals.sample(rng) * 1e9) as u64;
        for _ in 0..warmup {
            nvmdb_cancel::check()?;
            arrival_ns += gap(rng);
            self.transaction(arrival_ns, rng);
        }
        self.memory.0.borrow_mut().envy_mut().reset_stats();
        // The measured part starts when the host can start its first transaction: after
        // the warm-up's last one, which under saturation finishes long after it arrived.
        let start_ns = self.now_ns().max(arrival_ns);
        let mut response_ns = 0;
        for _ in 0..transactions {
            nvmdb_cancel::check()?;
            arrival_ns += gap(rng);
            response_ns += self.transaction(arrival_ns, rng) - arrival_ns;
        }
        let elapsed_s = (self.now_ns() - start_ns) as f64 * 1e-9;
        let memory = self.memory.0.borrow();
        let stats = memory.envy().stats();
        Ok(TpcaReport {
            transactions,
            offered_tps: tps,
            throughput_tps: transactions as f64 / elapsed_s,
            mean_read_ns: stats.mean_read_ns(),
            mean_write_ns: stats.mean_write_ns(),
            mean_response_ns: response_ns as f64 / transactions as f64,
            cleaning_cost: stats.cleaning_cost(),
            flushed_pages_per_s: stats.flush_programs as f64 / elapsed_s,
            programs_per_s: (stats.flush_programs + stats.clean_programs) as f64 / elapsed_s,
        })
    }

    /// The sum of the balances of each table (branches, tellers, accounts), read through
    /// the trees. Every transaction adds the same amount to one row of each, so the three
    /// sums are equal (wrapping).
    pub fn balance_sums(&mut self) -> [u64; 3] {
        let mut sums = [0u64; 3];
        for ((tree, rows), sum) in self.tables.iter_mut().zip(&mut sums) {
            for id in 0..*rows {
                let addr = tree.get(id).expect("loaded ids are in their tree");
                *sum = sum.wrapping_add(tree.memory_mut().load::<u64>(addr));
            }
        }
        sums
    }

    /// The system, for its counters.
    pub fn with_envy<T>(&self, f: impl FnOnce(&Envy) -> T) -> T {
        f(self.memory.0.borrow().envy())
    }

    /// Drops the database and returns the system.
    pub fn into_envy(self) -> Envy {
        let Tpca { memory, tables, .. } = self;
        drop(tables);
        Rc::try_unwrap(memory.0).expect("the trees are dropped").into_inner().into_envy()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::EnvyConfig;
    use rand::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    #[test]
    fn balances_add_up_and_light_load_keeps_pace() {
        let tpca =
            TpcaConfig { accounts: 2_000, record_bytes: 100, history_bytes: 50, history_records: 1_000, node_lines: 4 };
        let mut config = EnvyConfig::small(16, 256, 64, 0.5);
        // Small segments: a 1994 erase (1.6 s) per 256 pages would saturate the flash at
        // this rate, and this test is about the driver.
        config.flash.erase_ns = 1_000_000;
        config.logical_pages = tpca.bytes_needed().div_ceil(256) + 64;
        let envy = Envy::format(config).unwrap();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let mut db = Tpca::load(envy, &tpca, &mut rng).unwrap();
        db.age(2 * config.flash_pages(), &mut rng);
        let report = db.run(1_000.0, 200, 500, &mut rng).unwrap();
        let sums = db.balance_sums();
        let db_erases = db.with_envy(|e| e.stats().erases);
        assert!(sums[0] != 0 && sums[0] == sums[1] && sums[1] == sums[2], "{sums:?}");
        let envy = db.into_envy();
        // Under light load every transaction finishes near its arrival, so the
        // throughput is the offered rate (within the randomness of 500 arrivals).
        assert!((report.throughput_tps / 1_000.0 - 1.0).abs() < 0.15, "{report:?}");
        assert!(report.mean_read_ns > 0.0 && report.mean_write_ns > 0.0);
        // The balances above were read back after cleaning had moved pages.
        assert!(db_erases > 0, "the run must clean");
        let mut envy = envy;
        envy.check_invariants();
    }
}
