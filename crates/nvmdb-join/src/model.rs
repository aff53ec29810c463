//! The analytic cost model of CIDR 2011 (seed 001): Table 4 (cache line fetches N_l,
//! line write-backs N_lw and words written N_w per phase of each algorithm), the PCM
//! metrics of Section 3.1 (wear = γ·N_w, energy = 8L(N_l + N_lw)E_rb + γ·N_w·E_wb,
//! latency = N_l·T_l + N_w·T_w), and the best-scheme regions of Figure 5.

use nvmdb_device::PcmMetrics;
use serde::{Deserialize, Serialize};

use crate::join::Algorithm;

/// Model parameters (Figure 5's caption and Table 2).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ModelParams {
    /// Cache line size L, bytes.
    pub line_bytes: f64,
    /// PCM word size W, bytes.
    pub word_bytes: f64,
    /// N_hR: cache lines accessed per hash-table insertion.
    pub n_hr: f64,
    /// N_hS: cache lines accessed per hash-table probe.
    pub n_hs: f64,
    /// HashTable_lw: line write-backs per insertion.
    pub hash_table_lw: f64,
    /// HashTable_w: words modified per insertion.
    pub hash_table_w: f64,
    /// γ: modified bits per modified word (see [`GammaReading`]).
    pub gamma: f64,
    /// E_rb, E_wb, T_l, T_w.
    pub metrics: PcmMetrics,
}

/// The two readings of Figure 5's γ = 0.5. Table 3 defines γ as "the average number of
/// modified bits per modified word", but a modified word has at least one modified bit,
/// so 0.5 cannot be a bit count; it reads either as written (0.5 bits) or as half of
/// the word's bits (32 bits of a 64-bit word). Wear ratios and latency do not depend on
/// γ (wear is γ·N_w for every algorithm); energy does, through γ·N_w·E_wb.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GammaReading {
    /// γ = 0.5 modified bits per modified word, as Figure 5's caption is written.
    HalfBit,
    /// γ = half the bits of a word: 32 of a 64-bit word.
    HalfWord,
}

impl GammaReading {
    /// Both, the literal reading first.
    pub const ALL: [GammaReading; 2] = [GammaReading::HalfBit, GammaReading::HalfWord];

    /// γ in bits for words of `word_bytes`.
    pub const fn gamma_bits(self, word_bytes: f64) -> f64 {
        match self {
            GammaReading::HalfBit => 0.5,
            GammaReading::HalfWord => 0.5 * 8.0 * word_bytes,
        }
    }

    /// A short name.
    pub fn name(self) -> &'static str {
        match self {
            GammaReading::HalfBit => "0.5 bits",
            GammaReading::HalfWord => "32 bits (half a word)",
        }
    }
}

/// The reading the model uses unless told otherwise: half a word, the one under which
/// Figure 7's configurations fall in virtual partitioning's energy region, as Section
/// 4.3 says they do, and the model's energy gain over simple falls with MatchPerR, as
/// Figure 7(e)'s does (`cidr-fig5` shows both readings).
pub const DEFAULT_GAMMA: GammaReading = GammaReading::HalfWord;
const DEFAULT_GAMMA_BITS: f64 = DEFAULT_GAMMA.gamma_bits(8.0);

impl ModelParams {
    /// Figure 5's parameters: L = 64, W = 8, N_hR = N_hS = 1.8, HashTable_lw = 1.5,
    /// HashTable_w = 5.0, γ = 0.5 read as [`DEFAULT_GAMMA`] (32 bits), and the CIDR 2011
    /// device parameters.
    pub const CIDR2011: ModelParams = ModelParams {
        line_bytes: 64.0,
        word_bytes: 8.0,
        n_hr: 1.8,
        n_hs: 1.8,
        hash_table_lw: 1.5,
        hash_table_w: 5.0,
        gamma: DEFAULT_GAMMA_BITS,
        metrics: PcmMetrics::CIDR2011,
    };

    /// These parameters with γ read as `reading`.
    pub fn with_gamma(self, reading: GammaReading) -> ModelParams {
        ModelParams { gamma: reading.gamma_bits(self.word_bytes), ..self }
    }
}

/// A join's shape (Table 3).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Workload {
    /// M_R: records in R.
    pub m_r: f64,
    /// L_R: bytes per R record.
    pub l_r: f64,
    /// M_S: records in S.
    pub m_s: f64,
    /// L_S: bytes per S record.
    pub l_s: f64,
    /// MatchPerS: matches per S record.
    pub match_per_s: f64,
}

impl Workload {
    /// Figure 5's and Section 4.3's shape: R of `r_bytes`, L_S = L_R = `record_bytes`,
    /// every S record matches one R record, `match_per_r` S records per R record.
    pub fn primary_foreign(r_bytes: f64, record_bytes: f64, match_per_r: f64) -> Workload {
        let m_r = (r_bytes / record_bytes).floor();
        Workload { m_r, l_r: record_bytes, m_s: m_r * match_per_r, l_s: record_bytes, match_per_s: 1.0 }
    }
}

/// N_l, N_lw and N_w of one phase.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct PhaseCost {
    /// Cache line fetches from PCM.
    pub n_l: f64,
    /// Cache line write-backs.
    pub n_lw: f64,
    /// Words written.
    pub n_w: f64,
}

impl PhaseCost {
    fn plus(self, other: PhaseCost) -> PhaseCost {
        PhaseCost { n_l: self.n_l + other.n_l, n_lw: self.n_lw + other.n_lw, n_w: self.n_w + other.n_w }
    }
}

/// The two phases of one algorithm (Table 4): build/probe or partition/join.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AlgorithmCost {
    /// The algorithm.
    pub algorithm: Algorithm,
    /// Build (simple) or partition phase.
    pub first: PhaseCost,
    /// Probe (simple) or join phase.
    pub second: PhaseCost,
}

/// One of Figure 5's four metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Metric {
    /// Cache line accesses N_l (Figure 5a).
    CacheMisses,
    /// Total wear γ·N_w (Figure 5b).
    Wear,
    /// Energy (Figure 5c).
    Energy,
    /// Total PCM access latency (Figure 5d).
    Latency,
}

impl Metric {
    /// The four, in Figure 5's order.
    pub const ALL: [Metric; 4] = [Metric::CacheMisses, Metric::Wear, Metric::Energy, Metric::Latency];

    /// A short name.
    pub fn name(self) -> &'static str {
        match self {
            Metric::CacheMisses => "cache misses",
            Metric::Wear => "wear",
            Metric::Energy => "energy",
            Metric::Latency => "latency",
        }
    }
}

impl AlgorithmCost {
    /// Both phases together.
    pub fn total(&self) -> PhaseCost {
        self.first.plus(self.second)
    }

    /// Bits modified, γ·N_w.
    pub fn wear_bits(&self, p: &ModelParams) -> f64 {
        p.gamma * self.total().n_w
    }

    /// Energy, pJ: 8L(N_l + N_lw)E_rb + γ·N_w·E_wb.
    pub fn energy_pj(&self, p: &ModelParams) -> f64 {
        let t = self.total();
        8.0 * p.line_bytes * (t.n_l + t.n_lw) * p.metrics.e_rb_pj as f64 + p.gamma * t.n_w * p.metrics.e_wb_pj as f64
    }

    /// PCM access latency, cycles: N_l·T_l + N_w·T_w.
    pub fn latency_cycles(&self, p: &ModelParams) -> f64 {
        let t = self.total();
        t.n_l * p.metrics.t_l_cycles as f64 + t.n_w * p.metrics.t_w_cycles as f64
    }

    /// The value of `metric`.
    pub fn metric(&self, metric: Metric, p: &ModelParams) -> f64 {
        match metric {
            Metric::CacheMisses => self.total().n_l,
            Metric::Wear => self.wear_bits(p),
            Metric::Energy => self.energy_pj(p),
            Metric::Latency => self.latency_cycles(p),
        }
    }
}

/// Table 4 for one algorithm.
pub fn cost(algorithm: Algorithm, w: &Workload, p: &ModelParams) -> AlgorithmCost {
    let (l, word) = (p.line_bytes, p.word_bytes);
    let r_lines = w.m_r * w.l_r / l;
    let s_lines = w.m_s * w.l_s / l;
    let unaligned = |size: f64| (size - 1.0) / l + 1.0;
    let (first, second) = match algorithm {
        Algorithm::Simple => (
            PhaseCost {
                n_l: r_lines.min(w.m_r) + w.m_r * p.n_hr,
                n_lw: w.m_r * p.hash_table_lw,
                n_w: w.m_r * p.hash_table_w,
            },
            PhaseCost { n_l: s_lines + w.m_s * p.n_hs + w.m_s * w.match_per_s * unaligned(w.l_r), n_lw: 0.0, n_w: 0.0 },
        ),
        Algorithm::CachePartitioning => (
            PhaseCost {
                n_l: 2.0 * (r_lines + s_lines),
                n_lw: r_lines + s_lines,
                n_w: w.m_r * w.l_r / word + w.m_s * w.l_s / word,
            },
            PhaseCost { n_l: r_lines + s_lines, n_lw: 0.0, n_w: 0.0 },
        ),
        Algorithm::VirtualPartitioning => {
            let id_lines = (w.m_r + w.m_s) * 2.0 / l;
            (
                PhaseCost { n_l: r_lines + s_lines + id_lines, n_lw: id_lines, n_w: (w.m_r + w.m_s) * 2.0 / word },
                PhaseCost { n_l: id_lines + w.m_r * unaligned(w.l_r) + w.m_s * unaligned(w.l_s), n_lw: 0.0, n_w: 0.0 },
            )
        }
    };
    AlgorithmCost { algorithm, first, second }
}

/// The best algorithm for `metric` (lowest value; ties go to the earlier of simple,
/// cache partitioning, virtual partitioning) and the ratio of the second best to it.
pub fn best(w: &Workload, p: &ModelParams, metric: Metric) -> (Algorithm, f64) {
    let mut ranked: Vec<(Algorithm, f64)> =
        Algorithm::ALL.iter().map(|&a| (a, cost(a, w, p).metric(metric, p))).collect();
    ranked.sort_by(|a, b| a.1.total_cmp(&b.1));
    (ranked[0].0, ranked[1].1 / ranked[0].1)
}

/// Figure 5's grid: record sizes 1–500 B, MatchPerR 1–50.
pub const FIG5_RECORD_BYTES: std::ops::RangeInclusive<u64> = 1..=500;
/// Figure 5's MatchPerR axis.
pub const FIG5_MATCH_PER_R: std::ops::RangeInclusive<u64> = 1..=50;

/// Figure 5(b)'s wear cross-over at `record_bytes`: the smallest MatchPerR in 1–50 at
/// which the simple hash join wears PCM no more than virtual partitioning, computed from
/// Table 4. `None` when virtual partitioning stays better throughout.
pub fn wear_crossover(record_bytes: f64, p: &ModelParams) -> Option<u64> {
    FIG5_MATCH_PER_R.into_iter().find(|&m| {
        let w = Workload::primary_foreign(50e6, record_bytes, m as f64);
        cost(Algorithm::Simple, &w, p).wear_bits(p) <= cost(Algorithm::VirtualPartitioning, &w, p).wear_bits(p)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn table4_by_hand() {
        // M_R = 1000 records of 32 B, M_S = 2000 of 32 B, MatchPerS = 1.
        let w = Workload { m_r: 1000.0, l_r: 32.0, m_s: 2000.0, l_s: 32.0, match_per_s: 1.0 };
        let p = ModelParams::CIDR2011;
        let simple = cost(Algorithm::Simple, &w, &p);
        // Build: min(1000·32/64, 1000) + 1000·1.8 = 500 + 1800.
        assert!(close(simple.first.n_l, 2300.0));
        assert!(close(simple.first.n_lw, 1500.0) && close(simple.first.n_w, 5000.0));
        // Probe: 2000·32/64 + 2000·1.8 + 2000·(31/64 + 1) = 1000 + 3600 + 2968.75.
        assert!(close(simple.second.n_l, 7568.75));
        let cache = cost(Algorithm::CachePartitioning, &w, &p);
        // Partition: 2(500 + 1000); write-backs 1500 lines; words 4000 + 8000.
        assert!(close(cache.first.n_l, 3000.0) && close(cache.first.n_lw, 1500.0) && close(cache.first.n_w, 12_000.0));
        assert!(close(cache.second.n_l, 1500.0));
        let virt = cost(Algorithm::VirtualPartitioning, &w, &p);
        // ID lists: 3000·2/64 = 93.75 lines, 3000·2/8 = 750 words.
        assert!(close(virt.first.n_l, 1593.75) && close(virt.first.n_lw, 93.75) && close(virt.first.n_w, 750.0));
        // Join: 93.75 + 1000·(31/64 + 1) + 2000·(31/64 + 1) = 93.75 + 4453.125.
        assert!(close(virt.second.n_l, 4546.875));
        // Metrics of the simple join with γ = 0.5 bit: wear 0.5·5000; energy
        // 512·(9868.75 + 1500)·2 + 2500·16; latency 9868.75·230 + 5000·450.
        let p = p.with_gamma(GammaReading::HalfBit);
        assert!(close(simple.wear_bits(&p), 2500.0));
        assert!(close(simple.energy_pj(&p), 512.0 * 11_368.75 * 2.0 + 40_000.0));
        assert!(close(simple.latency_cycles(&p), 9868.75 * 230.0 + 2_250_000.0));
    }

    #[test]
    fn wear_crossover_is_the_papers() {
        // Virtual: (M_R + M_S)·2/8 words = M_R(1 + m)/4; simple: 5·M_R. Equal at m = 19.
        let p = ModelParams::CIDR2011;
        for record_bytes in [20.0, 64.0, 100.0, 500.0] {
            let m = wear_crossover(record_bytes, &p).expect("a cross-over within 1–50");
            assert!(m == 18 || m == 19, "cross-over {m} at {record_bytes} B");
        }
        let w = Workload::primary_foreign(50e6, 100.0, 18.0);
        assert_eq!(best(&w, &p, Metric::Wear).0, Algorithm::VirtualPartitioning);
        let w = Workload::primary_foreign(50e6, 100.0, 19.0);
        assert_eq!(best(&w, &p, Metric::Wear).0, Algorithm::Simple);
    }

    #[test]
    fn cache_misses_favour_simple_for_large_records_and_partitioning_for_small() {
        let p = ModelParams::CIDR2011;
        let large = Workload::primary_foreign(50e6, 500.0, 1.0);
        assert_eq!(best(&large, &p, Metric::CacheMisses).0, Algorithm::Simple);
        let small = Workload::primary_foreign(50e6, 4.0, 1.0);
        assert_eq!(best(&small, &p, Metric::CacheMisses).0, Algorithm::CachePartitioning);
    }

    #[test]
    fn gamma_readings() {
        assert_eq!(GammaReading::HalfBit.gamma_bits(8.0), 0.5);
        assert_eq!(GammaReading::HalfWord.gamma_bits(8.0), 32.0);
        assert_eq!(ModelParams::CIDR2011.gamma, DEFAULT_GAMMA.gamma_bits(8.0));
        let [bit, word] = GammaReading::ALL.map(|r| ModelParams::CIDR2011.with_gamma(r));
        // Simple join's energy at 1000 records of 32 B, 2000 S records: 512·11,368.75·2 pJ of
        // reads plus γ·5000 words·16 pJ of writes.
        let w = Workload { m_r: 1000.0, l_r: 32.0, m_s: 2000.0, l_s: 32.0, match_per_s: 1.0 };
        let reads = 512.0 * 11_368.75 * 2.0;
        assert!(close(cost(Algorithm::Simple, &w, &bit).energy_pj(&bit), reads + 0.5 * 5000.0 * 16.0));
        assert!(close(cost(Algorithm::Simple, &w, &word).energy_pj(&word), reads + 32.0 * 5000.0 * 16.0));
        // γ scales every algorithm's wear alike and does not enter latency, so only energy
        // can change a winner.
        for a in Algorithm::ALL {
            let (cb, cw) = (cost(a, &w, &bit), cost(a, &w, &word));
            assert!(close(cw.wear_bits(&word), 64.0 * cb.wear_bits(&bit)));
            assert!(close(cw.latency_cycles(&word), cb.latency_cycles(&bit)));
        }
        // At Figure 7's 20 B records, MatchPerR 1: cache partitioning wins energy when γ is
        // half a bit, virtual partitioning when γ is half a word (each word cache
        // partitioning copies then costs 32 bits).
        let fig7 = Workload::primary_foreign(50e6, 20.0, 1.0);
        assert_eq!(best(&fig7, &bit, Metric::Energy).0, Algorithm::CachePartitioning);
        assert_eq!(best(&fig7, &word, Metric::Energy).0, Algorithm::VirtualPartitioning);
    }
}
