//! `nvmdb kv`: the IPL-P key-value engine (seed 002).

use clap::Subcommand;

use crate::commands::kv_demo;
use crate::error::CliError;

/// Key-value engine commands.
#[derive(Debug, Subcommand)]
pub enum KvCommand {
    /// The seed's live performance monitor: the four engines side by side on the insert,
    /// update and search benchmarks, with progress bars and a throughput line every second
    /// on stderr, an optional web page (--serve), and the final numbers on stdout.
    Demo(kv_demo::DemoArgs),
}

/// Runs a `kv` command.
pub fn run(command: KvCommand) -> Result<(), CliError> {
    match command {
        KvCommand::Demo(args) => kv_demo::run(&args),
    }
}
