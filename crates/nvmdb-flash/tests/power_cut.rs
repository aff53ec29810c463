//! Power cut at every device write: for every configuration that recovers, a short
//! bytes-mode workload runs once to count its device writes (flash programs and erases,
//! PCM writes), then once per write index with the power cut before that write. The store
//! power-cycles (every volatile table rebuilt from flash and PCM alone), every page is
//! checked against a plain model of acknowledged writes — the interrupted operation's
//! page may be wholly old or wholly new, any other page must be exactly as acknowledged —
//! the invariants are checked, and the workload finishes and is checked again. The
//! workload mixes whole-page writes, small partial writes (logged by the log schemes),
//! reads and trims on a small flash, so that cuts land inside garbage collection and
//! merges.

use std::collections::BTreeMap;

use nvmdb_device::{PageContent, PageData};
use nvmdb_flash::config::{BufferKind, MergeKind};
use nvmdb_flash::dpram::DpramStore;
use nvmdb_flash::dram::DramBuffer;
use nvmdb_flash::ipl::IplStore;
use nvmdb_flash::log_common::SchemeParams;
use nvmdb_flash::pcm_log::PcmLogStore;
use nvmdb_flash::{FlashError, PageStore, SsdConfig};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

const PAGE: usize = 4096;
const PAGES: u64 = 100;

#[derive(Debug, Clone, Copy)]
enum Step {
    /// Whole page, bytes drawn from the seed.
    Write {
        lpn: u64,
        seed: u64,
    },
    /// Bytes `offset..offset + len` of the page, drawn from the seed.
    Patch {
        lpn: u64,
        offset: u32,
        len: u32,
        seed: u64,
    },
    Read {
        lpn: u64,
    },
    Trim {
        lpn: u64,
    },
}

impl Step {
    fn lpn(self) -> u64 {
        match self {
            Step::Write { lpn, .. } | Step::Patch { lpn, .. } | Step::Read { lpn } | Step::Trim { lpn } => lpn,
        }
    }
}

/// Every page written once, then a random mix; a few pages are written with the same
/// bytes as another page, so deduplication finds sharing.
fn workload(seed: u64, n: usize) -> Vec<Step> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut steps: Vec<Step> = (0..PAGES).map(|lpn| Step::Write { lpn, seed: lpn % 48 }).collect();
    for _ in 0..n {
        let lpn = rng.gen_range(0..PAGES);
        steps.push(match rng.gen_range(0..20) {
            0..=6 => Step::Write { lpn, seed: rng.gen_range(0..200) },
            7..=14 => {
                let len = rng.gen_range(1..300);
                Step::Patch { lpn, offset: rng.gen_range(0..PAGE as u32 - len), len, seed: rng.gen() }
            }
            15..=17 => Step::Read { lpn },
            _ => Step::Trim { lpn },
        });
    }
    steps
}

fn bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    (0..len).map(|_| rng.gen()).collect()
}

/// The acknowledged content of each page (absent: never written, or trimmed).
type Model = BTreeMap<u64, Vec<u8>>;

/// What `step` makes of the page, given the model.
fn apply(model: &Model, step: Step) -> Option<Option<Vec<u8>>> {
    match step {
        Step::Write { seed, .. } => Some(Some(bytes(seed, PAGE))),
        Step::Patch { lpn, offset, len, seed } => {
            let mut page = model.get(&lpn).cloned().unwrap_or_else(|| vec![0xFF; PAGE]);
            page[offset as usize..(offset + len) as usize].copy_from_slice(&bytes(seed, len as usize));
            Some(Some(page))
        }
        Step::Trim { .. } => Some(None),
        Step::Read { .. } => None,
    }
}

/// Runs one step against the store; on success the model follows it.
fn run(store: &mut dyn PageStore, model: &mut Model, step: Step, now_ns: u64) -> Result<(), FlashError> {
    let lpn = step.lpn();
    let after = apply(model, step);
    match step {
        Step::Write { .. } => {
            let data = after.clone().flatten().expect("a write has bytes");
            store.write(lpn, PageData::Bytes(data), now_ns)?;
        }
        Step::Patch { offset, len, .. } => {
            let data = after.clone().flatten().expect("a patch has bytes");
            store.write_range(lpn, PageData::Bytes(data), (offset, len), now_ns)?;
        }
        Step::Read { .. } => {
            let (data, _) = store.read(lpn, now_ns)?;
            assert_eq!(content(data), model.get(&lpn).cloned(), "read of page {lpn}");
        }
        Step::Trim { .. } => {
            store.trim(lpn, now_ns)?;
        }
    }
    match after {
        Some(Some(page)) => {
            model.insert(lpn, page);
        }
        Some(None) => {
            model.remove(&lpn);
        }
        None => {}
    }
    Ok(())
}

fn content(data: PageData) -> Option<Vec<u8>> {
    match data {
        PageData::Bytes(b) => Some(b),
        PageData::Empty => None,
        other => panic!("bytes mode returned {other:?}"),
    }
}

fn config(kind: BufferKind) -> SsdConfig {
    let mut c = SsdConfig { content: PageContent::Bytes, ..SsdConfig::default() };
    c.flash.packages = 1;
    c.flash.planes_per_package = 2;
    c.flash.blocks_per_plane = 8;
    c.flash.pages_per_block = 16;
    c.ftl.overprovision = 0.5;
    c.buffer.kind = kind;
    c.buffer.merge = MergeKind::LiveBlock;
    c.buffer.pcm_mb = 1;
    c
}

/// A configuration by name; `+dedup` adds deduplication. PCM sizes are small enough that
/// replacement and pool exhaustion happen within the workload.
fn build(name: &str) -> Box<dyn PageStore> {
    let (scheme, dedup) = match name.strip_suffix("+dedup") {
        Some(scheme) => (scheme, true),
        None => (name, false),
    };
    let kind = match scheme {
        "baseline" => BufferKind::None,
        "ipl" => BufferKind::Ipl,
        "dpram" => BufferKind::Dpram,
        _ => BufferKind::PcmLog,
    };
    let mut params = SchemeParams::from_config(&config(kind));
    params.config.dedup.enabled = dedup;
    match scheme {
        "baseline" => nvmdb_flash::build(&params.config).unwrap(),
        "ipl" => Box::new(IplStore::with_params(&params).unwrap()),
        "dpram" => {
            params.pcm_bytes = 40 * 64;
            Box::new(DpramStore::with_params(&params).unwrap())
        }
        "pcm-log" => {
            params.pcm_bytes = 3 * (16 * 512 + 16);
            Box::new(PcmLogStore::with_params(&params).unwrap())
        }
        "dram-plp" => {
            // The SSD's DRAM buffer, flushed on a power loss, over the PCM log.
            params.pcm_bytes = 3 * (16 * 512 + 16);
            let below = Box::new(PcmLogStore::with_params(&params).unwrap());
            Box::new(DramBuffer::new(below, 6, true, PageContent::Bytes))
        }
        other => panic!("unknown configuration {other}"),
    }
}

fn verify(store: &mut dyn PageStore, model: &Model, what: &str) {
    for lpn in 0..PAGES {
        let (data, _) = store.read(lpn, 0).unwrap_or_else(|e| panic!("{what}: read {lpn}: {e}"));
        assert!(content(data) == model.get(&lpn).cloned(), "{what}: page {lpn} differs from the model");
    }
    store.check_invariants().unwrap_or_else(|e| panic!("{what}: {e}"));
}

/// Runs the workload with the power cut before device write `cut`; returns whether the
/// cut was reached.
fn crash_at(name: &str, steps: &[Step], cut: u64) -> bool {
    let mut store = build(name);
    store.power_switch().expect("the store has a power switch").cut_before(cut);
    let mut model = Model::new();
    let mut at = 0;
    let mut cut_reached = false;
    while at < steps.len() {
        let step = steps[at];
        let now_ns = at as u64 * 100_000;
        match run(store.as_mut(), &mut model, step, now_ns) {
            Ok(()) => at += 1,
            Err(FlashError::PowerCut(index)) => {
                assert!(!cut_reached, "{name}: cut twice");
                assert_eq!(index, cut, "{name}: the refused write is the cut");
                cut_reached = true;
                let what = format!("{name}, cut before write {cut} in step {at} ({step:?})");
                store.power_cycle().unwrap_or_else(|e| panic!("{what}: recovery: {e}"));
                // The interrupted step's page is wholly old or wholly new.
                let lpn = step.lpn();
                let (data, _) = store.read(lpn, 0).unwrap();
                let found = content(data);
                let old = model.get(&lpn).cloned();
                let new = apply(&model, step).expect("only writes and trims write");
                assert!(found == old || found == new, "{what}: page {lpn} is neither old nor new");
                match found {
                    Some(page) => model.insert(lpn, page),
                    None => model.remove(&lpn),
                };
                verify(store.as_mut(), &model, &what);
                at += 1;
            }
            Err(e) => panic!("{name}: step {at} ({step:?}): {e}"),
        }
    }
    verify(store.as_mut(), &model, &format!("{name}, cut before write {cut}, at the end"));
    cut_reached
}

/// Tries every crash point of `name`; returns how many.
fn every_device_write(name: &str, steps: &[Step]) -> u64 {
    let mut store = build(name);
    let mut model = Model::new();
    for (at, &step) in steps.iter().enumerate() {
        run(store.as_mut(), &mut model, step, at as u64 * 100_000).unwrap();
    }
    verify(store.as_mut(), &model, name);
    let stats = store.stats();
    assert!(stats.gc_page_copies > 0, "{name}: the workload should make the FTL collect garbage");
    if !name.starts_with("baseline") {
        assert!(stats.merges > 0, "{name}: the workload should make the log layer merge");
    }
    if name.ends_with("+dedup") {
        assert!(stats.dedup_pages_removed > 0, "{name}: the workload should share pages");
    }
    let writes = store.power_switch().unwrap().writes();
    println!("{name}: {} GC copies, {} erases, {} merges", stats.gc_page_copies, stats.block_erases, stats.merges);
    let mut tried = 0;
    for cut in 0..writes {
        assert!(crash_at(name, steps, cut), "{name}: cut before write {cut} of {writes} was never reached");
        tried += 1;
    }
    println!("{name}: {tried} crash points tried (every device write), nothing lost");
    tried
}

fn check(name: &str) {
    let tried = every_device_write(name, &workload(21, 400));
    assert!(tried > 0, "{name}: no crash point tried");
}

#[test]
fn baseline_loses_nothing_at_any_device_write() {
    check("baseline");
}

#[test]
fn baseline_with_dedup_loses_nothing_at_any_device_write() {
    check("baseline+dedup");
}

#[test]
fn ipl_loses_nothing_at_any_device_write() {
    check("ipl");
}

#[test]
fn ipl_with_dedup_loses_nothing_at_any_device_write() {
    check("ipl+dedup");
}

#[test]
fn dpram_loses_nothing_at_any_device_write() {
    check("dpram");
}

#[test]
fn dpram_with_dedup_loses_nothing_at_any_device_write() {
    check("dpram+dedup");
}

#[test]
fn pcm_log_loses_nothing_at_any_device_write() {
    check("pcm-log");
}

#[test]
fn pcm_log_with_dedup_loses_nothing_at_any_device_write() {
    check("pcm-log+dedup");
}

#[test]
fn protected_dram_buffer_loses_nothing_at_any_device_write() {
    check("dram-plp");
}
