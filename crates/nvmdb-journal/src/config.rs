//! Journal configurations, named with the paper's grammar (Table IV): `RR` or `RU[n]`,
//! then optional `-S2` or `-S2X`, `-WHm` and `-INVp`, in that order.

use std::fmt;

use crate::error::JournalError;

/// Frame allocation policy (Section 5.2, "Page Frame Reuse").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Allocation {
    /// `RR`: FIFO (round-robin) allocation of free frames; a deleted journal's frames are
    /// invalid at once, nothing is reused.
    RoundRobin,
    /// `RU` / `RUn`: reuse the portion last used for the same DB page. `None` is no limit;
    /// `Some(n)` lets a frame be reused `n` times before it is copied to a new frame.
    Reuse(Option<u32>),
}

/// A journal configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JournalConfig {
    /// Frame allocation policy.
    pub allocation: Allocation,
    /// `S2`: presence bits, first-free-portion pointers, reuse counters and reusable bits
    /// live in DRAM only (quasi-non-volatile and non-functional metadata, Table II).
    pub s2: bool,
    /// `X`: 8-bit XOR flags for the hot-journal flag and the valid bits (Figure 8).
    pub xor_flags: bool,
    /// `WHm`: the journal header is over-provisioned `m` times and written in rotation;
    /// header frames may be reused `n·m` times. 1 when absent.
    pub header_copies: u32,
    /// `INVp`: garbage collection frees `p`% of the reuse-state frames per run; `None`
    /// frees all of them (the paper's baseline GC).
    pub incremental_gc_percent: Option<u32>,
}

impl JournalConfig {
    /// The paper's baseline with wear-conscious metadata, `RR-S2X`.
    pub const RR_S2X: JournalConfig = JournalConfig {
        allocation: Allocation::RoundRobin,
        s2: true,
        xor_flags: true,
        header_copies: 1,
        incremental_gc_percent: None,
    };
    /// The paper's best configuration, `RU20-S2X-WH64`.
    pub const RU20_S2X_WH64: JournalConfig = JournalConfig {
        allocation: Allocation::Reuse(Some(20)),
        s2: true,
        xor_flags: true,
        header_copies: 64,
        incremental_gc_percent: None,
    };

    /// Parses a name such as `RU2-S2X-WH4-INV25`; an error names the bad part.
    pub fn parse(name: &str) -> Result<JournalConfig, JournalError> {
        let bad = |part: &str, why: &str| JournalError::Config(format!("{why} in {name:?}: {part:?}"));
        let mut parts = name.split('-');
        let first = parts.next().unwrap_or_default();
        let allocation = if first == "RR" {
            Allocation::RoundRobin
        } else if let Some(n) = first.strip_prefix("RU") {
            if n.is_empty() {
                Allocation::Reuse(None)
            } else {
                let n: u32 = n.parse().map_err(|_| bad(first, "bad reuse limit"))?;
                if n == 0 {
                    return Err(bad(first, "reuse limit must be at least 1"));
                }
                Allocation::Reuse(Some(n))
            }
        } else {
            return Err(bad(first, "expected RR or RU[n]"));
        };
        let mut config =
            JournalConfig { allocation, s2: false, xor_flags: false, header_copies: 1, incremental_gc_percent: None };
        // Each optional part may appear once, in grammar order.
        let mut stage = 0;
        for part in parts {
            if (part == "S2" || part == "S2X") && stage < 1 {
                config.s2 = true;
                config.xor_flags = part == "S2X";
                stage = 1;
            } else if let (Some(m), true) = (part.strip_prefix("WH"), stage < 2) {
                let m: u32 = m.parse().map_err(|_| bad(part, "bad header copy count"))?;
                if !(1..=MAX_HEADER_COPIES).contains(&m) {
                    return Err(bad(part, "header copies must be 1 to 128"));
                }
                config.header_copies = m;
                stage = 2;
            } else if let (Some(p), true) = (part.strip_prefix("INV"), stage < 3) {
                let p: u32 = p.parse().map_err(|_| bad(part, "bad GC percentage"))?;
                if !(1..=100).contains(&p) {
                    return Err(bad(part, "GC percentage must be 1 to 100"));
                }
                config.incremental_gc_percent = Some(p);
                stage = 3;
            } else {
                return Err(bad(part, "unknown or misplaced part"));
            }
        }
        Ok(config)
    }

    /// How many times a data frame may be reused; `None` is unlimited, `Some(0)` no reuse.
    pub fn data_reuse_limit(&self) -> Option<u32> {
        match self.allocation {
            Allocation::RoundRobin => Some(0),
            Allocation::Reuse(n) => n,
        }
    }

    /// How many times a header frame may be reused: `n·m` under `WHm`.
    pub fn header_reuse_limit(&self) -> Option<u32> {
        self.data_reuse_limit().map(|n| n.saturating_mul(self.header_copies))
    }
}

/// The largest `m` of `WHm`.
pub const MAX_HEADER_COPIES: u32 = 128;

impl fmt::Display for JournalConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.allocation {
            Allocation::RoundRobin => write!(f, "RR")?,
            Allocation::Reuse(None) => write!(f, "RU")?,
            Allocation::Reuse(Some(n)) => write!(f, "RU{n}")?,
        }
        if self.s2 {
            write!(f, "-S2{}", if self.xor_flags { "X" } else { "" })?;
        }
        if self.header_copies > 1 {
            write!(f, "-WH{}", self.header_copies)?;
        }
        if let Some(p) = self.incremental_gc_percent {
            write!(f, "-INV{p}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_papers_names_round_trip() {
        for name in ["RR", "RR-S2", "RR-S2X", "RU", "RU-S2", "RU-S2X", "RU20-S2X", "RU20-S2X-WH64", "RU2-S2X-WH4-INV25"]
        {
            assert_eq!(JournalConfig::parse(name).unwrap().to_string(), name);
        }
        assert_eq!(JournalConfig::parse("RU20-S2X-WH64").unwrap(), JournalConfig::RU20_S2X_WH64);
        assert_eq!(JournalConfig::parse("RU20-S2X-WH64").unwrap().header_reuse_limit(), Some(1280));
    }

    #[test]
    fn a_typo_names_the_bad_part() {
        for (name, part) in [("RX-S2", "\"RX\""), ("RU-S3", "\"S3\""), ("RU-WH4-S2", "\"S2\""), ("RU5-WHx", "\"WHx\"")]
        {
            let message = JournalConfig::parse(name).unwrap_err().to_string();
            assert!(message.contains(part), "{message}");
        }
    }
}
