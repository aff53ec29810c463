//! The replay's driver ([`replay_reading`]) and its engine, which splits each request into
//! pages and issues them to the store.

use nvmdb_device::{Activity, PageContent, PageData};
use nvmdb_workload::{Content, Op, Request};
use rand::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::layer::{FlashError, PageStore, StoreStats};

use super::model::Model;
use super::options::{CutPastEnd, ReadBack, ReplayError, ReplayOptions, SYNTHETIC_BYTES_STREAM};
use super::report::{PowerLossReport, ReplayReport};
use super::responses::ResponseTimes;

/// [`replay_passes`](super::replay_passes), sending the bytes of every read request to
/// `reads` (bytes mode only).
pub fn replay_reading<'a, E, I>(
    store: &'a mut dyn PageStore,
    mut trace: impl FnMut() -> I,
    options: &ReplayOptions,
    reads: Option<&'a mut dyn ReadBack>,
) -> Result<ReplayReport, ReplayError<E>>
where
    I: Iterator<Item = Result<Request, E>>,
{
    let before = |error| ReplayError::Store { request: 0, error };
    if options.passes == 0 {
        return Err(before(FlashError::Config("a replay makes at least one pass".into())));
    }
    if reads.is_some() && options.content != PageContent::Bytes {
        return Err(before(FlashError::Config("reading back needs content = \"bytes\"".into())));
    }
    if options.power_loss_at.is_some() && options.power_loss_at_write.is_some() {
        return Err(before(FlashError::Config("one power cut: between requests or at a device write".into())));
    }
    if options.power_loss_at_write == Some(0) || options.power_loss_during_recovery == Some(0) {
        return Err(before(FlashError::Config("device writes count from 1".into())));
    }
    let mut engine = Engine::new(store, options, reads);
    if options.power_loss_at_write.is_some() && engine.store.power_switch().is_none() {
        return Err(before(FlashError::Config("this storage layer has no power switch to cut".into())));
    }
    let was = engine.store.power_switch().map(|switch| switch.set_activity(Activity::Setup));
    if options.age {
        engine.age().map_err(before)?;
    }
    if options.prefill {
        engine.prefill(trace()).map_err(|e| match e {
            Fill::Input(e) => ReplayError::Input(e),
            Fill::Store(error) => before(error),
        })?;
    }
    if let (Some(was), Some(switch)) = (was, engine.store.power_switch()) {
        switch.set_activity(was);
        engine.trace_writes = switch.writes();
        if let Some(n) = options.power_loss_at_write {
            switch.cut_before(engine.trace_writes.saturating_add(n - 1));
        }
    }
    if options.power_loss_at == Some(0) {
        engine.power_cycle(0, false).map_err(|stop| stop.at(0))?;
    }
    let mut seen = 0;
    for pass in 0..options.passes {
        engine.start_pass(pass);
        for request in trace() {
            let request = request.map_err(ReplayError::Input)?;
            let index = seen;
            nvmdb_cancel::check().map_err(|e| ReplayError::Store { request: index, error: e.into() })?;
            if index == options.warmup_requests && index > 0 {
                engine.start_measuring();
            }
            match engine.run(&request) {
                Err(Stop::Store(FlashError::PowerCut(_))) if engine.power_loss.is_none() => {
                    engine.power_cycle(index + 1, true).map_err(|stop| stop.at(index))?;
                }
                other => other.map_err(|stop| stop.at(index))?,
            }
            seen = index + 1;
            if options.power_loss_at == Some(seen) {
                engine.power_cycle(seen, false).map_err(|stop| stop.at(index))?;
            }
        }
    }
    if let Some(asked) = options.power_loss_at.filter(|&n| n > seen) {
        return Err(ReplayError::CutPastEnd(CutPastEnd::Request { asked, requests: seen }));
    }
    if seen <= options.warmup_requests && options.warmup_requests > 0 {
        // The whole trace was warm-up: nothing is measured.
        engine.start_measuring();
    }
    if options.drain {
        match engine.drain() {
            Err(FlashError::PowerCut(_)) if engine.power_loss.is_none() => {
                // Cut in the drain: recover, and drain what the recovered store holds.
                engine.power_cycle(seen + 1, true).map_err(|stop| stop.at(seen))?;
                engine.drain().map_err(|error| ReplayError::Store { request: seen, error })?;
            }
            other => other.map_err(|error| ReplayError::Store { request: seen, error })?,
        }
    }
    if let Some(asked) = options.power_loss_at_write.filter(|_| engine.power_loss.is_none()) {
        let writes = engine.store.power_switch().map_or(0, |switch| switch.writes()) - engine.trace_writes;
        return Err(ReplayError::CutPastEnd(CutPastEnd::DeviceWrite { asked, writes }));
    }
    let mut report = engine.finish();
    if let Some(model) = &engine.model {
        let (check, _) = model
            .check(&mut *engine.store, engine.clock_ns)
            .map_err(|error| ReplayError::Store { request: seen, error })?;
        report.set_check(&check);
        if let Some(last) = &mut report.last_pass {
            last.set_check(&check);
        }
    }
    Ok(report)
}

/// Why a request stopped: the store refused it, the read-back failed, or a second cut
/// asked for lay past the end of the recovery.
enum Stop {
    Store(FlashError),
    ReadBack(String),
    PastEnd(CutPastEnd),
}

impl Stop {
    /// The replay error of request `request` (from 0) stopping so.
    fn at<E>(self, request: u64) -> ReplayError<E> {
        match self {
            Stop::Store(error) => ReplayError::Store { request, error },
            Stop::ReadBack(e) => ReplayError::ReadBack(e),
            Stop::PastEnd(cut) => ReplayError::CutPastEnd(cut),
        }
    }
}

impl From<FlashError> for Stop {
    fn from(error: FlashError) -> Stop {
        Stop::Store(error)
    }
}

/// A pre-fill failure: the trace or the store.
enum Fill<E> {
    Input(E),
    Store(FlashError),
}

/// Where the last of several passes started: the counters then, and its own response
/// times and first arrival since.
struct LastPass {
    stats: StoreStats,
    report: ReplayReport,
    responses_ns: ResponseTimes,
    first_arrival_ns: Option<u64>,
}

struct Engine<'a> {
    store: &'a mut dyn PageStore,
    options: ReplayOptions,
    page_bytes: u64,
    /// `log2(page_bytes)` when the page size is a power of two (the usual case: a page
    /// number is then a shift, without a division on every request).
    page_shift: Option<u32>,
    logical_pages: u64,
    /// The logical capacity, bytes (saturating).
    capacity_bytes: u64,
    report: ReplayReport,
    responses_ns: ResponseTimes,
    first_arrival_ns: Option<u64>,
    last_completion_ns: u64,
    last_arrival_ns: u64,
    synthetic_id: u64,
    /// The synthetic bytes of bytes mode ([`SYNTHETIC_BYTES_STREAM`]).
    bytes_rng: Xoshiro256PlusPlus,
    /// Where the bytes of read requests go (bytes mode).
    reads: Option<&'a mut dyn ReadBack>,
    /// What each written page may read back as (power-loss runs only).
    model: Option<Model>,
    power_cycles: u64,
    /// Where the power was cut, and the check after the recovery.
    power_loss: Option<PowerLossReport>,
    /// The counters of the check after the recovery, left out of every figure (until the
    /// counters are next zeroed).
    excluded: Option<StoreStats>,
    /// The store's device writes before the trace (the set-up's).
    trace_writes: u64,
    /// Added to every arrival time of the pass (the ageing and pre-fill's duration, then
    /// what places a pass after the one before).
    time_offset_ns: u64,
    /// The latest completion so far, of anything (ageing and pre-fill included).
    clock_ns: u64,
    /// Set at the start of a pass after the first: the first request's arrival is moved to
    /// `clock_ns`.
    pass_starts: bool,
    /// The last pass, once it has started (only with more than one).
    last_pass: Option<LastPass>,
}

impl<'a> Engine<'a> {
    fn new(store: &'a mut dyn PageStore, options: &ReplayOptions, reads: Option<&'a mut dyn ReadBack>) -> Engine<'a> {
        let page_bytes = u64::from(store.page_bytes());
        let logical_pages = store.logical_pages();
        assert!(page_bytes > 0 && logical_pages > 0, "a store has pages");
        Engine {
            store,
            options: *options,
            page_bytes,
            page_shift: page_bytes.is_power_of_two().then(|| page_bytes.trailing_zeros()),
            logical_pages,
            capacity_bytes: logical_pages.saturating_mul(page_bytes),
            report: ReplayReport::empty(options.content),
            responses_ns: ResponseTimes::default(),
            first_arrival_ns: None,
            last_completion_ns: 0,
            last_arrival_ns: 0,
            synthetic_id: options.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15),
            bytes_rng: Xoshiro256PlusPlus::seed_from_u64(options.seed ^ SYNTHETIC_BYTES_STREAM),
            reads,
            model: (options.power_loss_at.is_some() || options.power_loss_at_write.is_some())
                .then(|| Model::new(options.content, page_bytes as usize)),
            power_cycles: 0,
            power_loss: None,
            excluded: None,
            trace_writes: 0,
            time_offset_ns: 0,
            clock_ns: 0,
            pass_starts: false,
            last_pass: None,
        }
    }

    fn start_measuring(&mut self) {
        self.store.reset_stats();
        self.excluded = None;
        self.report = ReplayReport::empty(self.options.content);
        self.responses_ns.clear();
        self.first_arrival_ns = None;
        self.last_completion_ns = 0;
        if let Some(last) = &mut self.last_pass {
            // The measured part of the last pass starts here.
            *last = LastPass {
                stats: StoreStats::default(),
                report: ReplayReport::empty(self.options.content),
                responses_ns: ResponseTimes::default(),
                first_arrival_ns: None,
            };
        }
    }

    /// Ends the set-up (ageing, pre-fill) done at `done_ns`: the counters are zeroed and
    /// the trace starts then.
    fn end_setup(&mut self, done_ns: u64) {
        self.start_measuring();
        self.clock_ns = self.clock_ns.max(done_ns);
        self.time_offset_ns = self.clock_ns;
    }

    /// A whole page of new synthetic content for page `lpn` (the set-up's writes),
    /// remembered as what it must read back as.
    fn fresh_page(&mut self, lpn: u64) -> PageData {
        let fill = Request {
            time_ns: 0,
            op: Op::Write,
            offset_bytes: lpn * self.page_bytes,
            len_bytes: self.page_bytes,
            content: Content::Unknown,
        };
        let data = self.new_data(&fill, 0, 0, None);
        if let Some(model) = &mut self.model {
            // Each set-up write is a request of its own.
            model.begin_request();
        }
        self.remember(lpn, &data);
        data
    }

    /// Ages the device ([`ReplayOptions::age`]): every logical page written once in order,
    /// then as many random overwrites, all at time 0 and new content.
    fn age(&mut self) -> Result<(), FlashError> {
        let pages = self.logical_pages;
        let mut done_ns = 0;
        // Each write carries fresh synthetic content (the ageing's content ids, which say
        // what each page ends holding, are for callers that track content).
        let load = (0..pages).map(|lpn| (lpn, 0, 0));
        nvmdb_workload::ageing::age(pages, self.options.seed, load, |lpn, _, now_ns| {
            nvmdb_cancel::check()?;
            let data = self.fresh_page(lpn);
            done_ns = done_ns.max(self.store.write_new(lpn, data, now_ns)?);
            Ok::<_, FlashError>(())
        })?;
        self.end_setup(done_ns);
        self.report.aged_pages = 2 * pages;
        Ok(())
    }

    /// Writes every page `requests` touch once (new content), then zeroes the counters;
    /// the trace's times are shifted to start when the pre-fill is done.
    fn prefill<E>(&mut self, requests: impl Iterator<Item = Result<Request, E>>) -> Result<(), Fill<E>> {
        let mut pages = std::collections::BTreeSet::new();
        for r in requests {
            let r = r.map_err(Fill::Input)?;
            if r.len_bytes == 0 {
                continue;
            }
            let first = r.offset_bytes / self.page_bytes;
            let last = r.offset_bytes.saturating_add(r.len_bytes - 1) / self.page_bytes;
            if last - first >= self.logical_pages {
                pages.extend(0..self.logical_pages);
                break;
            }
            pages.extend((first..=last).map(|p| p % self.logical_pages));
        }
        let mut done_ns = self.clock_ns;
        for &lpn in &pages {
            nvmdb_cancel::check().map_err(|e| Fill::Store(e.into()))?;
            let data = self.fresh_page(lpn);
            done_ns = done_ns.max(self.store.write_new(lpn, data, self.clock_ns).map_err(Fill::Store)?);
        }
        let aged = self.report.aged_pages;
        self.end_setup(done_ns);
        (self.report.aged_pages, self.report.prefilled_pages) = (aged, pages.len() as u64);
        Ok(())
    }

    /// Starts pass `pass` (from 0): a pass after the first starts when everything before
    /// it has completed; the last of several starts the last pass's own figures.
    fn start_pass(&mut self, pass: u64) {
        self.pass_starts = pass > 0;
        if pass > 0 && pass + 1 == self.options.passes {
            self.last_pass = Some(LastPass {
                stats: self.stats(),
                report: self.report.clone(),
                responses_ns: ResponseTimes::default(),
                first_arrival_ns: None,
            });
        }
    }

    /// Carries the store's pending work to flash after the last request has completed.
    fn drain(&mut self) -> Result<(), FlashError> {
        let done_ns = self.store.drain(self.clock_ns)?;
        self.clock_ns = self.clock_ns.max(done_ns);
        self.last_completion_ns = self.last_completion_ns.max(done_ns);
        self.report.drained = true;
        Ok(())
    }

    fn run(&mut self, request: &Request) -> Result<(), Stop> {
        if let Some(model) = &mut self.model {
            model.begin_request();
        }
        if std::mem::take(&mut self.pass_starts) {
            self.time_offset_ns = self.clock_ns.saturating_sub(request.time_ns);
        }
        let arrival_ns = (request.time_ns.saturating_add(self.time_offset_ns)).max(self.last_arrival_ns);
        self.last_arrival_ns = arrival_ns;
        self.first_arrival_ns.get_or_insert(arrival_ns);
        let mut done_ns = arrival_ns;
        // Checked before any page runs: a wrapped range would otherwise run no page at all,
        // and a request longer than the device would revisit its pages without end.
        let end = request.offset_bytes.checked_add(request.len_bytes).ok_or_else(|| {
            FlashError::Request(format!("byte range {}+{} crosses 2^64", request.offset_bytes, request.len_bytes))
        })?;
        if request.len_bytes > self.capacity_bytes {
            return Err(Stop::Store(FlashError::Request(format!(
                "request of {} bytes is longer than the device ({} bytes)",
                request.len_bytes, self.capacity_bytes
            ))));
        }
        if let Some(lpn) = self.whole_page(request) {
            done_ns = done_ns.max(self.whole_page_request(request, lpn, arrival_ns)?);
        } else if request.len_bytes > 0 {
            let first = self.page_of(request.offset_bytes);
            let last = self.page_of(end - 1);
            for page in first..=last {
                let page_done = self.page(request, page, page - first, arrival_ns)?;
                done_ns = done_ns.max(page_done);
            }
        }
        let r = &mut self.report;
        r.requests += 1;
        match request.op {
            Op::Read => {
                r.read_requests += 1;
                r.host_bytes_read += request.len_bytes;
                if let Some(reads) = &mut self.reads {
                    reads.end().map_err(Stop::ReadBack)?;
                }
            }
            Op::Write => {
                r.write_requests += 1;
                r.host_bytes_written += request.len_bytes;
            }
            Op::Trim => r.trim_requests += 1,
        }
        self.responses_ns.push(done_ns - arrival_ns);
        if let Some(last) = &mut self.last_pass {
            last.responses_ns.push(done_ns - arrival_ns);
            last.first_arrival_ns.get_or_insert(arrival_ns);
        }
        self.last_completion_ns = self.last_completion_ns.max(done_ns);
        self.clock_ns = self.clock_ns.max(done_ns);
        Ok(())
    }

    /// The page holding byte `at`.
    #[inline]
    fn page_of(&self, at: u64) -> u64 {
        match self.page_shift {
            Some(shift) => at >> shift,
            None => at / self.page_bytes,
        }
    }

    /// The logical page of a request that is exactly one whole page, not wrapped (most
    /// requests of page-sized traces): the fast path of [`Engine::page`] for it.
    #[inline]
    fn whole_page(&self, request: &Request) -> Option<u64> {
        let shift = self.page_shift?;
        let aligned = request.offset_bytes & (self.page_bytes - 1) == 0;
        let lpn = request.offset_bytes >> shift;
        (request.len_bytes == self.page_bytes && aligned && lpn < self.logical_pages).then_some(lpn)
    }

    /// [`Engine::page`] for a request that is the whole of page `lpn` (see
    /// [`Engine::whole_page`]): the same calls on the store, without the partial-page
    /// arithmetic.
    #[inline]
    fn whole_page_request(&mut self, request: &Request, lpn: u64, now_ns: u64) -> Result<u64, Stop> {
        Ok(match request.op {
            Op::Read => {
                let (data, done_ns) = self.store.read(lpn, now_ns)?;
                self.read_back(&data, 0..self.page_bytes as usize)?;
                done_ns
            }
            Op::Write => {
                let data = self.new_data(request, 0, 0, None);
                self.remember(lpn, &data);
                self.store.write(lpn, data, now_ns)?
            }
            Op::Trim => {
                if let Some(model) = &mut self.model {
                    model.trim(lpn);
                }
                self.store.trim(lpn, now_ns)?
            }
        })
    }

    /// Sends bytes `range` of a page read (never written: erased, `0xFF`) to the read-back.
    #[inline]
    fn read_back(&mut self, data: &PageData, range: std::ops::Range<usize>) -> Result<(), Stop> {
        let Some(reads) = &mut self.reads else { return Ok(()) };
        match data {
            PageData::Bytes(bytes) if bytes.len() >= range.end => reads.bytes(&bytes[range]),
            _ => reads.bytes(&vec![0xFF; range.len()]),
        }
        .map_err(Stop::ReadBack)
    }

    /// Runs the `index`-th page (`page` = absolute page number) of a request.
    #[inline]
    fn page(&mut self, request: &Request, page: u64, index: u64, now_ns: u64) -> Result<u64, Stop> {
        let lpn = if page < self.logical_pages {
            page
        } else {
            self.report.wrapped_pages += 1;
            page % self.logical_pages
        };
        let page_start = page * self.page_bytes;
        let page_end = page_start.saturating_add(self.page_bytes);
        let start = request.offset_bytes.max(page_start);
        // `run` checked that the request's end fits in u64.
        let end = (request.offset_bytes + request.len_bytes).min(page_end);
        let whole = start == page_start && end == page_end;
        Ok(match request.op {
            Op::Read => {
                let (data, done_ns) = self.store.read(lpn, now_ns)?;
                self.read_back(&data, (start - page_start) as usize..(end - page_start) as usize)?;
                done_ns
            }
            Op::Trim if whole => {
                if let Some(model) = &mut self.model {
                    model.trim(lpn);
                }
                self.store.trim(lpn, now_ns)?
            }
            // A partial trim cannot discard the page; the rest of it stays.
            Op::Trim => now_ns,
            Op::Write if whole => {
                let data = self.new_data(request, index, (start - request.offset_bytes) as usize, None);
                self.remember(lpn, &data);
                self.store.write(lpn, data, now_ns)?
            }
            Op::Write => {
                self.report.rmw_pages += 1;
                let (old, read_done_ns) = self.store.read(lpn, now_ns)?;
                let from = (start - page_start) as usize..(end - page_start) as usize;
                let written = (from.start as u32, from.len() as u32);
                let data =
                    self.new_data(request, index, (start - request.offset_bytes) as usize, Some((old, from.clone())));
                if let Some(model) = &mut self.model {
                    match &data {
                        // The host's bytes go over the model's own page, not the one read back.
                        PageData::Bytes(page) => model.patch(lpn, from.clone(), &page[from]),
                        other => model.write(lpn, other),
                    }
                }
                self.store.write_range(lpn, data, written, read_done_ns)?
            }
        })
    }

    /// The data a written page carries. `src` is the offset of the page's first written
    /// byte in the request; `merge` the old page and the byte range being replaced.
    /// (Forced inline: in metadata mode it is a constant.)
    #[inline(always)]
    fn new_data(
        &mut self,
        request: &Request,
        index: u64,
        src: usize,
        merge: Option<(PageData, std::ops::Range<usize>)>,
    ) -> PageData {
        match self.options.content {
            PageContent::None => PageData::Empty,
            _ => self.new_content(request, index, src, merge),
        }
    }

    /// [`Engine::new_data`] when pages carry content (bytes or identities).
    fn new_content(
        &mut self,
        request: &Request,
        index: u64,
        src: usize,
        merge: Option<(PageData, std::ops::Range<usize>)>,
    ) -> PageData {
        let page_bytes = self.page_bytes as usize;
        match (self.options.content, &request.content) {
            (PageContent::None, _) => PageData::Empty,
            (PageContent::Bytes, content) => {
                // A partial page keeps its old bytes outside the host's range.
                let (mut page, range) = match merge {
                    Some((PageData::Bytes(old), range)) if old.len() == page_bytes => (old, range),
                    Some((_, range)) => (vec![0xFF; page_bytes], range),
                    None => (vec![0; page_bytes], 0..page_bytes),
                };
                match content {
                    Content::Bytes(bytes) => {
                        let available = bytes.len().saturating_sub(src).min(range.len());
                        page[range.start..range.start + available].copy_from_slice(&bytes[src..src + available]);
                    }
                    // A trace without bytes: the next bytes of the seed's stream.
                    _ => self.bytes_rng.fill_bytes(&mut page[range]),
                }
                PageData::Bytes(page)
            }
            (PageContent::Fingerprint, Content::Bytes(bytes)) if merge.is_none() => {
                PageData::Bytes(bytes.get(src..src + page_bytes).map_or_else(|| vec![0; page_bytes], <[u8]>::to_vec))
            }
            (PageContent::Fingerprint, Content::PageIds(ids)) if merge.is_none() => {
                ids.get(index as usize).map_or_else(|| self.synthetic(), |&id| PageData::Fingerprint(id))
            }
            // Content-free traces and partial pages in fingerprint mode: a fresh content id.
            (PageContent::Fingerprint, _) => self.synthetic(),
        }
    }

    /// Records a whole page the host wrote in the model.
    #[inline]
    fn remember(&mut self, lpn: u64, data: &PageData) {
        if let Some(model) = &mut self.model {
            model.write(lpn, data);
        }
    }

    /// The store's counters, less the check after a recovery's.
    fn stats(&self) -> StoreStats {
        let stats = self.store.stats();
        self.excluded.as_ref().map_or(stats, |check| stats.since(check))
    }

    /// The store's device writes so far (0 for a store without a power switch).
    fn writes(&mut self) -> u64 {
        self.store.power_switch().map_or(0, |switch| switch.writes())
    }

    /// Cuts the power in request `operation` (`inside`: the switch refused one of its
    /// device writes, and the request is not acknowledged) or after it (from 1; 0 before
    /// the first), recovers (again, when a second cut falls in the recovery), and checks
    /// every page of the model at once. The check's reads are left out of every counter,
    /// and the trace goes on when they have completed (its gaps kept).
    fn power_cycle(&mut self, operation: u64, inside: bool) -> Result<(), Stop> {
        let (trace_writes, second) = (self.trace_writes, self.options.power_loss_during_recovery);
        let writes = self.writes();
        let (device_write, activity) = match self.store.power_switch().and_then(|switch| switch.cuts().last()) {
            Some(cut) if inside => (cut.device_write, Some(cut.activity)),
            _ => (writes, None),
        };
        if let Some(m) = second {
            let switch = self.store.power_switch().ok_or_else(|| {
                FlashError::Config("this storage layer has no power switch to cut during recovery".into())
            })?;
            switch.cut_after_restore(writes + m - 1);
        }
        let model = self.model.as_mut().expect("a power-loss run keeps a model");
        if inside {
            model.interrupted();
        }
        let mut recovery_cut = None;
        let recovery_device_writes = loop {
            let start = self.writes();
            match self.store.power_cycle() {
                Ok(()) => break self.writes() - start,
                Err(FlashError::PowerCut(at)) if recovery_cut.is_none() => recovery_cut = Some(at - start + 1),
                Err(e) => return Err(e.into()),
            }
        };
        if let Some(asked) = self.options.power_loss_during_recovery.filter(|_| recovery_cut.is_none()) {
            return Err(Stop::PastEnd(CutPastEnd::RecoveryWrite { asked, writes: recovery_device_writes }));
        }
        self.power_cycles += 1;
        let model = self.model.as_ref().expect("a power-loss run keeps a model");
        let before = self.store.stats();
        let (after_recovery, done_ns) = model.check(&mut *self.store, self.clock_ns)?;
        self.excluded = Some(self.store.stats().since(&before));
        self.time_offset_ns = self.time_offset_ns.saturating_add(done_ns - self.clock_ns);
        self.clock_ns = done_ns;
        self.power_loss = Some(PowerLossReport {
            operation,
            device_write: device_write - trace_writes + 1,
            activity,
            recovery_cut,
            recovery_device_writes,
            after_recovery,
        });
        Ok(())
    }

    fn synthetic(&mut self) -> PageData {
        // SplitMix64: distinct ids for distinct writes.
        let id = nvmdb_device::splitmix64(self.synthetic_id);
        self.synthetic_id = self.synthetic_id.wrapping_add(nvmdb_device::splitmix::GAMMA);
        PageData::Fingerprint(id)
    }

    fn finish(&mut self) -> ReplayReport {
        let mut r = std::mem::replace(&mut self.report, ReplayReport::empty(self.options.content));
        r.power_cycles = self.power_cycles;
        r.passes = self.options.passes;
        r.stats = self.stats();
        r.power_loss = self.power_loss;
        r.health = self.store.health();
        r.pending = self.store.pending();
        r.set_times(&mut self.responses_ns, self.first_arrival_ns, self.last_completion_ns);
        if let Some(mut mark) = self.last_pass.take() {
            let mut last = ReplayReport { stats: r.stats.since(&mark.stats), ..r.clone() };
            last.subtract_requests(&mark.report);
            last.set_times(&mut mark.responses_ns, mark.first_arrival_ns, self.last_completion_ns);
            r.last_pass = Some(Box::new(last));
        }
        r
    }
}
