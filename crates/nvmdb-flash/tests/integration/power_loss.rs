//! Power loss at every request index of a short trace, for every configuration that
//! recovers: the replay cuts power after request N, rebuilds every volatile table from
//! the flash and PCM alone, finishes the trace, and checks every written page against a
//! replay's own model of acknowledged writes right after the recovery and at the end. The
//! trace mixes whole-page rewrites (out of
//! place), small partial writes (logged), re-reads and enough traffic on a small flash to
//! make the FTL collect garbage and the log schemes merge. Cuts at every device write,
//! with trims, are in `power_cut.rs`.

use nvmdb_device::{PageContent, PageData};
use nvmdb_flash::config::{BufferKind, GcPolicy, MergeKind};
use nvmdb_flash::dpram::DpramStore;
use nvmdb_flash::ipl::IplStore;
use nvmdb_flash::log_common::SchemeParams;
use nvmdb_flash::pcm_log::PcmLogStore;
use nvmdb_flash::{PageStore, ReplayOptions, SsdConfig};
use nvmdb_workload::{Content, Op, Request};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

const PAGE: u64 = 4096;
const PAGES: u64 = 96;

fn trace(seed: u64, n: usize) -> Vec<Request> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    (0..n as u64)
        .map(|i| {
            let page = rng.gen_range(0..PAGES);
            let (op, offset_bytes, len_bytes) = match rng.gen_range(0..10) {
                0..=3 => (Op::Write, page * PAGE, PAGE * rng.gen_range(1..3)),
                4..=7 => {
                    let len = rng.gen_range(1..300);
                    (Op::Write, page * PAGE + rng.gen_range(0..PAGE - len), len)
                }
                _ => (Op::Read, page * PAGE, PAGE),
            };
            let content = match op {
                Op::Write => Content::Bytes((0..len_bytes).map(|_| rng.gen()).collect()),
                _ => Content::Unknown,
            };
            Request { time_ns: i * 50_000, op, offset_bytes: offset_bytes.min((PAGES - 2) * PAGE), len_bytes, content }
        })
        .collect()
}

fn config(kind: BufferKind, content: PageContent) -> SsdConfig {
    let mut c = SsdConfig { content, ..SsdConfig::default() };
    c.flash.packages = 1;
    c.flash.planes_per_package = 2;
    c.flash.blocks_per_plane = 10;
    c.flash.pages_per_block = 16;
    c.ftl.overprovision = 0.35;
    c.buffer.kind = kind;
    c.buffer.merge = MergeKind::LiveBlock;
    c
}

/// Configurations by name (`+dedup` adds deduplication; `+fifo` and `+cost-benefit`
/// choose the FTL's GC policy, greedy otherwise): PCM sizes small enough that
/// replacement and pool exhaustion happen within the trace.
fn build(name: &str, content: PageContent) -> Box<dyn PageStore> {
    let (name, gc) = match name.split_once('+') {
        Some((scheme, "fifo")) => (scheme, GcPolicy::Fifo),
        Some((scheme, "cost-benefit")) => (scheme, GcPolicy::CostBenefit),
        _ => (name, GcPolicy::Greedy),
    };
    let (name, dedup) = match name.strip_suffix("+dedup") {
        Some(scheme) => (scheme, true),
        None => (name, false),
    };
    let kind = match name {
        "baseline" => BufferKind::None,
        "ipl" => BufferKind::Ipl,
        "dpram" => BufferKind::Dpram,
        _ => BufferKind::PcmLog,
    };
    let mut params = SchemeParams::from_config(&config(kind, content));
    params.config.dedup.enabled = dedup;
    params.config.ftl.gc = gc;
    match name {
        "baseline" => nvmdb_flash::build(&params.config).unwrap(),
        "ipl" => Box::new(IplStore::with_params(&params).unwrap()),
        "dpram" => {
            params.pcm_bytes = 40 * 64;
            Box::new(DpramStore::with_params(&params).unwrap())
        }
        "pcm-log-logged-pages" => {
            params.config.buffer.merge = MergeKind::LoggedPages;
            params.pcm_bytes = 3 * (16 * 512 + 16);
            Box::new(PcmLogStore::with_params(&params).unwrap())
        }
        _ => {
            params.pcm_bytes = 3 * (16 * 512 + 16);
            Box::new(PcmLogStore::with_params(&params).unwrap())
        }
    }
}

/// Tries every crash point; returns how many.
fn every_crash_point(name: &str, content: PageContent, requests: &[Request]) -> u64 {
    let mut tried = 0;
    let mut saw_merge = false;
    for cut in 0..=requests.len() as u64 {
        let mut store = build(name, content);
        let options = ReplayOptions { content, seed: 3, power_loss_at: Some(cut), ..ReplayOptions::default() };
        let report = nvmdb_flash::replay(store.as_mut(), requests.iter().cloned().map(Ok::<_, String>), &options)
            .unwrap_or_else(|e| panic!("{name} cut after {cut}: {e}"));
        store.check_invariants().unwrap_or_else(|e| panic!("{name} cut after {cut}: {e}"));
        assert_eq!(report.power_cycles, 1);
        assert!(report.verified_pages > 0);
        assert_eq!((report.lost_pages, report.corrupt_pages), (0, 0), "{name} {content:?}, cut after {cut}");
        saw_merge |= report.stats.merges > 0 || report.stats.gc_page_copies > 0;
        tried += 1;
    }
    assert!(saw_merge, "{name}: the trace should make the store merge or collect garbage");
    tried
}

/// The DRAM write buffer: with power-loss protection nothing is lost at any crash point;
/// without it, buffered acknowledged writes are lost (and the check sees them).
#[test]
fn a_dram_buffer_loses_writes_only_without_protection() {
    let requests = trace(9, 120);
    let mut lost_somewhere = false;
    for protected in [true, false] {
        for cut in 0..=requests.len() as u64 {
            let mut c = config(BufferKind::PcmLog, PageContent::Bytes);
            c.dram.pages = 8;
            c.dram.power_loss_protection = protected;
            let mut store = nvmdb_flash::build(&c).unwrap();
            let options =
                ReplayOptions { content: PageContent::Bytes, power_loss_at: Some(cut), ..ReplayOptions::default() };
            let report =
                nvmdb_flash::replay(store.as_mut(), requests.iter().cloned().map(Ok::<_, String>), &options).unwrap();
            store.check_invariants().unwrap();
            let damaged = report.lost_pages + report.corrupt_pages;
            if protected {
                assert_eq!(damaged, 0, "protected, cut after {cut}");
            }
            lost_somewhere |= !protected && damaged > 0;
        }
    }
    assert!(lost_somewhere, "an unprotected DRAM buffer loses acknowledged writes");
}

#[test]
fn power_loss_at_every_request_loses_nothing() {
    let requests = trace(9, 300);
    for name in [
        "baseline",
        "ipl",
        "dpram",
        "pcm-log",
        "pcm-log-logged-pages",
        "baseline+dedup",
        "ipl+dedup",
        "dpram+dedup",
        "pcm-log+dedup",
        "baseline+fifo",
        "baseline+cost-benefit",
        "pcm-log+fifo",
    ] {
        let tried = every_crash_point(name, PageContent::Bytes, &requests);
        println!("{name} (bytes): {tried} crash points tried, nothing lost");
        assert_eq!(tried, requests.len() as u64 + 1);
    }
    for name in ["baseline", "ipl", "dpram", "pcm-log"] {
        let tried = every_crash_point(name, PageContent::Fingerprint, &requests);
        println!("{name} (fingerprint): {tried} crash points tried, nothing lost");
    }
    for name in ["baseline", "ipl", "dpram", "pcm-log"] {
        let tried = every_crash_point(name, PageContent::None, &requests);
        println!("{name} (metadata only: every written page still mapped): {tried} crash points tried");
    }
}

/// A store that forgets one page when power is cut: the model check must notice.
struct Forgetful(Box<dyn PageStore>);

impl PageStore for Forgetful {
    fn logical_pages(&self) -> u64 {
        self.0.logical_pages()
    }
    fn page_bytes(&self) -> u32 {
        self.0.page_bytes()
    }
    fn write(&mut self, lpn: u64, data: PageData, now_ns: u64) -> Result<u64, nvmdb_flash::FlashError> {
        self.0.write(lpn, data, now_ns)
    }
    fn read(&mut self, lpn: u64, now_ns: u64) -> Result<(PageData, u64), nvmdb_flash::FlashError> {
        self.0.read(lpn, now_ns)
    }
    fn trim(&mut self, lpn: u64, now_ns: u64) -> Result<u64, nvmdb_flash::FlashError> {
        self.0.trim(lpn, now_ns)
    }
    fn stats(&self) -> nvmdb_flash::StoreStats {
        self.0.stats()
    }
    fn reset_stats(&mut self) {
        self.0.reset_stats();
    }
    fn check_invariants(&self) -> Result<(), String> {
        self.0.check_invariants()
    }
    fn power_cycle(&mut self) -> Result<(), nvmdb_flash::FlashError> {
        self.0.power_cycle()?;
        self.0.trim(0, 0).map(|_| ())
    }
}

#[test]
fn a_lost_page_is_detected() {
    let requests: Vec<Request> = (0..4u64)
        .map(|i| Request {
            time_ns: i,
            op: Op::Write,
            offset_bytes: i * PAGE,
            len_bytes: PAGE,
            content: Content::Bytes(vec![i as u8; PAGE as usize]),
        })
        .collect();
    let mut store = Forgetful(build("baseline", PageContent::Bytes));
    let options = ReplayOptions { content: PageContent::Bytes, power_loss_at: Some(4), ..ReplayOptions::default() };
    let report = nvmdb_flash::replay(&mut store, requests.into_iter().map(Ok::<_, String>), &options).unwrap();
    assert_eq!((report.verified_pages, report.lost_pages, report.corrupt_pages), (4, 1, 0));
}

/// A store that holds the last acknowledged write back in volatile memory, writing it
/// only when the next request arrives: a power cut right after it loses it.
struct DropsLastWrite {
    inner: Box<dyn PageStore>,
    held: Option<(u64, PageData)>,
}

impl DropsLastWrite {
    fn release(&mut self, now_ns: u64) -> Result<(), nvmdb_flash::FlashError> {
        if let Some((lpn, data)) = self.held.take() {
            self.inner.write(lpn, data, now_ns)?;
        }
        Ok(())
    }
}

impl PageStore for DropsLastWrite {
    fn logical_pages(&self) -> u64 {
        self.inner.logical_pages()
    }
    fn page_bytes(&self) -> u32 {
        self.inner.page_bytes()
    }
    fn write(&mut self, lpn: u64, data: PageData, now_ns: u64) -> Result<u64, nvmdb_flash::FlashError> {
        self.release(now_ns)?;
        self.held = Some((lpn, data));
        Ok(now_ns)
    }
    fn read(&mut self, lpn: u64, now_ns: u64) -> Result<(PageData, u64), nvmdb_flash::FlashError> {
        self.release(now_ns)?;
        self.inner.read(lpn, now_ns)
    }
    fn trim(&mut self, lpn: u64, now_ns: u64) -> Result<u64, nvmdb_flash::FlashError> {
        self.release(now_ns)?;
        self.inner.trim(lpn, now_ns)
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
    fn power_cycle(&mut self) -> Result<(), nvmdb_flash::FlashError> {
        self.held = None;
        self.inner.power_cycle()
    }
}

/// The verifier keeps its own model: a store that drops the last acknowledged write is
/// caught right after the recovery, and a later partial write over the lost page (a
/// read-modify-write of what the store returns) does not hide the loss at the end. The
/// same trace on the honest store passes both checks.
#[test]
fn the_verifier_catches_a_store_that_drops_the_last_acknowledged_write() {
    let page = |i: u64, fill: u8| Request {
        time_ns: i,
        op: Op::Write,
        offset_bytes: i * PAGE,
        len_bytes: PAGE,
        content: Content::Bytes(vec![fill; PAGE as usize]),
    };
    let mut requests: Vec<Request> = (0..3).map(|i| page(i, i as u8 + 1)).collect();
    // After the cut: 10 bytes over page 2, the one the lossy store dropped.
    requests.push(Request {
        time_ns: 3,
        op: Op::Write,
        offset_bytes: 2 * PAGE + 100,
        len_bytes: 10,
        content: Content::Bytes(vec![9; 10]),
    });
    let options = ReplayOptions { content: PageContent::Bytes, power_loss_at: Some(3), ..ReplayOptions::default() };
    let run = |store: &mut dyn PageStore| {
        let report = nvmdb_flash::replay(store, requests.iter().cloned().map(Ok::<_, String>), &options).unwrap();
        let after = report.power_loss.expect("a power loss").after_recovery;
        (after.verified_pages, after.lost_pages, after.corrupt_pages, report.lost_pages, report.corrupt_pages)
    };
    assert_eq!(run(build("baseline", PageContent::Bytes).as_mut()), (3, 0, 0, 0, 0), "the honest store");
    let mut lossy = DropsLastWrite { inner: build("baseline", PageContent::Bytes), held: None };
    // Page 2 reads as erased after the recovery (lost); at the end it holds the 10 bytes
    // over erased flash, not the acknowledged page (corrupt).
    assert_eq!(run(&mut lossy), (3, 1, 0, 0, 1), "the lossy store");
}
