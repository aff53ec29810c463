//! Flags that do something only with another flag or value: one table for the whole
//! command line, checked when it is parsed, so that a flag given where it has no effect is
//! an error naming both flags (`--flip-bits has no effect without --flip-n-write`), not a
//! silently ignored value. Conditions on more than flags (a configuration key, a count)
//! are checked by their commands, in the same words ([`no_effect`]).

use clap::parser::ValueSource;
use std::ffi::OsStr;

use clap::{ArgMatches, Command};

/// When a flag has an effect.
enum When {
    /// With one of these flags given.
    Given(&'static [&'static str]),
    /// Without this flag.
    Absent(&'static str),
    /// With this flag (given or by default) at one of these values.
    OneOf(&'static str, &'static [&'static str]),
}

/// The flags (by their argument ids) of a command (its path) and when each has an effect.
const RULES: &[(&[&str], &[&str], When)] = &[
    (&["pcm", "replay"], &["flip_bits"], When::Given(&["flip_n_write"])),
    (&["envy", "run"], &["hot_access", "hot_data"], When::OneOf("workload", &["bimodal"])),
    (&["envy", "run"], &["tps", "transactions", "converge"], When::OneOf("workload", &["tpca"])),
    (&["envy", "run"], &["turnovers"], When::OneOf("workload", &["uniform", "bimodal"])),
    (&["envy", "run"], &["tolerance", "max_turnovers"], When::Given(&["converge"])),
    (&["join", "run"], &["r_mb", "record_bytes", "match_per_r", "seed"], When::Given(&["generate"])),
    (&["join", "run"], &["id_encoding"], When::OneOf("algo", &["virtual-partitioning"])),
    (&["trace", "gen"], &["buffer_pool_mb"], When::OneOf("workload", &["t1", "t2", "t3"])),
    (&["ssd", "replay"], &["power_loss_during_recovery"], When::Given(&["power_loss_at", "power_loss_at_write"])),
    (&["ssd", "replay"], &["prefill"], When::Absent("age")),
];

/// `--flag` of an argument id.
fn flag(id: &str) -> String {
    format!("--{}", id.replace('_', "-"))
}

/// The message of a flag that has no effect: `FLAG has no effect CONDITION`, where the
/// condition names the other flag or key (`without --flip-n-write`, `with --age`).
pub fn no_effect(flag: &str, condition: &str) -> String {
    format!("{flag} has no effect {condition}")
}

/// The first flag of the command line `matches` (parsed by `command`) given where it has no
/// effect, as its message. A flag counts as given when its value differs from its default
/// (numbers compared as numbers): so a program that writes every flag with its default
/// value (the Python package) asks for nothing it does not mean.
pub fn check(command: &Command, matches: &ArgMatches) -> Result<(), String> {
    let mut path = Vec::new();
    let (mut command, mut matches) = (command, matches);
    while let Some((name, sub)) = matches.subcommand() {
        path.push(name);
        matches = sub;
        command = command.find_subcommand(name).ok_or_else(|| format!("no command {name}"))?;
    }
    let given = |id: &str| {
        let defaults = command.get_arguments().find(|a| a.get_id() == id).map(|a| a.get_default_values());
        let value = matches.get_raw(id).into_iter().flatten().next();
        matches.value_source(id) == Some(ValueSource::CommandLine)
            && !matches!((value, defaults), (Some(v), Some([d])) if same_value(v, d))
    };
    for (command, ids, when) in RULES {
        if path != *command {
            continue;
        }
        for id in ids.iter().filter(|id| given(id)) {
            let condition = match when {
                When::Given(others) if !others.iter().any(|o| given(o)) => {
                    let others: Vec<String> = others.iter().map(|o| flag(o)).collect();
                    format!("without {}", others.join(" or "))
                }
                When::Absent(other) if given(other) => format!("with {}", flag(other)),
                When::OneOf(other, values) => {
                    let value = matches.get_raw(other).into_iter().flatten().next().and_then(|v| v.to_str());
                    match value {
                        Some(v) if !values.contains(&v) => {
                            format!("with {} {v} (only with {})", flag(other), values.join(", "))
                        }
                        _ => continue,
                    }
                }
                When::Given(_) | When::Absent(_) => continue,
            };
            return Err(no_effect(&flag(id), &condition));
        }
    }
    Ok(())
}

/// Whether a flag's value is its default: the same text, or the same number.
fn same_value(value: &OsStr, default: &OsStr) -> bool {
    let number = |text: &OsStr| text.to_str().and_then(|t| t.trim().parse::<f64>().ok());
    value == default || matches!((number(value), number(default)), (Some(a), Some(b)) if a == b)
}
