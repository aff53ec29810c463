//! `nvmdb bench`: wall-clock speed of the simulator itself. Results are printed, never
//! asserted; BENCHMARKS.md records them with the machine they ran on.

use std::hint::black_box;
use std::time::Instant;

use clap::Args;
use nvmdb_btree::workload::MemoryKind;
use nvmdb_btree::Variant;
use nvmdb_device::pcm::WORDS_PER_LINE;
use nvmdb_device::{FlipNWrite, Pcm, PcmAccounting, PcmConfig};
use nvmdb_experiments::bench::btree::insert_ns_per_op;
use nvmdb_experiments::bench::table;
use nvmdb_memory::{CachedMemory, Memory, NativeMemory};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;

use crate::error::CliError;
use crate::output::Output;

/// Arguments of `nvmdb bench`.
///
/// Benchmarks: ssd-1tb-rss, ssd-page-ftl-replay (beside page-remap/native, the same
/// requests remapping a plain table: the physical limit), ssd-pcm-log-replay (its PCM
/// counting every cell), ssd-pcm-log-words-replay (`buffer.pcm_accounting = "words"`) and
/// ssd-ipl-replay (IPL's flash log sectors), each beside the plain FTL's rate when both run
/// (uniform requests), the same with `-hot`
/// (90 % of the requests to 10 % of the logical blocks), pcm-log/native-hot (the hot
/// stream's log work alone in plain memory, the physical limit of a PCM log replay, beside
/// the plain FTL too), memory-random-mix, memory-pointer-chase (native vs cached
/// PCM), pcm-writeback/one-word-changed and pcm-writeback/random-line (each beside
/// line-diff/native/…, the same write-backs as XOR and popcount in plain memory),
/// btree-insert (native vs cached PCM), envy-memory-random-mix (native vs eNVy),
/// kv/ENGINE/BENCHMARK (beside kv/btreemap/BENCHMARK), pcm-as-disk/page-fault (a DRAM page
/// pool over PCM storage: each touch reads a page and writes a dirty one back; beside
/// page-copy/native, the same copies and word diffs in plain memory; at most 200,000 touches)
/// and
/// pcm-as-disk/ssb-load-join (the column-store SSB database at scale factor 0.0005 loaded
/// behind a 16-page pool and query Q1 joined, beside native/ssb-load-join; runs once,
/// whatever --ops). A benchmark with a baseline
/// reports it and the ratio of their times per operation, both measured in the same run.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Run only benchmarks whose name contains this text; a text no name contains is an
    /// error (ssd-1tb-rss reports the process's peak memory, so run it alone for a clean
    /// figure).
    #[arg(long)]
    pub filter: Option<String>,
    /// Run only the benchmark whose name is exactly the --filter text (one of the names
    /// `nvmdb bench --help` lists, such as memory-random-mix, which then leaves out
    /// envy-memory-random-mix); a name no benchmark has is an error.
    #[arg(long, requires = "filter")]
    pub exact: bool,
    /// Operations per measurement.
    #[arg(long, default_value_t = 5_000_000)]
    pub ops: u64,
    /// Working-set size of the memory benchmarks, MiB.
    #[arg(long, default_value_t = 64)]
    pub mib: u64,
    /// Records of the kv benchmarks (each runs its load and as many measured operations).
    #[arg(long, default_value_t = 100_000, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub kv_records: u64,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Also rewrite the table of today's figures in FILE (BENCHMARKS.md): the rows of the
    /// benchmarks run replace their old rows between the file's `nvmdb bench --markdown`
    /// markers, each with its ratio, its goal and whether it is met, and the run's date,
    /// machine and command; the rows of other runs stay. The file is read and its markers
    /// checked before any benchmark runs, and written whole under a temporary name.
    #[arg(long, value_name = "FILE", conflicts_with = "json")]
    pub markdown: Option<String>,
}

/// One measurement.
#[derive(Debug, Clone, Serialize)]
pub struct BenchResult {
    name: String,
    ops: u64,
    ns_per_op: f64,
    ops_per_second: f64,
    /// The baseline measured in the same run, its time per operation, and this
    /// benchmark's time per operation divided by it, where there is one.
    baseline: Option<String>,
    baseline_ns_per_op: Option<f64>,
    ratio: Option<f64>,
    /// Peak resident memory of the process after the benchmark, where it is the figure.
    peak_memory_bytes: Option<u64>,
}

fn from_ns_per_op(name: &str, ops: u64, ns_per_op: f64) -> BenchResult {
    BenchResult {
        name: name.into(),
        ops,
        ns_per_op,
        ops_per_second: 1e9 / ns_per_op,
        baseline: None,
        baseline_ns_per_op: None,
        ratio: None,
        peak_memory_bytes: None,
    }
}

fn measure(name: &str, ops: u64, run: impl FnOnce() -> u64) -> BenchResult {
    let start = Instant::now();
    black_box(run());
    from_ns_per_op(name, ops, start.elapsed().as_nanos() as f64 / ops as f64)
}

fn compared(mut result: BenchResult, baseline: &BenchResult) -> BenchResult {
    result.ratio = Some(result.ns_per_op / baseline.ns_per_op);
    result.baseline = Some(baseline.name.clone());
    result.baseline_ns_per_op = Some(baseline.ns_per_op);
    result
}

/// A random 70/30 mix of 8 B loads and stores over `words` words.
fn random_mix<M: Memory>(memory: &mut M, base: u64, words: u64, ops: u64, seed: u64) -> u64 {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut sum = 0u64;
    for i in 0..ops {
        let addr = word_addr(base, rng.gen_range(0..words));
        if rng.gen_ratio(7, 10) {
            sum = sum.wrapping_add(memory.load::<u64>(addr));
        } else {
            memory.store::<u64>(addr, i);
        }
    }
    sum
}

/// The address of word `word` of a working set at `base`.
#[expect(
    clippy::arithmetic_side_effects,
    reason = "word is below the working set's bytes / 8, and memory_pair checked that base + bytes fits u64"
)]
fn word_addr(base: u64, word: u64) -> u64 {
    base + 8 * word
}

/// Writes a single random cycle (Sattolo's algorithm) of word addresses into memory.
fn build_chase<M: Memory>(memory: &mut M, base: u64, words: u64, seed: u64) {
    let mut order: Vec<u64> = (0..words).collect();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    for i in (1..order.len()).rev() {
        let j = rng.gen_range(0..i);
        order.swap(i, j);
    }
    for (i, &next) in order.iter().enumerate() {
        memory.store::<u64>(word_addr(base, i as u64), word_addr(base, next));
    }
}

fn chase<M: Memory>(memory: &mut M, base: u64, hops: u64) -> u64 {
    let mut at = base;
    for _ in 0..hops {
        at = memory.load::<u64>(at);
    }
    at
}

/// Native and cached memories holding `bytes` at the same base, each line written once
/// and (cached) flushed, so that measurements see the steady state rather than the first
/// touch of every simulated line.
fn memory_pair(bytes: u64) -> Result<(NativeMemory, CachedMemory, u64), CliError> {
    let fail = |e: String| CliError::failed(e);
    let too_large = || CliError::input(format!("--mib: a working set of {bytes} bytes is too large"));
    let capacity = bytes.checked_mul(2).ok_or_else(too_large)?;
    let mut native = NativeMemory::new(capacity);
    let pcm = Pcm::new(PcmConfig::new(capacity)).map_err(|e| fail(e.to_string()))?;
    let mut cached = CachedMemory::cidr2011(pcm);
    let base = native.alloc(bytes, 64).map_err(|e| fail(e.to_string()))?;
    cached.alloc(bytes, 64).map_err(|e| fail(e.to_string()))?;
    for addr in (base..base.checked_add(bytes).ok_or_else(too_large)?).step_by(64) {
        native.store::<u64>(addr, addr);
        cached.store::<u64>(addr, addr);
    }
    cached.flush_all();
    cached.reset_stats();
    Ok((native, cached, base))
}

fn memory_benches(args: &BenchArgs, bytes: u64, out: &mut Vec<BenchResult>) -> Result<(), CliError> {
    if !selected(args, "memory-random-mix") && !selected(args, "memory-pointer-chase") {
        return Ok(());
    }
    let words = bytes / 8;
    let (mut native, mut cached, base) = memory_pair(bytes)?;
    if selected(args, "memory-random-mix") {
        let n = measure("memory-random-mix/native", args.ops, || random_mix(&mut native, base, words, args.ops, 7));
        let c = measure("memory-random-mix/cached-pcm", args.ops, || random_mix(&mut cached, base, words, args.ops, 7));
        out.push(compared(c, &n));
        out.push(n);
    }
    if selected(args, "memory-pointer-chase") {
        build_chase(&mut native, base, words, 9);
        build_chase(&mut cached, base, words, 9);
        let n = measure("memory-pointer-chase/native", args.ops, || chase(&mut native, base, args.ops));
        let c = measure("memory-pointer-chase/cached-pcm", args.ops, || chase(&mut cached, base, args.ops));
        out.push(compared(c, &n));
        out.push(n);
    }
    Ok(())
}

/// A PCM device with Flip-N-Write over `bytes` (whole lines) of random data.
fn filled_pcm(bytes: u64, seed: u64) -> Result<Pcm, CliError> {
    let mut config = PcmConfig::new(bytes);
    config.flip_n_write = Some(FlipNWrite::WORD);
    let mut pcm = Pcm::new(config).map_err(|e| CliError::failed(e.to_string()))?;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    for line in 0..bytes / 64 {
        pcm.write_line(line, &rng.gen::<[u64; WORDS_PER_LINE]>());
    }
    Ok(pcm)
}

/// Lines a write-back benchmark writes: the PCM model, or plain memory (the baseline).
trait LineTarget {
    fn lines(&self) -> u64;
    fn peek(&self, line: u64) -> [u64; WORDS_PER_LINE];
    /// Writes the line; returns the bits that differ from its old content.
    fn write(&mut self, line: u64, new: &[u64; WORDS_PER_LINE]) -> u64;
}

impl LineTarget for Pcm {
    fn lines(&self) -> u64 {
        Pcm::lines(self)
    }
    fn peek(&self, line: u64) -> [u64; WORDS_PER_LINE] {
        self.peek_line(line)
    }
    fn write(&mut self, line: u64, new: &[u64; WORDS_PER_LINE]) -> u64 {
        u64::from(self.write_line(line, new).bits)
    }
}

/// The physical limit of write-back accounting: the same lines in plain memory, where a
/// write-back is an XOR and popcount against the old line, with no encoding and no wear.
struct NativeLines(Vec<[u64; WORDS_PER_LINE]>);

impl NativeLines {
    /// The same random content as [`filled_pcm`] with the same seed.
    fn filled(bytes: u64, seed: u64) -> NativeLines {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        NativeLines((0..bytes / 64).map(|_| rng.gen()).collect())
    }
}

impl LineTarget for NativeLines {
    fn lines(&self) -> u64 {
        self.0.len() as u64
    }
    fn peek(&self, line: u64) -> [u64; WORDS_PER_LINE] {
        self.0[nvmdb_device::index(line)]
    }
    fn write(&mut self, line: u64, new: &[u64; WORDS_PER_LINE]) -> u64 {
        let old = &mut self.0[nvmdb_device::index(line)];
        let bits = old.iter().zip(new).map(|(o, n)| u64::from((o ^ n).count_ones())).sum();
        *old = *new;
        bits
    }
}

/// Line write-backs: either one word of the line changes (a typical dirty line) or all
/// of it is new random data. The same seed gives every target the same lines and data.
fn writebacks(target: &mut impl LineTarget, seed: u64, ops: u64, whole_line: bool) -> u64 {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let lines = target.lines();
    let mut bits = 0u64;
    for _ in 0..ops {
        let line = rng.gen_range(0..lines);
        let data = if whole_line {
            rng.gen::<[u64; WORDS_PER_LINE]>()
        } else {
            let mut data = target.peek(line);
            data[rng.gen_range(0..WORDS_PER_LINE)] = rng.gen();
            data
        };
        // Only kept from being optimised away, like random_mix's sum.
        bits = bits.wrapping_add(target.write(line, &data));
    }
    bits
}

/// PCM line write-backs with Flip-N-Write (N = 64) and per-cell wear, each beside the
/// same write-backs as plain XOR and popcount (`line-diff/native/…`) in the same run.
fn writeback_benches(args: &BenchArgs, bytes: u64, out: &mut Vec<BenchResult>) -> Result<(), CliError> {
    for (kind, whole) in [("one-word-changed", false), ("random-line", true)] {
        let name = format!("pcm-writeback/{kind}");
        let baseline_name = format!("line-diff/native/{kind}");
        if !selected(args, &name) && !selected(args, &baseline_name) {
            continue;
        }
        let mut native = NativeLines::filled(bytes, 11);
        let n = measure(&baseline_name, args.ops, || writebacks(&mut native, 12, args.ops, whole));
        drop(native);
        let mut pcm = filled_pcm(bytes, 11)?;
        let p = measure(&name, args.ops, || writebacks(&mut pcm, 12, args.ops, whole));
        // The wear report is part of the accounting; keep it from being optimised away.
        black_box(pcm.wear_report().max_cell_writes);
        out.push(compared(p, &n));
        out.push(n);
    }
    Ok(())
}

/// PCM as disk: page faults of the DRAM pool, and an SSB load and join, each beside its
/// plain-memory baseline measured in the same run.
fn pcm_as_disk_benches(args: &BenchArgs, out: &mut Vec<BenchResult>) {
    use nvmdb_experiments::bench::join;
    if selected(args, "pcm-as-disk/page-fault") || selected(args, "page-copy/native") {
        let ops = args.ops.min(200_000);
        let native = from_ns_per_op("page-copy/native", ops, join::page_copy_native_ns(ops));
        let disk = from_ns_per_op("pcm-as-disk/page-fault", ops, join::page_fault_ns(ops));
        out.push(compared(disk, &native));
        out.push(native);
    }
    if selected(args, "pcm-as-disk/ssb-load-join") || selected(args, "native/ssb-load-join") {
        let [disk, native] = join::ssb_load_join().map(|(name, ops, ns)| from_ns_per_op(&name, ops, ns));
        out.push(compared(disk, &native));
        out.push(native);
    }
}

/// B+-tree inserts (unsorted-leaf-bitmap, 4-line nodes) on native and cached PCM memory.
fn btree_benches(args: &BenchArgs, out: &mut Vec<BenchResult>) {
    if !selected(args, "btree-insert") {
        return;
    }
    let entries = 2_000_000;
    let inserts = args.ops.min(500_000) as usize;
    let run = |kind| insert_ns_per_op(kind, Variant::UnsortedLeafBitmap, 4, entries, inserts);
    let native = from_ns_per_op("btree-insert/native", inserts as u64, run(MemoryKind::Native));
    let cached = from_ns_per_op("btree-insert/cached-pcm", inserts as u64, run(MemoryKind::Cached));
    out.push(compared(cached, &native));
    out.push(native);
}

/// A metadata-only page-FTL replay, and the memory of a 1 TB logical device.
fn ssd_benches(args: &BenchArgs, out: &mut Vec<BenchResult>) -> Result<(), CliError> {
    let fail = |e: nvmdb_flash::FlashError| CliError::failed(e.to_string());
    if selected(args, "ssd-1tb-rss") {
        // First, so that the process's peak memory is this device's alone.
        let start = Instant::now();
        let (_, peak) = nvmdb_experiments::bench::flash::one_tb_peak_memory(1000).map_err(fail)?;
        let mut r = from_ns_per_op("ssd-1tb-rss", 1, start.elapsed().as_nanos() as f64);
        r.peak_memory_bytes = peak;
        out.push(r);
    }
    use nvmdb_experiments::bench::flash::{
        ipl_replay, page_ftl_replay, page_remap_replay, pcm_log_floor_replay, pcm_log_replay, Locality,
    };
    let per_request = |name: &str, bench: nvmdb_experiments::bench::flash::ReplayBench| {
        from_ns_per_op(name, bench.requests, bench.elapsed.as_nanos() as f64 / bench.requests as f64)
    };
    for (locality, suffix) in [(Locality::Uniform, ""), (Locality::HotCold, "-hot")] {
        let plain_name = format!("ssd-page-ftl-replay{suffix}");
        let remap_name = format!("page-remap/native{suffix}");
        let mut page_ftl = None;
        if selected(args, &plain_name) || selected(args, &remap_name) {
            let remap = per_request(&remap_name, page_remap_replay(args.ops, locality));
            let r = per_request(&plain_name, page_ftl_replay(args.ops, locality).map_err(fail)?);
            page_ftl = Some(r.clone());
            out.push(compared(r, &remap));
            out.push(remap);
        }
        // The PCM log counting every cell, then counting only to the word.
        for (accounting, infix) in [(PcmAccounting::Cells, ""), (PcmAccounting::Words, "-words")] {
            let log_name = format!("ssd-pcm-log{infix}-replay{suffix}");
            if selected(args, &log_name) {
                let r = per_request(&log_name, pcm_log_replay(args.ops, locality, accounting).map_err(fail)?);
                out.push(match &page_ftl {
                    Some(base) => compared(r, base),
                    None => r,
                });
            }
        }
        let ipl_name = format!("ssd-ipl-replay{suffix}");
        if selected(args, &ipl_name) {
            let r = per_request(&ipl_name, ipl_replay(args.ops, locality).map_err(fail)?);
            out.push(match &page_ftl {
                Some(base) => compared(r, base),
                None => r,
            });
        }
        // The hot stream's log work in plain memory, beside the plain FTL like the logs.
        let floor_name = format!("pcm-log/native{suffix}");
        if locality == Locality::HotCold && selected(args, &floor_name) {
            let r = per_request(&floor_name, pcm_log_floor_replay(args.ops).bench);
            out.push(match &page_ftl {
                Some(base) => compared(r, base),
                None => r,
            });
        }
    }
    Ok(())
}

/// The key-value engines beside a `BTreeMap` doing the same operations, per benchmark.
fn kv_benches(args: &BenchArgs, out: &mut Vec<BenchResult>) -> Result<(), CliError> {
    crate::limits::check_memory("--kv-records", nvmdb_experiments::bench::kv::estimated_memory_bytes(args.kv_records))?;
    let mut baseline: Option<BenchResult> = None;
    for (name, ops, ns) in nvmdb_experiments::bench::kv::engines(args.kv_records, |n| selected(args, n)) {
        let result = from_ns_per_op(&name, ops, ns);
        if name.starts_with("kv/btreemap/") {
            out.push(result.clone());
            baseline = Some(result);
        } else if let Some(base) = &baseline {
            out.push(compared(result, base));
        }
    }
    Ok(())
}

fn selected(args: &BenchArgs, name: &str) -> bool {
    args.filter.as_deref().is_none_or(|f| matches(f, args.exact, name))
}

/// Whether `--filter filter` (with `--exact` when `exact`) selects the benchmark `name`.
fn matches(filter: &str, exact: bool, name: &str) -> bool {
    if exact {
        name == filter
    } else {
        name.contains(filter)
    }
}

/// Every benchmark's name, as `--filter --exact` takes it.
fn benchmark_names() -> Vec<String> {
    let mut names: Vec<String> = [
        "ssd-1tb-rss",
        "ssd-page-ftl-replay",
        "ssd-pcm-log-replay",
        "ssd-page-ftl-replay-hot",
        "ssd-pcm-log-replay-hot",
        "ssd-pcm-log-words-replay",
        "ssd-pcm-log-words-replay-hot",
        "ssd-ipl-replay",
        "ssd-ipl-replay-hot",
        "page-remap/native",
        "page-remap/native-hot",
        "pcm-log/native-hot",
        "memory-random-mix",
        "memory-pointer-chase",
        "btree-insert",
        "envy-memory-random-mix",
        "pcm-writeback/one-word-changed",
        "pcm-writeback/random-line",
        "line-diff/native/one-word-changed",
        "line-diff/native/random-line",
        "pcm-as-disk/page-fault",
        "page-copy/native",
        "pcm-as-disk/ssb-load-join",
        "native/ssb-load-join",
    ]
    .map(String::from)
    .into();
    for benchmark in nvmdb_kv::Benchmark::ALL {
        names.push(format!("kv/btreemap/{}", benchmark.name()));
        for engine in nvmdb_kv::EngineKind::ALL {
            names.push(format!("kv/{}/{}", engine.name(), benchmark.name()));
        }
    }
    names
}

/// Host bytes the memory benchmarks hold per byte of working set: two memories of twice
/// the working set, the cache model's image and the PCM's cells. Measured peak: 1.84 GB
/// for `--mib 256 --filter memory`, about 7 per byte; 8 leaves a margin.
const BENCH_BYTES_PER_WORKING_BYTE: u64 = 8;

/// The command line that reproduces a run of `args`, for the table's list of runs.
fn command_line(args: &BenchArgs) -> String {
    let mut command = format!("nvmdb bench --ops {} --mib {} --kv-records {}", args.ops, args.mib, args.kv_records);
    if let Some(filter) = &args.filter {
        command.push_str(&format!(" --filter {filter}"));
    }
    if args.exact {
        command.push_str(" --exact");
    }
    if let Some(file) = &args.markdown {
        command.push_str(&format!(" --markdown {file}"));
    }
    command
}

/// The machine's load average over the last minute (/proc/loadavg), in words: other work
/// on the machine moves the figures.
fn load_average() -> String {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    text.split_whitespace()
        .next()
        .map_or_else(|| "load average unknown".into(), |l| format!("load average {l} at the start"))
}

/// The run's results as the table writer takes them.
fn measured(results: &[BenchResult]) -> Vec<table::Measured> {
    results
        .iter()
        .map(|r| table::Measured {
            name: r.name.clone(),
            ns_per_op: r.ns_per_op,
            baseline: r.baseline.clone().zip(r.baseline_ns_per_op),
            peak_memory_bytes: r.peak_memory_bytes,
        })
        .collect()
}

/// Runs the benchmarks.
pub fn run(args: &BenchArgs) -> Result<(), CliError> {
    if args.ops == 0 || args.mib == 0 {
        return Err(CliError::input("--ops and --mib must be positive"));
    }
    if let Some(filter) = &args.filter {
        if !benchmark_names().iter().any(|name| matches(filter, args.exact, name)) {
            let what = if args.exact { "is named" } else { "has a name containing" };
            return Err(CliError::input(format!("--filter: no benchmark {what} {filter:?} (see nvmdb bench --help)")));
        }
    }
    // The memory benchmarks allocate twice the working set; refused before any runs.
    let Some(bytes) = args.mib.checked_mul(1 << 20).filter(|b| b.checked_mul(2).is_some()) else {
        return Err(CliError::input(format!("--mib: {} MiB is too large", args.mib)));
    };
    // Native and cached memories of twice the working set each, plus the PCM's cells.
    crate::limits::check_memory("--mib", bytes.saturating_mul(BENCH_BYTES_PER_WORKING_BYTE))?;
    // The table's file is read and its markers checked before anything runs; the run is
    // named by its start and the machine's load then.
    let markdown = match &args.markdown {
        Some(path) => {
            let text = crate::input::read_small(path)?;
            table::check_markers(&text).map_err(|e| CliError::input(format!("--markdown {path}: {e}")))?;
            let run = table::Run {
                date: super::lab::now_utc(),
                machine: format!("{}; {}", super::lab::machine_description(), load_average()),
                command: command_line(args),
                mib: args.mib,
            };
            Some((path, text, run))
        }
        None => None,
    };
    let mut results = Vec::new();
    // A stop asked for ([`nvmdb_cancel`]) ends the run between two groups of benchmarks.
    ssd_benches(args, &mut results)?;
    nvmdb_cancel::check()?;
    memory_benches(args, bytes, &mut results)?;
    nvmdb_cancel::check()?;
    btree_benches(args, &mut results);
    nvmdb_cancel::check()?;
    if selected(args, "envy-memory-random-mix") {
        let [envy, native] = nvmdb_experiments::bench::envy::memory_random_mix(args.ops, args.mib)
            .map(|(name, ops, ns)| from_ns_per_op(&name, ops, ns));
        results.push(compared(envy, &native));
        results.push(native);
    }
    nvmdb_cancel::check()?;
    kv_benches(args, &mut results)?;
    nvmdb_cancel::check()?;
    writeback_benches(args, bytes, &mut results)?;
    nvmdb_cancel::check()?;
    pcm_as_disk_benches(args, &mut results);
    nvmdb_cancel::check()?;
    if let Some((path, text, run)) = markdown {
        let rewritten = table::rewrite(&text, &measured(&results), &run)
            .map_err(|e| CliError::input(format!("--markdown {path}: {e}")))?;
        crate::output::write_file(path, &rewritten)?;
    }
    let mut out = Output::new();
    if args.json {
        return out.json(&results);
    }
    out.line(format_args!(
        "{:<36} {:>12} {:>14} {:>10} {:>14}",
        "benchmark", "ns/op", "ops/s", "ratio", "peak memory"
    ))?;
    for r in &results {
        let ratio = r.ratio.map_or_else(String::new, |x| format!("{x:.2}x"));
        let memory =
            r.peak_memory_bytes.map_or_else(String::new, |b| format!("{:.2} GiB", b as f64 / f64::from(1 << 30)));
        out.line(format_args!(
            "{:<36} {:>12.1} {:>14.0} {:>10} {:>14}",
            r.name, r.ns_per_op, r.ops_per_second, ratio, memory
        ))?;
    }
    out.finish()
}

#[cfg(test)]
mod tests {
    use super::{benchmark_names, matches};
    use nvmdb_experiments::bench::table::GOALS;

    #[test]
    fn every_goal_names_a_result_of_a_listed_benchmark() {
        let names = benchmark_names();
        for goal in GOALS {
            assert!(names.iter().any(|n| goal.name.starts_with(n.as_str())), "{goal:?}");
        }
    }

    #[test]
    fn exact_matches_the_whole_name_only() {
        assert!(matches("memory-random-mix", false, "envy-memory-random-mix"));
        assert!(!matches("memory-random-mix", true, "envy-memory-random-mix"));
        assert!(matches("memory-random-mix", true, "memory-random-mix"));
        assert!(!matches("ssd-page-ftl-replay", true, "ssd-page-ftl-replay-hot"));
        let names = benchmark_names();
        assert!(names.contains(&"kv/ipl-p/update".to_owned()), "{names:?}");
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len());
    }
}
