//! Power loss at every device-write index of a short workload, for every policy, with one
//! spare segment and with several: inside copy-on-writes, flushes and cleans (the spare
//! ring's update included), and inside transactions. A cut drops the engine
//! and keeps only the devices; recovery must lose nothing acknowledged, leave each page
//! of the interrupted write all old or all new, roll back a transaction that had not
//! committed, and keep working.

use crate::common::{contents, tiny, POLICIES};
use nvmdb_envy::{Envy, EnvyConfig, EnvyError};

#[derive(Debug, Clone)]
enum Op {
    Write(u64, Vec<u8>),
    Begin,
    Commit,
    Abort,
}

/// Writes that fill the space and then overwrite a hot region, with one committed and
/// one aborted transaction, plus a transaction left open at the end.
fn workload(config: &EnvyConfig) -> Vec<Op> {
    let size = config.logical_bytes();
    let mut ops = Vec::new();
    let mut x = 7u64;
    let mut next = move |m: u64| {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (x >> 33) % m
    };
    for i in 0..60u64 {
        let len = 1 + next(30);
        let addr = if i < 12 { (i * 48) % (size - len) } else { next(size / 3) };
        ops.push(Op::Write(addr, vec![(i as u8).wrapping_mul(37) | 1; len as usize]));
        match i {
            14 | 26 | 56 => ops.push(Op::Begin),
            18 => ops.push(Op::Commit),
            29 => ops.push(Op::Abort),
            _ => {}
        }
    }
    ops
}

fn apply(envy: &mut Envy, op: &Op) -> Result<(), EnvyError> {
    match op {
        Op::Write(addr, bytes) => envy.write(*addr, bytes).map(|_| ()),
        Op::Begin => envy.begin(),
        Op::Commit => envy.commit(),
        Op::Abort => envy.abort(),
    }
}

/// What the space may hold after a cut during op `i`: the model before it, with the
/// alternatives that op allows.
struct Expectation {
    before: Vec<u8>,
    /// The state at the open transaction's begin, when one was open.
    txn_base: Option<Vec<u8>>,
}

fn check_recovered(got: &[u8], op: &Op, exp: &Expectation, page_bytes: usize) {
    match (op, &exp.txn_base) {
        (Op::Write(..) | Op::Abort | Op::Begin, Some(base)) => assert_eq!(got, base, "transaction not rolled back"),
        // `before` is the transaction's result: the commit is all or nothing.
        (Op::Commit, Some(base)) => assert!(got == base.as_slice() || got == exp.before.as_slice()),
        (Op::Write(addr, bytes), None) => {
            let (start, end) = (*addr as usize, *addr as usize + bytes.len());
            for page in (start / page_bytes)..end.div_ceil(page_bytes) {
                let range = page * page_bytes..(page + 1) * page_bytes;
                let mut new = exp.before[range.clone()].to_vec();
                for (i, b) in new.iter_mut().enumerate() {
                    let at = range.start + i;
                    if (start..end).contains(&at) {
                        *b = bytes[at - start];
                    }
                }
                let g = &got[range.clone()];
                assert!(g == &exp.before[range.clone()] || g == new.as_slice(), "page {page} torn");
            }
            let outside = |v: &[u8]| {
                let mut v = v.to_vec();
                let (lo, hi) = ((start / page_bytes) * page_bytes, end.div_ceil(page_bytes) * page_bytes);
                let hi = hi.min(v.len());
                v[lo..hi].fill(0);
                v
            };
            assert_eq!(outside(got), outside(&exp.before), "bytes outside the interrupted write changed");
        }
        (_, None) => assert_eq!(got, exp.before.as_slice()),
    }
}

/// Runs the workload without cuts, recording the device-write count and expectation
/// before each operation.
fn reference(config: EnvyConfig, ops: &[Op]) -> (u64, Vec<u64>, Vec<Expectation>) {
    let mut envy = Envy::format(config).unwrap();
    envy.set_erase_checks(true);
    let base = envy.devices().device_writes();
    let mut model = vec![0u8; config.logical_bytes() as usize];
    let mut txn_base: Option<Vec<u8>> = None;
    let mut starts = Vec::new();
    let mut expectations = Vec::new();
    for op in ops {
        starts.push(envy.devices().device_writes() - base);
        expectations.push(Expectation { before: model.clone(), txn_base: txn_base.clone() });
        apply(&mut envy, op).unwrap();
        match op {
            Op::Write(addr, bytes) => model[*addr as usize..*addr as usize + bytes.len()].copy_from_slice(bytes),
            Op::Begin => txn_base = Some(model.clone()),
            Op::Commit => txn_base = None,
            Op::Abort => model = txn_base.take().unwrap(),
        }
        envy.check_invariants();
        assert_eq!(contents(&mut envy), model, "reference run diverged");
    }
    (envy.devices().device_writes() - base, starts, expectations)
}

/// The configurations cut: every policy with one spare segment (6 segments at 50 %) and
/// with three (8 segments at 50 %, the limit), so the ring turns and a clean's
/// destination is not the segment the previous clean erased.
fn configs() -> Vec<EnvyConfig> {
    let mut configs = Vec::new();
    for policy in POLICIES {
        configs.push(tiny(policy, 6, 8, 2, 0.5));
        let mut three = tiny(policy, 8, 8, 2, 0.5);
        three.spare_segments = 3;
        configs.push(three);
    }
    configs
}

#[test]
fn power_loss_at_every_device_write() {
    let mut tried = 0u64;
    let mut during_cleans = 0u64;
    let mut rolled_back = 0u64;
    let mut with_spares = 0u64;
    for config in configs() {
        let policy = config.cleaning;
        let ops = workload(&config);
        let (total, starts, expectations) = reference(config, &ops);
        for cut in 0..total {
            let mut envy = Envy::format(config).unwrap();
            envy.set_erase_checks(true);
            let base = envy.devices().device_writes();
            envy.cut_power_before(base + cut);
            let failed_at =
                ops.iter().position(|op| apply(&mut envy, op).is_err()).expect("the cut falls inside the run");
            assert_eq!(failed_at, starts.partition_point(|&s| s <= cut) - 1, "cut {cut} hit the wrong operation");
            let mut devices = envy.into_devices();
            devices.power_cycle();
            let mut envy = Envy::open(config, devices).unwrap();
            envy.set_erase_checks(true);
            let in_clean = envy.stats().cleans_resumed > 0;
            rolled_back += envy.stats().aborts;
            let got = contents(&mut envy);
            let page_bytes = config.page_bytes as usize;
            check_recovered(&got, &ops[failed_at], &expectations[failed_at], page_bytes);
            // It keeps working: the rest of the plain writes land exactly.
            let mut model = got;
            for op in &ops[failed_at + 1..] {
                if let Op::Write(addr, bytes) = op {
                    envy.write(*addr, bytes).unwrap();
                    model[*addr as usize..*addr as usize + bytes.len()].copy_from_slice(bytes);
                    envy.check_invariants();
                }
            }
            assert_eq!(contents(&mut envy), model, "{policy:?}: cut {cut} then continue");
            tried += 1;
            during_cleans += u64::from(in_clean);
            with_spares += u64::from(config.spare_segments > 1 && in_clean);
        }
    }
    println!(
        "crash points tried: {tried} ({during_cleans} inside a clean, {with_spares} of them with three spare \
         segments; {rolled_back} rolled back an open transaction)"
    );
    assert!(
        tried > 2000 && during_cleans > 100 && with_spares > 50 && rolled_back > 100,
        "the workload must cut inside cleans, with several spares too, and inside transactions"
    );
}

/// Runs the workload with the power cut before device write `cut` (counted from the
/// format); returns the interrupted operation and the devices after the cut.
fn cut_run(config: EnvyConfig, ops: &[Op], cut: u64) -> (usize, nvmdb_envy::Devices) {
    let mut envy = Envy::format(config).unwrap();
    envy.set_erase_checks(true);
    let base = envy.devices().device_writes();
    envy.cut_power_before(base + cut);
    let failed_at = ops.iter().position(|op| apply(&mut envy, op).is_err()).expect("the cut falls inside the run");
    let mut devices = envy.into_devices();
    devices.power_cycle();
    (failed_at, devices)
}

/// A second cut at every device write of the recovery itself (finishing a clean, rolling
/// back a transaction), after every third first cut: recovering again still loses
/// nothing acknowledged.
#[test]
fn power_loss_during_recovery() {
    let mut first_cuts = 0u64;
    let mut second_cuts = 0u64;
    for config in configs() {
        let ops = workload(&config);
        let (total, _, expectations) = reference(config, &ops);
        for cut in (0..total).step_by(3) {
            let (_, devices) = cut_run(config, &ops, cut);
            let before = devices.device_writes();
            let recovery_writes = Envy::open(config, devices).unwrap().devices().device_writes() - before;
            for second in 0..recovery_writes {
                let (failed_at, mut devices) = cut_run(config, &ops, cut);
                devices.cut_power_before(devices.device_writes() + second);
                let failure = Envy::recover(config, devices).expect_err("the cut falls inside recovery");
                assert!(matches!(failure.error, EnvyError::PowerCut { .. }), "{}", failure.error);
                let mut devices = failure.devices;
                devices.power_cycle();
                let mut envy = Envy::open(config, devices).unwrap();
                let got = contents(&mut envy);
                check_recovered(&got, &ops[failed_at], &expectations[failed_at], config.page_bytes as usize);
                second_cuts += 1;
            }
            first_cuts += 1;
        }
    }
    println!("first cuts: {first_cuts}; second cuts inside their recoveries: {second_cuts}");
    assert!(second_cuts > 400, "recoveries must write: {second_cuts}");
}
