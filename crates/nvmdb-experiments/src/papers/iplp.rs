//! Claims of Kim, Lee, Moon, Park and Hwang, "IPL-P: In-Page Logging with PCRAM", VLDB
//! 2011 demo (seed 002).

use nvmdb_lab::{Claim, ClaimKind, Stated, Tolerance};

use super::{BOUND, VALUE};

const SEED: &str = "IPL-P 2011";

/// The paper's claims about the experiments nvmdb runs.
pub const IPLP: &[Claim] = &[
    Claim {
        id: "iplp-fig4-ipl-p-best-writes",
        experiment: "iplp-fig4",
        seed: SEED,
        figure: "Figure 4",
        claim: "IPL-P outperforms flash-only and PCM-only on the write-intensive workloads (ours: higher operations per simulated second than both on insert and on update)",
        stated: Stated::Holds,
        tolerance: Tolerance::Exact,
        unit: "",
        kind: ClaimKind::Measured,
    },
    Claim {
        id: "iplp-fig4-pcm-best-read",
        experiment: "iplp-fig4",
        seed: SEED,
        figure: "Figure 4",
        claim: "PCM-only is the best of the three on the read-only workload (ours: search)",
        stated: Stated::Holds,
        tolerance: Tolerance::Exact,
        unit: "",
        kind: ClaimKind::Constant,
    },
    Claim {
        id: "iplp-fig4-pcm-worst-writes",
        experiment: "iplp-fig4",
        seed: SEED,
        figure: "Figure 4",
        claim: "PCM-only is significantly worse than the others on the write-intensive workloads (ours: the lowest of the three on insert and on update)",
        stated: Stated::Holds,
        tolerance: Tolerance::Exact,
        unit: "",
        kind: ClaimKind::Constant,
    },
    Claim {
        id: "iplp-fig4-pcm-page-write-ratio",
        experiment: "iplp-fig4",
        seed: SEED,
        figure: "Section 3",
        claim: "For 8 KB page writes the board's PCM is about seven times slower than its flash SSD (ours: mean page write time, PCM-only over flash-only, update benchmark)",
        stated: Stated::Value(7.0),
        tolerance: VALUE,
        unit: "×",
        kind: ClaimKind::Constant,
    },
    Claim {
        id: "iplp-fig4-ipl-p-worst-read",
        experiment: "iplp-fig4",
        seed: SEED,
        figure: "Figure 4",
        claim: "IPL-P is the worst of the three on the read-only workload (ours: search, at most the others' throughput)",
        stated: Stated::Holds,
        tolerance: Tolerance::Exact,
        unit: "",
        kind: ClaimKind::Constant,
    },
    Claim {
        id: "iplp-fig4-ipl-p-read-close",
        experiment: "iplp-fig4",
        seed: SEED,
        figure: "Figure 4",
        claim: "The read-only gap between IPL-P and flash-only is not significant (ours: IPL-P's search throughput at least 90% of flash-only's)",
        stated: Stated::Holds,
        tolerance: Tolerance::Exact,
        unit: "",
        kind: ClaimKind::Measured,
    },
    Claim {
        id: "iplp-log-write-pcm-faster",
        experiment: "iplp-log-write",
        seed: SEED,
        figure: "Section 2.2",
        claim: "Writing 128 B to PCM is more than twice as fast as partially programming a 512 B flash sector (ours: board preset, sector time over PCM time)",
        stated: Stated::AtLeast(2.0),
        tolerance: BOUND,
        unit: "×",
        kind: ClaimKind::Constant,
    },
];
