//! The machine's memory (or the process's address-space limit), and the up-front check
//! that a run's estimated memory fits in it.

/// Assumed memory where /proc/meminfo cannot be read (not Linux, or no /proc): 4 GiB.
pub const FALLBACK_MEMORY_BYTES: u64 = 4 << 30;

/// The memory this process may use: MemTotal of /proc/meminfo (else
/// [`FALLBACK_MEMORY_BYTES`]), or the process's address-space limit (`ulimit -v`, the soft
/// "Max address space" of /proc/self/limits) where that is lower, so a run that would
/// outgrow the limit is refused by the estimate instead of failing to allocate.
pub fn machine_memory_bytes() -> u64 {
    let total = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| mem_total(&text))
        .unwrap_or(FALLBACK_MEMORY_BYTES);
    let limit = std::fs::read_to_string("/proc/self/limits").ok().and_then(|text| address_space_limit(&text));
    limit.map_or(total, |limit| total.min(limit))
}

/// The soft "Max address space" of a /proc/self/limits text, bytes (`None` if unlimited).
fn address_space_limit(limits: &str) -> Option<u64> {
    let line = limits.lines().find(|l| l.starts_with("Max address space"))?;
    line.trim_start_matches("Max address space").split_whitespace().next()?.parse().ok()
}

/// MemTotal of a /proc/meminfo text, bytes.
fn mem_total(meminfo: &str) -> Option<u64> {
    kib_field(meminfo, "MemTotal:")
}

/// This process's resident memory now (VmRSS of /proc/self/status), bytes; `None` where
/// it cannot be read.
pub fn resident_bytes() -> Option<u64> {
    status_kib("VmRSS:")
}

/// This process's peak resident memory so far (VmHWM of /proc/self/status), bytes.
pub fn peak_resident_bytes() -> Option<u64> {
    status_kib("VmHWM:")
}

fn status_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    kib_field(&status, field)
}

/// The `field` line of a /proc text in kB, bytes.
fn kib_field(text: &str, field: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(field))?;
    let kib: u64 = line.trim_start_matches(field).trim().trim_end_matches("kB").trim().parse().ok()?;
    kib.checked_mul(1024)
}

/// Refuses, naming `what` (the flags at fault), a run whose memory estimate exceeds the
/// machine's memory; checked before anything is allocated.
pub fn check_memory(what: &str, estimate_bytes: u64) -> Result<(), crate::error::CliError> {
    let limit = machine_memory_bytes();
    if estimate_bytes > limit {
        return Err(crate::error::CliError::input(format!(
            "{what}: needs about {} MiB of memory, more than the {} MiB available (the machine's memory, or ulimit -v if lower)",
            estimate_bytes >> 20,
            limit >> 20
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mem_total_parses_and_falls_back() {
        assert_eq!(mem_total("MemFree: 1 kB\nMemTotal:       16384 kB\n"), Some(16 << 20));
        assert_eq!(mem_total("MemTotal: lots\n"), None);
        assert_eq!(mem_total(""), None);
        assert!(machine_memory_bytes() > 0);
        let limits = "Limit                     Soft Limit           Hard Limit           Units     \n\
                      Max address space         2147483648           unlimited            bytes     \n";
        assert_eq!(address_space_limit(limits), Some(2 << 30));
        assert_eq!(address_space_limit(&limits.replace("2147483648", "unlimited")), None);
        assert_eq!(kib_field("Name: x\nVmRSS:\t  2048 kB\n", "VmRSS:"), Some(2 << 20));
        assert!(check_memory("--x", u64::MAX).unwrap_err().message.starts_with("--x: needs about"));
        assert!(check_memory("--x", 1).is_ok());
    }
}
