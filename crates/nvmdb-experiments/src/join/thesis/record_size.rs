//! Figure 5.11 by the record size of the query output, on synthetic relations with PCM as
//! main memory, and where the modified join trades reads for writes.

use nvmdb_device::Pcm;
use nvmdb_join::idlist::IdEncoding;
use nvmdb_join::join::{measured_join, Algorithm, JoinOptions};
use nvmdb_join::relation::Layout;
use nvmdb_join::synth::{generate, SynthSpec};
use nvmdb_lab::{Cell, Plot, RunContext, Table};
use nvmdb_memory::{CachedMemory, Memory};
use rand::RngCore;

use super::runs::{counter_cells, device, gain, gains, variant_name, Totals, COUNTER_COLUMNS};
use crate::join::Machine;

/// Bytes per record of R and S in Figure 5.11's sweep; a join result is an R record and
/// an S record, so the query output records are twice these.
pub(super) const RECORD_BYTES: [u64; 5] = [20, 40, 60, 80, 100];

/// PCM as main memory with its line fetches split by the access that missed: a fetch
/// during a store is the write-allocate fill of the line the store writes into, counted in
/// N_r like any other fetch; the rest are fetches of loads.
pub(super) struct FetchSplit {
    pub(super) mem: CachedMemory<Pcm>,
    /// Lines fetched by stores (write-allocate fills).
    pub(super) store_fetches: u64,
}

impl FetchSplit {
    pub(super) fn fetched(&self) -> u64 {
        use nvmdb_device::LineDevice;
        self.mem.device().line_stats().lines_read
    }
}

impl Memory for FetchSplit {
    fn read_bytes(&mut self, addr: u64, buf: &mut [u8]) {
        self.mem.read_bytes(addr, buf);
    }
    fn write_bytes(&mut self, addr: u64, data: &[u8]) {
        let before = self.fetched();
        self.mem.write_bytes(addr, data);
        self.store_fetches += self.fetched() - before;
    }
    fn load<T: nvmdb_memory::Scalar>(&mut self, addr: u64) -> T {
        self.mem.load(addr)
    }
    fn store<T: nvmdb_memory::Scalar>(&mut self, addr: u64, value: T) {
        let before = self.fetched();
        self.mem.store(addr, value);
        self.store_fetches += self.fetched() - before;
    }
    fn alloc(&mut self, size: u64, align: u64) -> Result<u64, nvmdb_memory::MemoryError> {
        self.mem.alloc(size, align)
    }
    fn free(&mut self, addr: u64, size: u64) {
        self.mem.free(addr, size);
    }
    fn flush_all(&mut self) {
        self.mem.flush_all();
    }
    fn reset_stats(&mut self) {
        self.mem.reset_stats();
        self.store_fetches = 0;
    }
    fn report(&self) -> nvmdb_memory::MemoryReport {
        self.mem.report()
    }
    fn compute(&mut self, instructions: u64) {
        self.mem.compute(instructions);
    }
    fn begin_independent(&mut self) {
        self.mem.begin_independent();
    }
    fn end_independent(&mut self) {
        self.mem.end_independent();
    }
}

/// What Figure 5.11's sweep by output record size measured.
pub(super) struct RecordSizeResults {
    pub(super) table: Table,
    pub(super) plot: Plot,
    /// Largest lifetime gain, energy and latency saved over the sizes, %.
    pub(super) best_gains: (f64, f64, f64),
    /// Fewer bits written and more lines read by the modified join at every size.
    pub(super) trades_reads: bool,
    /// Per size: lines the traditional join fetched on loads and on stores, then the
    /// modified join's.
    pub(super) fetches: Vec<[u64; 4]>,
    /// Per size: the output record's bytes, then the traditional and the modified join's
    /// counters.
    by_size: Vec<(u64, Totals, Totals)>,
    pub(super) r_bytes: u64,
}

impl RecordSizeResults {
    /// Why the best gains over the record sizes are what they are: the three notes of
    /// the lifetime, energy and latency claims, from the sweep's counters.
    pub(super) fn gain_notes(&self) -> [String; 3] {
        let (first, last) = (&self.by_size[0], &self.by_size[self.by_size.len() - 1]);
        let million = |bits: u64| bits as f64 / 1e6;
        let saved = |f: fn(&Totals) -> u64, (_, t, m): &(u64, Totals, Totals)| gain(f(t), f(m));
        let span = |f: &dyn Fn(&(u64, Totals, Totals)) -> f64| {
            format!("{:.0}% at {} B to {:.0}% at {} B", f(first), first.0, f(last), last.0)
        };
        let lifetime = format!(
            "Per record the traditional join copies both records into its partitions and the modified join writes \
             a 4 B tuple ID: with R's bytes fixed, traditional writes {:.2} M bits at {} B and {:.2} M at {} B, \
             modified {:.2} M and {:.2} M (one ID per record, fewer records as they grow), so the lifetime gain grows \
             with the record size, {} (table \"Figure 5.11 by record size\"); the claim takes the largest.",
            million(first.1.pcm.bits_written),
            first.0,
            million(last.1.pcm.bits_written),
            last.0,
            million(first.2.pcm.bits_written),
            million(last.2.pcm.bits_written),
            span(&|(_, t, m)| gains(t, m).0),
        );
        let energy = format!(
            "Energy saved grows with the bytes the traditional join copies: {}; by the thesis's formula, which \
             charges every word written, {}.",
            span(&|(_, t, m)| gains(t, m).1),
            span(&|x| saved(Totals::thesis_energy_pj, x)),
        );
        let latency = format!(
            "Ours is N_l·T_l + N_w·T_w, which the traditional join's written words dominate: {}. The thesis's \
             formula charges each word read as a line (8 per line), so the modified join's extra reads by tuple ID \
             weigh 8× more: by it, {}.",
            span(&|(_, t, m)| gains(t, m).2),
            span(&|x| saved(Totals::thesis_latency_cycles, x)),
        );
        [lifetime, energy, latency]
    }
}

/// Figure 5.11 by the record size of the query output: PCM as main memory, row store,
/// synthetic relations (CIDR Section 4.3's generator: one S record per R record, R of half
/// this scale's CIDR R), traditional and modified joins with 4 B tuple IDs.
pub(super) fn record_size_sweep(ctx: &RunContext, machine: &Machine) -> Result<RecordSizeResults, String> {
    use rand::SeedableRng;
    let r_bytes = machine.r_bytes / 2;
    let mut table = Table::new(
        format!(
            "Figure 5.11 by record size of the query output: row store, PCM as main memory ({} KB last level), \
             synthetic R of {} KB and S of as many records",
            machine.cache_bytes() >> 10,
            r_bytes >> 10
        ),
        &[
            &["output record, B", "variant"][..],
            &COUNTER_COLUMNS,
            &["lines fetched by loads", "lines fetched by stores"],
            &["lifetime gain, %", "energy saved, %", "latency saved, %"],
        ]
        .concat(),
    );
    let mut fetches = Vec::new();
    let mut by_size = Vec::new();
    let mut plot = Plot::new(
        "Figure 5.11: the modified join's gains over traditional, PCM as main memory",
        "record size of the query output, B",
        "%",
    );
    let mut series = vec![Vec::new(); 3];
    let mut best_gains = (f64::MIN, f64::MIN, f64::MIN);
    let mut trades_reads = true;
    for (i, &record_bytes) in RECORD_BYTES.iter().enumerate() {
        let spec = SynthSpec { r_bytes, record_bytes, match_per_r: 1, layout: Layout::Row };
        let seed = ctx.rng(RECORD_SIZE_STREAM + i as u64).next_u64();
        let [t, m] = [Algorithm::CachePartitioning, Algorithm::VirtualPartitioning].map(|algorithm| {
            let pcm = device()?;
            let mut mem = FetchSplit { mem: CachedMemory::new(pcm, machine.cache.clone()), store_fetches: 0 };
            let (r, s) =
                generate(&mut mem, &spec, &mut nvmdb_lab::Rng::seed_from_u64(seed)).map_err(|e| e.to_string())?;
            let options = JoinOptions {
                algorithm,
                cache_bytes: machine.cache_bytes(),
                id_encoding: IdEncoding::Plain32,
                collect_pairs: false,
            };
            let (output, report) = measured_join(&mut mem, &r, &s, &options).map_err(|e| e.to_string())?;
            if output.matches != spec.s_rows() {
                return Err(format!("{} found {} matches of {}", algorithm.name(), output.matches, spec.s_rows()));
            }
            let mut totals = Totals::default();
            totals.add(&report.pcm);
            Ok((totals, mem.store_fetches))
        });
        let ((t, t_store), (m, m_store)) = (t?, m?);
        fetches.push([t.pcm.lines_read - t_store, t_store, m.pcm.lines_read - m_store, m_store]);
        let g = gains(&t, &m);
        best_gains = (best_gains.0.max(g.0), best_gains.1.max(g.1), best_gains.2.max(g.2));
        trades_reads &= m.pcm.bits_written < t.pcm.bits_written && m.pcm.lines_read > t.pcm.lines_read;
        let output_bytes = 2 * record_bytes;
        for (totals, store, algorithm, g) in
            [(&t, t_store, Algorithm::CachePartitioning, None), (&m, m_store, Algorithm::VirtualPartitioning, Some(g))]
        {
            let mut row: Vec<Cell> = vec![output_bytes.into(), variant_name(Layout::Row, algorithm).into()];
            row.extend(counter_cells(totals));
            row.extend([(totals.pcm.lines_read - store).into(), store.into()]);
            match g {
                Some(g) => row.extend([g.0.into(), g.1.into(), g.2.into()]),
                None => row.extend([Cell::Missing, Cell::Missing, Cell::Missing]),
            }
            table.row(row);
        }
        for (points, value) in series.iter_mut().zip([g.0, g.1, g.2]) {
            points.push((output_bytes as f64, value));
        }
        by_size.push((output_bytes, t, m));
    }
    for (name, points) in ["lifetime gain", "energy saved", "latency saved"].into_iter().zip(series) {
        plot.series(name, points);
    }
    Ok(RecordSizeResults { table, plot, best_gains, trades_reads, fetches, by_size, r_bytes })
}

/// What the split of N_r into fetches of loads and of stores (write-allocate fills) shows
/// about the modified join's reads, from `fetches` (per size: traditional loads, stores,
/// modified loads, stores).
pub(super) fn trades_reads_explanation(fetches: &[[u64; 4]]) -> String {
    let cells = |f: fn(&[u64; 4]) -> String| fetches.iter().map(f).collect::<Vec<_>>().join(", ");
    let loads_more = fetches.iter().all(|f| f[2] > f[0]);
    format!(
        "N_r split by the access that missed (table \"Figure 5.11 by record size\", output records {} B): \
         traditional fetches {} lines on loads and {} on stores (write-allocate fills), modified {} and {}. \
         Counting fetches of loads only, the modified join reads more lines than traditional at every size: {}.",
        RECORD_BYTES.map(|b| (2 * b).to_string()).join(", "),
        cells(|f| f[0].to_string()),
        cells(|f| f[1].to_string()),
        cells(|f| f[2].to_string()),
        cells(|f| f[3].to_string()),
        if loads_more { "yes" } else { "no" },
    )
}

/// PRNG streams of Figure 5.11's sweep (+ the size's index).
const RECORD_SIZE_STREAM: u64 = 120;
