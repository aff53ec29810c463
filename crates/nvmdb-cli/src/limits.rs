//! The machine's memory (or the process's address-space limit), and the up-front check
//! that a run's estimated memory fits in what is available now.

/// Assumed memory where /proc/meminfo cannot be read (not Linux, or no /proc): 4 GiB.
pub const FALLBACK_MEMORY_BYTES: u64 = 4 << 30;

/// The memory of the machine: MemTotal of /proc/meminfo (else [`FALLBACK_MEMORY_BYTES`]),
/// or the process's address-space limit (`ulimit -v`, the soft "Max address space" of
/// /proc/self/limits) where that is lower. What the machine is, for its description and
/// the experiment pool's budget; what a run may take now is [`memory_limit`].
pub fn machine_memory_bytes() -> u64 {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok();
    let total = meminfo.as_deref().and_then(mem_total).unwrap_or(FALLBACK_MEMORY_BYTES);
    address_space_limit_now().map_or(total, |limit| total.min(limit))
}

/// The memory a run may take now, and where that figure comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryLimit {
    /// Bytes.
    pub bytes: u64,
    /// Which limit it is, as a refusal names it.
    pub source: &'static str,
}

/// The memory a run may take now: MemAvailable of /proc/meminfo (the kernel's estimate of
/// what can be allocated without swapping: free memory and reclaimable caches, less what
/// other processes hold), MemTotal where the kernel gives no MemAvailable, or
/// [`FALLBACK_MEMORY_BYTES`] where /proc/meminfo cannot be read; the process's
/// address-space limit (`ulimit -v`) where that is lower. A run that would outgrow it is
/// refused by its estimate instead of failing to allocate, or of having the kernel kill
/// it or another process.
pub fn memory_limit() -> MemoryLimit {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok();
    limit_of(meminfo.as_deref(), address_space_limit_now())
}

/// [`memory_limit`] from a /proc/meminfo text (`None`: unreadable) and an address-space
/// limit.
fn limit_of(meminfo: Option<&str>, address_space: Option<u64>) -> MemoryLimit {
    let memory = match meminfo {
        Some(text) => match (kib_field(text, "MemAvailable:"), mem_total(text)) {
            (Some(bytes), _) => MemoryLimit { bytes, source: "MemAvailable of /proc/meminfo" },
            (None, Some(bytes)) => MemoryLimit { bytes, source: "MemTotal of /proc/meminfo" },
            (None, None) => {
                MemoryLimit { bytes: FALLBACK_MEMORY_BYTES, source: "assumed: /proc/meminfo gives no size" }
            }
        },
        None => MemoryLimit { bytes: FALLBACK_MEMORY_BYTES, source: "assumed: /proc/meminfo unreadable" },
    };
    match address_space {
        Some(bytes) if bytes < memory.bytes => MemoryLimit { bytes, source: "ulimit -v" },
        _ => memory,
    }
}

/// This process's address-space limit now (`None` if unlimited or unreadable).
fn address_space_limit_now() -> Option<u64> {
    std::fs::read_to_string("/proc/self/limits").ok().and_then(|text| address_space_limit(&text))
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

/// Refuses, naming `what` (the flags at fault) and the limit it hit, a run whose memory
/// estimate exceeds the memory it may take now ([`memory_limit`]); checked before
/// anything is allocated.
pub fn check_memory(what: &str, estimate_bytes: u64) -> Result<(), crate::error::CliError> {
    let limit = memory_limit();
    if estimate_bytes > limit.bytes {
        return Err(crate::error::CliError::input(format!(
            "{what}: needs about {} MiB of memory, more than the {} MiB available ({})",
            estimate_bytes >> 20,
            limit.bytes >> 20,
            limit.source
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

    /// The limit is what is available now, or the address-space limit where lower, and
    /// names which it is.
    #[test]
    fn the_limit_is_available_memory_or_the_address_space_limit() {
        let meminfo = "MemTotal:       16384 kB\nMemFree: 1024 kB\nMemAvailable:    4096 kB\n";
        let available = MemoryLimit { bytes: 4 << 20, source: "MemAvailable of /proc/meminfo" };
        assert_eq!(limit_of(Some(meminfo), None), available);
        assert_eq!(limit_of(Some(meminfo), Some(8 << 20)), available);
        assert_eq!(limit_of(Some(meminfo), Some(2 << 20)), MemoryLimit { bytes: 2 << 20, source: "ulimit -v" });
        let old_kernel = "MemTotal:       16384 kB\n";
        assert_eq!(limit_of(Some(old_kernel), None).bytes, 16 << 20);
        assert_eq!(limit_of(None, None).bytes, FALLBACK_MEMORY_BYTES);
        assert!(memory_limit().bytes > 0);
    }
}
