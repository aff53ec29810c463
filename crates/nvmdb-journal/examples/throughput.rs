//! Benchmark: SQLite transactions per wall-clock second through the PCM-journal VFS
//! (every bit, joule and worn cell counted), against SQLite on an in-memory database
//! with no accounting. Wall-clock figures for BENCHMARKS.md; no test asserts on them.
//!
//! `cargo run --release -p nvmdb-journal --example throughput [ROUNDS] [vfs|memory]`
//!
//! With `vfs` or `memory` only that side runs (for an instruction-count profile of one
//! side under `valgrind --tool=callgrind`, which is independent of machine load).

use std::time::Instant;

use nvmdb_journal::rusqlite::Connection;
use nvmdb_journal::{generate, App, DeviceParams, JournalConfig, Simulation};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let rounds: u32 = std::env::args().nth(1).map_or(Ok(5), |a| a.parse())?;
    let side = std::env::args().nth(2).unwrap_or_default();
    if !["", "vfs", "memory"].contains(&side.as_str()) {
        return Err(format!("second argument {side:?}: expected vfs or memory").into());
    }
    let (run_vfs, run_memory) = (side != "memory", side != "vfs");
    let workload = generate(App::Twitter, 4, 1)?;
    let transactions = workload.transactions.len() as f64 * f64::from(rounds);
    for config in ["RR-S2X", "RU20-S2X-WH64"] {
        let start = Instant::now();
        for _ in 0..if run_vfs { rounds } else { 0 } {
            let sim = Simulation::new(JournalConfig::parse(config)?, &DeviceParams::PAPER, 1)?;
            let dbs = workload.db_files.iter().map(|n| sim.open(n)).collect::<Result<Vec<_>, _>>()?;
            for (db, sql) in dbs.iter().zip(&workload.setup) {
                db.execute_batch(sql)?;
            }
            for (i, sql) in &workload.transactions {
                dbs[*i].execute_batch(sql)?;
            }
        }
        let pcm = transactions / start.elapsed().as_secs_f64();
        let start = Instant::now();
        for _ in 0..if run_memory { rounds } else { 0 } {
            let dbs = workload.db_files.iter().map(|_| Connection::open_in_memory()).collect::<Result<Vec<_>, _>>()?;
            for db in &dbs {
                db.pragma_update(None, "page_size", 1024)?;
            }
            for (db, sql) in dbs.iter().zip(&workload.setup) {
                db.execute_batch(sql)?;
            }
            for (i, sql) in &workload.transactions {
                dbs[*i].execute_batch(sql)?;
            }
        }
        let memory = transactions / start.elapsed().as_secs_f64();
        if run_vfs && run_memory {
            println!(
                "{config:<14} PCM-journal VFS {pcm:>9.0} tx/s   in-memory SQLite {memory:>9.0} tx/s   overhead {:.2}x",
                memory / pcm
            );
        }
    }
    Ok(())
}
