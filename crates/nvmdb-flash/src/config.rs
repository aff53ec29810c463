//! The SSD configuration: one typed struct per TOML section, parsed with
//! `deny_unknown_fields` and serde-tagged enums so that a typo fails at parse time with a
//! message naming the key. Every key is documented in `CONFIG.md`.

use nvmdb_device::{FlashGeometry, FlashTiming, PageContent, PcmAccounting, PcmStorageTiming};
use serde::{Deserialize, Serialize};

use crate::layer::FlashError;

/// A whole SSD stack: flash geometry, FTL, buffer, deduplication, content mode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SsdConfig {
    /// Seed of every pseudo-random choice the stack makes.
    pub seed: u64,
    /// What flash stores of each page: `bytes`, `fingerprint` or `none` (metadata only).
    pub content: PageContent,
    /// Flash geometry and timing.
    pub flash: FlashSection,
    /// Flash translation layer.
    pub ftl: FtlSection,
    /// PCM buffer in front of the FTL.
    pub buffer: BufferSection,
    /// Deduplication (page-mapped FTL only).
    pub dedup: DedupSection,
    /// The SSD's own DRAM write buffer (off by default).
    pub dram: DramSection,
}

impl Default for SsdConfig {
    fn default() -> Self {
        SsdConfig {
            seed: 1,
            content: PageContent::None,
            flash: FlashSection::default(),
            ftl: FtlSection::default(),
            buffer: BufferSection::default(),
            dedup: DedupSection::default(),
            dram: DramSection::default(),
        }
    }
}

/// `[flash]`: geometry and timing. Defaults are thesis Table 5.1 (seed 000).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FlashSection {
    /// Packages (chips).
    pub packages: u32,
    /// Planes per package.
    pub planes_per_package: u32,
    /// Erase blocks per plane.
    pub blocks_per_plane: u32,
    /// Pages per erase block.
    pub pages_per_block: u32,
    /// Data bytes per page.
    pub page_bytes: u32,
    /// Spare bytes per page.
    pub spare_bytes: u32,
    /// Erases a block survives.
    pub endurance: u64,
    /// Whether 512 B sectors of a page may be programmed separately.
    pub partial_programming: bool,
    /// Latency and energy preset.
    pub timing: FlashTimingPreset,
}

impl Default for FlashSection {
    fn default() -> Self {
        FlashSection {
            packages: 10,
            planes_per_package: 8,
            blocks_per_plane: 2048,
            pages_per_block: 64,
            page_bytes: 4096,
            spare_bytes: 128,
            endurance: 100_000,
            partial_programming: false,
            timing: FlashTimingPreset::ThesisTable51,
        }
    }
}

impl FlashSection {
    /// The device geometry.
    pub fn geometry(&self) -> FlashGeometry {
        FlashGeometry {
            packages: self.packages,
            planes_per_package: self.planes_per_package,
            blocks_per_plane: self.blocks_per_plane,
            pages_per_block: self.pages_per_block,
            page_bytes: self.page_bytes,
            spare_bytes: self.spare_bytes,
            endurance: self.endurance,
            partial_programming: self.partial_programming,
        }
    }
}

/// Named flash timing presets ([`FlashTiming`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum FlashTimingPreset {
    /// Thesis Table 2.2.
    #[serde(rename = "thesis-table-2.2")]
    ThesisTable22,
    /// Thesis Table 5.1 (25 µs / 200 µs / 1.5 ms).
    #[serde(rename = "thesis-table-5.1")]
    ThesisTable51,
    /// IPL-P Table 1's Samsung SLC chip.
    #[serde(rename = "iplp-nand-chip")]
    IplpNandChip,
}

impl FlashTimingPreset {
    /// The preset's numbers.
    pub fn timing(self) -> FlashTiming {
        match self {
            FlashTimingPreset::ThesisTable22 => FlashTiming::THESIS_TABLE_2_2,
            FlashTimingPreset::ThesisTable51 => FlashTiming::THESIS_TABLE_5_1,
            FlashTimingPreset::IplpNandChip => FlashTiming::IPLP_NAND_CHIP,
        }
    }
}

/// Named PCM storage timing presets ([`PcmStorageTiming`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum PcmTimingPreset {
    /// Thesis Table 2.2.
    #[serde(rename = "thesis-table-2.2")]
    ThesisTable22,
    /// Samsung PRAM datasheet (IPL-P Table 1).
    #[serde(rename = "samsung-pram-datasheet")]
    SamsungPramDatasheet,
    /// IPL-P development board (IPL-P Table 2).
    #[serde(rename = "iplp-board")]
    IplpBoard,
}

impl PcmTimingPreset {
    /// The preset's numbers.
    pub fn timing(self) -> PcmStorageTiming {
        match self {
            PcmTimingPreset::ThesisTable22 => PcmStorageTiming::THESIS_TABLE_2_2,
            PcmTimingPreset::SamsungPramDatasheet => PcmStorageTiming::SAMSUNG_PRAM_DATASHEET,
            PcmTimingPreset::IplpBoard => PcmStorageTiming::IPLP_BOARD,
        }
    }
}

/// `[ftl]`: mapping, garbage collection, over-provisioning, wear levelling.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FtlSection {
    /// Address mapping.
    pub mapping: Mapping,
    /// Garbage-collection victim policy.
    pub gc: GcPolicy,
    /// Fraction of physical pages hidden from the host, in `[0, 1)`.
    pub overprovision: f64,
    /// Free blocks per plane below which garbage collection runs (at least 2: one to
    /// copy into, one spare).
    pub gc_free_blocks: u32,
    /// Wear levelling.
    pub wear_leveling: WearLeveling,
    /// Static wear levelling: migrate a cold block when the plane's erase-count spread
    /// exceeds this many erases.
    pub static_wl_threshold: u64,
    /// Hybrid mapping: log blocks (shared by all data blocks, FAST).
    pub log_blocks: u32,
}

impl Default for FtlSection {
    fn default() -> Self {
        FtlSection {
            mapping: Mapping::Page,
            gc: GcPolicy::Greedy,
            overprovision: 0.07,
            gc_free_blocks: 2,
            wear_leveling: WearLeveling::Dynamic,
            static_wl_threshold: 100,
            log_blocks: 64,
        }
    }
}

/// Address mappings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mapping {
    /// Page-level mapping.
    Page,
    /// Block-level mapping.
    Block,
    /// Hybrid log-block mapping (FAST: fully associative log blocks).
    Hybrid,
}

/// Garbage-collection victim policies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GcPolicy {
    /// The block with the fewest valid pages.
    Greedy,
    /// The block closed longest ago.
    Fifo,
    /// The block maximising `age · (1 − u) / 2u` (Rosenblum and Ousterhout's LFS cleaner).
    CostBenefit,
}

/// Wear-levelling modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WearLeveling {
    /// None: free blocks are reused in the order they were freed.
    None,
    /// Dynamic: the free block with the fewest erases is allocated first.
    Dynamic,
    /// Dynamic, plus static: cold data is moved off the least-worn block.
    Static,
}

/// `[buffer]`: a PCM buffer in front of the FTL.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BufferSection {
    /// Buffer kind.
    pub kind: BufferKind,
    /// PCM capacity, MiB.
    pub pcm_mb: u64,
    /// Bytes per PCM log sector.
    pub log_sector_bytes: u32,
    /// Smallest update delta for content-free traces, bytes.
    pub delta_bytes_min: u32,
    /// Largest update delta for content-free traces, bytes.
    pub delta_bytes_max: u32,
    /// PCM storage timing preset.
    pub pcm_timing: PcmTimingPreset,
    /// What the log area's PCM counts: every cell (`cells`), or only to the word
    /// (`words`: no cell bit counts, no cell wear; see CONFIG.md).
    pub pcm_accounting: PcmAccounting,
    /// The change assumed for a content-free update (no bytes to compare).
    pub delta: DeltaKind,
    /// Which pages a merge writes.
    pub merge: MergeKind,
    /// Where a merge's pages go: one plane, or striped over the planes.
    pub merge_layout: MergeLayout,
    /// The PCM log's P-block replacement policy.
    pub replacement: ReplacementKind,
}

impl Default for BufferSection {
    fn default() -> Self {
        BufferSection {
            kind: BufferKind::None,
            pcm_mb: 64,
            log_sector_bytes: 512,
            delta_bytes_min: 50,
            delta_bytes_max: 150,
            pcm_timing: PcmTimingPreset::ThesisTable22,
            pcm_accounting: PcmAccounting::Cells,
            delta: DeltaKind::Sampled,
            merge: MergeKind::LiveBlock,
            merge_layout: MergeLayout::OnePlane,
            replacement: ReplacementKind::LeastPopular,
        }
    }
}

/// The change assumed for a content-free update.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DeltaKind {
    /// `delta_bytes_min..=delta_bytes_max` bytes at a random offset (IPL's measured
    /// 50–150 B), within the host's byte range.
    Sampled,
    /// The whole page (or the whole host range).
    FullPage,
}

/// Which pages a merge writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MergeKind {
    /// Every live page of the logical block, as one sequential run.
    LiveBlock,
    /// Only the pages that have log records.
    LoggedPages,
}

/// Where a merge's pages go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MergeLayout {
    /// One sequential run into the active block of one plane (the one with the fewest
    /// live pages): the thesis's "flush them sequentially into SSD Block".
    OnePlane,
    /// Page by page over the planes in the FTL's round-robin order, as host writes go:
    /// the thesis's background, "if a write is sequential, the data can be striped and
    /// written across different dies or planes in parallel".
    Striped,
}

/// The PCM log's P-block replacement policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReplacementKind {
    /// The thesis's: the least popular P-block.
    LeastPopular,
    /// The least recently updated P-block.
    Lru,
}

/// Buffer kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BufferKind {
    /// No buffer: the FTL is the top layer.
    None,
    /// In-page logging (IPL), its log pages kept in the page-mapped FTL.
    Ipl,
    /// In-page logging in its own layout: data pages and log sectors in each erase unit,
    /// over the flash array with no FTL (`crate::ipl_native`).
    IplNative,
    /// d-PRAM.
    Dpram,
    /// The thesis's PCM log buffer.
    PcmLog,
}

/// `[dram]`: the SSD's own DRAM write buffer, above everything else.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DramSection {
    /// Pages the buffer holds; 0 = no buffer.
    pub pages: u64,
    /// Whether a power loss flushes the buffer first (capacitor-backed power-loss
    /// protection); without it, buffered writes are lost.
    pub power_loss_protection: bool,
}

/// `[dedup]`: inline deduplication in the page-mapped FTL (thesis 3.2.2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DedupSection {
    /// Whether duplicate page writes are removed.
    pub enabled: bool,
    /// Segments of the fingerprint store (a fingerprint `f` lives in segment `f mod N`).
    pub segments: u32,
    /// Most fingerprints kept; 0 = unbounded. Beyond it the least recently used goes.
    pub max_entries: u64,
    /// PCM capacity for the fingerprint store, MiB.
    pub pcm_mb: u64,
    /// PCM storage timing preset.
    pub pcm_timing: PcmTimingPreset,
}

impl Default for DedupSection {
    fn default() -> Self {
        DedupSection {
            enabled: false,
            segments: 64,
            max_entries: 0,
            pcm_mb: 256,
            pcm_timing: PcmTimingPreset::ThesisTable22,
        }
    }
}

impl SsdConfig {
    /// Parses a TOML document. Errors name the key at fault.
    pub fn from_toml(text: &str) -> Result<SsdConfig, FlashError> {
        let config: SsdConfig = toml::from_str(text).map_err(|e| FlashError::Config(one_line(&e.to_string())))?;
        config.validate()?;
        Ok(config)
    }

    /// Applies one `KEY=VALUE` override (`--set ftl.gc=fifo`). The value is read as a
    /// TOML value; a bare word is taken as a string. Unknown keys and ill-typed values fail
    /// here; ranges and combinations are checked by [`SsdConfig::validate`] once every
    /// override is in.
    pub fn set(&mut self, assignment: &str) -> Result<(), FlashError> {
        let fail = |what: String| FlashError::Config(format!("--set {assignment}: {what}"));
        let (key, value) = assignment.split_once('=').ok_or_else(|| fail("expected KEY=VALUE".into()))?;
        let (key, value) = (key.trim(), value.trim());
        let parsed = toml::from_str::<toml::Table>(&format!("v = {value}"))
            .ok()
            .and_then(|mut t| t.remove("v"))
            .unwrap_or_else(|| toml::Value::String(value.to_string()));
        let mut root = toml::Value::try_from(&*self).map_err(|e| fail(e.to_string()))?;
        let mut slot = &mut root;
        for part in key.split('.') {
            slot = slot
                .as_table_mut()
                .and_then(|t| t.get_mut(part))
                .ok_or_else(|| fail(format!("unknown key `{key}` (see CONFIG.md)")))?;
        }
        if slot.is_table() {
            return Err(fail(format!("`{key}` is a section, not a key")));
        }
        *slot = match (&*slot, parsed) {
            // Integers given to float keys (`ftl.overprovision=0`) are fine.
            (toml::Value::Float(_), toml::Value::Integer(i)) => toml::Value::Float(i as f64),
            (_, v) => v,
        };
        *self = root.try_into().map_err(|e: toml::de::Error| fail(one_line(&e.to_string())))?;
        Ok(())
    }

    /// Checks value ranges that the types cannot express.
    pub fn validate(&self) -> Result<(), FlashError> {
        let bad = |msg: String| Err(FlashError::Config(msg));
        let f = &self.flash;
        for (name, v) in [
            ("flash.packages", f.packages),
            ("flash.planes_per_package", f.planes_per_package),
            ("flash.blocks_per_plane", f.blocks_per_plane),
            ("flash.pages_per_block", f.pages_per_block),
            ("flash.page_bytes", f.page_bytes),
        ] {
            if v == 0 {
                return bad(format!("{name} must be positive"));
            }
        }
        if !f.page_bytes.is_power_of_two() || !(MIN_PAGE_BYTES..=MAX_PAGE_BYTES).contains(&f.page_bytes) {
            return bad(format!(
                "flash.page_bytes must be a power of two from {MIN_PAGE_BYTES} to {MAX_PAGE_BYTES}, not {}",
                f.page_bytes
            ));
        }
        if f.endurance == 0 {
            return bad("flash.endurance must be positive".into());
        }
        if f.pages_per_block > u32::from(u16::MAX) {
            return bad(format!("flash.pages_per_block must be at most 65535, not {}", f.pages_per_block));
        }
        if f.geometry().pages() >= u64::from(u32::MAX) {
            return bad(format!(
                "flash.packages × planes_per_package × blocks_per_plane × pages_per_block = {} pages; at most \
                 2^32 - 2 are supported",
                f.geometry().pages()
            ));
        }
        if !(0.0..1.0).contains(&self.ftl.overprovision) {
            return bad(format!("ftl.overprovision must be in [0, 1), not {}", self.ftl.overprovision));
        }
        if self.logical_pages() == 0 {
            return bad(format!(
                "ftl.overprovision = {} leaves no logical pages of the {} physical ones",
                self.ftl.overprovision,
                f.geometry().pages()
            ));
        }
        if self.ftl.gc_free_blocks < 2 || self.ftl.gc_free_blocks >= f.blocks_per_plane {
            return bad(format!(
                "ftl.gc_free_blocks must be at least 2 and below flash.blocks_per_plane, not {}",
                self.ftl.gc_free_blocks
            ));
        }
        let b = &self.buffer;
        if b.delta_bytes_min > b.delta_bytes_max {
            return bad(format!(
                "buffer.delta_bytes_min ({}) exceeds buffer.delta_bytes_max ({})",
                b.delta_bytes_min, b.delta_bytes_max
            ));
        }
        if b.delta_bytes_max > f.page_bytes {
            return bad(format!(
                "buffer.delta_bytes_max = {} has no effect beyond flash.page_bytes = {}: a delta lies within one page",
                b.delta_bytes_max, f.page_bytes
            ));
        }
        if b.log_sector_bytes == 0 {
            return bad("buffer.log_sector_bytes must be positive".into());
        }
        for (name, mb) in [("buffer.pcm_mb", b.pcm_mb), ("dedup.pcm_mb", self.dedup.pcm_mb)] {
            if mb > MAX_PCM_MB {
                return bad(format!("{name} must be at most {MAX_PCM_MB} (1 TiB), not {mb}"));
            }
        }
        if self.dram.pages > self.host_pages() {
            return bad(format!(
                "dram.pages ({}) exceeds the {} logical pages the device gives the host",
                self.dram.pages,
                self.host_pages()
            ));
        }
        if self.dedup.segments == 0 {
            return bad("dedup.segments must be positive".into());
        }
        if self.dedup.enabled && self.content == PageContent::None {
            return bad("dedup.enabled needs content = \"bytes\" or \"fingerprint\" (nothing to fingerprint)".into());
        }
        if b.kind == BufferKind::IplNative {
            // A storage manager over erase units: no page FTL to share pages in or to
            // move cold data.
            if self.dedup.enabled {
                return bad(
                    "dedup.enabled needs the page-mapped FTL, which buffer.kind = \"ipl-native\" does not use".into()
                );
            }
            if self.ftl.wear_leveling == WearLeveling::Static {
                return bad(
                    "ftl.wear_leveling = \"static\" is not modelled with buffer.kind = \"ipl-native\" (none or dynamic)"
                        .into(),
                );
            }
        } else if b.kind != BufferKind::None && self.ftl.mapping != Mapping::Page {
            return bad(format!(
                "buffer.kind = \"{}\" sits above the page-mapped FTL; it needs ftl.mapping = \"page\"",
                kebab(&b.kind)
            ));
        }
        if self.dedup.enabled && self.ftl.mapping != Mapping::Page {
            return bad("dedup.enabled needs ftl.mapping = \"page\" (shared pages need reference counts)".into());
        }
        Ok(())
    }

    /// The keys the chosen stack never reads: with `buffer.kind = "none"` the `[buffer]`
    /// keys and the `[ftl]` keys of other mappings; with a log scheme (above the page
    /// mapping) `ftl.log_blocks`, and the `[buffer]` keys of other schemes or policies;
    /// with deduplication off the `[dedup]` keys.
    pub fn ignored_keys(&self) -> Vec<&'static str> {
        let mut ignored = Vec::new();
        let b = &self.buffer;
        if b.kind == BufferKind::None {
            ignored.extend(["buffer.pcm_mb", "buffer.log_sector_bytes", "buffer.delta_bytes_min"]);
            ignored.extend(["buffer.delta_bytes_max", "buffer.pcm_timing", "buffer.delta", "buffer.merge"]);
            ignored.extend(["buffer.replacement", "buffer.merge_layout", "buffer.pcm_accounting"]);
            if self.ftl.mapping != Mapping::Page {
                ignored.extend(["ftl.gc", "ftl.gc_free_blocks", "ftl.static_wl_threshold"]);
            }
            if self.ftl.mapping != Mapping::Hybrid {
                ignored.push("ftl.log_blocks");
            }
        } else if b.kind == BufferKind::IplNative {
            // Its own storage manager: the FTL's mapping and GC keys, the PCM keys and the
            // merge options (a merge always rewrites the unit's live pages into one unit).
            ignored.extend(["ftl.mapping", "ftl.gc", "ftl.gc_free_blocks", "ftl.log_blocks"]);
            ignored.extend(["buffer.pcm_mb", "buffer.log_sector_bytes", "buffer.pcm_timing"]);
            ignored.extend(["buffer.pcm_accounting", "buffer.replacement", "buffer.merge", "buffer.merge_layout"]);
            if b.delta == DeltaKind::FullPage {
                ignored.extend(["buffer.delta_bytes_min", "buffer.delta_bytes_max"]);
            }
        } else {
            ignored.push("ftl.log_blocks");
            if b.kind == BufferKind::Ipl {
                ignored.extend(["buffer.pcm_mb", "buffer.log_sector_bytes", "buffer.pcm_timing"]);
                ignored.push("buffer.pcm_accounting");
            }
            if b.kind != BufferKind::PcmLog {
                ignored.push("buffer.replacement");
            }
            if b.delta == DeltaKind::FullPage {
                ignored.extend(["buffer.delta_bytes_min", "buffer.delta_bytes_max"]);
            }
        }
        if self.ftl.wear_leveling != WearLeveling::Static && !ignored.contains(&"ftl.static_wl_threshold") {
            ignored.push("ftl.static_wl_threshold");
        }
        if !self.dedup.enabled {
            ignored.extend(["dedup.segments", "dedup.max_entries", "dedup.pcm_mb", "dedup.pcm_timing"]);
        }
        if self.dram.pages == 0 {
            ignored.push("dram.power_loss_protection");
        }
        ignored
    }

    /// Refuses a key that was given (in the file or by `--set`) but that the chosen stack
    /// ignores, so a setting never silently has no effect.
    pub fn check_given_keys<'a>(&self, given: impl IntoIterator<Item = &'a str>) -> Result<(), FlashError> {
        let ignored = self.ignored_keys();
        let Some(key) = given.into_iter().find(|key| ignored.contains(key)) else { return Ok(()) };
        let stack = if self.buffer.kind == BufferKind::IplNative {
            // Its own storage manager: no FTL mapping, no deduplication to name.
            "buffer.kind = \"ipl-native\" (IPL in its own layout, no FTL)".to_string()
        } else {
            format!(
                "ftl.mapping = \"{}\", buffer.kind = \"{}\", dedup.enabled = {}",
                kebab(&self.ftl.mapping),
                kebab(&self.buffer.kind),
                self.dedup.enabled
            )
        };
        Err(FlashError::Config(format!("{key} has no effect with {stack} (see CONFIG.md)")))
    }

    /// The dotted keys a TOML document sets (`flash.packages`, `seed`), in order.
    pub fn toml_keys(text: &str) -> Result<Vec<String>, FlashError> {
        let table: toml::Table = toml::from_str(text).map_err(|e| FlashError::Config(one_line(&e.to_string())))?;
        let mut keys = Vec::new();
        for (key, value) in &table {
            match value.as_table() {
                Some(section) => keys.extend(section.keys().map(|inner| format!("{key}.{inner}"))),
                None => keys.push(key.clone()),
            }
        }
        Ok(keys)
    }

    /// Logical pages: `floor(physical × (1 − overprovision))`.
    pub fn logical_pages(&self) -> u64 {
        (self.flash.geometry().pages() as f64 * (1.0 - self.ftl.overprovision)).floor() as u64
    }

    /// Logical pages the built stack gives the host: [`SsdConfig::logical_pages`], but
    /// fewer for IPL, whose log pages take FTL pages ([`SsdConfig::ipl_host_pages`]), and
    /// for IPL in its own layout ([`SsdConfig::ipl_native_units`] of data pages).
    pub fn host_pages(&self) -> u64 {
        match self.buffer.kind {
            BufferKind::Ipl => self.ipl_host_pages(),
            BufferKind::IplNative => {
                let m = self.flash.pages_per_block;
                self.ipl_native_units() * u64::from(m.saturating_sub(self.ipl_log_pages()))
            }
            _ => self.logical_pages(),
        }
    }

    /// Log pages IPL keeps per erase block, in either form: 1/16 of the block, at least one.
    pub fn ipl_log_pages(&self) -> u32 {
        (self.flash.pages_per_block / 16).max(1)
    }

    /// Host pages of the FTL-layered IPL: whole logical blocks, each taking its
    /// [`SsdConfig::ipl_log_pages`] beyond its pages among the FTL's logical pages.
    pub fn ipl_host_pages(&self) -> u64 {
        let m = self.flash.pages_per_block;
        self.logical_pages() / u64::from(m + self.ipl_log_pages()) * u64::from(m)
    }

    /// Erase units IPL in its own layout gives the host, `floor(blocks × (1 − overprovision))`
    /// (the rest are its free pool).
    pub fn ipl_native_units(&self) -> u64 {
        (self.flash.geometry().blocks() as f64 * (1.0 - self.ftl.overprovision)).floor() as u64
    }
}

/// An enum value as the configuration spells it (`pcm-log`).
pub(crate) fn kebab(value: &impl Serialize) -> String {
    toml::Value::try_from(value).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

/// The smallest supported flash page, bytes (one sector).
pub const MIN_PAGE_BYTES: u32 = 512;
/// The largest supported flash page, bytes (64 sectors, the most partial programming tracks).
pub const MAX_PAGE_BYTES: u32 = 32768;
/// The largest PCM buffer or fingerprint store, MiB.
pub const MAX_PCM_MB: u64 = 1 << 20;

/// TOML errors span several lines (a source excerpt); keep the first line and the message.
fn one_line(message: &str) -> String {
    let lines: Vec<&str> = message.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    match lines.as_slice() {
        [] => "invalid TOML".into(),
        [only] => (*only).to_string(),
        [first, .., last] => format!("{first} {last}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_round_trip_and_keys_parse() {
        let text = "seed = 7\ncontent = \"bytes\"\n[flash]\npackages = 2\n[ftl]\nmapping = \"page\"\ngc = \"cost-benefit\"\n[buffer]\nkind = \"pcm-log\"\nmerge = \"logged-pages\"\n[dedup]\nenabled = false\n";
        let config = SsdConfig::from_toml(text).unwrap();
        assert_eq!(config.seed, 7);
        assert_eq!(config.content, PageContent::Bytes);
        assert_eq!(config.flash.packages, 2);
        assert_eq!(config.ftl.mapping, Mapping::Page);
        assert_eq!(config.buffer.merge, MergeKind::LoggedPages);
        assert_eq!(config.ftl.gc, GcPolicy::CostBenefit);
        assert_eq!(config.buffer.kind, BufferKind::PcmLog);
        let again = SsdConfig::from_toml(&toml::to_string(&config).unwrap()).unwrap();
        assert_eq!(again, config);
    }

    #[test]
    fn typos_name_the_key() {
        let err = SsdConfig::from_toml("[ftl]\ngcc = \"fifo\"\n").unwrap_err().to_string();
        assert!(err.contains("gcc"), "{err}");
        let err = SsdConfig::from_toml("[ftl]\ngc = \"greedyy\"\n").unwrap_err().to_string();
        assert!(err.contains("greedyy"), "{err}");
        let err = SsdConfig::from_toml("[ftl]\noverprovision = 1.5\n").unwrap_err().to_string();
        assert!(err.contains("ftl.overprovision"), "{err}");
    }

    #[test]
    fn set_overrides_one_key_and_names_the_flag() {
        let mut config = SsdConfig::default();
        config.set("ftl.gc=fifo").unwrap();
        config.set("ftl.overprovision=0.2").unwrap();
        config.set("flash.packages = 3").unwrap();
        config.set("dedup.enabled=true").unwrap();
        assert!(config.validate().unwrap_err().to_string().contains("content"));
        config.set("content=fingerprint").unwrap();
        config.validate().unwrap();
        config.set("flash.timing=thesis-table-2.2").unwrap();
        assert_eq!(config.ftl.gc, GcPolicy::Fifo);
        assert_eq!(config.ftl.overprovision, 0.2);
        assert_eq!(config.flash.packages, 3);
        assert!(config.dedup.enabled);
        assert_eq!(config.flash.timing, FlashTimingPreset::ThesisTable22);
        let err = config.set("ftl.gcc=fifo").unwrap_err().to_string();
        assert!(err.contains("--set ftl.gcc=fifo") && err.contains("unknown key"), "{err}");
        let err = config.set("ftl.gc=lifo").unwrap_err().to_string();
        assert!(err.contains("--set ftl.gc=lifo") && err.contains("lifo"), "{err}");
        let err = config.set("ftl").unwrap_err().to_string();
        assert!(err.contains("KEY=VALUE"), "{err}");
    }

    #[test]
    fn geometry_and_ranges_name_the_key() {
        for (set, key) in [
            ("flash.page_bytes=3", "flash.page_bytes"),
            ("flash.page_bytes=65536", "flash.page_bytes"),
            ("flash.page_bytes=256", "flash.page_bytes"),
            ("flash.endurance=0", "flash.endurance"),
            ("buffer.pcm_mb=1048577", "buffer.pcm_mb"),
            ("dedup.pcm_mb=1048577", "dedup.pcm_mb"),
        ] {
            let mut config = SsdConfig::default();
            config.set(set).unwrap();
            let err = config.validate().unwrap_err().to_string();
            assert!(err.contains(key), "{set}: {err}");
        }
        let mut config = SsdConfig::default();
        config.flash = FlashSection {
            packages: 1,
            planes_per_package: 1,
            blocks_per_plane: 3,
            pages_per_block: 1,
            ..config.flash
        };
        config.ftl.overprovision = 0.9;
        assert!(config.validate().unwrap_err().to_string().contains("no logical pages"));
    }

    #[test]
    fn keys_the_stack_ignores_are_refused_when_given() {
        let keys = SsdConfig::toml_keys("seed = 2\n[ftl]\nlog_blocks = 8\n").unwrap();
        assert_eq!(keys, vec!["ftl.log_blocks".to_string(), "seed".to_string()]);
        let mut config = SsdConfig::default();
        let err = config.check_given_keys(keys.iter().map(String::as_str)).unwrap_err().to_string();
        assert!(err.contains("ftl.log_blocks") && err.contains("\"page\""), "{err}");
        config.ftl.mapping = Mapping::Hybrid;
        config.check_given_keys(keys.iter().map(String::as_str)).unwrap();
        config.buffer.kind = BufferKind::PcmLog;
        // The log layer sits above the page FTL, whose keys it uses.
        assert!(config.check_given_keys(["ftl.log_blocks"]).is_err());
        config.check_given_keys(["ftl.gc", "ftl.overprovision", "buffer.pcm_mb", "buffer.replacement"]).unwrap();
        assert!(config.check_given_keys(["dedup.segments"]).is_err());
        assert!(config.check_given_keys(["ftl.static_wl_threshold"]).is_err());
        config.buffer.kind = BufferKind::Ipl;
        assert!(config.check_given_keys(["buffer.pcm_mb"]).is_err());
        assert!(config.check_given_keys(["buffer.replacement"]).is_err());
        config.buffer.delta = DeltaKind::FullPage;
        assert!(config.check_given_keys(["buffer.delta_bytes_min"]).is_err());
        config.ftl.mapping = Mapping::Block;
        assert!(config.validate().unwrap_err().to_string().contains("ftl.mapping"));
    }

    #[test]
    fn memory_estimates_grow_with_the_geometry_and_saturate() {
        let mut config = SsdConfig::default();
        let small = config.estimated_memory_bytes();
        config.flash.packages *= 4;
        assert!(config.estimated_memory_bytes() > 3 * small);
        // Deduplication's tables: the share map (20 B of PCM per logical page) and location
        // table (per physical page) at the host bytes of a written PCM line, and the
        // per-logical-page sequence numbers.
        let plain = config.estimated_memory_bytes();
        config.dedup.enabled = true;
        let pcm_lines = (config.flash.geometry().pages() + config.logical_pages()) * 20 / 64;
        let share_map_and_table = pcm_lines * nvmdb_device::pcm::LINE_HOST_BYTES;
        assert!(config.estimated_memory_bytes() >= plain + share_map_and_table + 8 * config.logical_pages());
        // IPL in its own layout: the flash array's tags of its log sectors (32 B for each
        // of a page's 8 sectors) and its fingerprints (8 B a page) where no bytes are kept.
        let mut native = SsdConfig::default();
        native.buffer.kind = BufferKind::IplNative;
        native.content = PageContent::Bytes;
        let bytes_mode = native.estimated_memory_bytes();
        native.content = PageContent::Fingerprint;
        assert_eq!(native.estimated_memory_bytes() - bytes_mode, native.flash.geometry().pages() * (8 * 32 + 8));
        config.dedup.segments = u32::MAX;
        config.buffer.kind = BufferKind::PcmLog;
        config.buffer.pcm_mb = u64::MAX;
        assert!(config.estimated_memory_bytes() >= 1 << 62);
    }

    #[test]
    fn logical_pages_hide_the_overprovisioned_fraction() {
        let mut config = SsdConfig::default();
        config.flash = FlashSection { packages: 1, planes_per_package: 1, blocks_per_plane: 10, ..config.flash };
        config.ftl.overprovision = 0.25;
        assert_eq!(config.logical_pages(), 480);
    }

    /// IPL gives the host fewer pages than the FTL has (its log pages take 1/17 of them, in
    /// whole logical blocks), and IPL in its own layout 60 of each 64-page unit of the
    /// host's units; `dram.pages` is checked against what the host gets, and matches what
    /// the built stack exposes.
    #[test]
    fn host_pages_are_what_the_stack_exposes_and_bound_dram_pages() {
        let mut config = SsdConfig::default();
        config.flash = FlashSection { packages: 1, planes_per_package: 1, blocks_per_plane: 40, ..config.flash };
        config.ftl.overprovision = 0.25;
        config.content = PageContent::None;
        config.buffer.pcm_mb = 1;
        for (kind, host) in [
            (BufferKind::None, 1920),
            (BufferKind::Dpram, 1920),
            (BufferKind::Ipl, 1920 / 68 * 64),
            (BufferKind::IplNative, 30 * 60),
        ] {
            config.buffer.kind = kind;
            assert_eq!(config.host_pages(), host, "{kind:?}");
            config.dram.pages = host;
            config.validate().unwrap();
            assert_eq!(crate::build(&config).unwrap().logical_pages(), host, "{kind:?}");
            config.dram.pages = host + 1;
            let err = config.validate().unwrap_err().to_string();
            assert!(
                err.contains("dram.pages") && err.contains(&format!("the {host} logical pages")),
                "{kind:?}: {err}"
            );
            config.dram.pages = 0;
        }
    }

    /// The "no effect" error names the stack as it is: IPL in its own layout has no FTL
    /// mapping or deduplication to name.
    #[test]
    fn an_ignored_key_names_the_stack_that_ignores_it() {
        let mut config = SsdConfig::default();
        let err = config.check_given_keys(["buffer.pcm_mb"]).unwrap_err().to_string();
        assert!(err.contains("ftl.mapping = \"page\", buffer.kind = \"none\", dedup.enabled = false"), "{err}");
        config.buffer.kind = BufferKind::IplNative;
        let err = config.check_given_keys(["ftl.gc"]).unwrap_err().to_string();
        assert!(err.contains("ftl.gc has no effect with buffer.kind = \"ipl-native\" (IPL in its own layout"), "{err}");
        assert!(!err.contains("ftl.mapping") && !err.contains("dedup"), "{err}");
    }
}
