//! `nvmdb`: run nvmdb's devices, data structures and experiments from the shell, or from
//! a program: [`main`] is the binary's whole body, and [`run_captured`] runs the same
//! command line with what it would print on stdout returned instead (the Python package's
//! one way in).

#![warn(clippy::cast_possible_truncation, clippy::unwrap_used, clippy::arithmetic_side_effects)]

mod commands;
mod effect;
mod error;
mod input;
mod limits;
mod monitor;
mod output;
mod progress;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

pub use crate::error::{CliError, ErrorKind, OsError};
use crate::error::{EXIT_BAD_INPUT, EXIT_INTERRUPTED};
pub use nvmdb_lab::Tally;

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
    /// Real SQLite with its rollback journal in simulated PCM (seed 003).
    #[command(subcommand)]
    Journal(commands::journal::JournalCommand),
    /// The IPL-P key-value engine (seed 002): B+-tree pages in flash, their changes
    /// logged in PCM or flash.
    #[command(subcommand)]
    Kv(commands::kv::KvCommand),
    /// Synthetic trace commands.
    #[command(subcommand)]
    Trace(commands::trace::TraceCommand),
    /// List the registered experiments.
    List,
    /// Run one experiment and write its results.
    Run(commands::lab::RunArgs),
    /// Run every experiment and write the report (REPORT.md, index.html).
    Reproduce(commands::lab::ReproduceArgs),
    /// Measure the simulator's own speed (`--markdown BENCHMARKS.md` writes its table of today's figures).
    Bench(commands::bench::BenchArgs),
}

/// The command line's definition: [`Cli`]'s, with every numeric flag taking a value that
/// starts with `-` (`--records -1`, `--utilization -inf`) as its value, so that the flag's
/// own check names it (an unsigned flag: "invalid digit"), every floating-point flag
/// refusing NaN and the infinities ([`finite`]), and every text flag (a path, a name)
/// refusing an empty value (`--trace ''`).
fn command() -> clap::Command {
    checked_values(Cli::command())
}

fn checked_values(command: clap::Command) -> clap::Command {
    use std::any::TypeId;
    let integers = [
        TypeId::of::<u8>(),
        TypeId::of::<u16>(),
        TypeId::of::<u32>(),
        TypeId::of::<u64>(),
        TypeId::of::<usize>(),
        TypeId::of::<i64>(),
        TypeId::of::<std::num::NonZeroUsize>(),
        TypeId::of::<std::num::NonZeroU64>(),
    ];
    command
        .mut_args(|arg| {
            let parser = arg.get_value_parser().type_id();
            if parser == TypeId::of::<f64>() {
                arg.allow_hyphen_values(true).value_parser(finite)
            } else if integers.iter().any(|&t| parser == t) {
                arg.allow_hyphen_values(true)
            } else if plain_text(&arg) {
                arg.value_parser(clap::builder::NonEmptyStringValueParser::new())
            } else {
                arg
            }
        })
        .mut_subcommands(checked_values)
}

/// Whether `arg` takes text with clap's plain `String` parser (a path, a name), not one of
/// its own (a list of values, a mapping), whose checks must stay. (A parser of its own
/// shows in the `Debug` form as `ValueParser::other`; were that to change, empty values
/// would go unrefused, which the tests notice, not other values refused.)
fn plain_text(arg: &clap::Arg) -> bool {
    arg.get_action().takes_values() && format!("{:?}", arg.get_value_parser()) == "ValueParser::string"
}

/// A floating-point flag's value: a finite number (no flag has a use for NaN or an
/// infinity; each checks its own range).
fn finite(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err("not a finite number".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// Parses a command line (with the program name first) by [`command`].
fn parse(argv: impl IntoIterator<Item = impl Into<std::ffi::OsString> + Clone>) -> Result<Cli, clap::Error> {
    let mut command = command();
    let matches = command.try_get_matches_from_mut(argv)?;
    effect::check(&matches).map_err(|message| command.error(clap::error::ErrorKind::ArgumentConflict, message))?;
    Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut command))
}

/// Runs a command. An error after a stop was asked for ([`nvmdb_cancel::cancel`]) is the
/// interruption (exit 130), whatever the driver that saw the flag called it.
fn run_command(command: Command) -> Result<(), CliError> {
    match dispatch(command) {
        Err(_) if nvmdb_cancel::is_cancelled() => Err(CliError::interrupted()),
        result => result,
    }
}

fn dispatch(command: Command) -> Result<(), CliError> {
    match command {
        Command::Pcm(c) => commands::pcm::run(c),
        Command::Ssd(c) => commands::ssd::run(c),
        Command::Join(c) => commands::join::run(c),
        Command::Btree(c) => commands::btree::run(c),
        Command::Envy(c) => commands::envy::run(c),
        Command::Journal(c) => commands::journal::run(c),
        Command::Kv(c) => commands::kv::run(c),
        Command::Trace(c) => commands::trace::run(c),
        Command::List => commands::lab::list(),
        Command::Run(args) => commands::lab::run(&args),
        Command::Reproduce(args) => commands::lab::reproduce(&args),
        Command::Bench(args) => commands::bench::run(&args),
    }
}

/// The `nvmdb` binary: parses the process's arguments, runs the command, and on failure
/// prints its one line on stderr and exits with its code. Ctrl-C asks the running
/// command to stop ([`nvmdb_cancel`]): it ends at its next check with `interrupted` and
/// exit code 130, its output files left as they were (each is written under a temporary
/// name and renamed when complete); a second Ctrl-C exits at once with 130.
pub fn main() {
    stop_on_ctrl_c();
    let cli = match parse(std::env::args_os()) {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            // --help and --version.
            let _ = e.print();
            return;
        }
        Err(e) => {
            eprintln!("{}", usage_error(&e).message);
            std::process::exit(EXIT_BAD_INPUT);
        }
    };
    // `run` and `reproduce` show their own progress, `kv demo` its board, and `bench`
    // measures loops that must not count their steps.
    let shows_its_own = matches!(
        cli.command,
        Command::Run(_) | Command::Reproduce(_) | Command::Bench(_) | Command::Kv(commands::kv::KvCommand::Demo(_))
    );
    let result = if shows_its_own {
        run_command(cli.command)
    } else {
        let progress = std::sync::Arc::new(nvmdb_cancel::Progress::default());
        let _line = progress::ProgressLine::start(std::sync::Arc::clone(&progress));
        nvmdb_cancel::counting(progress, || run_command(cli.command))
    };
    if let Err(e) = result {
        // The message is the whole line: `FILE:LINE: what is wrong` for bad input. A closed
        // stdout pipe has no message.
        if !e.message.is_empty() {
            eprintln!("{e}");
        }
        std::process::exit(e.code);
    }
}

/// Runs `nvmdb ARGS` (`args` without the program name) as the binary does, parsed by the
/// same definitions and run by the same code, and returns what it would have printed on
/// stdout (with `--json`, the JSON). A failure is the error the binary would print and
/// exit with: a bad flag is the binary's one line, exit code 2. `--help` and `--version`
/// return their text. Stderr (progress, notes) is the process's own, as for the binary.
pub fn run_captured(args: &[String]) -> Result<String, CliError> {
    run_counted(args, std::sync::Arc::default())
}

/// [`run_captured`], counting in `tally` as the command goes (for a progress bar: the
/// Python package reads it from another thread while the command runs): `nvmdb run` and
/// `nvmdb reproduce` count their experiments and parts as they start and finish, every
/// other command its main loop's steps (requests, operations, transactions, statements;
/// see [`nvmdb_cancel::counting`]), with a total of 0 while it is not known.
pub fn run_counted(args: &[String], tally: std::sync::Arc<Tally>) -> Result<String, CliError> {
    let argv = std::iter::once("nvmdb").chain(args.iter().map(String::as_str));
    let cli = match parse(argv) {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => return Ok(e.render().to_string()),
        Err(e) => return Err(usage_error(&e)),
    };
    // Runs of real SQLite share its process-wide PRNG (seeded at each run's start): in one
    // process they run one at a time, so that each gives the same numbers as the binary.
    let _sqlite = uses_sqlite(&cli.command).then(|| SQLITE.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
    if matches!(cli.command, Command::Run(_) | Command::Reproduce(_)) {
        commands::lab::counting(tally, || output::capture(|| run_command(cli.command)))
    } else {
        nvmdb_cancel::counting(tally, || output::capture(|| run_command(cli.command)))
    }
}

/// Ctrl-C (SIGINT) raises the cancellation flag; when it is already raised, the process
/// exits with 130 at once. Only the binary installs this: a program that calls
/// [`run_captured`] (Python) owns its signals and raises the flag itself ([`cancel`]).
fn stop_on_ctrl_c() {
    use signal_hook::consts::SIGINT;
    let flag = nvmdb_cancel::shared_flag();
    // The first registered action runs first: exit if the flag is already up, then raise it.
    let installed = signal_hook::flag::register_conditional_shutdown(SIGINT, EXIT_INTERRUPTED, flag.clone())
        .and_then(|_| signal_hook::flag::register(SIGINT, flag));
    if let Err(e) = installed {
        eprintln!("nvmdb: warning: Ctrl-C will end the process at once (cannot install its handler: {e})");
    }
}

/// Asks the commands running in this process to stop: each ends at its driver's next
/// check with [`ErrorKind::Interrupted`]. The flag stays raised until [`clear_cancel`].
pub fn cancel() {
    nvmdb_cancel::cancel();
}

/// Lowers the flag that [`cancel`] raised, for a process that goes on running commands.
pub fn clear_cancel() {
    nvmdb_cancel::clear();
}

/// Held by a [`run_captured`] command that runs real SQLite.
static SQLITE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Whether `command` runs real SQLite: the journal commands, and the experiments of an
/// exclusive group (the journal's, which share SQLite's PRNG), alone or in `reproduce`.
fn uses_sqlite(command: &Command) -> bool {
    match command {
        Command::Journal(_) | Command::Reproduce(_) => true,
        Command::Run(args) => {
            nvmdb_experiments::all().iter().any(|e| e.id() == args.experiment && e.exclusive_group().is_some())
        }
        _ => false,
    }
}

/// A clap parse error as the binary's one line, exit code 2.
fn usage_error(e: &clap::Error) -> CliError {
    let rendered = e.render().to_string();
    let text = if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        missing_command(&rendered)
    } else {
        one_line_usage_error(&rendered)
    };
    CliError::input(format!("{text} (see --help)"))
}

/// The usage line of clap's rendered error or help (`nvmdb ssd <COMMAND>`).
fn usage_of(rendered: &str) -> &str {
    rendered.lines().map(str::trim).find_map(|l| l.strip_prefix("Usage: ")).unwrap_or("")
}

/// The (sub)command a usage line names: `nvmdb ssd replay …` is `ssd replay`'s.
fn command_of(usage: &str) -> clap::Command {
    let mut command = command();
    for word in usage.split_whitespace().skip(1) {
        match command.find_subcommand(word) {
            Some(sub) => command = sub.clone(),
            None => break,
        }
    }
    command
}

/// A command group given without its command (`nvmdb ssd`): its usage and commands.
fn missing_command(rendered: &str) -> String {
    let usage = usage_of(rendered);
    let command = command_of(usage);
    let names: Vec<&str> = command.get_subcommands().map(|c| c.get_name()).filter(|&n| n != "help").collect();
    format!("error: a command is required: one of {} (usage: {usage})", names.join(", "))
}

/// clap's multi-line error as one line: the error and its notes (the flag, the allowed
/// values), without the usage block; the allowed values of a flag named in it are added
/// when clap leaves them out (a missing flag); long quoted values are cut.
fn one_line_usage_error(rendered: &str) -> String {
    let lines: Vec<&str> = rendered.lines().map(str::trim).collect();
    let usage = usage_of(rendered);
    let mut text = lines
        .iter()
        .take_while(|l| !l.starts_with("Usage: ") && !l.starts_with("For more information"))
        .filter(|l| !l.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join(" ");
    if !text.contains("possible values") {
        let command = command_of(usage);
        let flags: Vec<String> = text
            .split(|c: char| c.is_whitespace() || c == '\'')
            .filter_map(|w| w.strip_prefix("--"))
            .map(str::to_string)
            .collect();
        for flag in flags {
            let values: Vec<String> = command
                .get_arguments()
                .find(|a| a.get_long() == Some(flag.as_str()))
                .map(|a| a.get_possible_values().iter().map(|v| v.get_name().to_string()).collect())
                .unwrap_or_default();
            if !values.is_empty() {
                text.push_str(&format!(" [--{flag}: one of {}]", values.join(", ")));
            }
        }
    }
    shorten_quoted(&text)
}

/// Cuts every '…'-quoted part of `text` longer than 60 characters (a huge bad value).
fn shorten_quoted(text: &str) -> String {
    text.split('\'')
        .enumerate()
        .map(|(i, part)| match part.char_indices().nth(60) {
            Some((cut, _)) if i % 2 == 1 => format!("{}…", &part[..cut]),
            _ => part.to_string(),
        })
        .collect::<Vec<_>>()
        .join("'")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_errors_keep_the_flag_and_its_values_on_one_line() {
        let line = |args: &[&str]| match parse(args) {
            Ok(_) => panic!("{args:?} parses"),
            Err(e) => one_line_usage_error(&e.render().to_string()),
        };
        let bad = line(&["nvmdb", "btree", "run", "--variant", "sorted", "--node-lines", "3"]);
        assert!(bad.contains("--node-lines") && bad.contains("1, 2, 4, 8"), "{bad}");
        let missing = line(&["nvmdb", "ssd", "replay", "--trace", "t"]);
        assert!(missing.contains("--format") && missing.contains("disksim, msr"), "{missing}");
        let long = line(&["nvmdb", "join", "run", "--algo", &"x".repeat(500)]);
        assert!(long.contains("--algo") && long.contains("simple") && long.len() < 300, "{long}");
        for text in [bad, missing, long] {
            assert!(!text.contains('\n') && !text.contains("Usage"), "{text}");
        }
    }
}
