//! TPC-A as the paper describes it: branch, teller and account records of 100 B, each
//! table indexed by its own B+-tree living in eNVy; a history append per transaction;
//! uniform account choice; exponentially distributed arrivals at a given rate.

use std::cell::RefCell;
use std::rc::Rc;

use nvmdb_btree::{BTree, Variant};
use nvmdb_memory::{Memory, MemoryError, MemoryReport};
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
    /// Transaction arrival rate, per second.
    pub tps: f64,
    /// Transactions run before measuring, to reach steady cleaning.
    pub warmup_transactions: u64,
    /// Transactions measured.
    pub transactions: u64,
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

/// Loads the TPC-A database into `envy` and runs it; returns the report and the system.
pub fn run(envy: Envy, config: &TpcaConfig, rng: &mut impl Rng) -> Result<(TpcaReport, Envy), EnvyError> {
    let memory = SharedEnvy(Rc::new(RefCell::new(EnvyMemory::new(envy))));
    let fail = |e: String| EnvyError::Config(format!("TPC-A: {e}"));
    let mut tables = Vec::new();
    for rows in [config.branches(), config.tellers(), config.accounts] {
        let mut m = memory.clone();
        let base = m.alloc(rows * config.record_bytes, 64).map_err(|e| fail(e.to_string()))?;
        let pairs = (0..rows).map(|id| (id, base + id * config.record_bytes));
        let tree = BTree::bulk_load(m, Variant::Sorted, config.node_lines, pairs, 0.7, rng)
            .map_err(|e| fail(e.to_string()))?;
        tables.push((tree, rows));
    }
    let mut m = memory.clone();
    let history = m.alloc(config.history_records * config.history_bytes, 64).map_err(|e| fail(e.to_string()))?;
    let arrivals = Exp::new(config.tps).map_err(|e| fail(e.to_string()))?;
    let mut arrival_s = memory.borrow_now() as f64 * 1e-9;
    let mut run_one = |i: u64, rng: &mut dyn rand::RngCore, response_ns: &mut u64| {
        arrival_s += arrivals.sample(rng);
        let arrival_ns = (arrival_s * 1e9) as u64;
        memory.0.borrow_mut().envy_mut().advance_to(arrival_ns);
        let delta = rng.gen_range(1..=999_999u64);
        for (tree, rows) in tables.iter_mut() {
            let id = rng.gen_range(0..*rows);
            let addr = tree.get(id).expect("loaded ids are in their tree");
            let mem = tree.memory_mut();
            let balance: u64 = mem.load(addr);
            mem.store(addr, balance.wrapping_add(delta));
        }
        let record = [i.to_le_bytes(), delta.to_le_bytes()].concat();
        let mut record = record;
        record.resize(config.history_bytes as usize, 0);
        m.write_bytes(history + (i % config.history_records) * config.history_bytes, &record);
        *response_ns += memory.borrow_now() - arrival_ns;
        arrival_ns
    };
    let mut ignored = 0;
    for i in 0..config.warmup_transactions {
        run_one(i, rng, &mut ignored);
    }
    memory.0.borrow_mut().envy_mut().reset_stats();
    let mut response_ns = 0;
    let mut first_arrival_ns = None;
    for i in 0..config.transactions {
        let a = run_one(config.warmup_transactions + i, rng, &mut response_ns);
        first_arrival_ns.get_or_insert(a);
    }
    drop(tables);
    drop(m);
    let envy = Rc::try_unwrap(memory.0).expect("the trees are dropped").into_inner().into_envy();
    let elapsed_s = (envy.now_ns() - first_arrival_ns.unwrap_or(0)) as f64 * 1e-9;
    let stats = envy.stats();
    let report = TpcaReport {
        transactions: config.transactions,
        offered_tps: config.tps,
        throughput_tps: config.transactions as f64 / elapsed_s,
        mean_read_ns: stats.mean_read_ns(),
        mean_write_ns: stats.mean_write_ns(),
        mean_response_ns: response_ns as f64 / config.transactions as f64,
        cleaning_cost: stats.cleaning_cost(),
        flushed_pages_per_s: stats.flush_programs as f64 / elapsed_s,
        programs_per_s: (stats.flush_programs + stats.clean_programs) as f64 / elapsed_s,
    };
    Ok((report, envy))
}

impl SharedEnvy {
    fn borrow_now(&self) -> u64 {
        self.0.borrow().envy().now_ns()
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
        let tpca = TpcaConfig {
            accounts: 2_000,
            record_bytes: 100,
            history_bytes: 50,
            history_records: 1_000,
            tps: 1_000.0,
            warmup_transactions: 200,
            transactions: 500,
            node_lines: 4,
        };
        let mut config = EnvyConfig::small(16, 256, 64, 0.5);
        // Small segments: a 1994 erase (1.6 s) per 256 pages would saturate the flash at
        // this rate, and this test is about the driver.
        config.flash.erase_ns = 1_000_000;
        config.logical_pages = tpca.bytes_needed().div_ceil(256) + 64;
        let envy = Envy::format(config).unwrap();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let (report, envy) = run(envy, &tpca, &mut rng).unwrap();
        // Under light load every transaction finishes near its arrival, so the
        // throughput is the offered rate (within the randomness of 500 arrivals).
        assert!((report.throughput_tps / tpca.tps - 1.0).abs() < 0.15, "{report:?}");
        assert!(report.mean_read_ns > 0.0 && report.mean_write_ns > 0.0);
        let mut envy = envy;
        envy.check_invariants();
    }
}
