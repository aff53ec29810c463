//! Runs a generated workload through SQLite on the simulated devices.

use nvmdb_device::PcmStats;
use serde::Serialize;

use crate::config::JournalConfig;
use crate::devices::{BackgroundPower, DeviceParams};
use crate::error::JournalError;
use crate::layout::Field;
use crate::sim::{RunStats, Simulation};
use crate::workload::Workload;

/// What one workload run measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorkloadRun {
    /// Device counters over the whole run (setup included).
    pub stats: RunStats,
    /// SQLite commands in the measured transactions.
    pub commands: u64,
    /// Simulated device time of the measured transactions, ns.
    pub transactions_time_ns: u64,
    /// Device energy of the measured transactions, pJ.
    pub transactions_energy_pj: u64,
    /// The PCM's part of `transactions_energy_pj`, pJ.
    pub transactions_pcm_energy_pj: u64,
    /// The PCM's part of `transactions_time_ns`, ns.
    pub transactions_pcm_time_ns: u64,
    /// The PCM counters of the measured transactions per journal structure, in
    /// [`Field::ALL`] order.
    pub transactions_pcm_by_field: [PcmStats; Field::ALL.len()],
    /// Writes per distinct 1 KB DB page (Figure 5).
    pub writes_per_page: f64,
    /// Percentage of DB page overwrites changing at most 64 bytes (Figure 6).
    pub small_overwrite_percent: f64,
    /// The journal-area field holding the most-programmed PCM cell.
    pub hottest_field: String,
}

impl WorkloadRun {
    /// The PCM's background energy over the measured transactions, pJ: `power`'s busy
    /// level for the PCM's time, its idle level for the rest of the device time.
    pub fn transactions_pcm_background_pj(&self, power: &BackgroundPower) -> u64 {
        power.energy_pj(self.transactions_pcm_time_ns, self.transactions_time_ns)
    }
}

/// Runs `workload` under `config`, or with no journaling when `config` is `None` (the
/// journal area then stays untouched). A stop asked for ([`nvmdb_cancel`]) ends it
/// before its next statement (a setup script or a transaction) with
/// [`JournalError::Interrupted`].
pub fn run_workload(
    config: Option<JournalConfig>,
    workload: &Workload,
    params: &DeviceParams,
    seed: u64,
) -> Result<WorkloadRun, JournalError> {
    let sim = Simulation::new(config.unwrap_or(JournalConfig::RR_S2X), params, seed)?;
    let dbs =
        workload.db_files.iter().map(|name| sim.open_with(name, config.is_some())).collect::<Result<Vec<_>, _>>()?;
    let fail = |e: rusqlite::Error| {
        let vfs = sim.with_shared(|s| s.take_error());
        JournalError::Sqlite(match vfs {
            Some(v) => format!("{e} ({v})"),
            None => e.to_string(),
        })
    };
    for (db, sql) in dbs.iter().zip(&workload.setup) {
        nvmdb_cancel::check()?;
        db.execute_batch(sql).map_err(fail)?;
    }
    let start = Mark::now(&sim);
    for (i, sql) in &workload.transactions {
        nvmdb_cancel::check()?;
        dbs[*i].execute_batch(sql).map_err(fail)?;
    }
    Ok(WorkloadRun::measure(&sim, &start, workload.commands))
}

/// The counters of a simulation when its measured transactions began.
#[derive(Debug, Clone)]
pub struct Mark {
    stats: RunStats,
    fields: [PcmStats; Field::ALL.len()],
}

impl Mark {
    /// The counters of `sim` now.
    pub fn now(sim: &Simulation) -> Mark {
        Mark { stats: sim.stats(), fields: sim.with_shared(|s| *s.devices.pcm_by_field()) }
    }
}

impl WorkloadRun {
    /// The figures of a run on `sim` whose measured transactions, `commands` SQLite
    /// commands, began at `start`.
    pub fn measure(sim: &Simulation, start: &Mark, commands: u64) -> WorkloadRun {
        let (before, fields_before) = (&start.stats, &start.fields);
        let stats = sim.stats();
        let fields = sim.with_shared(|s| *s.devices.pcm_by_field());
        let profile = sim.with_shared(|s| s.devices.storage.profile().clone());
        let (hottest_field, _) = sim.with_shared(|s| s.journal.hottest_field(&s.devices));
        WorkloadRun {
            stats,
            commands,
            transactions_time_ns: stats.time_ns - before.time_ns,
            transactions_energy_pj: stats.energy_pj - before.energy_pj,
            transactions_pcm_energy_pj: stats.pcm_energy_pj - before.pcm_energy_pj,
            transactions_pcm_time_ns: stats.pcm_time_ns - before.pcm_time_ns,
            transactions_pcm_by_field: std::array::from_fn(|i| fields[i].since(&fields_before[i])),
            writes_per_page: profile.writes_per_page(),
            small_overwrite_percent: profile.small_percent(),
            hottest_field,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{generate, App};

    /// SQLite draws journal nonces from its process-wide PRNG, which every run seeds: the
    /// tests here, which run SQLite, hold this lock so that no other run re-seeds it
    /// midway (one compares two runs' bit counts exactly).
    static SQLITE_PRNG: std::sync::Mutex<()> = std::sync::Mutex::new(());

    fn serial() -> std::sync::MutexGuard<'static, ()> {
        SQLITE_PRNG.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    #[test]
    fn reuse_cuts_bit_updates_on_a_workload() {
        let _serial = serial();
        let w = generate(App::Twitter, 1, 3).unwrap();
        let rr = run_workload(Some(JournalConfig::RR_S2X), &w, &DeviceParams::PAPER, 1).unwrap();
        let ru = run_workload(Some(JournalConfig::RU20_S2X_WH64), &w, &DeviceParams::PAPER, 1).unwrap();
        let off = run_workload(None, &w, &DeviceParams::PAPER, 1).unwrap();
        assert!(ru.stats.total_bit_updates < rr.stats.total_bit_updates, "{ru:?} vs {rr:?}");
        assert_eq!(off.stats.total_bit_updates, 0);
        assert!(off.transactions_time_ns < rr.transactions_time_ns);
        assert!(rr.writes_per_page > 1.0 && rr.small_overwrite_percent > 0.0);
    }

    #[test]
    fn a_program_budget_changes_only_the_pcm_time_and_cuts_more_of_it_under_reuse() {
        let _serial = serial();
        let w = generate(App::KakaoTalk, 1, 3).unwrap();
        let run = |name: &str, params: &DeviceParams| {
            run_workload(Some(JournalConfig::parse(name).unwrap()), &w, params, 1).unwrap()
        };
        let mut pcm_ns = Vec::new();
        for name in ["RR-S2X", "RU20-S2X-WH64"] {
            let (fixed, budget) = (run(name, &DeviceParams::PAPER), run(name, &DeviceParams::PAPER_PROGRAM_BUDGET));
            let counts = |r: &WorkloadRun| {
                let s = r.stats;
                (s.total_bit_updates, s.max_bit_updates, s.device_writes, s.energy_pj, r.transactions_energy_pj)
            };
            assert_eq!(counts(&fixed), counts(&budget), "{name}");
            // With 64-bit Flip-N-Write a 128 B step programs at most 16 × 33 cells: 9
            // iterations of 444 ns, against the fixed 7.1 µs.
            assert!(budget.transactions_pcm_time_ns < fixed.transactions_pcm_time_ns, "{name}");
            let flash = |r: &WorkloadRun| r.transactions_time_ns - r.transactions_pcm_time_ns;
            assert_eq!(flash(&fixed), flash(&budget), "{name}: the DB file's flash time");
            pcm_ns.push((fixed.transactions_pcm_time_ns as f64, budget.transactions_pcm_time_ns as f64));
        }
        let cut = |(rr, ru): (f64, f64)| 1.0 - ru / rr;
        let (fixed_cut, budget_cut) = (cut((pcm_ns[0].0, pcm_ns[1].0)), cut((pcm_ns[0].1, pcm_ns[1].1)));
        assert!(budget_cut > fixed_cut, "fewer cells programmed save more time: {budget_cut} vs {fixed_cut}");
    }

    #[test]
    fn the_per_structure_counters_add_up_to_the_pcm_counters() {
        let _serial = serial();
        let w = generate(App::Facebook, 1, 3).unwrap();
        for name in ["RR", "RU20-S2X-WH64", "RU2-S2X"] {
            let config = JournalConfig::parse(name).unwrap();
            let run = run_workload(Some(config), &w, &DeviceParams::PAPER, 1).unwrap();
            let fields = &run.transactions_pcm_by_field;
            let sum = |f: &dyn Fn(&PcmStats) -> u64| fields.iter().map(f).sum::<u64>();
            let metrics = nvmdb_device::PcmMetrics::CIDR2011;
            assert_eq!(sum(&|s| s.energy_pj(&metrics) + s.storage_energy_pj), run.transactions_pcm_energy_pj);
            assert_eq!(sum(&|s| s.storage_time_ns), run.transactions_pcm_time_ns);
            let fresh = fields[Field::PageImageFresh.index()];
            assert!(fresh.bits_written > 0 && fresh.lines_written > 0, "{name}: {fresh:?}");
            // Only reuse writes a page image over the same page's older one.
            let reused = fields[Field::PageImageReused.index()];
            assert_eq!(reused.lines_written > 0, name != "RR", "{name}: {reused:?}");
            let copies = fields[Field::FrameCopy.index()];
            // RU2 reaches its reuse limit within the run; RR never reuses.
            assert_eq!(copies.lines_written > 0, name == "RU2-S2X", "{name}: {copies:?}");
            if config.s2 {
                assert_eq!(fields[Field::StateBits.index()].bits_written, 0, "S2 keeps presence bits in DRAM");
            } else {
                assert!(fields[Field::StateBits.index()].bits_written > 0, "{name}");
            }
        }
    }

    #[test]
    fn every_reuse_limit_and_header_copy_count_runs_every_app() {
        let _serial = serial();
        // Small limits copy frames often and garbage collection meets journals being
        // begun; every combination must keep its invariants.
        for app in App::ALL {
            let w = generate(app, 2, 9).unwrap();
            for name in ["RU2-S2X", "RU2-S2X-WH2", "RU5-S2X-WH4", "RU2-S2X-WH4-INV25", "RU50-S2X-WH128", "RU1"] {
                let config = JournalConfig::parse(name).unwrap();
                let run = run_workload(Some(config), &w, &DeviceParams::PAPER, 1).unwrap();
                assert!(run.stats.total_bit_updates > 0, "{name} on {app:?}");
            }
        }
    }
}
