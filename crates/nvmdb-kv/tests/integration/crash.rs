//! A power cut before every device write of a short workload, for every engine, on a
//! device small enough that the FTL collects garbage (its copies and erases are cut
//! points too): after recovery nothing synced is lost, the tree passes its invariant
//! check, and the state is exactly the synced state (the contract allows whole unsynced
//! operations too; the engine keeps none). The
//! operations after it then run on the recovered engine, are cut a second time a few
//! writes in, recovered again and checked the same way, and run to the end, which must be
//! the model's final state. Each recovery is also cut before every device write it makes,
//! and recovered again.

use crate::common::{contents, engine_apply, model_apply, small_config, Model, Op};
use nvmdb_kv::{Devices, Engine, EngineConfig, EngineKind, KvError};
use rand::{Rng, SeedableRng};

/// Keys below `len / 3`; a sync every ninth operation; in the middle third deletes
/// sweeping up the keys, which takes nine in ten of them (leaves empty and merge, pages
/// are freed, the root shrinks), around it mostly inserts and updates (the last third
/// re-inserts into freed pages).
fn workload(seed: u64, len: usize) -> Vec<Op> {
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
    (0..len)
        .map(|i| {
            if i % 9 == 8 {
                return Op::Sync;
            }
            let key = rng.gen_range(0..len as u32 / 3);
            let value = vec![b'a' + (i % 26) as u8; rng.gen_range(1..=64)];
            if (len / 3..2 * len / 3).contains(&i) {
                return Op::Delete((i - len / 3) as u32);
            }
            match rng.gen_range(0..10) {
                0..=5 => Op::Insert(key, value),
                6 | 7 => Op::Update(key, value),
                8 => Op::Delete(key),
                _ if key % 2 == 0 => Op::Get(key),
                _ => Op::Scan(key, key + 20),
            }
        })
        .collect()
}

/// The model's state after each prefix of `ops`.
fn prefix_states(ops: &[Op]) -> Vec<Model> {
    let mut model = Model::new();
    let mut states = vec![model.clone()];
    for op in ops {
        model_apply(&mut model, op);
        states.push(model.clone());
    }
    states
}

/// Runs `ops[from..]` until the power is cut; returns the length of the prefix of `ops`
/// ending at the last completed sync (at least `from`), and the index of the operation
/// the cut interrupted (`ops.len()` when none was).
fn run_until_cut(engine: &mut Engine, ops: &[Op], from: usize) -> (usize, usize) {
    let mut synced = from;
    for (i, op) in ops.iter().enumerate().skip(from) {
        match engine_apply(engine, op) {
            Ok(_) if *op == Op::Sync => synced = i + 1,
            Ok(_) => {}
            Err(KvError::PowerCut) => return (synced, i),
            Err(e) => panic!("operation {i}: {e}"),
        }
    }
    (synced, ops.len())
}

/// Checks a recovered engine's tree and that it holds exactly the state after the first
/// `synced` operations (the last completed sync: the contract allows whole unsynced
/// operations too, but the engine keeps none).
fn check_recovered(engine: &mut Engine, states: &[Model], synced: usize, what: &str) {
    engine.check().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(contents(engine) == states[synced], "{what}: the state after recovery is not the synced state");
}

/// The small configuration on a device small enough that the FTL collects garbage
/// within the workload: image slots for 24 tree pages behind the FTL. `ipl-p` writes
/// images to flash only when a block merges, so it gets 512 B log areas (more merges)
/// and slots for 8 tree pages.
fn small_device(kind: EngineKind) -> EngineConfig {
    let mut config = small_config(kind);
    config.capacity_pages = 24;
    if kind == EngineKind::IplP {
        config.capacity_pages = 8;
        config.log_area_bytes = 512;
    }
    config
}

/// Runs `ops` with the power cut before device write `cut`; returns the length of the
/// synced prefix and the devices after the loss.
fn cut_run(config: &EngineConfig, ops: &[Op], cut: u64) -> (usize, Devices) {
    let mut engine = Engine::new(config.clone()).unwrap();
    engine.cut_power_before(cut);
    let (synced, failed_at) = run_until_cut(&mut engine, ops, 0);
    assert!(failed_at < ops.len(), "{:?}: the cut before write {cut} was never reached", config.kind);
    (synced, engine.crash())
}

/// Cut points tried for one engine.
struct Tried {
    /// Cuts in the workload (every device write of the uncut run).
    workload: u64,
    /// Cuts in the recovery after one of those (every device write it made).
    recovery: u64,
    /// Recoveries that merged a block's log (`ipl`: sectors written after the last
    /// commit), and so were cut inside a merge too.
    merging_recoveries: u64,
    /// Flash erases (garbage collection) in the uncut run.
    erases: u64,
    /// Tree pages in the uncut run: the most, and the most freed below that by deletes.
    pages_max: u32,
    pages_freed: u32,
}

fn crash_every_write(kind: EngineKind) -> Tried {
    let config = small_device(kind);
    let ops = workload(11, 600);
    let states = prefix_states(&ops);
    let mut clean = Engine::new(config.clone()).unwrap();
    let (mut pages_max, mut pages_freed) = (0, 0);
    for op in &ops {
        engine_apply(&mut clean, op).unwrap();
        pages_max = pages_max.max(clean.pages());
        pages_freed = pages_freed.max(pages_max - clean.pages());
    }
    assert!(pages_freed > 1, "{kind:?}: the deletes freed {pages_freed} pages");
    let writes = clean.device_writes();
    let erases = clean.stats().flash_erases;
    assert!(writes > 50, "{kind:?}: only {writes} device writes");
    if kind.has_flash() {
        assert!(erases > 0, "{kind:?}: the FTL never collected garbage, so no cut fell inside it");
    }
    let (mut recovery_cuts, mut merging_recoveries) = (0, 0);
    for cut in 0..writes {
        let (synced, mut devices) = cut_run(&config, &ops, cut);
        let before = devices.device_writes();
        let mut engine = Engine::open(config.clone(), devices).unwrap();
        let recovery_writes = engine.device_writes() - before;
        merging_recoveries += u64::from(engine.stats().merges > 0);
        check_recovered(&mut engine, &states, synced, &format!("{kind:?} cut {cut}"));
        let k = synced;
        // A second cut, a few writes into the rest, then the rest again: recovery must also
        // hold on what a recovered engine writes (dead log sectors, reused slots).
        let second = engine.device_writes() + 1 + cut % 13;
        engine.cut_power_before(second);
        let (synced, _) = run_until_cut(&mut engine, &ops, k);
        let mut engine = Engine::open(config.clone(), engine.crash()).unwrap();
        check_recovered(&mut engine, &states, synced, &format!("{kind:?} cuts {cut}, then"));
        let k = synced;
        for op in &ops[k..] {
            engine_apply(&mut engine, op).unwrap();
        }
        engine.check().unwrap_or_else(|e| panic!("{kind:?} cut {cut}, after the rest: {e}"));
        assert_eq!(contents(&mut engine), states[ops.len()], "{kind:?} cut {cut}: the rest of the ops");
        // A cut at every device write of the recovery itself (an `ipl` block's merge and
        // the FTL's garbage collection it causes), then a recovery that runs to its end.
        for in_recovery in 0..recovery_writes {
            let (synced, mut devices) = cut_run(&config, &ops, cut);
            let at = devices.device_writes() + in_recovery;
            devices.cut_power_before(at);
            let failure = Engine::recover(config.clone(), devices).expect_err("the cut falls inside recovery");
            assert_eq!(failure.error, KvError::PowerCut, "{kind:?} cut {cut}, recovery write {in_recovery}");
            let what = format!("{kind:?} cut {cut}, then recovery write {in_recovery}");
            let mut engine = Engine::open(config.clone(), failure.devices).unwrap();
            check_recovered(&mut engine, &states, synced, &what);
            recovery_cuts += 1;
        }
    }
    if kind == EngineKind::Ipl {
        assert!(merging_recoveries > 0, "no ipl recovery merged a block, so no cut fell inside such a merge");
    }
    Tried { workload: writes, recovery: recovery_cuts, merging_recoveries, erases, pages_max, pages_freed }
}

#[test]
fn a_power_cut_at_every_device_write_loses_nothing_synced() {
    let mut recovery_cuts = 0;
    for kind in EngineKind::ALL {
        let tried = crash_every_write(kind);
        eprintln!(
            "{}: power cut at each of {} device writes (the uncut run: {} flash erases, {} of {} tree pages \
             freed by deletes), and at each of {} device writes of their recoveries ({} recoveries merged a block)",
            kind.name(),
            tried.workload,
            tried.erases,
            tried.pages_freed,
            tried.pages_max,
            tried.recovery,
            tried.merging_recoveries
        );
        recovery_cuts += tried.recovery;
    }
    assert!(recovery_cuts > 0, "no recovery wrote to a device, so no cut fell inside one");
}
