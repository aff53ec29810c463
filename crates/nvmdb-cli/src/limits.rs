//! The machine's memory, and the up-front check that a run's estimated memory fits in it.

/// Assumed memory where /proc/meminfo cannot be read (not Linux, or no /proc): 4 GiB.
pub const FALLBACK_MEMORY_BYTES: u64 = 4 << 30;

/// The machine's memory: MemTotal of /proc/meminfo, else [`FALLBACK_MEMORY_BYTES`].
pub fn machine_memory_bytes() -> u64 {
    std::fs::read_to_string("/proc/meminfo").ok().and_then(|text| mem_total(&text)).unwrap_or(FALLBACK_MEMORY_BYTES)
}

/// MemTotal of a /proc/meminfo text, bytes.
fn mem_total(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.trim_start_matches("MemTotal:").trim().trim_end_matches("kB").trim().parse().ok()?;
    kib.checked_mul(1024)
}

/// Refuses, naming `what` (the flags at fault), a run whose memory estimate exceeds the
/// machine's memory; checked before anything is allocated.
pub fn check_memory(what: &str, estimate_bytes: u64) -> Result<(), crate::error::CliError> {
    let limit = machine_memory_bytes();
    if estimate_bytes > limit {
        return Err(crate::error::CliError::input(format!(
            "{what}: needs about {} MiB of memory, more than this machine's {} MiB",
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
        assert!(check_memory("--x", u64::MAX).unwrap_err().message.starts_with("--x: needs about"));
        assert!(check_memory("--x", 1).is_ok());
    }
}
