//! Runs a generated workload through SQLite on the simulated devices.

use serde::Serialize;

use crate::config::JournalConfig;
use crate::devices::DeviceParams;
use crate::error::JournalError;
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
    /// Writes per distinct 1 KB DB page (Figure 5).
    pub writes_per_page: f64,
    /// Percentage of DB page overwrites changing at most 64 bytes (Figure 6).
    pub small_overwrite_percent: f64,
    /// The journal-area field holding the most-programmed PCM cell.
    pub hottest_field: String,
}

/// Runs `workload` under `config`, or with no journaling when `config` is `None` (the
/// journal area then stays untouched).
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
        db.execute_batch(sql).map_err(fail)?;
    }
    let before = sim.stats();
    for (i, sql) in &workload.transactions {
        dbs[*i].execute_batch(sql).map_err(fail)?;
    }
    let stats = sim.stats();
    drop(dbs);
    let profile = sim.with_shared(|s| s.devices.storage.profile().clone());
    let (hottest_field, _) = sim.with_shared(|s| s.journal.hottest_field(&s.devices));
    Ok(WorkloadRun {
        stats,
        commands: workload.commands,
        transactions_time_ns: stats.time_ns - before.time_ns,
        transactions_energy_pj: stats.energy_pj - before.energy_pj,
        transactions_pcm_energy_pj: stats.pcm_energy_pj - before.pcm_energy_pj,
        transactions_pcm_time_ns: stats.pcm_time_ns - before.pcm_time_ns,
        writes_per_page: profile.writes_per_page(),
        small_overwrite_percent: profile.small_percent(),
        hottest_field,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{generate, App};

    #[test]
    fn reuse_cuts_bit_updates_on_a_workload() {
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
    fn every_reuse_limit_and_header_copy_count_runs_every_app() {
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
