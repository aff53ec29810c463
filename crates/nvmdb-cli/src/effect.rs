//! Flags that do something only with another flag or value: one table for the whole
//! command line, checked when it is parsed, so that a flag given where it has no effect is
//! an error naming both flags (`--flip-bits has no effect without --flip-n-write`), not a
//! silently ignored value. Conditions on more than flags (a configuration key, a count)
//! are checked by their commands, in the same words ([`no_effect`]).

use clap::parser::ValueSource;
use clap::ArgMatches;

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

/// The first flag of the parsed command line `matches` given where it has no
/// effect, as its message. A flag counts as given when it is on the command line, at any
/// value (its default included: `--flip-bits 64` without `--flip-n-write` is refused). The
/// Python package writes only the keywords its caller gave, so it is held to the same rule.
pub fn check(matches: &ArgMatches) -> Result<(), String> {
    let mut path = Vec::new();
    let mut matches = matches;
    while let Some((name, sub)) = matches.subcommand() {
        path.push(name);
        matches = sub;
    }
    let given = |id: &str| matches.value_source(id) == Some(ValueSource::CommandLine);
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
