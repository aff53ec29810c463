//! Typed parameter presets. Every field names its unit and its source.

use serde::{Deserialize, Serialize};

/// CIDR 2011 PCM main-memory cost parameters (Table 2 and Table 5 of seed 001).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PcmMetrics {
    /// Energy to read one PCM bit, pJ (E_rb; CIDR Table 2: 2 pJ).
    pub e_rb_pj: u64,
    /// Energy to program one PCM bit, pJ (E_wb; CIDR Table 2: 16 pJ).
    pub e_wb_pj: u64,
    /// Latency of fetching one cache line from PCM, CPU cycles (T_l; CIDR Table 2: 230).
    pub t_l_cycles: u64,
    /// Extra latency per modified 8 B word written, CPU cycles (T_w; CIDR Table 2: 450).
    pub t_w_cycles: u64,
}

impl PcmMetrics {
    /// The CIDR 2011 preset (seed 001, Tables 2 and 5).
    pub const CIDR2011: PcmMetrics = PcmMetrics { e_rb_pj: 2, e_wb_pj: 16, t_l_cycles: 230, t_w_cycles: 450 };

    /// `energy = 8·L·(N_l + N_lw)·E_rb + bits_written·E_wb`, in pJ (L = 64 B).
    pub fn energy_pj(&self, lines_read: u64, lines_written: u64, bits_written: u64) -> u64 {
        8 * crate::pcm::line::LINE_BYTES as u64 * (lines_read + lines_written) * self.e_rb_pj
            + bits_written * self.e_wb_pj
    }

    /// `pcm_latency = N_l·T_l + N_w·T_w`, in cycles.
    pub fn latency_cycles(&self, lines_read: u64, words_written: u64) -> u64 {
        lines_read * self.t_l_cycles + words_written * self.t_w_cycles
    }
}

impl Default for PcmMetrics {
    fn default() -> Self {
        Self::CIDR2011
    }
}

/// A chip's program-power budget: at most `cells_per_iteration` cells are programmed at
/// once, so a write programming `c` cells takes `ceil(c / cells_per_iteration)` program
/// iterations of `ns_per_iteration` each, however many bytes it covers. A write that
/// programs no cell takes none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProgramBudget {
    /// Cells programmed at once, at most (at least 1).
    pub cells_per_iteration: u64,
    /// Time of one program iteration, ns.
    pub ns_per_iteration: u64,
}

impl ProgramBudget {
    /// Program iterations of a write programming `cells` cells.
    pub fn iterations(&self, cells: u64) -> u64 {
        cells.div_ceil(self.cells_per_iteration)
    }

    /// Programming time of a write programming `cells` cells, ns.
    pub fn time_ns(&self, cells: u64) -> u64 {
        self.iterations(cells) * self.ns_per_iteration
    }
}

/// Timing and energy of PCM used as storage (byte ranges): a fixed initial latency plus a
/// per-chunk time. A write pays only for the chunks whose cells actually change, unless
/// `charge_every_chunk` is set; with a `program_budget` its time depends instead on the
/// cells it programs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PcmStorageTiming {
    /// Fixed latency paid by every operation, ns.
    pub initial_ns: u64,
    /// Read chunk size, bytes.
    pub read_chunk_bytes: u64,
    /// Time per read chunk, ns.
    pub read_ns_per_chunk: u64,
    /// Write chunk size, bytes.
    pub write_chunk_bytes: u64,
    /// Time per written chunk whose cells change, ns.
    pub write_ns_per_chunk: u64,
    /// Energy per read chunk, pJ (0 where the source gives none; bit energy still applies).
    pub read_pj_per_chunk: u64,
    /// Energy per written chunk, pJ (0 where the source gives none).
    pub write_pj_per_chunk: u64,
    /// A write pays time and chunk energy for every chunk it covers, changed or not (a
    /// device that programs what it is sent, with no read-compare); off, only for the
    /// chunks whose cells change (a differential write). Cell wear and bit counts are
    /// differential either way.
    #[serde(default)]
    pub charge_every_chunk: bool,
    /// A write's time after the initial latency: with `None` (every preset) its chunks
    /// times `write_ns_per_chunk`; with a budget, its program iterations
    /// ([`ProgramBudget::time_ns`] of the cells it programs, flip cells included). The
    /// chunk energy is charged per changed chunk either way. Needs every cell counted
    /// (not [`crate::PcmAccounting::Words`]) and `charge_every_chunk` off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program_budget: Option<ProgramBudget>,
}

impl PcmStorageTiming {
    /// Samsung 90 nm 512 Mb PRAM prototype datasheet figures (IPL-P Table 1, seed 002):
    /// read 206 ns / 32 B, write 7.1 µs / 32 B, about 78 ns initial latency.
    pub const SAMSUNG_PRAM_DATASHEET: PcmStorageTiming = PcmStorageTiming {
        initial_ns: 78,
        read_chunk_bytes: 32,
        read_ns_per_chunk: 206,
        write_chunk_bytes: 32,
        write_ns_per_chunk: 7_100,
        read_pj_per_chunk: 0,
        write_pj_per_chunk: 0,
        charge_every_chunk: false,
        program_budget: None,
    };
    /// PCRAM as measured on the IPL-P development board (IPL-P Table 2, seed 002):
    /// read 6 µs / 128 B, write 192 µs / 128 B.
    pub const IPLP_BOARD: PcmStorageTiming = PcmStorageTiming {
        initial_ns: 0,
        read_chunk_bytes: 128,
        read_ns_per_chunk: 6_000,
        write_chunk_bytes: 128,
        write_ns_per_chunk: 192_000,
        read_pj_per_chunk: 0,
        write_pj_per_chunk: 0,
        charge_every_chunk: false,
        program_budget: None,
    };
    /// Thesis Table 2.2 (seed 000): 80 ns / word read, 10 µs / word write,
    /// 0.05 nJ / 0.094 nJ per word.
    pub const THESIS_TABLE_2_2: PcmStorageTiming = PcmStorageTiming {
        initial_ns: 0,
        read_chunk_bytes: 8,
        read_ns_per_chunk: 80,
        write_chunk_bytes: 8,
        write_ns_per_chunk: 10_000,
        read_pj_per_chunk: 50,
        write_pj_per_chunk: 94,
        charge_every_chunk: false,
        program_budget: None,
    };

    /// Looks a preset up by its name.
    pub fn preset(name: &str) -> Option<PcmStorageTiming> {
        match name {
            "samsung-pram-datasheet" => Some(Self::SAMSUNG_PRAM_DATASHEET),
            "iplp-board" => Some(Self::IPLP_BOARD),
            "thesis-table-2.2" => Some(Self::THESIS_TABLE_2_2),
            _ => None,
        }
    }

    /// The preset names, for help texts and errors.
    pub const PRESET_NAMES: [&'static str; 3] = ["samsung-pram-datasheet", "iplp-board", "thesis-table-2.2"];
}

impl Default for PcmStorageTiming {
    fn default() -> Self {
        Self::SAMSUNG_PRAM_DATASHEET
    }
}

/// NAND flash latency and energy per operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlashTiming {
    /// Page read time, ns.
    pub read_ns: u64,
    /// Page program time, ns.
    pub program_ns: u64,
    /// Block erase time, ns.
    pub erase_ns: u64,
    /// Energy per page read, pJ.
    pub read_pj: u64,
    /// Energy per page program, pJ.
    pub program_pj: u64,
    /// Energy per block erase, pJ.
    pub erase_pj: u64,
}

impl FlashTiming {
    /// Thesis Table 2.2 (seed 000): 284 µs, 1833 µs and >20 ms (20 ms used); 9.5, 76.1 and
    /// 16.5 µJ per 4 KB. The erase energy is stated per 4 KB; we charge it once per block
    /// erase, since an erase is one operation on the whole block.
    pub const THESIS_TABLE_2_2: FlashTiming = FlashTiming {
        read_ns: 284_000,
        program_ns: 1_833_000,
        erase_ns: 20_000_000,
        read_pj: 9_500_000,
        program_pj: 76_100_000,
        erase_pj: 16_500_000,
    };
    /// Thesis Table 5.1 (seed 000), the SSD simulator's configuration: 25 µs, 200 µs,
    /// 1.5 ms. The table gives no energy; Table 2.2's energies are used.
    pub const THESIS_TABLE_5_1: FlashTiming = FlashTiming {
        read_ns: 25_000,
        program_ns: 200_000,
        erase_ns: 1_500_000,
        read_pj: 9_500_000,
        program_pj: 76_100_000,
        erase_pj: 16_500_000,
    };
    /// Samsung K9F8G08U0M SLC NAND (IPL-P Table 1, seed 002): 75 µs / 2 KB read,
    /// 250 µs / 2 KB program, 1.5 ms / 128 KB erase. Energies from thesis Table 2.2.
    pub const IPLP_NAND_CHIP: FlashTiming = FlashTiming {
        read_ns: 75_000,
        program_ns: 250_000,
        erase_ns: 1_500_000,
        read_pj: 9_500_000,
        program_pj: 76_100_000,
        erase_pj: 16_500_000,
    };

    /// Looks a preset up by its name.
    pub fn preset(name: &str) -> Option<FlashTiming> {
        match name {
            "thesis-table-2.2" => Some(Self::THESIS_TABLE_2_2),
            "thesis-table-5.1" => Some(Self::THESIS_TABLE_5_1),
            "iplp-nand-chip" => Some(Self::IPLP_NAND_CHIP),
            _ => None,
        }
    }

    /// The preset names, for help texts and errors.
    pub const PRESET_NAMES: [&'static str; 3] = ["thesis-table-2.2", "thesis-table-5.1", "iplp-nand-chip"];
}

impl Default for FlashTiming {
    fn default() -> Self {
        Self::THESIS_TABLE_5_1
    }
}

/// Volatile memory access cost per 64 B access.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct VolatileParams {
    /// Read latency per access, ns.
    pub read_ns: u64,
    /// Write latency per access, ns.
    pub write_ns: u64,
    /// Read energy per bit, pJ.
    pub read_pj_per_bit: u64,
    /// Write energy per bit, pJ.
    pub write_pj_per_bit: u64,
}

impl VolatileParams {
    /// DRAM: 50 ns page read/write (thesis Table 2.1, seed 000); about 2 pJ per bit read or
    /// written (the DRAM figure the CIDR paper's PCM energies are compared with).
    pub const DRAM: VolatileParams =
        VolatileParams { read_ns: 50, write_ns: 50, read_pj_per_bit: 2, write_pj_per_bit: 2 };
    /// Battery-backed SRAM for eNVy's write buffer (seed 004). The seed text has lost its
    /// numbers, so these are assumptions: 100 ns per access, energy per bit as DRAM.
    pub const SRAM: VolatileParams =
        VolatileParams { read_ns: 100, write_ns: 100, read_pj_per_bit: 2, write_pj_per_bit: 2 };
}
