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

/// When a TPC-A run's throughput has converged ([`Tpca::run_converged`]). The measured
/// part is cut into windows of equal transactions: the first ends once it holds
/// `window_cleans` cleans and `window_transactions` transactions, and sets the length
/// of every window. Each time the windows run so far are a power of two (2, 4, 8, …),
/// the throughputs of their first and second halves (two successive windows, each
/// doubling) are compared: the run has converged when they differ by at most
/// `tolerance` of the larger. Otherwise it stops, unconverged, at the first window end
/// after its flash programs (flushes and cleaning copies) reach `max_turnovers`
/// turnovers of the flash, or after `max_transactions` transactions (for a run whose
/// flash never turns over, e.g. a buffer that holds the whole database). A window needs
/// cleans because a saturated run's time is mostly its cleans' erases: a window of one
/// or two cleans has a throughput of a few quantised values, and two such windows agree
/// by chance.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Convergence {
    /// Cleans the first window holds at least.
    pub window_cleans: u64,
    /// Transactions the first window holds at least.
    pub window_transactions: u64,
    /// Largest difference of the two halves' throughputs, as a share of the larger.
    pub tolerance: f64,
    /// Flash turnovers (flash programs / flash pages) after which an unconverged run stops.
    pub max_turnovers: f64,
    /// Transactions after which an unconverged run stops.
    pub max_transactions: u64,
}

impl Convergence {
    /// Checks that the rule can end a run: a tolerance in (0, 1), positive caps.
    pub fn validate(&self) -> Result<(), EnvyError> {
        let bad = |m: &str| Err(EnvyError::Config(format!("convergence rule: {m}")));
        if !(self.tolerance > 0.0 && self.tolerance < 1.0) {
            return bad("the tolerance must lie in (0, 1)");
        }
        if !(self.max_turnovers > 0.0 && self.max_turnovers.is_finite()) {
            return bad("the turnovers cap must be positive and finite");
        }
        if self.max_transactions == 0 || self.window_transactions == 0 {
            return bad("the window and the transactions cap must be positive");
        }
        Ok(())
    }
}

/// What ended a converged run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Ending {
    /// Two successive windows agreed within the tolerance.
    Converged,
    /// The flash turnovers reached the cap first.
    Turnovers,
    /// The transactions reached the cap first.
    Transactions,
}

impl Ending {
    /// `converged`, `turnovers` or `transactions`.
    pub fn name(self) -> &'static str {
        match self {
            Ending::Converged => "converged",
            Ending::Turnovers => "turnovers",
            Ending::Transactions => "transactions",
        }
    }
}

/// A run of [`Tpca::run_converged`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConvergedRun {
    /// The whole measured part: its throughput is the converged figure.
    pub report: TpcaReport,
    /// What ended the run.
    pub ended_by: Ending,
    /// Transactions per window (0 if the first window never ended).
    pub window_transactions: u64,
    /// Each window's throughput, per second.
    pub window_tps: Vec<f64>,
    /// Flash turnovers of the measured part: flash programs / flash pages.
    pub turnovers: f64,
}

impl ConvergedRun {
    /// The throughputs of the two successive windows compared last: the halves of the
    /// windows run (of the last even number of them when the run stopped between
    /// checks); `None` with fewer than two windows.
    pub fn halves(&self) -> Option<(f64, f64)> {
        let n = self.window_tps.len();
        let m = n / 2;
        if m == 0 {
            return None;
        }
        // Halves of equal transactions: their throughput is the harmonic mean of the windows'.
        let half = |w: &[f64]| w.len() as f64 / w.iter().map(|t| 1.0 / t).sum::<f64>();
        Some((half(&self.window_tps[n - 2 * m..n - m]), half(&self.window_tps[n - m..])))
    }
}

/// The measured part of a run so far, as [`Tpca::run_converged`]'s rule sees it after
/// each transaction.
#[derive(Debug, Clone, Copy)]
struct Progress {
    transactions: u64,
    elapsed_ns: u64,
    cleans: u64,
    flash_programs: u64,
}

/// [`Convergence`]'s windows as a run goes.
#[derive(Debug, Default)]
struct Windows {
    /// Transactions per window, once the first has ended.
    length: Option<u64>,
    /// The elapsed time at each window's end, ns.
    ends_ns: Vec<u64>,
    ended_by: Option<Ending>,
}

impl Windows {
    /// After a transaction: whether the run stops.
    fn step(&mut self, rule: &Convergence, p: &Progress, flash_pages: f64) -> bool {
        let turned_over = p.flash_programs as f64 >= rule.max_turnovers * flash_pages;
        let window_end = match self.length {
            None if p.cleans >= rule.window_cleans && p.transactions >= rule.window_transactions => {
                self.length = Some(p.transactions);
                true
            }
            None => false,
            Some(length) => p.transactions.is_multiple_of(length),
        };
        if window_end {
            self.ends_ns.push(p.elapsed_ns);
            let n = self.ends_ns.len();
            if n >= 2 && n.is_power_of_two() {
                let (mid, end) = (self.ends_ns[n / 2 - 1], self.ends_ns[n - 1]);
                let (first, second) = (1.0 / mid as f64, 1.0 / (end - mid) as f64);
                if (first - second).abs() <= rule.tolerance * first.max(second) {
                    self.ended_by = Some(Ending::Converged);
                    return true;
                }
            }
        }
        let stop = if turned_over && (window_end || self.length.is_none()) {
            Some(Ending::Turnovers)
        } else if p.transactions >= rule.max_transactions {
            Some(Ending::Transactions)
        } else {
            None
        };
        self.ended_by = stop;
        stop.is_some()
    }

    /// Each window's throughput, the window length and what ended the run.
    fn finish(self) -> (Vec<f64>, u64, Ending) {
        let length = self.length.unwrap_or(0);
        let tps = std::iter::once(0)
            .chain(self.ends_ns.iter().copied())
            .collect::<Vec<u64>>()
            .windows(2)
            .map(|w| length as f64 / ((w[1] - w[0]) as f64 * 1e-9))
            .collect();
        (tps, length, self.ended_by.expect("the run ended"))
    }
}

impl TpcaConfig {
    /// TPC-A's records: 100 B branch, teller and account records, a 50 B history record
    /// per transaction in a circular area of 100,000, 256 B tree nodes (one account; see
    /// [`accounts_to_fill`]). The experiments, `nvmdb envy run --workload tpca` and the
    /// memory estimate's test use it.
    pub const STANDARD: TpcaConfig =
        TpcaConfig { accounts: 1, record_bytes: 100, history_bytes: 50, history_records: 100_000, node_lines: 4 };
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
        if transactions == 0 {
            return Err(EnvyError::Config("TPC-A: no transaction to measure".into()));
        }
        self.run_until(tps, warmup, rng, |p| p.transactions == transactions)
    }

    /// Runs `warmup` transactions arriving as a Poisson process at `tps` per second, then
    /// measures until the throughput has converged by `rule` ([`Convergence`]).
    pub fn run_converged(
        &mut self,
        tps: f64,
        warmup: u64,
        rule: &Convergence,
        rng: &mut impl Rng,
    ) -> Result<ConvergedRun, EnvyError> {
        rule.validate()?;
        let flash_pages = self.with_envy(|e| e.config().flash_pages()) as f64;
        let mut windows = Windows::default();
        let report = self.run_until(tps, warmup, rng, |p| windows.step(rule, p, flash_pages))?;
        let (throughputs, window_transactions, ended_by) = windows.finish();
        let programs = self.with_envy(|e| e.stats().flush_programs + e.stats().clean_programs);
        Ok(ConvergedRun {
            report,
            ended_by,
            window_transactions,
            window_tps: throughputs,
            turnovers: programs as f64 / flash_pages,
        })
    }

    /// Runs `warmup` transactions arriving as a Poisson process at `tps` per second, resets
    /// the counters, then measures transactions until `done` says so after one (it sees
    /// the measured part so far).
    fn run_until(
        &mut self,
        tps: f64,
        warmup: u64,
        rng: &mut impl Rng,
        mut done: impl FnMut(&Progress) -> bool,
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
        let mut transactions = 0;
        loop {
            nvmdb_cancel::check()?;
            arrival_ns += gap(rng);
            response_ns += self.transaction(arrival_ns, rng) - arrival_ns;
            transactions += 1;
            let progress = self.with_envy(|e| {
                let s = e.stats();
                Progress {
                    transactions,
                    elapsed_ns: e.now_ns() - start_ns,
                    cleans: s.cleans,
                    flash_programs: s.flush_programs + s.clean_programs,
                }
            });
            if done(&progress) {
                break;
            }
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

    /// The system, mutably (to change its hardware with [`Envy::retime`]).
    pub fn with_envy_mut<T>(&mut self, f: impl FnOnce(&mut Envy) -> T) -> T {
        f(self.memory.0.borrow_mut().envy_mut())
    }

    /// Another database in the same state: a copy of the system (devices, clock,
    /// counters and volatile tables) and of the heap, with the trees over the copy. Runs
    /// on the copy change nothing here. For runs that start from one loaded and aged
    /// database.
    pub fn fork(&self) -> Tpca {
        let memory = SharedEnvy(Rc::new(RefCell::new(self.memory.0.borrow().clone())));
        let tables = self.tables.iter().map(|(tree, rows)| (tree.with_memory(memory.clone()), *rows)).collect();
        Tpca { memory, tables, ..*self }
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
