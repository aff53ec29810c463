//! `nvmdb`: run nvmdb's devices, data structures and experiments from the shell.

mod commands;
mod error;

use clap::{Parser, Subcommand};

use crate::error::{CliError, EXIT_BAD_INPUT};

/// Database structures and storage engines on simulated non-volatile memory.
#[derive(Debug, Parser)]
#[command(name = "nvmdb", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// PCM device commands.
    #[command(subcommand)]
    Pcm(commands::pcm::PcmCommand),
    /// SSD simulator commands (FTLs, GC, wear levelling, buffers, deduplication).
    #[command(subcommand)]
    Ssd(commands::ssd::SsdCommand),
    /// Hash joins on simulated PCM, and their analytic model.
    #[command(subcommand)]
    Join(commands::join::JoinCommand),
    /// B+-tree commands.
    #[command(subcommand)]
    Btree(commands::btree::BtreeCommand),
    /// eNVy: flash as persistent, byte-addressable main memory.
    #[command(subcommand)]
    Envy(commands::envy::EnvyCommand),
    /// Synthetic trace commands.
    #[command(subcommand)]
    Trace(commands::trace::TraceCommand),
    /// List the registered experiments.
    List,
    /// Run one experiment and write its results.
    Run(commands::lab::RunArgs),
    /// Run every experiment and write the report (REPORT.md, index.html).
    Reproduce(commands::lab::RunOptions),
    /// Measure the simulator's own speed (results go to BENCHMARKS.md by hand).
    Bench(commands::bench::BenchArgs),
}

fn dispatch(command: Command) -> Result<(), CliError> {
    match command {
        Command::Pcm(c) => commands::pcm::run(c),
        Command::Ssd(c) => commands::ssd::run(c),
        Command::Join(c) => commands::join::run(c),
        Command::Btree(c) => commands::btree::run(c),
        Command::Envy(c) => commands::envy::run(c),
        Command::Trace(c) => commands::trace::run(c),
        Command::List => {
            commands::lab::list();
            Ok(())
        }
        Command::Run(args) => commands::lab::run(&args),
        Command::Reproduce(options) => commands::lab::reproduce(&options),
        Command::Bench(args) => commands::bench::run(&args),
    }
}

fn main() {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            // --help and --version.
            let _ = e.print();
            return;
        }
        Err(e) => {
            // One line naming the flag at fault, not clap's multi-line usage block.
            let rendered = e.render().to_string();
            let first = rendered.lines().find(|l| !l.trim().is_empty()).unwrap_or("invalid arguments");
            eprintln!("{} (see --help)", first.trim());
            std::process::exit(EXIT_BAD_INPUT);
        }
    };
    if let Err(e) = dispatch(cli.command) {
        // The message is the whole line: `FILE:LINE: what is wrong` for bad input.
        eprintln!("{e}");
        std::process::exit(e.code);
    }
}
