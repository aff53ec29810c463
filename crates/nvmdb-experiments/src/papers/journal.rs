//! Claims of Lee et al., "Differential Write-Conscious Software Design on Phase-Change
//! Memory: An SQLite Case Study", ACM TODAES 2016 (seed 003).

use nvmdb_lab::{Claim, Stated, Tolerance};

use super::{BOUND, VALUE};

const SEED: &str = "SQLite journal 2016";

/// The paper's claims about the experiments nvmdb runs.
pub const JOURNAL: &[Claim] = &[
    Claim {
        id: "journal-workloads-writes-per-page",
        experiment: "journal-workloads",
        seed: SEED,
        figure: "Figure 5",
        claim: "\"average 5.2 overwrites per page\" (ours: DB page writes per distinct logical page, mean over traces, from generated workloads)",
        stated: Stated::Value(5.2),
        tolerance: VALUE,
        unit: "",
    },
    Claim {
        id: "journal-workloads-small-overwrites",
        experiment: "journal-workloads",
        seed: SEED,
        figure: "Figure 6",
        claim: "\"on average, 72.8% of page writes update only 64 bytes\" (ours: page overwrites changing at most 64 bytes, mean over traces)",
        stated: Stated::Value(72.8),
        tolerance: VALUE,
        unit: "%",
    },
    Claim {
        id: "journal-fig9-ru-below-rr",
        experiment: "journal-fig9",
        seed: SEED,
        figure: "Figure 9",
        claim: "Reuse (RU) has fewer total bit updates than RR on every trace",
        stated: Stated::Holds,
        tolerance: Tolerance::Exact,
        unit: "",
    },
    Claim {
        id: "journal-fig9-ru20-total-cut",
        experiment: "journal-fig9",
        seed: SEED,
        figure: "Figure 16, Section 8",
        claim: "RU20-S2X-WH64 cuts total bit updates against RR-S2X by 75.2% on average (ours: mean over traces)",
        stated: Stated::Value(75.2),
        tolerance: VALUE,
        unit: "%",
    },
    Claim {
        id: "journal-fig13-s2-below-rr",
        experiment: "journal-fig13",
        seed: SEED,
        figure: "Figure 13",
        claim: "Keeping presence bits in DRAM (RR-S2) lowers the maximum bit updates of RR, on every trace",
        stated: Stated::Holds,
        tolerance: Tolerance::Exact,
        unit: "",
    },
    Claim {
        id: "journal-fig13-ru20-max",
        experiment: "journal-fig13",
        seed: SEED,
        figure: "Figure 16",
        claim: "RU20-S2X-WH64's maximum bit updates are no higher than RR-S2X's (ours: the largest ratio over traces)",
        stated: Stated::AtMost(1.0),
        tolerance: BOUND,
        unit: "×",
    },
    Claim {
        id: "journal-fig18-energy-cut",
        experiment: "journal-fig18",
        seed: SEED,
        figure: "Figure 18",
        claim: "RU20-S2X-WH64 reduces energy by 49.4% against RR-S2X on average (ours: device energy, mean over traces)",
        stated: Stated::Value(49.4),
        tolerance: VALUE,
        unit: "%",
    },
    Claim {
        id: "journal-fig19-rr-vs-none",
        experiment: "journal-fig19",
        seed: SEED,
        figure: "Figure 19",
        claim: "RR-S2X gives 2.67 times longer processing time per SQLite command than no journaling (ours: device time, mean over traces)",
        stated: Stated::Value(2.67),
        tolerance: VALUE,
        unit: "×",
    },
    Claim {
        id: "journal-fig19-time-cut",
        experiment: "journal-fig19",
        seed: SEED,
        figure: "Figure 19",
        claim: "RU20-S2X-WH64 reduces average processing time by 52.3% against RR-S2X (ours: device time, mean over traces)",
        stated: Stated::Value(52.3),
        tolerance: VALUE,
        unit: "%",
    },
    Claim {
        id: "journal-recovery-three",
        experiment: "journal-recovery",
        seed: SEED,
        figure: "Section 5.2",
        claim: "Rebuilding the quasi-non-volatile data with three active journals takes 7.8 ms in the worst case (ours: simulated PCM time, at most)",
        stated: Stated::AtMost(7.8),
        tolerance: BOUND,
        unit: "ms",
    },
];
