//! Synthetic, content-carrying block traces modelled on the thesis's workloads (seed 000,
//! Section 5.1.1): desktop `d1`, `d2` and TPC-C-like `t1`, `t2`, `t3`.
//!
//! Every write carries one content id per 4 KB page ([`Content::PageIds`]) and, for the
//! buffer experiments, the byte ranges of the page that changed since the page was last
//! written ([`SynthPage::changed`]), so small-delta updates are measurable without bytes.
//! Generation is deterministic: one seed, one explicit xoshiro PRNG.
//!
//! # Desktop (`d1`, `d2`)
//! Office use: small irregular requests over a footprint (`footprint_mb`). Request sizes
//! are 1–16 pages, geometric with mean about 2.5 pages; 70% of requests fall in a hot
//! set of 64 "files" (runs of 32 pages at fixed random places), the rest anywhere.
//! `d1` writes 55% of requests, `d2` 65%. Arrivals are exponential (mean 5 ms) with a 2%
//! chance of an idle gap of 1–10 s. A written page gets new content (the whole page
//! changes) except that, with probability 0.25, a write copies the content ids of a
//! whole recently written run (a file copy or save-as): the thesis states desktop traces hold
//! up to 25% duplicate data, and that share is this model's input, not its output.
//!
//! # TPC-C-like (`t1`, `t2`, `t3`)
//! A DBMS over a database of `footprint_mb` (default 1 GB, the thesis's Table 5.2) with
//! an LRU buffer pool of `buffer_pool_pages` (20–100 MB in the thesis) produces the block
//! stream: only buffer-pool misses (reads) and evictions of dirty pages (writes) reach
//! the device, so a smaller pool evicts more often, each time with fewer accumulated
//! changes. Each transaction updates one warehouse/district page (the first 1% of the
//! database, uniform), one customer page (next 30%) and 5–15 stock pages (next 40%),
//! each chosen with a power-law skew (`index = n · u³`), and appends one order-line row to
//! the tail of the last 29% (sequential, wrapping). Every row update changes 20–120
//! contiguous bytes at a random row slot; a page's pending changes are the union of its
//! row updates since it was last written. With probability 0.30 an evicted dirty page
//! goes out exactly as it was last written (its changes were rolled back): the same
//! content id, no changed bytes. This gives the thesis's stated "almost 30%" duplicate
//! share — again a model input.
//! `t1`, `t2`, `t3` share the model and differ only in length, 1 : 4 : 8, as the
//! thesis's 30-minute, 2-hour and 4-hour runs do.

use std::collections::{HashMap, VecDeque};
use std::str::FromStr;

use nvmdb_device::mix64;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::request::{Content, Op, Request};

/// Bytes per page of every synthetic trace.
pub const PAGE_BYTES: u32 = 4096;

/// [`PAGE_BYTES`] as u64.
const PAGE: u64 = PAGE_BYTES as u64;

/// The largest footprint, MB: 2^60 bytes, so every byte offset fits in u64 with room.
pub const MAX_FOOTPRINT_MB: u64 = 1 << 40;

/// The largest DBMS buffer pool, 4 KB pages (4 GiB): filling it before the first write
/// takes about 5 s (measured: 4.9 s for this size on a loaded two-core machine).
pub const MAX_BUFFER_POOL_PAGES: u64 = 1 << 20;

/// The five workloads of the thesis's Section 5.1.1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SynthWorkload {
    /// Desktop, 10 hours.
    D1,
    /// Desktop, 20 hours.
    D2,
    /// TPC-C, 30 minutes.
    T1,
    /// TPC-C, 2 hours.
    T2,
    /// TPC-C, 4 hours.
    T3,
}

impl SynthWorkload {
    /// All five, in the thesis's order.
    pub const ALL: [SynthWorkload; 5] =
        [SynthWorkload::D1, SynthWorkload::D2, SynthWorkload::T1, SynthWorkload::T2, SynthWorkload::T3];

    /// `d1` … `t3`.
    pub fn name(self) -> &'static str {
        match self {
            SynthWorkload::D1 => "d1",
            SynthWorkload::D2 => "d2",
            SynthWorkload::T1 => "t1",
            SynthWorkload::T2 => "t2",
            SynthWorkload::T3 => "t3",
        }
    }

    /// Whether this is a TPC-C-like workload.
    pub fn is_transactional(self) -> bool {
        matches!(self, SynthWorkload::T1 | SynthWorkload::T2 | SynthWorkload::T3)
    }

    /// Default length in requests; the ratios follow the thesis's run durations
    /// (d: 10 h, 20 h; t: 0.5 h, 2 h, 4 h).
    pub fn default_requests(self) -> u64 {
        match self {
            SynthWorkload::D1 => 100_000,
            SynthWorkload::D2 => 200_000,
            SynthWorkload::T1 => 50_000,
            SynthWorkload::T2 => 200_000,
            SynthWorkload::T3 => 400_000,
        }
    }

    /// The model's duplicate-content probability per written page (the thesis's stated
    /// shares, used as inputs).
    pub fn duplicate_probability(self) -> f64 {
        if self.is_transactional() {
            0.30
        } else {
            0.25
        }
    }
}

impl FromStr for SynthWorkload {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        SynthWorkload::ALL
            .into_iter()
            .find(|w| w.name() == s)
            .ok_or_else(|| format!("unknown workload '{s}' (expected d1, d2, t1, t2 or t3)"))
    }
}

/// Generator parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SynthParams {
    /// Which workload.
    pub workload: SynthWorkload,
    /// Requests to generate.
    pub requests: u64,
    /// The seed.
    pub seed: u64,
    /// Database size (t) or desktop footprint (d), MB.
    pub footprint_mb: u64,
    /// DBMS buffer pool, 4 KB pages (TPC-C-like workloads only).
    pub buffer_pool_pages: u64,
}

impl SynthParams {
    /// The workload's defaults: its default length, a 1 GB footprint, a 60 MB pool.
    pub fn new(workload: SynthWorkload, seed: u64) -> SynthParams {
        SynthParams {
            workload,
            requests: workload.default_requests(),
            seed,
            footprint_mb: 1024,
            buffer_pool_pages: 60 * 256,
        }
    }

    /// Pages of the footprint.
    pub fn footprint_pages(&self) -> u64 {
        self.footprint_mb.saturating_mul(1 << 20) / PAGE
    }

    /// The most memory the generator holds, bytes: per written page its content ids (a
    /// hash map entry of 32 B, in a table that doubles: up to 2 × 8/7 slots an entry, and
    /// the old table beside the new while it grows, 128 B in all), per buffer-pool page
    /// its state in such a map (48 B) and up to four LRU queue entries (16 B each, in a
    /// doubling queue), 256 B in all. `tests/memory_estimate.rs` measures the peak: the
    /// estimate is at least it and at most 1.5× it.
    pub fn estimated_memory_bytes(&self) -> u64 {
        let written = self.footprint_pages().min(self.requests.saturating_mul(16));
        let pool =
            if self.workload.is_transactional() { self.buffer_pool_pages.min(self.footprint_pages()) } else { 0 };
        written.saturating_mul(128).saturating_add(pool.saturating_mul(256)).saturating_add(1 << 20)
    }

    fn validate(&self) -> Result<(), String> {
        if self.footprint_mb > MAX_FOOTPRINT_MB {
            return Err(format!("footprint {} MB is too large (at most 2^40 MB)", self.footprint_mb));
        }
        if self.footprint_pages() < 1024 {
            return Err(format!("footprint {} MB is too small (at least 4 MB)", self.footprint_mb));
        }
        if self.workload.is_transactional() && self.buffer_pool_pages < 16 {
            return Err(format!("buffer pool of {} pages is too small (at least 16)", self.buffer_pool_pages));
        }
        // The pool is filled before the first write, at about 5 µs a page: a larger one
        // would run for minutes before writing anything.
        if self.workload.is_transactional() && self.buffer_pool_pages > MAX_BUFFER_POOL_PAGES {
            return Err(format!(
                "buffer pool of {} pages is more than {MAX_BUFFER_POOL_PAGES} (4 GiB)",
                self.buffer_pool_pages
            ));
        }
        // Evictions (the only writes) start once the pool is full; the sequential order-line
        // appends fill a pool of at most a quarter of the database within a bounded time, a
        // larger one might never fill and generation would never end.
        if self.workload.is_transactional() && self.buffer_pool_pages > self.footprint_pages() / 4 {
            return Err(format!(
                "buffer pool of {} pages is more than a quarter of the {}-page database",
                self.buffer_pool_pages,
                self.footprint_pages()
            ));
        }
        Ok(())
    }
}

/// One page of a synthetic write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SynthPage {
    /// Logical page number.
    pub lpn: u64,
    /// The page's content id.
    pub content_id: u64,
    /// Byte ranges `(offset, len)` changed since the page's previous write, sorted and
    /// disjoint (empty for a rewrite of identical content); `None` when the whole page is
    /// new content.
    pub changed: Option<Vec<(u32, u32)>>,
    /// Whether this content id was written before (to any page).
    pub duplicate: bool,
}

impl SynthPage {
    /// Bytes changed since the page's previous write (a whole page when new).
    pub fn delta_bytes(&self) -> u32 {
        self.changed.as_ref().map_or(PAGE_BYTES, |r| r.iter().map(|&(_, len)| len).sum())
    }
}

/// One synthetic request and, for a write, what each page carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SynthRequest {
    /// The request (writes carry [`Content::PageIds`]).
    pub request: Request,
    /// One entry per page of a write; empty for reads.
    pub pages: Vec<SynthPage>,
}

/// Adds `(offset, len)` to a sorted disjoint range list, merging overlaps and neighbours.
/// Ranges are within a page: an end past `u32::MAX` is cut there. The list is edited in
/// place: the ranges merged are consecutive (those ending at or after `offset`, up to the
/// last starting at or before the merged end), so no other range moves but by the insertion or removal.
pub fn union_range(ranges: &mut Vec<(u32, u32)>, offset: u32, len: u32) {
    let (mut start, mut end) = (offset, offset.saturating_add(len));
    // Sorted and disjoint with gaps between them, so their ends increase too.
    let first = ranges.partition_point(|&(o, l)| o.saturating_add(l) < start);
    let merged = ranges[first..]
        .iter()
        .take_while(|&&(o, l)| {
            let joins = o <= end;
            if joins {
                start = start.min(o);
                end = end.max(o.saturating_add(l));
            }
            joins
        })
        .count();
    let union = (start, end.saturating_sub(start));
    if merged == 0 {
        ranges.insert(first, union);
    } else {
        ranges[first] = union;
        ranges.drain(first.saturating_add(1)..first.saturating_add(merged));
    }
}

/// A resident page's changed byte ranges, not yet written out.
#[derive(Debug, Default, PartialEq)]
struct PoolPage {
    dirty: Vec<(u32, u32)>,
}

/// The buffer pool's resident pages in LRU order.
#[derive(Debug, Default)]
struct LruPool {
    /// Page → its state and the stamp of its last touch.
    pages: HashMap<u64, (PoolPage, u64)>,
    /// `(stamp, page)` for each touch of a page, oldest first. An entry is live while the
    /// page is resident with that stamp, so the first live one is the least recently
    /// used page: a touch appends an entry, rather than taking the page's old one out of
    /// an ordered map. Stale entries are dropped as they reach the front, and all of them
    /// when the queue holds [`LruPool::QUEUE_PER_PAGE`] entries per resident page.
    queue: VecDeque<(u64, u64)>,
    /// Touches so far: the latest stamp.
    clock: u64,
}

impl LruPool {
    const QUEUE_PER_PAGE: usize = 4;

    fn len(&self) -> usize {
        self.pages.len()
    }

    fn contains(&self, lpn: u64) -> bool {
        self.pages.contains_key(&lpn)
    }

    /// Makes resident `lpn` the most recently used, putting it in with nothing changed if
    /// absent; returns its state.
    fn touch(&mut self, lpn: u64) -> &mut PoolPage {
        self.clock = self.clock.saturating_add(1);
        if self.queue.len() >= Self::QUEUE_PER_PAGE.saturating_mul(self.pages.len()) {
            let pages = &self.pages;
            self.queue.retain(|(stamp, lpn)| pages.get(lpn).is_some_and(|&(_, s)| s == *stamp));
        }
        self.queue.push_back((self.clock, lpn));
        let (page, stamp) = self.pages.entry(lpn).or_default();
        *stamp = self.clock;
        page
    }

    /// Takes out the least recently used page.
    fn pop_lru(&mut self) -> Option<(u64, PoolPage)> {
        loop {
            let (stamp, lpn) = self.queue.pop_front()?;
            if self.pages.get(&lpn).is_some_and(|&(_, s)| s == stamp) {
                return self.pages.remove(&lpn).map(|(page, _)| (lpn, page));
            }
        }
    }
}

/// The deterministic generator; iterate it for [`SynthRequest`]s.
pub struct SynthGenerator {
    params: SynthParams,
    rng: Xoshiro256PlusPlus,
    emitted: u64,
    time_ns: u64,
    next_content: u64,
    /// Current and previous content id of every page ever written.
    contents: HashMap<u64, (u64, Option<u64>)>,
    /// Desktop: hot file starts; recently written runs of content ids.
    hot_files: Vec<u64>,
    recent_runs: VecDeque<Vec<u64>>,
    /// TPC-C: the buffer pool, and the pending requests.
    pool: LruPool,
    append_cursor: u64,
    pending: VecDeque<SynthRequest>,
}

impl std::fmt::Debug for SynthGenerator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SynthGenerator").field("params", &self.params).field("emitted", &self.emitted).finish()
    }
}

#[expect(
    clippy::arithmetic_side_effects,
    reason = "bounded by the parameters validated in new: page numbers stay below the footprint's at most \
              2^48 pages and byte offsets below its 2^60 bytes, row offsets within a 4 KB page; counters \
              advance by one a step, and no run takes 2^64 steps; the clock saturates"
)]
impl SynthGenerator {
    /// A generator; fails with a message on unusable parameters.
    pub fn new(params: SynthParams) -> Result<SynthGenerator, String> {
        params.validate()?;
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(params.seed);
        let pages = params.footprint_pages();
        let hot_files = (0..64).map(|_| rng.gen_range(0..pages - 32)).collect();
        Ok(SynthGenerator {
            params,
            rng,
            emitted: 0,
            time_ns: 0,
            next_content: 0,
            contents: HashMap::new(),
            hot_files,
            recent_runs: VecDeque::new(),
            pool: LruPool::default(),
            append_cursor: 0,
            pending: VecDeque::new(),
        })
    }

    /// The parameters.
    pub fn params(&self) -> &SynthParams {
        &self.params
    }

    fn fresh_content(&mut self) -> u64 {
        self.next_content += 1;
        mix64(self.params.seed ^ mix64(self.next_content))
    }

    fn write_request(&self, pages: Vec<SynthPage>) -> SynthRequest {
        let first = pages[0].lpn;
        let request = Request {
            time_ns: self.time_ns,
            op: Op::Write,
            offset_bytes: first * u64::from(PAGE_BYTES),
            len_bytes: pages.len() as u64 * u64::from(PAGE_BYTES),
            content: Content::PageIds(pages.iter().map(|p| p.content_id).collect()),
        };
        SynthRequest { request, pages }
    }

    fn read_request(&self, lpn: u64, count: u64) -> SynthRequest {
        let request = Request {
            time_ns: self.time_ns,
            op: Op::Read,
            offset_bytes: lpn * u64::from(PAGE_BYTES),
            len_bytes: count * u64::from(PAGE_BYTES),
            content: Content::Unknown,
        };
        SynthRequest { request, pages: Vec::new() }
    }

    /// Records a page's new content, keeping its previous one.
    fn record(&mut self, lpn: u64, content_id: u64) {
        let previous = self.contents.get(&lpn).map(|&(current, _)| current);
        self.contents.insert(lpn, (content_id, previous));
    }

    fn desktop_next(&mut self) -> SynthRequest {
        let pages = self.params.footprint_pages();
        let gap_ns = if self.rng.gen_bool(0.02) {
            self.rng.gen_range(1_000_000_000..10_000_000_000u64)
        } else {
            exponential_ns(&mut self.rng, 5e6)
        };
        self.time_ns = self.time_ns.saturating_add(gap_ns);
        let mut count = 1u64;
        while count < 16 && self.rng.gen_bool(0.6) {
            count += 1;
        }
        let start = if self.rng.gen_bool(0.7) {
            let file = self.hot_files[self.rng.gen_range(0..self.hot_files.len())];
            (file + self.rng.gen_range(0..32)).min(pages - count)
        } else {
            self.rng.gen_range(0..pages - count)
        };
        let write_share = if self.params.workload == SynthWorkload::D1 { 0.55 } else { 0.65 };
        if !self.rng.gen_bool(write_share) {
            return self.read_request(start, count);
        }
        let copy = if self.rng.gen_bool(self.params.workload.duplicate_probability()) && !self.recent_runs.is_empty() {
            Some(self.recent_runs[self.rng.gen_range(0..self.recent_runs.len())].clone())
        } else {
            None
        };
        // A copy writes the whole source run.
        let count = copy.as_ref().map_or(count, |run| run.len() as u64);
        let start = start.min(pages - count);
        let mut out = Vec::with_capacity(usize::try_from(count).unwrap_or_default());
        for i in 0..count {
            let copied = copy.as_ref().and_then(|run| run.get(usize::try_from(i).ok()?).copied());
            let content_id = copied.unwrap_or_else(|| self.fresh_content());
            let lpn = start + i;
            self.record(lpn, content_id);
            out.push(SynthPage { lpn, content_id, changed: None, duplicate: copied.is_some() });
        }
        self.recent_runs.push_back(out.iter().map(|p| p.content_id).collect());
        if self.recent_runs.len() > 256 {
            self.recent_runs.pop_front();
        }
        self.write_request(out)
    }

    /// Touches a page in the buffer pool: a miss queues a read (and maybe an eviction
    /// write); an update adds its changed bytes to the page's pending set.
    fn touch(&mut self, lpn: u64, update: Option<(u32, u32)>) {
        if !self.pool.contains(lpn) {
            if self.pool.len() as u64 >= self.params.buffer_pool_pages {
                self.evict();
            }
            if self.contents.contains_key(&lpn) {
                let read = self.read_request(lpn, 1);
                self.pending.push_back(read);
            }
        }
        let page = self.pool.touch(lpn);
        if let Some((offset, len)) = update {
            union_range(&mut page.dirty, offset, len);
        }
    }

    fn evict(&mut self) {
        let (lpn, page) = self.pool.pop_lru().expect("a full pool has a least recent page");
        if page.dirty.is_empty() {
            return;
        }
        let current = self.contents.get(&lpn).map(|&(current, _)| current);
        let p = self.params.workload.duplicate_probability();
        // A rolled-back change: the page goes out exactly as it was last written.
        let rolled_back = current.filter(|_| self.rng.gen_bool(p));
        let (content_id, changed, duplicate) = match rolled_back {
            Some(id) => (id, Some(Vec::new()), true),
            None => (self.fresh_content(), current.map(|_| page.dirty), false),
        };
        self.record(lpn, content_id);
        let write = self.write_request(vec![SynthPage { lpn, content_id, changed, duplicate }]);
        self.pending.push_back(write);
    }

    fn row_update(&mut self) -> (u32, u32) {
        let len = self.rng.gen_range(20..=120u32);
        let slot = self.rng.gen_range(0..PAGE_BYTES / 128);
        (slot * 128 + self.rng.gen_range(0..(128 - len.min(127)).max(1)), len.min(128))
    }

    fn skewed(&mut self, base: u64, span: u64) -> u64 {
        let u: f64 = self.rng.gen();
        base + cubed_share(span, u).min(span - 1)
    }

    fn transaction(&mut self) {
        let pages = self.params.footprint_pages();
        let district_span = (pages / 100).max(1);
        let customer_span = pages * 30 / 100;
        let stock_span = pages * 40 / 100;
        let append_base = district_span + customer_span + stock_span;
        let append_span = pages - append_base;
        self.time_ns = self.time_ns.saturating_add(exponential_ns(&mut self.rng, 2e6));
        let district = self.rng.gen_range(0..district_span);
        let update = self.row_update();
        self.touch(district, Some(update));
        let customer = self.skewed(district_span, customer_span);
        let update = self.row_update();
        self.touch(customer, Some(update));
        for _ in 0..self.rng.gen_range(5..=15) {
            let stock = self.skewed(district_span + customer_span, stock_span);
            let update = self.row_update();
            self.touch(stock, Some(update));
        }
        let tail = append_base + (self.append_cursor / 32) % append_span;
        let slot = (self.append_cursor % 32) as u32;
        self.append_cursor += 1;
        self.touch(tail, Some((slot * 128, 100)));
    }

    /// Generates every page of the database once, sequentially, as 16-page writes: the
    /// initial load that precedes a TPC-C run (not part of the trace).
    pub fn initial_load(&mut self) -> Vec<SynthRequest> {
        let pages = self.params.footprint_pages();
        let mut out = Vec::new();
        for start in (0..pages).step_by(16) {
            let run: Vec<SynthPage> = (start..(start + 16).min(pages))
                .map(|lpn| {
                    let content_id = self.fresh_content();
                    self.record(lpn, content_id);
                    SynthPage { lpn, content_id, changed: None, duplicate: false }
                })
                .collect();
            out.push(self.write_request(run));
        }
        out
    }
}

impl Iterator for SynthGenerator {
    type Item = SynthRequest;
    fn next(&mut self) -> Option<SynthRequest> {
        if self.emitted >= self.params.requests {
            return None;
        }
        // Below `requests` (checked above), so one more fits.
        self.emitted = self.emitted.saturating_add(1);
        if !self.params.workload.is_transactional() {
            return Some(self.desktop_next());
        }
        while self.pending.is_empty() {
            self.transaction();
        }
        self.pending.pop_front()
    }
}

/// An exponentially distributed gap of mean `mean_ns`, whole nanoseconds.
#[expect(
    clippy::cast_possible_truncation,
    reason = "-ln(1 - u) for u in [0, 1) is at most 53 ln 2 < 37, so the gap is below 37 × mean_ns, far inside u64"
)]
fn exponential_ns(rng: &mut impl Rng, mean_ns: f64) -> u64 {
    (-(1.0 - rng.gen::<f64>()).ln() * mean_ns) as u64
}

/// `span · u³`, rounded down: the power-law skew of the TPC-C-like model.
#[expect(
    clippy::cast_possible_truncation,
    reason = "u is in [0, 1), so the product is at most span (as f64); spans here are parts of a \
              footprint of at most 2^48 pages"
)]
fn cubed_share(span: u64, u: f64) -> u64 {
    (span as f64 * u * u * u) as u64
}

/// One FIU-format line per 4 KB page of a request: `ts pid process lba size op major
/// minor md5`, lba and size in 512 B sectors, md5 = 32 hex digits of the content id.
#[expect(
    clippy::arithmetic_side_effects,
    reason = "first is at most 2^64 / 512 and i × sectors below len_bytes / 512, so their sum is below 2^56"
)]
pub fn fiu_lines(request: &SynthRequest, out: &mut impl std::fmt::Write) -> std::fmt::Result {
    let sectors = u64::from(PAGE_BYTES / 512);
    let first = request.request.offset_bytes / 512;
    let pages = request.request.len_bytes / PAGE;
    let (op, process) = match request.request.op {
        Op::Write => ("W", "synth"),
        _ => ("R", "synth"),
    };
    for i in 0..pages {
        let content = usize::try_from(i).ok().and_then(|i| request.pages.get(i)).map_or(0, |p| p.content_id);
        writeln!(
            out,
            "{} 1000 {} {} {} {} 8 0 {:016x}{:016x}",
            request.request.time_ns,
            process,
            first + i * sectors,
            sectors,
            op,
            content,
            mix64(content)
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small(workload: SynthWorkload) -> SynthParams {
        SynthParams { workload, requests: 3000, seed: 7, footprint_mb: 16, buffer_pool_pages: 256 }
    }

    proptest::proptest! {
        /// The pool against a list kept in recency order: the same page leaves on every
        /// eviction, with the changes made to it, over long runs of touches (which
        /// compact the queue many times).
        #[test]
        fn the_pool_evicts_as_a_plain_lru_list(
            capacity in 1usize..9,
            ops in proptest::collection::vec((0u64..24, 0u32..4000), 1..600),
        ) {
            let mut pool = LruPool::default();
            // Least recently used first: (page, its changes).
            let mut reference: Vec<(u64, Vec<(u32, u32)>)> = Vec::new();
            for (lpn, offset) in ops {
                if !pool.contains(lpn) && pool.len() >= capacity {
                    let (evicted, page) = pool.pop_lru().expect("a full pool");
                    let (expected, dirty) = reference.remove(0);
                    proptest::prop_assert_eq!((evicted, page.dirty), (expected, dirty));
                }
                union_range(&mut pool.touch(lpn).dirty, offset, 8);
                let mut entry = match reference.iter().position(|&(p, _)| p == lpn) {
                    Some(i) => reference.remove(i),
                    None => (lpn, Vec::new()),
                };
                union_range(&mut entry.1, offset, 8);
                reference.push(entry);
                proptest::prop_assert_eq!(pool.len(), reference.len());
                proptest::prop_assert!(pool.queue.len() <= LruPool::QUEUE_PER_PAGE.saturating_mul(capacity));
            }
        }
    }

    #[test]
    fn generation_is_deterministic() {
        for w in SynthWorkload::ALL {
            let a: Vec<_> = SynthGenerator::new(small(w)).unwrap().collect();
            let b: Vec<_> = SynthGenerator::new(small(w)).unwrap().collect();
            assert_eq!(a, b, "{}", w.name());
            assert_eq!(a.len(), 3000);
        }
    }

    #[test]
    fn tpcc_writes_are_small_deltas_and_duplicates_appear() {
        let mut generator = SynthGenerator::new(small(SynthWorkload::T1)).unwrap();
        let load = generator.initial_load();
        assert_eq!(load.iter().map(|r| r.pages.len()).sum::<usize>(), 16 * 256);
        let requests: Vec<_> = generator.collect();
        let pages: Vec<_> = requests.iter().flat_map(|r| r.pages.iter()).collect();
        assert!(!pages.is_empty());
        assert!(pages.iter().all(|p| p.changed.is_some()), "after the load every write is an update");
        let mean = pages.iter().map(|p| u64::from(p.delta_bytes())).sum::<u64>() / pages.len() as u64;
        assert!(mean < 1024, "mean delta {mean}");
        let dups = pages.iter().filter(|p| p.duplicate).count();
        let share = dups as f64 / pages.len() as f64;
        assert!((0.2..0.4).contains(&share), "duplicate share {share}");
        for r in &requests {
            assert!(r.request.offset_bytes < 16 << 20);
        }
    }

    #[test]
    fn parameters_that_cannot_finish_are_refused() {
        let refused = |params: SynthParams| SynthGenerator::new(params).unwrap_err();
        let t1 = small(SynthWorkload::T1);
        assert!(refused(SynthParams { buffer_pool_pages: 16 * 256, ..t1 }).contains("quarter"));
        assert!(SynthGenerator::new(SynthParams { buffer_pool_pages: 4 * 256, ..t1 }).unwrap().next().is_some());
        assert!(refused(SynthParams { footprint_mb: u64::MAX, ..t1 }).contains("too large"));
        assert!(refused(SynthParams { footprint_mb: 3, ..t1 }).contains("too small"));
        assert!(refused(SynthParams { buffer_pool_pages: 15, ..t1 }).contains("too small"));
        let huge = SynthParams { footprint_mb: MAX_FOOTPRINT_MB, requests: u64::MAX, ..small(SynthWorkload::D1) };
        assert_eq!(huge.estimated_memory_bytes(), (MAX_FOOTPRINT_MB << 8) * 128 + (1 << 20));
        let big_pool = SynthParams { footprint_mb: 1 << 20, buffer_pool_pages: MAX_BUFFER_POOL_PAGES + 1, ..t1 };
        assert!(refused(big_pool).contains("more than 1048576 (4 GiB)"));
    }

    #[test]
    fn union_range_merges() {
        let mut r = vec![(0, 10), (20, 5)];
        union_range(&mut r, 8, 14);
        assert_eq!(r, vec![(0, 25)]);
        union_range(&mut r, 100, 1);
        assert_eq!(r, vec![(0, 25), (100, 1)]);
        union_range(&mut r, 26, 0);
        assert_eq!(r, vec![(0, 25), (26, 0), (100, 1)]);
        union_range(&mut r, 25, 1);
        assert_eq!(r, vec![(0, 26), (100, 1)], "neighbours join");
    }

    /// The in-place union against a rebuild of the whole list that tests every range
    /// against the growing merged range, on random sequences of ranges.
    #[test]
    fn union_range_matches_a_rebuilt_list() {
        fn rebuilt(ranges: &[(u32, u32)], offset: u32, len: u32) -> Vec<(u32, u32)> {
            let (mut start, mut end) = (offset, offset.saturating_add(len));
            let mut out = Vec::new();
            for &(o, l) in ranges {
                if o.saturating_add(l) < start || o > end {
                    out.push((o, l));
                } else {
                    start = start.min(o);
                    end = end.max(o.saturating_add(l));
                }
            }
            let at = out.partition_point(|&(o, _)| o < start);
            out.insert(at, (start, end.saturating_sub(start)));
            out
        }
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
        for _ in 0..2_000 {
            let mut ranges = Vec::new();
            for _ in 0..rng.gen_range(1..12) {
                let (offset, len) = match rng.gen_range(0..8) {
                    0 => (u32::MAX - rng.gen_range(0..4), rng.gen_range(0..8)),
                    _ => (rng.gen_range(0..4096), rng.gen_range(0..160)),
                };
                let expected = rebuilt(&ranges, offset, len);
                union_range(&mut ranges, offset, len);
                assert_eq!(ranges, expected, "after adding ({offset}, {len})");
            }
        }
    }

    #[test]
    fn fiu_lines_have_nine_fields() {
        let mut g = SynthGenerator::new(small(SynthWorkload::D1)).unwrap();
        let mut text = String::new();
        for r in g.by_ref().take(50) {
            fiu_lines(&r, &mut text).unwrap();
        }
        for line in text.lines() {
            let fields: Vec<_> = line.split(' ').collect();
            assert_eq!(fields.len(), 9);
            assert_eq!(fields[8].len(), 32);
        }
    }
}
