//! `nvmdb btree run`: a B+-tree in simulated memory, driven by files or a generator.

use clap::{Args, Subcommand};
use std::io::BufReader;

use nvmdb_btree::file_format;
use nvmdb_btree::workload::{
    estimated_memory_bytes, loaded_pairs, measure, op_keys, ops_of, random_keys, Answer, AnyMemory, MemoryKind, Op,
    OpKind, RunReport,
};
use nvmdb_btree::{BTree, Variant};
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::error::CliError;
use crate::output::{write_file, Output};

/// B+-tree commands.
#[derive(Debug, Subcommand)]
pub enum BtreeCommand {
    /// Bulk-load a tree and measure operations on it.
    ///
    /// File mode: --load KEYS.txt (one `key value` per line) and --ops OPS.txt (lines
    /// `I key value`, `D key`, `G key`, `S lo hi`); --results gets one line per G (the
    /// value or `-`) and per S (the number of keys in [lo, hi]). Generator mode:
    /// --entries N random keys, then --count K operations of one --op kind. Counters
    /// are reset after loading; the cache is flushed at the end.
    Run(RunArgs),
}

/// Arguments of `nvmdb btree run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Node organisation: sorted, unsorted, unsorted-leaf, unsorted-leaf-bitmap or nvmdb-leaf.
    #[arg(long, value_parser = clap::builder::TypedValueParser::try_map(
        clap::builder::PossibleValuesParser::new(["sorted", "unsorted", "unsorted-leaf", "unsorted-leaf-bitmap", "nvmdb-leaf"]),
        |s: String| s.parse::<Variant>().map_err(|e| e.to_string()),
    ))]
    pub variant: Variant,
    /// Node size in cache lines: 1, 2, 4 or 8.
    #[arg(long, value_parser = clap::builder::TypedValueParser::map(clap::builder::PossibleValuesParser::new(["1", "2", "4", "8"]), |s: String| s.parse::<u32>().expect("listed values parse")))]
    pub node_lines: u32,
    /// Memory: cached (CIDR 2011 hierarchy over PCM) or flat (PCM, no cache).
    #[arg(long, default_value = "cached", value_parser = clap::builder::TypedValueParser::try_map(
        clap::builder::PossibleValuesParser::new(["cached", "flat"]),
        |s: String| s.parse::<MemoryKind>(),
    ))]
    pub memory: MemoryKind,
    /// Enable Flip-N-Write on the PCM (one flip cell per 64-bit word).
    #[arg(long)]
    pub flip_n_write: bool,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
    /// File mode: the keys to bulk-load.
    #[arg(long)]
    pub load: Option<String>,
    /// File mode: the operations.
    #[arg(long)]
    pub ops: Option<String>,
    /// File mode: where to write the answers of G and S operations.
    #[arg(long)]
    pub results: Option<String>,
    /// Generator mode: random keys to load.
    #[arg(long)]
    pub entries: Option<usize>,
    /// Bulk-load fill factor, in (0, 1].
    #[arg(long, default_value_t = 0.75)]
    pub fill: f64,
    /// Generator mode: insert (new keys), delete (existing keys) or search (half present).
    #[arg(long, value_parser = clap::builder::TypedValueParser::try_map(
        clap::builder::PossibleValuesParser::new(["insert", "delete", "search"]),
        |s: String| s.parse::<OpKind>(),
    ))]
    pub op: Option<OpKind>,
    /// Generator mode: operations to run.
    #[arg(long)]
    pub count: Option<usize>,
    /// The seed (generator keys and the shuffling of unsorted nodes).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// Runs a `btree` subcommand.
pub fn run(command: BtreeCommand) -> Result<(), CliError> {
    match command {
        BtreeCommand::Run(args) => run_tree(&args),
    }
}

fn run_tree(args: &RunArgs) -> Result<(), CliError> {
    if !(args.fill > 0.0 && args.fill <= 1.0) {
        return Err(CliError::input(format!("--fill must be in (0, 1], not {}", args.fill)));
    }
    let file_mode = args.load.is_some() || args.ops.is_some() || args.results.is_some();
    let generator_mode = args.entries.is_some() || args.op.is_some() || args.count.is_some();
    let report = match (file_mode, generator_mode) {
        (true, true) => {
            return Err(CliError::input("use either --load/--ops/--results or --entries/--op/--count, not both"))
        }
        (true, false) => file_run(args)?,
        (false, true) => generated_run(args)?,
        (false, false) => return Err(CliError::input("give --load and --ops, or --entries, --op and --count")),
    };
    let mut out = Output::new();
    if args.json {
        return out.json(&report);
    }
    let value = serde_json::to_value(&report).expect("report serialises");
    for (key, v) in value.as_object().expect("report is an object") {
        out.line(format_args!("{key:>22}  {v}"))?;
    }
    out.finish()
}

fn new_tree(
    args: &RunArgs,
    pairs: impl IntoIterator<Item = (u64, u64)>,
    rng: &mut Xoshiro256PlusPlus,
) -> Result<BTree<AnyMemory>, CliError> {
    let memory = AnyMemory::new(args.memory, args.flip_n_write);
    BTree::bulk_load(memory, args.variant, args.node_lines, pairs, args.fill, rng)
        .map_err(|e| CliError::failed(e.to_string()))
}

fn generated_run(args: &RunArgs) -> Result<RunReport, CliError> {
    let (Some(entries), Some(op), Some(count)) = (args.entries, args.op, args.count) else {
        return Err(CliError::input("generator mode needs --entries, --op and --count"));
    };
    check_generated_memory(args, entries, op, count)?;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(args.seed);
    // A stop asked for ends the run between its phases, and in `measure` per operation.
    let loaded = random_keys(entries, &mut rng);
    nvmdb_cancel::check()?;
    let keys = op_keys(op, &loaded, count, &mut rng).map_err(|e| CliError::input(format!("--count: {e}")))?;
    nvmdb_cancel::check()?;
    let mut tree = new_tree(args, loaded_pairs(&loaded), &mut rng)?;
    nvmdb_cancel::check()?;
    let (report, _) =
        measure(&mut tree, ops_of(op, &keys, loaded.len() as u64)).map_err(|e| CliError::failed(e.to_string()))?;
    Ok(report)
}

/// Refuses generator sizes whose keys and tree would not fit in memory, before any key is
/// drawn (the estimate of [`nvmdb_btree::workload::estimated_memory_bytes`], tested
/// against the measured peak).
fn check_generated_memory(args: &RunArgs, entries: usize, op: OpKind, count: usize) -> Result<(), CliError> {
    let estimate = estimated_memory_bytes(args.memory, args.node_lines, entries as u64, op, count as u64, args.fill);
    crate::limits::check_memory("--entries/--count/--node-lines", estimate)
}

/// Parses the KEYS.txt at `path` into pairs sorted by key; a failure names `path:line`.
fn parse_keys(path: &str) -> Result<Vec<(u64, u64)>, CliError> {
    file_format::parse_keys(BufReader::new(crate::input::open(path)?)).map_err(|e| at_line(path, e))
}

/// Parses the OPS.txt at `path`; a failure names `path:line`.
fn parse_ops(path: &str) -> Result<Vec<Op>, CliError> {
    file_format::parse_ops(BufReader::new(crate::input::open(path)?)).map_err(|e| at_line(path, e))
}

fn at_line(path: &str, e: file_format::ParseError) -> CliError {
    CliError::at_line(path, e.line, e.message)
}

fn file_run(args: &RunArgs) -> Result<RunReport, CliError> {
    let (Some(load), Some(ops_path)) = (&args.load, &args.ops) else {
        return Err(CliError::input("file mode needs both --load and --ops"));
    };
    if let Some(out) = &args.results {
        crate::input::check_output_is_not_an_input(("--results", out), &[("--load", load), ("--ops", ops_path)])?;
    }
    let pairs = parse_keys(load)?;
    let ops = parse_ops(ops_path)?;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(args.seed);
    let mut tree = new_tree(args, pairs, &mut rng)?;
    nvmdb_cancel::check()?;
    let (report, answers) = measure(&mut tree, ops).map_err(|e| CliError::failed(e.to_string()))?;
    if let Some(out) = &args.results {
        let mut lines = String::new();
        for answer in answers {
            match answer {
                Answer::Value(Some(v)) => lines.push_str(&format!("{v}\n")),
                Answer::Value(None) => lines.push_str("-\n"),
                Answer::Count(n) => lines.push_str(&format!("{n}\n")),
                Answer::Changed(_) => {}
            }
        }
        write_file(out, &lines)?;
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_errors_name_the_file_and_line() {
        let path = std::env::temp_dir().join(format!("nvmdb-btree-dup-{}.txt", std::process::id()));
        std::fs::write(&path, "7 1\n3 2\n7 9\n").unwrap();
        let name = path.to_str().unwrap();
        let err = parse_keys(name).unwrap_err();
        assert_eq!(err.code, crate::error::EXIT_BAD_INPUT);
        assert_eq!(err.message, format!("{name}:3: duplicate key 7 (first on line 1)"));
        std::fs::write(&path, "G 1\nS 3 2\n").unwrap();
        let err = parse_ops(name).unwrap_err();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(err.code, crate::error::EXIT_BAD_INPUT);
        assert_eq!(err.message, format!("{name}:2: scan bounds out of order: 3 > 2"));
    }
}
