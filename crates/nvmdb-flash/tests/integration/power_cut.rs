//! Power cut at every device write: for every configuration that recovers, a short
//! workload (in bytes mode; IPL in both layouts, d-PRAM and the PCM log also in fingerprint
//! mode, where IPL's log sectors recover from their tags and the PCM log's records hold
//! filler) runs once to count its device writes (flash programs and erases, PCM writes), then once per write index with the power cut before that write. The store
//! power-cycles (every volatile table rebuilt from flash and PCM alone), every page is
//! checked against a plain model of acknowledged writes (in fingerprint mode, against the
//! model bytes' content identity) — the interrupted operation's page may be wholly old or
//! wholly new, any other page must be exactly as acknowledged — the invariants are
//! checked, and the workload finishes and is checked again. The workload mixes whole-page
//! writes, small partial writes (logged by the log schemes), reads and trims on a small
//! flash, so that cuts land inside garbage collection and merges. A second cut, armed for
//! the restore, falls before every device write of the recovery (deduplication rebuilding
//! its fingerprint store, the DRAM buffer writing its pages back) and of the first writes
//! after it, at first cuts spread over the workload; the store powers up again until a
//! recovery completes, and the same checks follow. The log schemes and the DRAM buffer also
//! run two passes of a workload with a drain (`PageStore::drain`) in the middle and at the
//! end, cut at every device write, the drains' included. A store made lossy on purpose (IPL
//! in its own layout holding an acknowledged write back until the next request) shows that
//! these checks catch a lost write.

use std::collections::BTreeMap;

use nvmdb_device::{PageContent, PageData};
use nvmdb_flash::config::{BufferKind, MergeKind, MergeLayout};
use nvmdb_flash::dpram::DpramStore;
use nvmdb_flash::dram::DramBuffer;
use nvmdb_flash::ipl::IplStore;
use nvmdb_flash::ipl_native::IplNativeStore;
use nvmdb_flash::log_common::SchemeParams;
use nvmdb_flash::pcm_log::PcmLogStore;
use nvmdb_flash::{FlashError, PageStore, SsdConfig};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

const PAGE: usize = 4096;
const PAGES: u64 = 100;

#[derive(Debug, Clone, Copy)]
enum Step {
    /// Whole page, bytes drawn from the seed; with `new`, written as a whole page of new
    /// content (`PageStore::write_new`, the ageing pass's write).
    Write {
        lpn: u64,
        seed: u64,
        new: bool,
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
    /// Every pending log record merged, the DRAM buffer written down
    /// (`PageStore::drain`): no page's content changes.
    Drain,
}

impl Step {
    /// The page the step writes or reads (none for a drain).
    fn lpn(self) -> Option<u64> {
        match self {
            Step::Write { lpn, .. } | Step::Patch { lpn, .. } | Step::Read { lpn } | Step::Trim { lpn } => Some(lpn),
            Step::Drain => None,
        }
    }
}

/// Every page written once, then a random mix; a few pages are written with the same
/// bytes as another page, so deduplication finds sharing.
fn workload(seed: u64, n: usize) -> Vec<Step> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut steps: Vec<Step> = (0..PAGES).map(|lpn| Step::Write { lpn, seed: lpn % 48, new: false }).collect();
    for _ in 0..n {
        let lpn = rng.gen_range(0..PAGES);
        steps.push(match rng.gen_range(0..20) {
            0..=6 => Step::Write { lpn, seed: rng.gen_range(0..200), new: false },
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

/// `steps` with every whole-page write a write of new content (`PageStore::write_new`).
fn written_new(steps: &[Step]) -> Vec<Step> {
    let new = |step| match step {
        Step::Write { lpn, seed, .. } => Step::Write { lpn, seed, new: true },
        other => other,
    };
    steps.iter().copied().map(new).collect()
}

/// `passes` passes of `workload(seed, n)` (each the same steps, as `nvmdb ssd replay
/// --passes`), with a drain in the middle of the first pass and one at the end.
fn passes_with_drains(seed: u64, n: usize, passes: usize) -> Vec<Step> {
    let pass = workload(seed, n);
    let mut steps = Vec::with_capacity(passes * pass.len() + 2);
    for i in 0..passes {
        steps.extend_from_slice(&pass);
        if i == 0 {
            steps.insert(pass.len() / 2 + PAGES as usize / 2, Step::Drain);
        }
    }
    steps.push(Step::Drain);
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
        Step::Read { .. } | Step::Drain => None,
    }
}

/// Runs one step against the store; on success the model follows it.
fn run(
    store: &mut dyn PageStore,
    mode: PageContent,
    model: &mut Model,
    step: Step,
    now_ns: u64,
) -> Result<(), FlashError> {
    let after = apply(model, step);
    if matches!(step, Step::Drain) {
        store.drain(now_ns)?;
        assert_eq!(store.pending(), nvmdb_flash::Pending::default(), "a drain leaves nothing pending");
        return Ok(());
    }
    let lpn = step.lpn().expect("a step on a page");
    match step {
        Step::Write { new, .. } => {
            let data = PageData::Bytes(after.clone().flatten().expect("a write has bytes"));
            if new {
                store.write_new(lpn, data, now_ns)?;
            } else {
                store.write(lpn, data, now_ns)?;
            }
        }
        Step::Patch { offset, len, .. } => {
            let data = after.clone().flatten().expect("a patch has bytes");
            store.write_range(lpn, PageData::Bytes(data), (offset, len), now_ns)?;
        }
        Step::Read { .. } => {
            let (data, _) = store.read(lpn, now_ns)?;
            assert_eq!(content(data), expected(mode, model.get(&lpn).cloned()), "read of page {lpn}");
        }
        Step::Trim { .. } => {
            store.trim(lpn, now_ns)?;
        }
        Step::Drain => unreachable!("handled above"),
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

/// What a read returns: `None` for a page never written or trimmed.
fn content(data: PageData) -> Option<PageData> {
    match data {
        PageData::Empty => None,
        other => Some(other),
    }
}

/// What a read of a page of the model must return in `mode`.
fn expected(mode: PageContent, page: Option<Vec<u8>>) -> Option<PageData> {
    page.map(|bytes| match mode {
        PageContent::Fingerprint => PageData::Fingerprint(nvmdb_device::flash::fingerprint64(&bytes)),
        _ => PageData::Bytes(bytes),
    })
}

fn config(kind: BufferKind, mode: PageContent) -> SsdConfig {
    let mut c = SsdConfig { content: mode, ..SsdConfig::default() };
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

/// The content mode a configuration's name asks for: `@fingerprint` at its end, or bytes.
fn mode(name: &str) -> PageContent {
    if name.ends_with("@fingerprint") {
        PageContent::Fingerprint
    } else {
        PageContent::Bytes
    }
}

/// A configuration by name; `+dedup` adds deduplication, `+striped` stripes merges over
/// the planes, `@fingerprint` keeps content identities instead of bytes. PCM sizes are small enough that replacement and pool
/// exhaustion happen within the workload.
fn build(name: &str) -> Box<dyn PageStore> {
    let mode = mode(name);
    let name = name.strip_suffix("@fingerprint").unwrap_or(name);
    let (name, striped) = match name.strip_suffix("+striped") {
        Some(scheme) => (scheme, true),
        None => (name, false),
    };
    let (scheme, dedup) = match name.strip_suffix("+dedup") {
        Some(scheme) => (scheme, true),
        None => (name, false),
    };
    let kind = match scheme {
        "baseline" => BufferKind::None,
        "ipl" => BufferKind::Ipl,
        "ipl-native" | "ipl-native-lossy" => BufferKind::IplNative,
        "dpram" => BufferKind::Dpram,
        _ => BufferKind::PcmLog,
    };
    let mut params = SchemeParams::from_config(&config(kind, mode));
    params.config.dedup.enabled = dedup;
    if striped {
        params.config.buffer.merge_layout = MergeLayout::Striped;
    }
    match scheme {
        "baseline" => nvmdb_flash::build(&params.config).unwrap(),
        "ipl" => Box::new(IplStore::with_params(&params).unwrap()),
        "ipl-native" => Box::new(IplNativeStore::new(&params.config).unwrap()),
        "ipl-native-lossy" => {
            Box::new(HoldsBackLastPatch { inner: IplNativeStore::new(&params.config).unwrap(), held: None })
        }
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
            Box::new(DramBuffer::new(below, 6, true, mode))
        }
        other => panic!("unknown configuration {other}"),
    }
}

fn verify(store: &mut dyn PageStore, mode: PageContent, model: &Model, what: &str) {
    for lpn in 0..PAGES {
        let (data, _) = store.read(lpn, 0).unwrap_or_else(|e| panic!("{what}: read {lpn}: {e}"));
        assert!(content(data) == expected(mode, model.get(&lpn).cloned()), "{what}: page {lpn} differs from the model");
    }
    store.check_invariants().unwrap_or_else(|e| panic!("{what}: {e}"));
}

/// What one crash run saw.
#[derive(Debug, Default)]
struct Crash {
    /// The first cut was reached.
    reached: bool,
    /// Device writes the first recovery made (when no cut interrupted it).
    recovery_writes: u64,
    /// The second cut interrupted a recovery.
    recovery_cut: bool,
}

/// Powers the store up again until a recovery completes (a second cut, armed for the
/// restore, may interrupt the first); returns the writes of the completed recovery and
/// whether one was interrupted.
fn recover(store: &mut dyn PageStore, second: Option<u64>, what: &str) -> (u64, bool) {
    if let Some(index) = second {
        store.power_switch().unwrap().cut_after_restore(index);
    }
    let mut interrupted = false;
    loop {
        let before = store.power_switch().unwrap().writes();
        match store.power_cycle() {
            Ok(()) => return (store.power_switch().unwrap().writes() - before, interrupted),
            Err(FlashError::PowerCut(index)) => {
                assert!(!interrupted, "{what}: recovery cut twice");
                assert_eq!(Some(index), second, "{what}: the refused write is the second cut");
                interrupted = true;
            }
            Err(e) => panic!("{what}: recovery: {e}"),
        }
    }
}

/// Runs the workload with the power cut before device write `cut`, and when `second` is
/// given, again before device write `second` (counted over the run, so it may fall in the
/// recovery or after it).
fn crash_at(name: &str, steps: &[Step], cut: u64, second: Option<u64>) -> Crash {
    let mode = mode(name);
    let mut store = build(name);
    store.power_switch().expect("the store has a power switch").cut_before(cut);
    let mut model = Model::new();
    let mut at = 0;
    let mut crash = Crash::default();
    let mut second = second;
    while at < steps.len() {
        let step = steps[at];
        let now_ns = at as u64 * 100_000;
        match run(store.as_mut(), mode, &mut model, step, now_ns) {
            Ok(()) => at += 1,
            Err(FlashError::PowerCut(index)) => {
                let what = format!("{name}, cut before write {index} in step {at} ({step:?})");
                if crash.reached {
                    assert_eq!(Some(index), second.take(), "{what}: only the second cut refuses a write");
                } else {
                    assert_eq!(index, cut, "{what}: the refused write is the cut");
                    crash.reached = true;
                }
                let (writes, interrupted) = recover(store.as_mut(), second.filter(|_| index == cut), &what);
                if index == cut {
                    crash.recovery_writes = writes;
                    if interrupted {
                        crash.recovery_cut = true;
                        second = None;
                    }
                }
                // The interrupted step's page is wholly old or wholly new (a drain changes
                // no page: every page must read as the model says).
                if let Some(lpn) = step.lpn() {
                    let (data, _) = store.read(lpn, 0).unwrap();
                    let found = content(data);
                    let old = model.get(&lpn).cloned();
                    let new = apply(&model, step).expect("only writes and trims write");
                    let now = if found == expected(mode, old.clone()) {
                        old
                    } else {
                        assert!(found == expected(mode, new.clone()), "{what}: page {lpn} is neither old nor new");
                        new
                    };
                    match now {
                        Some(page) => model.insert(lpn, page),
                        None => model.remove(&lpn),
                    };
                }
                verify(store.as_mut(), mode, &model, &what);
                at += 1;
            }
            Err(e) => panic!("{name}: step {at} ({step:?}): {e}"),
        }
    }
    verify(store.as_mut(), mode, &model, &format!("{name}, cut before write {cut}, at the end"));
    crash
}

/// Tries every crash point of `name`; returns how many.
fn every_device_write(name: &str, steps: &[Step]) -> u64 {
    let mut store = build(name);
    let mut model = Model::new();
    for (at, &step) in steps.iter().enumerate() {
        run(store.as_mut(), mode(name), &mut model, step, at as u64 * 100_000).unwrap();
    }
    verify(store.as_mut(), mode(name), &model, name);
    let stats = store.stats();
    // IPL in its own layout has no FTL: its merges are its only reclamation.
    let ftl = !name.starts_with("ipl-native");
    assert!(!ftl || stats.gc_page_copies > 0, "{name}: the workload should make the FTL collect garbage");
    if !name.starts_with("baseline") {
        assert!(stats.merges > 0, "{name}: the workload should make the log layer merge");
    }
    if name.contains("+dedup") {
        assert!(stats.dedup_pages_removed > 0, "{name}: the workload should share pages");
    }
    let writes = store.power_switch().unwrap().writes();
    println!("{name}: {} GC copies, {} erases, {} merges", stats.gc_page_copies, stats.block_erases, stats.merges);
    let mut tried = 0;
    for cut in 0..writes {
        assert!(
            crash_at(name, steps, cut, None).reached,
            "{name}: cut before write {cut} of {writes} was never reached"
        );
        tried += 1;
    }
    println!("{name}: {tried} crash points tried (every device write), nothing lost");
    tried
}

/// First cuts spread over the workload's device writes, at each of which a second cut is
/// tried before every write of the recovery and of the next few writes after it.
const FIRST_CUTS: u64 = 8;
/// Writes after the recovery at which a second cut is tried.
const WRITES_AFTER_RECOVERY: u64 = 3;

/// A second power cut during (and just after) recovery; returns the crash runs tried and
/// how many of them cut a recovery short.
fn cuts_during_recovery(name: &str, steps: &[Step]) -> (u64, u64) {
    let mut store = build(name);
    let mut model = Model::new();
    for (at, &step) in steps.iter().enumerate() {
        run(store.as_mut(), mode(name), &mut model, step, at as u64 * 100_000).unwrap();
    }
    let writes = store.power_switch().unwrap().writes();
    let (mut tried, mut in_recovery, mut recovery_writes) = (0, 0, 0);
    for i in 0..FIRST_CUTS {
        let cut = writes * (2 * i + 1) / (2 * FIRST_CUTS);
        let first = crash_at(name, steps, cut, None);
        assert!(first.reached, "{name}: cut before write {cut} was never reached");
        recovery_writes += first.recovery_writes;
        for k in 0..first.recovery_writes + WRITES_AFTER_RECOVERY {
            let crash = crash_at(name, steps, cut, Some(cut + k));
            assert_eq!(crash.recovery_cut, k < first.recovery_writes, "{name}: cut {cut}, then {k} writes later");
            tried += 1;
            in_recovery += u64::from(crash.recovery_cut);
        }
    }
    println!(
        "{name}: {tried} second cuts tried after {FIRST_CUTS} first cuts ({in_recovery} during a recovery of \
         {recovery_writes} device writes in all, the others in the {WRITES_AFTER_RECOVERY} writes after it), nothing lost"
    );
    (tried, in_recovery)
}

#[test]
fn a_second_cut_during_or_just_after_recovery_loses_nothing() {
    let steps = workload(21, 400);
    for name in [
        "baseline",
        "baseline+dedup",
        "ipl",
        "ipl+dedup",
        "ipl@fingerprint",
        "ipl+dedup@fingerprint",
        "ipl-native",
        "ipl-native@fingerprint",
        "dpram",
        "dpram+dedup",
        "dpram@fingerprint",
        "pcm-log",
        "pcm-log+dedup",
        "pcm-log@fingerprint",
        "dram-plp",
    ] {
        let (tried, in_recovery) = cuts_during_recovery(name, &steps);
        assert!(tried >= FIRST_CUTS * WRITES_AFTER_RECOVERY, "{name}");
        // Deduplication rebuilds its fingerprint store in PCM; the DRAM buffer writes its
        // pages back; IPL in its own layout erases the unit an interrupted merge left: those
        // recoveries write, and the cuts land inside them.
        if name.contains("dedup") || name == "dram-plp" || name.starts_with("ipl-native") {
            assert!(in_recovery > 0, "{name}: no second cut fell inside a recovery");
        }
    }
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

/// The PCM log's content-free rewrite keeps the stored bytes of a record's earlier
/// ranges (filler): cut at every device write of that path too.
#[test]
fn pcm_log_in_fingerprint_mode_loses_nothing_at_any_device_write() {
    check("pcm-log@fingerprint");
}

#[test]
fn dpram_in_fingerprint_mode_loses_nothing_at_any_device_write() {
    check("dpram@fingerprint");
}

#[test]
fn ipl_in_fingerprint_mode_loses_nothing_at_any_device_write() {
    check("ipl@fingerprint");
}

#[test]
fn ipl_with_dedup_in_fingerprint_mode_loses_nothing_at_any_device_write() {
    check("ipl+dedup@fingerprint");
}

#[test]
fn pcm_log_with_striped_merges_loses_nothing_at_any_device_write() {
    check("pcm-log+striped");
}

/// Two passes of a shorter workload with a drain in the first pass's middle and one at the
/// end: cuts at every device write, those of the drains' merges and write-backs included.
fn check_drains(name: &str) {
    let steps = passes_with_drains(22, 150, 2);
    let tried = every_device_write(name, &steps);
    // The drains write: their device writes are among the crash points.
    let mut store = build(name);
    let mut model = Model::new();
    let mut drained = 0;
    for (at, &step) in steps.iter().enumerate() {
        let before = store.power_switch().unwrap().writes();
        run(store.as_mut(), mode(name), &mut model, step, at as u64 * 100_000).unwrap();
        if matches!(step, Step::Drain) {
            drained += store.power_switch().unwrap().writes() - before;
        }
    }
    assert!(drained > 0 && tried > drained, "{name}: the drains made {drained} of {tried} device writes");
    println!("{name}: {drained} of the {tried} crash points fall in the drains");
}

#[test]
fn ipl_drains_and_passes_lose_nothing_at_any_device_write() {
    check_drains("ipl");
}

#[test]
fn ipl_in_fingerprint_mode_drains_and_passes_lose_nothing_at_any_device_write() {
    check_drains("ipl@fingerprint");
}

#[test]
fn dpram_drains_and_passes_lose_nothing_at_any_device_write() {
    check_drains("dpram");
}

#[test]
fn pcm_log_drains_and_passes_lose_nothing_at_any_device_write() {
    check_drains("pcm-log");
}

#[test]
fn protected_dram_buffer_drains_and_passes_lose_nothing_at_any_device_write() {
    check_drains("dram-plp");
}

#[test]
fn ipl_native_loses_nothing_at_any_device_write() {
    check("ipl-native");
}

#[test]
fn ipl_native_in_fingerprint_mode_loses_nothing_at_any_device_write() {
    check("ipl-native@fingerprint");
}

/// Whole pages of new content (`PageStore::write_new`, the ageing pass's writes) merge
/// their unit with the page in IPL's own layout, in fingerprint mode too (where a plain
/// write is logged as a sampled change): cut at every device write.
#[test]
fn ipl_native_writes_of_new_pages_lose_nothing_at_any_device_write() {
    for name in ["ipl-native", "ipl-native@fingerprint"] {
        let tried = every_device_write(name, &written_new(&workload(21, 400)));
        assert!(tried > 0, "{name}: no crash point tried");
    }
}

#[test]
fn ipl_native_drains_and_passes_lose_nothing_at_any_device_write() {
    check_drains("ipl-native");
}

#[test]
fn ipl_native_in_fingerprint_mode_drains_and_passes_lose_nothing_at_any_device_write() {
    check_drains("ipl-native@fingerprint");
}

/// IPL in its own layout made lossy on purpose: a partial host write is acknowledged but
/// held back, and written only when the next request arrives, so a power cut in between
/// loses the write (its log sector is never programmed). Everything else passes through.
struct HoldsBackLastPatch {
    inner: IplNativeStore,
    held: Option<(u64, PageData, (u32, u32))>,
}

impl HoldsBackLastPatch {
    /// Writes the held-back write, as the next request arrives.
    fn release(&mut self, now_ns: u64) -> Result<(), FlashError> {
        if let Some((lpn, data, written)) = self.held.take() {
            self.inner.write_range(lpn, data, written, now_ns)?;
        }
        Ok(())
    }
}

impl PageStore for HoldsBackLastPatch {
    fn logical_pages(&self) -> u64 {
        self.inner.logical_pages()
    }
    fn page_bytes(&self) -> u32 {
        self.inner.page_bytes()
    }
    fn write(&mut self, lpn: u64, data: PageData, now_ns: u64) -> Result<u64, FlashError> {
        self.release(now_ns)?;
        self.inner.write(lpn, data, now_ns)
    }
    fn write_range(&mut self, lpn: u64, data: PageData, written: (u32, u32), now_ns: u64) -> Result<u64, FlashError> {
        self.release(now_ns)?;
        self.held = Some((lpn, data, written));
        Ok(now_ns)
    }
    fn write_new(&mut self, lpn: u64, data: PageData, now_ns: u64) -> Result<u64, FlashError> {
        self.release(now_ns)?;
        self.inner.write_new(lpn, data, now_ns)
    }
    fn read(&mut self, lpn: u64, now_ns: u64) -> Result<(PageData, u64), FlashError> {
        self.release(now_ns)?;
        self.inner.read(lpn, now_ns)
    }
    fn trim(&mut self, lpn: u64, now_ns: u64) -> Result<u64, FlashError> {
        self.release(now_ns)?;
        self.inner.trim(lpn, now_ns)
    }
    fn drain(&mut self, now_ns: u64) -> Result<u64, FlashError> {
        self.release(now_ns)?;
        self.inner.drain(now_ns)
    }
    fn pending(&self) -> nvmdb_flash::Pending {
        self.inner.pending()
    }
    fn stats(&self) -> nvmdb_flash::StoreStats {
        self.inner.stats()
    }
    fn reset_stats(&mut self) {
        self.inner.reset_stats();
    }
    fn check_invariants(&self) -> Result<(), String> {
        self.inner.check_invariants()
    }
    fn power_cycle(&mut self) -> Result<(), FlashError> {
        // The held-back write was in volatile memory only.
        self.held = None;
        self.inner.power_cycle()
    }
    fn power_switch(&mut self) -> Option<&mut nvmdb_device::PowerSwitch> {
        self.inner.power_switch()
    }
}

/// The checks above can fail: with the lossy store, a cut before the device write that
/// carries a held-back write loses an acknowledged write, and the same run that finds
/// IPL in its own layout whole at every crash point reports the page as differing from
/// the model of acknowledged writes.
#[test]
fn the_crash_check_catches_a_store_that_loses_an_acknowledged_write() {
    let steps = workload(21, 400);
    let mut store = build("ipl-native-lossy");
    let mut model = Model::new();
    for (at, &step) in steps.iter().enumerate() {
        run(store.as_mut(), PageContent::Bytes, &mut model, step, at as u64 * 100_000).unwrap();
    }
    let writes = store.power_switch().unwrap().writes();
    // The first crash points in order, until one is caught (each caught one prints its
    // panic message).
    for cut in 0..writes {
        let crash = std::panic::catch_unwind(|| crash_at("ipl-native-lossy", &steps, cut, None));
        let Err(payload) = crash else { continue };
        let message = payload.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(message.contains("differs from the model"), "cut before write {cut}: {message}");
        println!("ipl-native-lossy: caught at the cut before device write {cut} of {writes} ({} tried)", cut + 1);
        return;
    }
    panic!("ipl-native-lossy: no crash point of {writes} caught the lost write");
}
