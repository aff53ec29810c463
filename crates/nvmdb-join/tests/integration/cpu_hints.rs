//! The joins' instruction and independence hints change time only: every counter of a
//! join run with them equals the same join's with the hints dropped, and the CPU time
//! model's cycles rise with the instruction estimate.

use nvmdb_device::{Pcm, PcmConfig};
use nvmdb_join::synth::{generate, SynthSpec};
use nvmdb_join::{measured_join, Algorithm, IdEncoding, JoinOptions, Layout};
use nvmdb_memory::{CacheConfig, CacheLevelConfig, CachedMemory, HintFilter, MemoryReport};
use rand::SeedableRng;

/// A cache small enough that the relations overflow it and the partitioned joins use
/// several partitions.
fn small_cached() -> CachedMemory {
    let config = CacheConfig {
        levels: vec![
            CacheLevelConfig { size_bytes: 2 << 10, ways: 8, latency_cycles: 4 },
            CacheLevelConfig { size_bytes: 16 << 10, ways: 8, latency_cycles: 11 },
            CacheLevelConfig { size_bytes: 64 << 10, ways: 16, latency_cycles: 39 },
        ],
        ranks: 4,
        write_queue: 32,
    };
    CachedMemory::new(Pcm::new(PcmConfig::new(1 << 26)).expect("PCM"), config)
}

fn run(algorithm: Algorithm, layout: Layout, instruction_factor: u64, groups: bool) -> MemoryReport {
    let mut mem = HintFilter { inner: small_cached(), instruction_factor, overlap: groups };
    let spec = SynthSpec { r_bytes: 120_000, record_bytes: 60, match_per_r: 2, layout };
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
    let (r, s) = generate(&mut mem, &spec, &mut rng).expect("relations fit");
    let options =
        JoinOptions { algorithm, cache_bytes: 64 << 10, id_encoding: IdEncoding::Delta16, collect_pairs: false };
    let (output, report) = measured_join(&mut mem, &r, &s, &options).expect("join runs");
    assert_eq!(output.matches, spec.s_rows());
    report
}

/// Every counter but the CPU model's.
fn counts(report: &MemoryReport) -> MemoryReport {
    MemoryReport { cpu: Default::default(), ..report.clone() }
}

#[test]
fn hints_change_no_count_and_instructions_add_cpu_time() {
    for layout in [Layout::Row, Layout::Column] {
        for algorithm in Algorithm::ALL {
            let what = format!("{} {}", algorithm.name(), layout.name());
            let none = run(algorithm, layout, 0, false);
            let counted = run(algorithm, layout, 1, false);
            let doubled = run(algorithm, layout, 2, false);
            let grouped = run(algorithm, layout, 1, true);
            for report in [&counted, &doubled, &grouped] {
                assert_eq!(counts(report), counts(&none), "{what}: a hint changed a count");
            }
            assert!(none.pcm.lines_read > 0 && none.pcm.lines_written > 0, "{what}: {none:?}");
            // Loads and stores are instructions of their own; the estimate comes on top.
            let declared = counted.cpu.instructions - none.cpu.instructions;
            assert!(declared > 0, "{what}: no instruction declared");
            assert_eq!(doubled.cpu.instructions - none.cpu.instructions, 2 * declared, "{what}");
            assert!(none.cpu.cycles < counted.cpu.cycles, "{what}: {:?} {:?}", none.cpu, counted.cpu);
            assert!(counted.cpu.cycles < doubled.cpu.cycles, "{what}: {:?} {:?}", counted.cpu, doubled.cpu);
            // Overlapping independent misses never makes a join slower.
            assert!(grouped.cpu.cycles <= counted.cpu.cycles, "{what}: {:?} {:?}", grouped.cpu, counted.cpu);
            assert_eq!(grouped.cpu.instructions, counted.cpu.instructions, "{what}");
        }
    }
}
