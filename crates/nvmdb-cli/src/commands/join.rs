//! `nvmdb join run` and `nvmdb join model`: hash joins on simulated PCM, and the CIDR 2011
//! analytic model.

use std::io::BufReader;

use clap::{Args, Subcommand, ValueEnum};
use nvmdb_device::{Pcm, PcmConfig, PcmStats};
use nvmdb_join::csv::CsvShape;
use nvmdb_join::estimate::tables_memory_bytes;
use nvmdb_join::model::{best, cost, wear_crossover, Metric, ModelParams, Workload};
use nvmdb_join::synth::{generate, SynthSpec};
use nvmdb_join::{measured_join, Algorithm, IdEncoding, JoinOptions, Layout, StoredRelation, Table};
use nvmdb_memory::{CachedMemory, FlatMemory, Memory};
use nvmdb_workload::lines::quote;
use rand::SeedableRng;
use serde::Serialize;

use crate::error::CliError;
use crate::output::{write_file, Output};

/// Hash-join commands.
#[derive(Debug, Subcommand)]
pub enum JoinCommand {
    /// Join two relations in simulated PCM main memory and report the PCM counters.
    ///
    /// Inputs are CSV files with a header row and unsigned 64-bit integer cells; each row
    /// is a record of 8 B per column. R is the build relation, S the probe relation.
    ///
    /// With --generate, synthetic relations as in CIDR 2011 Section 4.3 are used
    /// instead: R of --r-mb megabytes (10^6 B) with unique keys; S with --match-per-r
    /// records per R record, each matching one R record, in random order; records of
    /// --record-bytes bytes (an 8 B key, then random payload). --record-bytes and
    /// --match-per-r take one value N or an inclusive sweep A..B, optionally A..B:STEP
    /// (default step 20 for --record-bytes and 1 for --match-per-r, the axes of
    /// Figure 7); a sweep runs every combination and prints one result per line (or a JSON
    /// array).
    Run(RunArgs),
    /// Print the analytic comparison of the three algorithms (CIDR 2011 Table 4).
    ///
    /// For each configuration: N_l, N_lw and N_w per algorithm, the PCM metrics (wear =
    /// γ·N_w bits, energy = 8L(N_l + N_lw)E_rb + γ·N_w·E_wb, latency = N_l·T_l + N_w·T_w),
    /// and the best scheme per metric (Figure 5). The relations follow Figure 5: L_S =
    /// L_R, MatchPerS = 1, M_S = MatchPerR·M_R. --record-bytes and --match-per-r take N or
    /// A..B[:STEP] as for `join run --generate`. Also prints the wear cross-over
    /// MatchPerR of each record size.
    Model(ModelArgs),
}

/// The three algorithms on the command line.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum AlgoArg {
    /// CIDR Algorithm 1: one chained hash table on all of R.
    Simple,
    /// CIDR Algorithm 2: copy R and S into cache-sized partitions.
    CachePartitioning,
    /// CIDR Algorithm 3: per-partition record-ID lists, records read in place.
    VirtualPartitioning,
}

impl From<AlgoArg> for Algorithm {
    fn from(a: AlgoArg) -> Algorithm {
        match a {
            AlgoArg::Simple => Algorithm::Simple,
            AlgoArg::CachePartitioning => Algorithm::CachePartitioning,
            AlgoArg::VirtualPartitioning => Algorithm::VirtualPartitioning,
        }
    }
}

/// Relation layouts.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum LayoutArg {
    /// Fixed-length records.
    Row,
    /// One array per column.
    Column,
}

/// Memory models.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum MemoryArg {
    /// CIDR 2011 cache hierarchy (32 KB L1, 256 KB L2, 8 MB L3) over PCM.
    Cached,
    /// No cache: every load and store goes to PCM.
    Flat,
}

/// ID-list encodings.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum EncodingArg {
    /// CIDR 2011: 2-byte deltas, 0xFFFF escaping a full ID.
    Delta16,
    /// The thesis: plain 4-byte IDs.
    Plain32,
}

/// Arguments of `nvmdb join run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The algorithm.
    #[arg(long, value_enum)]
    pub algo: AlgoArg,
    /// Layout of both relations in memory.
    #[arg(long, value_enum, default_value = "row")]
    pub layout: LayoutArg,
    /// Build relation, CSV with a header row (read twice, first to count its rows: a file,
    /// not a pipe).
    #[arg(long, required_unless_present = "generate", conflicts_with = "generate")]
    pub r: Option<String>,
    /// Probe relation, CSV with a header row (read twice, as --r).
    #[arg(long, required_unless_present = "generate", conflicts_with = "generate")]
    pub s: Option<String>,
    /// Join column of R, by header name.
    #[arg(long, required_unless_present = "generate", conflicts_with = "generate")]
    pub r_key: Option<String>,
    /// Join column of S, by header name.
    #[arg(long, required_unless_present = "generate", conflicts_with = "generate")]
    pub s_key: Option<String>,
    /// Write every match as `r_row,s_row` (0-based data rows, sorted, with a header line).
    #[arg(long, conflicts_with = "generate")]
    pub output: Option<String>,
    /// Use synthetic relations (CIDR 2011 Section 4.3) instead of CSV files.
    #[arg(long)]
    pub generate: bool,
    /// With --generate: size of R, MB (10^6 bytes), in (0, 20000].
    #[arg(long, default_value_t = 50.0)]
    pub r_mb: f64,
    /// With --generate: bytes per record, N or A..B[:STEP] (default step 20).
    #[arg(long, default_value = "100")]
    pub record_bytes: String,
    /// With --generate: S records per R record, N or A..B[:STEP] (default step 1).
    #[arg(long, default_value = "1")]
    pub match_per_r: String,
    /// With --generate: the seed of the synthetic data.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Memory model.
    #[arg(long, value_enum, default_value = "cached")]
    pub memory: MemoryArg,
    /// Encoding of virtual partitioning's record-ID lists.
    #[arg(long, value_enum, default_value = "delta16")]
    pub id_encoding: EncodingArg,
    /// Print JSON instead of `key value` lines.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `nvmdb join model`.
#[derive(Debug, Args)]
pub struct ModelArgs {
    /// Size of R, MB (10^6 bytes), in (0, 20000].
    #[arg(long, default_value_t = 50.0)]
    pub r_mb: f64,
    /// Bytes per record, N or A..B[:STEP] (default step 20).
    #[arg(long, default_value = "20..100")]
    pub record_bytes: String,
    /// S records per R record, N or A..B[:STEP] (default step 1).
    #[arg(long, default_value = "1")]
    pub match_per_r: String,
    /// N_hR = N_hS: cache lines per hash-table visit, in (0, 1000].
    #[arg(long, default_value_t = 1.8)]
    pub n_h: f64,
    /// HashTable_lw: line write-backs per hash-table insertion, in (0, 1000].
    #[arg(long, default_value_t = 1.5)]
    pub hash_table_lw: f64,
    /// HashTable_w: words modified per hash-table insertion, in (0, 1000].
    #[arg(long, default_value_t = 5.0)]
    pub hash_table_w: f64,
    /// γ: modified bits per modified word, in (0, 64]. The default, 32, reads Figure 5's γ = 0.5 as
    /// half a 64-bit word; 0.5 reads it as bits (`cidr-fig5` compares the two).
    #[arg(long, default_value_t = ModelParams::CIDR2011.gamma)]
    pub gamma: f64,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Runs a `join` subcommand.
pub fn run(command: JoinCommand) -> Result<(), CliError> {
    match command {
        JoinCommand::Run(args) => run_join(&args),
        JoinCommand::Model(args) => model(&args),
    }
}

/// Parses `N`, `A..B` or `A..B:STEP` (inclusive) into the values it names.
fn parse_sweep(flag: &str, text: &str, default_step: u64, min: u64) -> Result<Vec<u64>, CliError> {
    let bad = |why: &str| CliError::input(format!("{flag}: {} {why} (expected N, A..B or A..B:STEP)", quote(text)));
    let number = |s: &str| s.trim().parse::<u64>().map_err(|_| bad("is not a whole number or range"));
    let values = match text.split_once("..") {
        None => vec![number(text)?],
        Some((a, rest)) => {
            let (b, step) = match rest.split_once(':') {
                Some((b, step)) => (number(b)?, number(step)?),
                None => (number(rest)?, default_step),
            };
            let a = number(a)?;
            let Some(steps) = b.checked_sub(a).and_then(|span| span.checked_div(step)) else {
                return Err(bad("is an empty range"));
            };
            // Counted before collecting: `8..18446744073709551615` must not allocate.
            if steps >= MAX_SWEEP_VALUES {
                return Err(bad(&format!("names more than {MAX_SWEEP_VALUES} values")));
            }
            (a..=b).step_by(usize::try_from(step).unwrap_or(usize::MAX)).collect()
        }
    };
    if values.iter().any(|&v| v < min) {
        return Err(bad(&format!("has a value below {min}")));
    }
    Ok(values)
}

/// `--r-mb` in bytes, refused outside (0, 20000].
#[expect(
    clippy::cast_possible_truncation,
    reason = "checked first: the product lies in (0, 2·10^10], far inside u64; dropping a fraction of a byte is intended"
)]
fn r_bytes(r_mb: f64) -> Result<u64, CliError> {
    if !(r_mb > 0.0 && r_mb <= 20_000.0) {
        return Err(CliError::input(format!("--r-mb: {r_mb:?} is not in (0, 20000]")));
    }
    Ok((r_mb * 1e6) as u64)
}

/// The most values one sweep flag may name, and the most combinations of two sweeps.
const MAX_SWEEP_VALUES: u64 = 10_000;

/// Refuses sweeps whose every combination would run too long or fill memory: two sweeps
/// of 10,000 values each name 10^8 joins (or model rows).
fn check_combinations(sizes: &[u64], matches: &[u64]) -> Result<(), CliError> {
    let combinations = (sizes.len() as u64).saturating_mul(matches.len() as u64);
    if combinations > MAX_SWEEP_VALUES {
        return Err(CliError::input(format!(
            "--record-bytes/--match-per-r: {combinations} combinations, more than {MAX_SWEEP_VALUES}"
        )));
    }
    Ok(())
}

/// The shape of the CSV relation at `path` (see [`nvmdb_join::csv`]), read without
/// keeping its values; a failure names `path:line`, and a pipe is refused (the file is
/// read twice).
fn shape_of(path: &str) -> Result<CsvShape, CliError> {
    crate::input::check_rereadable(path)?;
    nvmdb_join::csv::shape_of(BufReader::new(crate::input::open(path)?))
        .map_err(|e| CliError::at_line(path, e.line, e.message))
}

/// Parses the CSV relation at `path` into columns of exactly the rows `shape` counted; a
/// failure names `path:line`.
fn parse_csv(path: &str, shape: &CsvShape) -> Result<Table, CliError> {
    nvmdb_join::csv::parse_csv(BufReader::new(crate::input::open(path)?), Some(shape.rows))
        .map_err(|e| CliError::at_line(path, e.line, e.message))
}

fn key_index(table: &Table, flag: &str, key: &str, path: &str) -> Result<usize, CliError> {
    table.column_index(key).ok_or_else(|| {
        // A few names, each cut short: a header may hold thousands of long ones.
        let mut names: Vec<String> = table.columns.iter().take(8).map(|c| quote(&c.name)).collect();
        if table.columns.len() > 8 {
            names.push(format!("… {} in all", table.columns.len()));
        }
        CliError::input(format!("{flag}: no column {} in {path} (columns: {})", quote(key), names.join(", ")))
    })
}

/// What `join run` reports per join.
#[derive(Debug, Serialize)]
struct RunReport {
    algorithm: &'static str,
    layout: &'static str,
    memory: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    record_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    match_per_r: Option<u64>,
    r_rows: u64,
    s_rows: u64,
    matches: u64,
    partitions: u64,
    estimated_cycles: u64,
    energy_pj: u64,
    pcm_latency_cycles: u64,
    pcm: PcmStats,
}

/// Simulated PCM capacity for the CLI (allocated sparsely).
const PCM_CAPACITY_BYTES: u64 = 64 << 30;

/// Where the relations come from.
enum Source<'a> {
    /// Synthetic relations and their seed.
    Synthetic(SynthSpec, u64),
    /// Parsed CSV tables with their key columns, and the layout.
    Tables { r: &'a Table, r_key: usize, s: &'a Table, s_key: usize, layout: Layout },
}

impl Source<'_> {
    fn load<M: Memory>(&self, mem: &mut M) -> Result<(StoredRelation, StoredRelation), nvmdb_memory::MemoryError> {
        match self {
            Source::Synthetic(spec, seed) => {
                let mut rng = nvmdb_lab::Rng::seed_from_u64(*seed);
                generate(mem, spec, &mut rng)
            }
            Source::Tables { r, r_key, s, s_key, layout } => {
                Ok((StoredRelation::load(mem, r, *layout, *r_key)?, StoredRelation::load(mem, s, *layout, *s_key)?))
            }
        }
    }
}

/// A join's output, its counters, and the relation sizes.
type Joined = (nvmdb_join::JoinOutput, nvmdb_memory::MemoryReport, u64, u64);

/// Loads both relations into a fresh memory and joins them; a stop asked for
/// ([`nvmdb_cancel`]) ends it before either phase.
fn join_in<M: Memory>(mut mem: M, source: &Source, options: &JoinOptions) -> Result<Joined, CliError> {
    let failed = |e: nvmdb_memory::MemoryError| CliError::failed(e.to_string());
    nvmdb_cancel::check()?;
    let (r, s) = source.load(&mut mem).map_err(failed)?;
    nvmdb_cancel::check()?;
    let (output, report) = measured_join(&mut mem, &r, &s, options).map_err(failed)?;
    Ok((output, report, r.rows(), s.rows()))
}

fn join_with(memory: MemoryArg, source: &Source, options: &JoinOptions) -> Result<Joined, CliError> {
    let pcm = Pcm::new(PcmConfig::new(PCM_CAPACITY_BYTES)).map_err(|e| CliError::failed(e.to_string()))?;
    match memory {
        MemoryArg::Cached => join_in(CachedMemory::cidr2011(pcm), source, options),
        MemoryArg::Flat => join_in(FlatMemory::new(pcm), source, options),
    }
}

fn run_join(args: &RunArgs) -> Result<(), CliError> {
    let layout = match args.layout {
        LayoutArg::Row => Layout::Row,
        LayoutArg::Column => Layout::Column,
    };
    let options = JoinOptions {
        algorithm: args.algo.into(),
        cache_bytes: 8 << 20,
        id_encoding: match args.id_encoding {
            EncodingArg::Delta16 => IdEncoding::Delta16,
            EncodingArg::Plain32 => IdEncoding::Plain32,
        },
        collect_pairs: args.output.is_some(),
    };
    // The cache hierarchy, for the memory estimates.
    let cache = matches!(args.memory, MemoryArg::Cached).then(nvmdb_memory::CacheConfig::cidr2011);
    let mut reports = Vec::new();
    if args.generate {
        let sizes = parse_sweep("--record-bytes", &args.record_bytes, 20, 8)?;
        let matches = parse_sweep("--match-per-r", &args.match_per_r, 1, 1)?;
        check_combinations(&sizes, &matches)?;
        let r_bytes = r_bytes(args.r_mb)?;
        let specs: Vec<SynthSpec> = sizes
            .iter()
            .flat_map(|&record_bytes| {
                matches.iter().map(move |&match_per_r| SynthSpec { r_bytes, record_bytes, match_per_r, layout })
            })
            .collect();
        // Every combination is checked before the first runs.
        for spec in &specs {
            if spec.r_rows() == 0 || spec.s_rows() > u64::from(u32::MAX) {
                return Err(CliError::input(format!(
                    "--r-mb/--record-bytes/--match-per-r: {} R rows and {} S rows (need 1 to 2^32)",
                    spec.r_rows(),
                    spec.s_rows()
                )));
            }
            let estimate = nvmdb_join::synth::estimated_memory_bytes(spec, &options, cache.as_ref());
            crate::limits::check_memory("--r-mb/--record-bytes/--match-per-r", estimate)?;
        }
        for spec in specs {
            let combination = Some((spec.record_bytes, spec.match_per_r));
            let (output, report, r_rows, s_rows) =
                join_with(args.memory, &Source::Synthetic(spec, args.seed), &options)?;
            reports.push(report_of(args, &output, &report, r_rows, s_rows, combination));
        }
    } else {
        let (r_path, s_path) = (args.r.as_deref().unwrap_or_default(), args.s.as_deref().unwrap_or_default());
        if let Some(path) = &args.output {
            crate::input::check_output_is_not_an_input(("--output", path), &[("--r", r_path), ("--s", s_path)])?;
        }
        let (r_shape, s_shape) = (shape_of(r_path)?, shape_of(s_path)?);
        let estimate = tables_memory_bytes(&r_shape, &s_shape, layout, &options, cache.as_ref());
        crate::limits::check_memory("--r/--s", estimate)?;
        let r_table = parse_csv(r_path, &r_shape)?;
        let s_table = parse_csv(s_path, &s_shape)?;
        let r_key = key_index(&r_table, "--r-key", args.r_key.as_deref().unwrap_or_default(), r_path)?;
        let s_key = key_index(&s_table, "--s-key", args.s_key.as_deref().unwrap_or_default(), s_path)?;
        if args.output.is_some() {
            let (r, s) = (&r_table.columns[r_key].values, &s_table.columns[s_key].values);
            let output = output_bytes(matches(r, s), r.len(), s.len()).saturating_add(matches_map_bytes(r.len()));
            crate::limits::check_memory("--output", estimate.saturating_add(output))?;
        }
        let source = Source::Tables { r: &r_table, r_key, s: &s_table, s_key, layout };
        let (mut output, report, r_rows, s_rows) = join_with(args.memory, &source, &options)?;
        if let Some(path) = &args.output {
            output.pairs.sort_unstable();
            let mut text = String::from("r_row,s_row\n");
            for (r, s) in &output.pairs {
                text.push_str(&format!("{r},{s}\n"));
            }
            write_file(path, &text)?;
        }
        reports.push(report_of(args, &output, &report, r_rows, s_rows, None));
    }
    print_reports(&reports, args.json)
}

/// Pairs of an equi-join of keys `r` and `s`: an S row's matches are the R rows with its
/// key (counted before the join, which with `--output` keeps every pair: keys shared by
/// many rows of both make their product).
fn matches(r: &[u64], s: &[u64]) -> u64 {
    let mut rows_of = std::collections::HashMap::<u64, u64>::with_capacity(r.len());
    for &key in r {
        let rows = rows_of.entry(key).or_default();
        *rows = rows.saturating_add(1);
    }
    s.iter().filter_map(|key| rows_of.get(key)).fold(0, |sum, &n| sum.saturating_add(n))
}

/// Host bytes [`matches`] takes for the keys of `r_rows` rows at most: a hash map of
/// 16 B entries and a control byte each, with up to twice the buckets 8/7 of them need.
fn matches_map_bytes(r_rows: usize) -> u64 {
    (r_rows as u64).saturating_mul(2 * 17 * 8) / 7
}

/// Host bytes `--output` takes for `pairs` pairs of rows of relations of `r_rows` and
/// `s_rows` rows, at most: the pairs (two u64, 16 B each) in a vector grown by doubling,
/// three times their bytes while it grows (the old buffer and the new) and twice after;
/// then, beside that, their text lines (both row numbers in decimal, a comma and a line
/// break) in a string grown the same way, three times their bytes while it grows.
fn output_bytes(pairs: u64, r_rows: usize, s_rows: usize) -> u64 {
    let digits = |rows: usize| u64::from(rows.max(1).ilog10()).saturating_add(1);
    let line = digits(r_rows).saturating_add(digits(s_rows)).saturating_add(2);
    pairs.saturating_mul(line.saturating_mul(3).saturating_add(2 * 16).max(3 * 16))
}

fn report_of(
    args: &RunArgs,
    output: &nvmdb_join::JoinOutput,
    report: &nvmdb_memory::MemoryReport,
    r_rows: u64,
    s_rows: u64,
    synthetic: Option<(u64, u64)>,
) -> RunReport {
    RunReport {
        algorithm: Algorithm::from(args.algo).name(),
        layout: match args.layout {
            LayoutArg::Row => "row",
            LayoutArg::Column => "column",
        },
        memory: match args.memory {
            MemoryArg::Cached => "cached",
            MemoryArg::Flat => "flat",
        },
        record_bytes: synthetic.map(|s| s.0),
        match_per_r: synthetic.map(|s| s.1),
        r_rows,
        s_rows,
        matches: output.matches,
        partitions: output.partitions,
        estimated_cycles: report.estimated_cycles,
        energy_pj: report.energy_pj(),
        pcm_latency_cycles: report.pcm_latency_cycles(),
        pcm: report.pcm,
    }
}

fn print_reports(reports: &[RunReport], json: bool) -> Result<(), CliError> {
    let mut out = Output::new();
    if json {
        return match reports {
            [one] => out.json(one),
            many => out.json(&many),
        };
    }
    for (i, report) in reports.iter().enumerate() {
        if i > 0 {
            out.line("")?;
        }
        let value = serde_json::to_value(report).expect("report serialises");
        for (key, v) in value.as_object().expect("report is an object") {
            match v.as_object() {
                Some(inner) => {
                    for (k, v) in inner {
                        out.line(format_args!("{:>24}  {v}", format!("{key}.{k}")))?;
                    }
                }
                None => {
                    out.line(format_args!("{key:>24}  {}", v.as_str().map_or_else(|| v.to_string(), str::to_string)))?
                }
            }
        }
    }
    out.finish()
}

/// One configuration of `join model`.
#[derive(Debug, Serialize)]
struct ModelRow {
    record_bytes: u64,
    match_per_r: u64,
    algorithm: &'static str,
    n_l: f64,
    n_lw: f64,
    n_w: f64,
    wear_bits: f64,
    energy_pj: f64,
    latency_cycles: f64,
    best_for: Vec<&'static str>,
}

fn model(args: &ModelArgs) -> Result<(), CliError> {
    let sizes = parse_sweep("--record-bytes", &args.record_bytes, 20, 1)?;
    let matches = parse_sweep("--match-per-r", &args.match_per_r, 1, 1)?;
    check_combinations(&sizes, &matches)?;
    r_bytes(args.r_mb)?;
    // A word has 64 bits; the hash-table counts are per visit or insertion, far below
    // 1000 for any hash table (CIDR's are 1.8, 1.5 and 5).
    for (flag, v, max) in [
        ("--n-h", args.n_h, 1000.0),
        ("--hash-table-lw", args.hash_table_lw, 1000.0),
        ("--hash-table-w", args.hash_table_w, 1000.0),
        ("--gamma", args.gamma, 64.0),
    ] {
        if !(v > 0.0 && v <= max) {
            return Err(CliError::input(format!("{flag}: {v:?} is not in (0, {max}]")));
        }
    }
    let p = ModelParams {
        n_hr: args.n_h,
        n_hs: args.n_h,
        hash_table_lw: args.hash_table_lw,
        hash_table_w: args.hash_table_w,
        gamma: args.gamma,
        ..ModelParams::CIDR2011
    };
    let mut rows = Vec::new();
    for &size in &sizes {
        for &m in &matches {
            let w = Workload::primary_foreign(args.r_mb * 1e6, size as f64, m as f64);
            let winners: Vec<(Metric, Algorithm)> = Metric::ALL.iter().map(|&x| (x, best(&w, &p, x).0)).collect();
            for a in Algorithm::ALL {
                let c = cost(a, &w, &p);
                let t = c.total();
                rows.push(ModelRow {
                    record_bytes: size,
                    match_per_r: m,
                    algorithm: a.name(),
                    n_l: t.n_l,
                    n_lw: t.n_lw,
                    n_w: t.n_w,
                    wear_bits: c.wear_bits(&p),
                    energy_pj: c.energy_pj(&p),
                    latency_cycles: c.latency_cycles(&p),
                    best_for: winners.iter().filter(|(_, b)| *b == a).map(|(x, _)| x.name()).collect(),
                });
            }
        }
    }
    let crossovers: Vec<(u64, Option<u64>)> = sizes.iter().map(|&s| (s, wear_crossover(s as f64, &p))).collect();
    let mut out = Output::new();
    if args.json {
        return out.json(&serde_json::json!({"params": p, "rows": rows, "wear_crossover": crossovers}));
    }
    out.line(format_args!(
        "{:>7} {:>6} {:>21} {:>12} {:>12} {:>12} {:>12} {:>14} {:>14}  best for",
        "rec B", "m/R", "algorithm", "N_l", "N_lw", "N_w", "wear bits", "energy uJ", "latency Mcyc"
    ))?;
    for r in &rows {
        out.line(format_args!(
            "{:>7} {:>6} {:>21} {:>12.0} {:>12.0} {:>12.0} {:>12.0} {:>14.1} {:>14.1}  {}",
            r.record_bytes,
            r.match_per_r,
            r.algorithm,
            r.n_l,
            r.n_lw,
            r.n_w,
            r.wear_bits,
            r.energy_pj / 1e6,
            r.latency_cycles / 1e6,
            r.best_for.join(", ")
        ))?;
    }
    for (size, c) in crossovers {
        match c {
            Some(m) => out.line(format_args!(
                "wear cross-over at {size} B: simple wears no more than virtual from MatchPerR {m}"
            ))?,
            None => out.line(format_args!(
                "wear cross-over at {size} B: virtual partitioning wears less for all MatchPerR 1-50"
            ))?,
        }
    }
    out.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use nvmdb_join::Column;

    #[test]
    fn sweeps_parse_values_ranges_and_steps() {
        assert_eq!(parse_sweep("--x", "7", 20, 1).unwrap(), vec![7]);
        assert_eq!(parse_sweep("--x", "20..100", 20, 1).unwrap(), vec![20, 40, 60, 80, 100]);
        assert_eq!(parse_sweep("--x", "1..8:3", 1, 1).unwrap(), vec![1, 4, 7]);
        for bad in ["", "a", "5..1", "1..4:0", "0"] {
            let e = parse_sweep("--x", bad, 1, 1).unwrap_err();
            assert!(e.message.starts_with("--x: ") && e.code == 2, "{bad}: {}", e.message);
        }
    }

    fn write_temp(name: &str, contents: &str) -> String {
        let path = std::env::temp_dir().join(format!("nvmdb-join-cli-{}-{name}", std::process::id()));
        std::fs::write(&path, contents).unwrap();
        path.to_string_lossy().into_owned()
    }

    #[test]
    fn csv_errors_name_file_and_line() {
        let ok = write_temp("ok.csv", "a, b\n1,2\n\n3, 4\n");
        let table = parse_csv(&ok, &shape_of(&ok).unwrap()).unwrap();
        assert_eq!(table.columns[1].values, vec![2, 4]);
        assert_eq!(key_index(&table, "--r-key", "b", &ok).unwrap(), 1);
        let e = key_index(&table, "--r-key", "zz", &ok).unwrap_err();
        assert_eq!(e.message, format!("--r-key: no column 'zz' in {ok} (columns: 'a', 'b')"));
        let cases = [
            ("empty.csv", "", ":1: empty file: expected a header row"),
            ("dup.csv", "a,a\n1,2\n", ":1: column 'a' appears twice"),
            ("short.csv", "a,b\n1,2\n3\n", ":3: 1 cells, but the header has 2"),
            ("neg.csv", "a,b\n1,-2\n", ":2: column 'b': '-2' is not an unsigned 64-bit integer"),
        ];
        for (name, contents, expected) in cases {
            let path = write_temp(name, contents);
            let e = shape_of(&path).unwrap_err();
            assert_eq!(e.code, 2);
            assert_eq!(e.message, format!("{path}{expected}"));
            std::fs::remove_file(path).unwrap();
        }
        std::fs::remove_file(ok).unwrap();
    }

    #[test]
    fn every_algorithm_and_layout_finds_the_same_pairs() {
        let table =
            |keys: &[u64]| Table { columns: vec![Column { name: "k".into(), width_bytes: 8, values: keys.to_vec() }] };
        let (r, s) = (table(&[1, 2, 1]), table(&[1, 3, 2, 1]));
        for algo in [AlgoArg::Simple, AlgoArg::CachePartitioning, AlgoArg::VirtualPartitioning] {
            for layout in [Layout::Row, Layout::Column] {
                let options = JoinOptions { collect_pairs: true, ..JoinOptions::cidr2011(algo.into()) };
                let source = Source::Tables { r: &r, r_key: 0, s: &s, s_key: 0, layout };
                let (mut output, report, _, _) = join_with(MemoryArg::Cached, &source, &options).unwrap();
                output.pairs.sort_unstable();
                assert_eq!(output.pairs, vec![(0, 0), (0, 3), (1, 2), (2, 0), (2, 3)]);
                assert!(report.pcm.lines_read > 0);
            }
        }
    }
}
