//! MQSim's two real traces (TPC-C and web search, DiskSim format) through the baseline,
//! IPL (in the FTL and in its own layout), d-PRAM and the PCM log buffer, and the PCM
//! queueing that their response times show.

use nvmdb_device::PageContent;
use nvmdb_lab::{Cell, Experiment, LabError, Memo, Outcome, RunContext, Scale, Table};
use nvmdb_workload::traces::{DisksimLayout, TraceFormat, TraceReader};
use nvmdb_workload::Request;
use serde_json::json;

use super::{failed, part_bytes, ssd_config};
use nvmdb_device::FlashTiming;
use nvmdb_flash::config::{BufferKind, DeltaKind, PcmTimingPreset, SsdConfig};
use nvmdb_flash::dpram::DpramStore;
use nvmdb_flash::layer::{PageStore, StoreStats};
use nvmdb_flash::pcm_log::PcmLogStore;
use nvmdb_flash::replay::{replay, ReplayOptions, ReplayReport};

/// The traces, vendored in the repository's `data/mqsim/` (MQSim's MIT licence beside
/// them) and compiled into the binary, so the experiment runs from any directory.
pub(super) const TRACES: [(&str, &str); 2] = [
    ("tpcc-small.trace", include_str!("../../../../data/mqsim/tpcc-small.trace")),
    ("wsrch-small.trace", include_str!("../../../../data/mqsim/wsrch-small.trace")),
];

/// The SSD of these runs: Table 5.1's 10 packages × 8 planes, sized to 1 GB of data.
pub(super) fn trace_config(seed: u64) -> SsdConfig {
    let mut config = ssd_config(1024, seed);
    let blocks =
        u64::from(config.flash.blocks_per_plane) * u64::from(config.flash.packages * config.flash.planes_per_package);
    config.flash.packages = 10;
    config.flash.planes_per_package = 8;
    config.flash.blocks_per_plane =
        u32::try_from(blocks.div_ceil(80)).expect("a 1 GB device's blocks per plane fit u32");
    config.content = PageContent::None;
    config.buffer.pcm_mb = 16;
    config
}

/// The trace's requests (DiskSim devices kept apart on `store`'s address space).
pub(super) fn requests(text: &str, store: &dyn PageStore) -> Result<Vec<Request>, String> {
    let capacity = store.logical_pages().saturating_mul(u64::from(store.page_bytes()));
    let layout =
        DisksimLayout::scan(text.as_bytes(), u64::from(store.page_bytes()), capacity).map_err(|e| e.to_string())?;
    TraceReader::new(text.as_bytes(), TraceFormat::Disksim)
        .with_disksim_layout(layout)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())
}

/// Passes of a looped trace before its measured window.
pub(super) const WARM_PASSES: u64 = 32;
/// Passes in the measured window (passes 33 to 64).
pub(super) const MEASURED_PASSES: u64 = 32;

/// One configuration on one trace, on an aged SSD (every logical page written, then as
/// many random whole-page overwrites: [`ReplayOptions::age`], the thesis experiments'
/// ageing): the first pass of the trace, and the trace looped [`WARM_PASSES`] +
/// [`MEASURED_PASSES`] times.
#[derive(Debug, Clone)]
pub(super) struct TraceRun {
    /// The first pass alone: the transient a single replay reports.
    pub first: ReplayReport,
    /// The measured window, passes 33 to 64 (counters over all of them; per pass:
    /// [`TraceRun::per_pass`]).
    pub window: ReplayReport,
    /// The last pass (the 64th) alone.
    pub last: ReplayReport,
}

impl TraceRun {
    /// A counter of the window, per pass.
    pub fn per_pass(&self, counter: u64) -> f64 {
        counter as f64 / MEASURED_PASSES as f64
    }

    /// Flash plus PCM energy per pass of the window, pJ.
    pub fn energy_per_pass(&self) -> f64 {
        self.per_pass(self.window.energy_pj())
    }
}

/// The runs of this process, keyed by the trace and the configuration:
/// `thesis-pcm-capacity` repeats some of this experiment's runs.
static TRACE_RUNS: Memo<TraceRun> = Memo::new();

/// [`TraceRun`] of `config` on the trace `name` (its requests laid out on `config`'s
/// device), or its result if this process made the same run.
pub(super) fn trace_run(name: &str, text: &str, config: &SsdConfig) -> Result<TraceRun, String> {
    TRACE_RUNS.get_or_run(format!("{name} {config:?}"), || {
        let run = |passes: u64, warm_passes: u64| -> Result<ReplayReport, String> {
            let mut store = nvmdb_flash::build(config).map_err(|e| e.to_string())?;
            let requests = requests(text, store.as_ref()).map_err(|e| format!("{name}: {e}"))?;
            let options = ReplayOptions {
                content: PageContent::None,
                seed: config.seed,
                age: true,
                passes,
                warmup_requests: warm_passes * requests.len() as u64,
                ..ReplayOptions::default()
            };
            let report = replay(store.as_mut(), requests.iter().cloned().map(Ok::<_, String>), &options)
                .map_err(|e| format!("{name}: {e}"))?;
            store.check_invariants()?;
            Ok(report)
        };
        let first = run(1, 0)?;
        let window = run(WARM_PASSES + MEASURED_PASSES, WARM_PASSES)?;
        let last = window.last_pass.as_deref().cloned().ok_or("a looped run reports its last pass")?;
        Ok(TraceRun { first, window, last })
    })
}

/// Lifetime of `r` against `base` by the erases of `erases` (a run's), or why undefined.
pub(super) fn erase_ratio(base: u64, r: u64) -> Cell {
    match (base, r) {
        (0, _) => "n/a: the baseline erased no block".into(),
        (_, 0) => "n/a: no block erased".into(),
        (b, e) => (b as f64 / e as f64).into(),
    }
}

/// Replays `requests` on `store` after a pre-fill of their footprint.
fn run(store: &mut dyn PageStore, requests: &[Request], seed: u64) -> Result<ReplayReport, String> {
    let options = ReplayOptions { content: PageContent::None, seed, prefill: true, ..ReplayOptions::default() };
    let report = replay(store, requests.iter().cloned().map(Ok::<_, String>), &options).map_err(|e| e.to_string())?;
    store.check_invariants()?;
    Ok(report)
}

/// `thesis-mqsim-traces`.
#[derive(Debug)]
pub struct MqsimTraces;

impl Experiment for MqsimTraces {
    fn id(&self) -> &'static str {
        "thesis-mqsim-traces"
    }
    fn title(&self) -> &'static str {
        "MQSim's TPC-C and web-search traces through the baseline, IPL, d-PRAM and the PCM log buffer"
    }
    fn source(&self) -> &'static str {
        "seed 000 Section 5.1 configurations on real traces (MQSim repository, traces/, DiskSim format); PCM timing of Table 2.2"
    }
    fn run(&self, ctx: &RunContext) -> Result<Outcome, LabError> {
        let fail = failed(self.id());
        let base = trace_config(ctx.seed);
        let kinds = [
            ("baseline (page FTL)", BufferKind::None, DeltaKind::Sampled),
            ("IPL", BufferKind::Ipl, DeltaKind::Sampled),
            ("IPL (native layout)", BufferKind::IplNative, DeltaKind::Sampled),
            ("d-PRAM", BufferKind::Dpram, DeltaKind::Sampled),
            ("PCM log (ours)", BufferKind::PcmLog, DeltaKind::Sampled),
            ("IPL", BufferKind::Ipl, DeltaKind::FullPage),
            ("IPL (native layout)", BufferKind::IplNative, DeltaKind::FullPage),
            ("d-PRAM", BufferKind::Dpram, DeltaKind::FullPage),
            ("PCM log (ours)", BufferKind::PcmLog, DeltaKind::FullPage),
        ];
        let window = format!("passes {}–{}", WARM_PASSES + 1, WARM_PASSES + MEASURED_PASSES);
        let mut table = Table::new(
            format!("MQSim traces (content-free: an update's delta is 50–150 B, or the whole host range), 16 MB PCM, Table 5.1 SSD of 1 GB, aged; steady state: per pass over {window} of the trace looped, beside the first pass"),
            &[
                "trace",
                "configuration",
                "delta policy",
                "requests per pass",
                "host page writes per pass",
                "flash programs in pages per pass",
                "write amplification",
                "merges per pass",
                "erases per pass",
                "lifetime × baseline",
                "mean response (µs)",
                "energy per pass (mJ)",
                "PCM bits written per pass",
                "erases, first pass",
                "lifetime × baseline, first pass",
                "erases, last pass alone",
                "log records pending at the end",
            ],
        );
        let bar = ctx.progress(self.id(), (TRACES.len() * kinds.len() + 6) as u64);
        // A part per trace and configuration: its SSD, aged, its first pass and its looped
        // window (the same 1 GB SSD at every scale, so a paper-scale part's memory).
        let parts: Vec<(usize, usize)> =
            (0..TRACES.len()).flat_map(|t| (0..kinds.len()).map(move |k| (t, k))).collect();
        let mut runs = ctx
            .run_parts(
                &parts,
                |_| part_bytes(Scale::Paper),
                |&(t, k)| {
                    let ((trace, text), (_, kind, delta)) = (TRACES[t], kinds[k]);
                    let mut config = base.clone();
                    config.buffer.kind = kind;
                    config.buffer.delta = delta;
                    let run = trace_run(trace, text, &config).map_err(&fail)?;
                    bar.inc(1);
                    Ok(run)
                },
            )?
            .into_iter();
        // Per tpcc-small configuration: name, erases per pass and first, the last pass's.
        let mut tpcc = Vec::new();
        // IPL's runs in both forms (trace, configuration, delta), and the baselines'.
        let mut ipl_runs = Vec::new();
        let mut baselines = Vec::new();
        for (trace, _) in TRACES {
            let mut baseline = None;
            for (name, kind, delta) in kinds {
                let run = runs.next().expect("a run per trace and configuration");
                let s = &run.window.stats;
                let base_run = baseline.get_or_insert_with(|| run.clone());
                if kind == BufferKind::None {
                    baselines.push(run.clone());
                }
                if matches!(kind, BufferKind::Ipl | BufferKind::IplNative) {
                    ipl_runs.push(IplRun { trace, name, kind, delta, run: run.clone() });
                }
                let policy = match (kind, delta) {
                    (BufferKind::None, _) => "-",
                    (_, DeltaKind::Sampled) => "sampled",
                    (_, DeltaKind::FullPage) => "full-page",
                };
                if trace == TRACES[0].0 && delta == DeltaKind::Sampled {
                    tpcc.push((
                        name,
                        run.per_pass(s.block_erases),
                        run.first.stats.block_erases,
                        run.last.stats.block_erases,
                    ));
                }
                table.row(vec![
                    trace.into(),
                    name.into(),
                    policy.into(),
                    run.first.requests.into(),
                    run.per_pass(s.host_page_writes).into(),
                    (s.flash_programs_in_pages() / MEASURED_PASSES as f64).into(),
                    s.write_amplification().into(),
                    run.per_pass(s.merges).into(),
                    run.per_pass(s.block_erases).into(),
                    erase_ratio(base_run.window.stats.block_erases, s.block_erases),
                    (run.window.mean_response_ns as f64 / 1e3).into(),
                    (run.energy_per_pass() / 1e9).into(),
                    run.per_pass(s.pcm_bits_written).into(),
                    run.first.stats.block_erases.into(),
                    erase_ratio(base_run.first.stats.block_erases, run.first.stats.block_erases),
                    run.last.stats.block_erases.into(),
                    run.window.pending.log_records.into(),
                ]);
            }
        }
        let tpcc_requests = {
            let store = nvmdb_flash::build(&base).map_err(|e| fail(e.to_string()))?;
            requests(TRACES[0].1, store.as_ref()).map_err(&fail)?
        };
        // wsrch-small as IPL in its own layout lays it out, for the serial-read prediction.
        let wsrch_native = {
            let mut config = base.clone();
            config.buffer.kind = BufferKind::IplNative;
            let store = nvmdb_flash::build(&config).map_err(|e| fail(e.to_string()))?;
            requests(TRACES[1].1, store.as_ref()).map_err(&fail)?
        };
        let timing = base.flash.timing.timing();
        let ipl_forms = ipl_forms_table(&ipl_runs, &timing, &window);
        let forms_note =
            ipl_forms_note(&ipl_runs, &baselines[1], serial_read_us(&wsrch_native, base.flash.page_bytes, &timing));
        let (queueing, queueing_runs) = pcm_queueing(ctx, &base, &tpcc_requests, || bar.inc(1)).map_err(&fail)?;
        let program_ns = base.flash.timing.timing().program_ns;
        bar.finish_and_clear();
        let steady_note = format!(
            "Steady state, not a first pass: each configuration's SSD is aged, then the trace is replayed {} times (`nvmdb ssd replay --age --passes {} --warmup-requests` {} passes' requests), and the figures are per pass over {window}, beside the first pass alone. A first pass is a transient for the log schemes: d-PRAM's 16 MB log does not fill in one pass (tpcc-small, erases first pass / per pass in the window: {}), and what a log holds at the end of a pass is pending work it has not paid for (last column). A single late pass is not a steady figure either: IPL's logs fill and merge in waves, so one pass can be far from the window's mean (the 64th pass alone erased {} blocks against {:.0} per pass over the window).",
            WARM_PASSES + MEASURED_PASSES,
            WARM_PASSES + MEASURED_PASSES,
            WARM_PASSES,
            tpcc.iter().map(|(name, per_pass, first, _)| format!("{name} {first} / {per_pass:.0}")).collect::<Vec<_>>().join(", "),
            tpcc[1].3,
            tpcc[1].1,
        );
        Ok(Outcome {
            summary: format!("MQSim's tpcc-small (6,999 requests, 2,618 writes) and wsrch-small (24,783, almost all reads) replayed through each configuration on an aged SSD and looped to steady state ({window} measured), metadata-only (the traces carry no content); and the PCM queueing behind the PCM schemes' response times on a fresh, pre-filled SSD, isolated by slowing the trace's arrivals."),
            config: json!({"seed": ctx.seed, "ssd": base, "traces": TRACES.map(|(name, _)| format!("data/mqsim/{name}")), "content_mode": "none",
                "passes": WARM_PASSES + MEASURED_PASSES, "measured_passes": MEASURED_PASSES}),
            tables: vec![table, queueing, ipl_forms],
            plots: Vec::new(),
            notes: vec![
                "The traces carry no content, so the change of an update of an already written page is a policy (buffer.delta), reported as a band: `sampled` logs one change of 50–150 B drawn from buffer.delta_bytes_min..max (IPL's measured TPC-C range) within the host's byte range; `full-page` takes the whole host range, so a whole-page rewrite is written out of place like the baseline. Addresses beyond the device wrap around, page by page.".into(),
                "DiskSim's device numbers are separate disks: each gets its own address range and its requests move back by the device's most common misalignment (`nvmdb ssd replay --disksim-devices separate`, the default), so its 4 KB requests are mostly whole pages. Each configuration's SSD is aged before the trace as the synthetic experiments age theirs (every logical page written once, then as many uniformly random whole-page overwrites, out of place in every configuration: `nvmdb ssd replay --age`), so the trace's writes update existing data and garbage collection runs under them; the counters cover the trace alone. Lifetime is the ratio of erases, baseline over this configuration, n/a where an erase count is zero (wsrch-small writes 8 pages a pass). The first table's response times include the garbage collection of the aged device; the second table's runs, on a fresh device, leave it out. IPL's write amplification counts its 512 B log programs as an eighth of a page each.".into(),
                steady_note,
                queueing_note(&queueing_runs, program_ns),
                forms_note,
                "The thesis reports no response times. Its Table 2.2 (10 µs per word) and Table 2.1 (a 64 B PCM page written in 1 µs, 50–100 MB/s) disagree by about two orders of magnitude in PCM write bandwidth; the preset follows Table 2.2, the table the thesis compares flash and PCM with, and the figures report service time (write time), which queueing does not change.".into(),
            ],
            ..Default::default()
        })
    }
}

/// One of IPL's runs, in either form, for the table of both.
struct IplRun {
    trace: &'static str,
    name: &'static str,
    kind: BufferKind,
    delta: DeltaKind,
    run: TraceRun,
}

/// Flash service time of `s`'s device operations at `timing`, ns: page reads, whole and
/// partial programs (a partial program takes a program's time), erases.
fn flash_service_ns(s: &StoreStats, timing: &FlashTiming) -> u64 {
    s.flash_page_reads * timing.read_ns
        + (s.flash_page_programs + s.flash_sector_programs) * timing.program_ns
        + s.block_erases * timing.erase_ns
}

/// The table of IPL's two forms on the traces, per pass over the measured `window`, the
/// first pass's merges and erases beside.
fn ipl_forms_table(runs: &[IplRun], timing: &FlashTiming, window: &str) -> Table {
    let mut table = Table::new(
        format!("IPL's two forms on the traces: log pages in the page-mapped FTL (IPL) and log sectors at the end of each erase unit with no FTL (IPL, native layout); per pass over {window}, the first pass beside; flash service time is the device's operations at Table 5.1's times"),
        &[
            "trace",
            "configuration",
            "delta policy",
            "logged",
            "out of place",
            "merges",
            "GC page copies",
            "flash page programs",
            "flash sector programs",
            "flash page reads",
            "erases",
            "flash service time (ms)",
            "energy (mJ)",
            "merges, first pass",
            "erases, first pass",
        ],
    );
    for r in runs {
        let (s, per_pass) = (&r.run.window.stats, |n: u64| Cell::from(r.run.per_pass(n)));
        table.row(vec![
            r.trace.into(),
            r.name.into(),
            (if r.delta == DeltaKind::Sampled { "sampled" } else { "full-page" }).into(),
            per_pass(s.logged_writes),
            per_pass(s.out_of_place_writes),
            per_pass(s.merges),
            per_pass(s.gc_page_copies),
            per_pass(s.flash_page_programs),
            per_pass(s.flash_sector_programs),
            per_pass(s.flash_page_reads),
            per_pass(s.block_erases),
            (r.run.per_pass(flash_service_ns(s, timing)) / 1e6).into(),
            (r.run.energy_per_pass() / 1e9).into(),
            r.run.first.stats.merges.into(),
            r.run.first.stats.block_erases.into(),
        ]);
    }
    table
}

/// The mean over `requests` of the time to read each one's pages (of `page_bytes`) one
/// after another, µs.
fn serial_read_us(requests: &[Request], page_bytes: u32, timing: &FlashTiming) -> f64 {
    let page = u64::from(page_bytes);
    let pages = |r: &Request| (r.offset_bytes + r.len_bytes).div_ceil(page) - r.offset_bytes / page;
    let total: u64 = requests.iter().map(|r| pages(r) * timing.read_ns).sum();
    total as f64 / 1e3 / requests.len().max(1) as f64
}

/// The note on IPL's two forms, per pass of the window: tpcc-small's runs of each form and
/// delta policy; on wsrch-small the native form's mean response against `wsrch_baseline`'s
/// and against `serial_us`, what reading each request's pages in sequence predicts.
fn ipl_forms_note(runs: &[IplRun], wsrch_baseline: &TraceRun, serial_us: f64) -> String {
    let find = |trace: &str, kind, delta| {
        &runs.iter().find(|r| (r.trace, r.kind, r.delta) == (trace, kind, delta)).expect("a run of each form").run
    };
    let (tpcc, wsrch) = (TRACES[0].0, TRACES[1].0);
    let ftl = find(tpcc, BufferKind::Ipl, DeltaKind::Sampled);
    let native = find(tpcc, BufferKind::IplNative, DeltaKind::Sampled);
    let full = find(tpcc, BufferKind::IplNative, DeltaKind::FullPage);
    let wsrch_native = find(wsrch, BufferKind::IplNative, DeltaKind::Sampled);
    let (f, n, fp) = (&ftl.window.stats, &native.window.stats, &full.window.stats);
    format!(
        "IPL's two forms on tpcc-small (third table, per pass of the window): with sampled deltas the FTL-layered IPL logs {:.0} updates and merges {:.1} times, IPL in its own layout {:.0} and {:.1}; the FTL-layered IPL programs {:.0} pages, of which its FTL's garbage collector, on the aged SSD, copies {:.0}, and erases {:.1} blocks, while IPL in its own layout programs the {:.0} pages of its merges ({:.1} a merge, a unit's live data pages) and erases {:.1} units, one per merge: its merges are its only reclamation. With full-page deltas no change fits a 512 B sector; the FTL-layered IPL writes each out of place, but in its own layout a data page is written only by a merge, so its {:.0} updates a pass make {:.0} merges ({:.0} page programs, {:.0} erases). On wsrch-small, almost all reads of 8 to 32 KB, IPL in its own layout answers in {:.1} µs on average against the baseline's {:.1} µs: a logical unit's pages lie in one erase unit, on one plane, so a request's pages are read one after another, where the FTL stripes consecutive pages over the planes; reading each request's pages in sequence, one flash read each, predicts {:.1} µs.",
        ftl.per_pass(f.logged_writes),
        ftl.per_pass(f.merges),
        native.per_pass(n.logged_writes),
        native.per_pass(n.merges),
        ftl.per_pass(f.flash_page_programs),
        ftl.per_pass(f.gc_page_copies),
        ftl.per_pass(f.block_erases),
        native.per_pass(n.flash_page_programs),
        n.flash_page_programs as f64 / n.merges.max(1) as f64,
        native.per_pass(n.block_erases),
        full.per_pass(fp.host_page_writes),
        full.per_pass(fp.merges),
        full.per_pass(fp.flash_page_programs),
        full.per_pass(fp.block_erases),
        wsrch_native.window.mean_response_ns as f64 / 1e3,
        wsrch_baseline.window.mean_response_ns as f64 / 1e3,
        serial_us,
    )
}

/// One run of the queueing table.
#[derive(Debug, Clone, Copy)]
struct Queueing {
    dpram: bool,
    table_2_2: bool,
    stretch: u64,
    pcm_busy_per_write_us: f64,
    utilisation: f64,
    merge_page_writes: u64,
    mean_response_us: f64,
}

/// PCM busy time, utilisation and mean response of the two PCM schemes on `requests`
/// (sampled deltas), at the trace's arrival rate and ten times slower, and with the
/// Samsung PRAM datasheet's timing.
fn pcm_queueing(
    ctx: &RunContext,
    base: &SsdConfig,
    requests: &[Request],
    tick: impl Fn() + Sync,
) -> Result<(Table, Vec<Queueing>), String> {
    let seed = ctx.seed;
    let mut runs = Vec::new();
    let mut table = Table::new(
        "PCM queueing on tpcc-small (sampled deltas, fresh SSD with the trace's footprint pre-filled, as `nvmdb ssd replay`): PCM busy time against the arrivals' span",
        &[
            "scheme",
            "PCM timing",
            "arrival gaps ×",
            "logged writes",
            "PCM busy (ms)",
            "PCM busy per logged write (µs)",
            "arrival span (ms)",
            "PCM utilisation",
            "merge page writes",
            "flash busy (ms)",
            "mean response (µs)",
        ],
    );
    let first = requests.first().map_or(0, |r| r.time_ns);
    let stretched = |stretch: u64| -> Vec<Request> {
        requests.iter().map(|r| Request { time_ns: first + (r.time_ns - first) * stretch, ..r.clone() }).collect()
    };
    let mut parts = Vec::new();
    for (timing, stretch) in [
        (PcmTimingPreset::ThesisTable22, 1u64),
        (PcmTimingPreset::ThesisTable22, 10),
        (PcmTimingPreset::SamsungPramDatasheet, 1),
    ] {
        parts.extend([BufferKind::Dpram, BufferKind::PcmLog].map(|kind| (timing, stretch, kind)));
    }
    // A part per run: (report, PCM busy, flash busy), ns.
    let measured = ctx
        .run_parts(
            &parts,
            |_| part_bytes(Scale::Paper),
            |&(timing, stretch, kind)| -> Result<_, LabError> {
                let failed = |message: String| LabError::Failed { id: String::new(), message };
                let mut config = base.clone();
                config.buffer.kind = kind;
                config.buffer.pcm_timing = timing;
                let stretched = stretched(stretch);
                let measured = match kind {
                    BufferKind::Dpram => {
                        let mut store = DpramStore::new(&config).map_err(|e| failed(e.to_string()))?;
                        let report = run(&mut store, &stretched, seed).map_err(failed)?;
                        (report, store.busy_ns() - store.ftl().busy_ns(), store.ftl().busy_ns())
                    }
                    _ => {
                        let mut store = PcmLogStore::new(&config).map_err(|e| failed(e.to_string()))?;
                        let report = run(&mut store, &stretched, seed).map_err(failed)?;
                        (report, store.busy_ns() - store.ftl().busy_ns(), store.ftl().busy_ns())
                    }
                };
                tick();
                Ok(measured)
            },
        )
        .map_err(|e| match e {
            LabError::Failed { message, .. } => message,
            other => other.to_string(),
        })?;
    for (&(timing, stretch, kind), (report, pcm_busy_ns, flash_busy_ns)) in parts.iter().zip(measured) {
        let span_ns = requests.last().map_or(0, |r| (r.time_ns - first) * stretch);
        {
            let logged = report.stats.logged_writes;
            runs.push(Queueing {
                dpram: kind == BufferKind::Dpram,
                table_2_2: timing == PcmTimingPreset::ThesisTable22,
                stretch,
                pcm_busy_per_write_us: pcm_busy_ns as f64 / 1e3 / logged.max(1) as f64,
                utilisation: pcm_busy_ns as f64 / span_ns.max(1) as f64,
                merge_page_writes: report.stats.merge_page_writes,
                mean_response_us: report.mean_response_ns as f64 / 1e3,
            });
            table.row(vec![
                (if kind == BufferKind::Dpram { "d-PRAM" } else { "PCM log (ours)" }).into(),
                (if timing == PcmTimingPreset::ThesisTable22 { "thesis-table-2.2" } else { "samsung-pram-datasheet" })
                    .into(),
                stretch.into(),
                logged.into(),
                (pcm_busy_ns as f64 / 1e6).into(),
                (pcm_busy_ns as f64 / 1e3 / logged.max(1) as f64).into(),
                (span_ns as f64 / 1e6).into(),
                (pcm_busy_ns as f64 / span_ns.max(1) as f64).into(),
                report.stats.merge_page_writes.into(),
                (flash_busy_ns as f64 / 1e6).into(),
                (report.mean_response_ns as f64 / 1e3).into(),
            ]);
        }
    }
    Ok((table, runs))
}

/// The queueing note, from the runs of [`pcm_queueing`].
fn queueing_note(runs: &[Queueing], program_ns: u64) -> String {
    let find = |dpram: bool, table_2_2: bool, stretch: u64| {
        *runs.iter().find(|q| q.dpram == dpram && q.table_2_2 == table_2_2 && q.stretch == stretch).expect("a run")
    };
    let (d1, d10, p1, p10) = (find(true, true, 1), find(true, true, 10), find(false, true, 1), find(false, true, 10));
    format!(
        "PCM queueing (second table): each PCM scheme serves its PCM operations one at a time, each charged Table 2.2's 10 µs per changed 8 B word (the thesis's PCM write word, Table 4.1's W = 8 B), so a logged write (a 50–150 B change, its header and table row) took {:.0} µs of PCM time in d-PRAM and {:.0} µs in the PCM log. Utilisation is the PCM's busy time over the span of the arrivals: {:.1} and {:.1} on tpcc-small, so the queue grows for the whole trace and the mean response is waiting. With the same requests at ten times the gaps, d-PRAM's PCM utilisation is {:.2} and its mean response falls from {:.0} µs to {:.0} µs, which isolates PCM queueing as its cause. The PCM log's mean response is still {:.0} µs at ten times the gaps with its PCM at {:.2}, so its PCM does not explain it alone: its merges program {} pages ({:.0} ms at {} ns each) through the FTL, each merge's pages as one run on one plane (the plane with the fewest live pages), while the baseline's writes stripe over all planes. How much of the wait that placement causes is not separated here: it needs an FTL that stripes a merge's run over the planes, which is not modelled. The Samsung PRAM datasheet preset (7.1 µs per 32 B, IPL-P Table 1) shows the sensitivity to the PCM's write width.",
        d1.pcm_busy_per_write_us,
        p1.pcm_busy_per_write_us,
        d1.utilisation,
        p1.utilisation,
        d10.utilisation,
        d1.mean_response_us,
        d10.mean_response_us,
        p10.mean_response_us,
        p10.utilisation,
        p10.merge_page_writes,
        (p10.merge_page_writes * program_ns) as f64 / 1e6,
        program_ns,
    )
}
