//! Replays the two real MQSim traces (vendored in `data/mqsim/`) on a small SSD and checks that the
//! replay's counts agree with the trace's own.

use std::fs::File;
use std::io::BufReader;
use std::path::PathBuf;

use nvmdb_flash::config::Mapping;
use nvmdb_flash::{ReplayOptions, SsdConfig};
use nvmdb_workload::{Op, TraceFormat, TraceReader};

const PAGE_BYTES: u64 = 4096;

fn trace_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/mqsim").join(name)
}

fn reader(name: &str) -> TraceReader<BufReader<File>> {
    let file = File::open(trace_path(name)).expect("the MQSim traces are vendored in data/mqsim");
    TraceReader::new(BufReader::new(file), TraceFormat::Disksim)
}

/// (requests, write pages, read pages) counted straight from the trace.
fn trace_counts(name: &str, skip: usize) -> (u64, u64, u64) {
    let (mut requests, mut writes, mut reads) = (0, 0, 0);
    for request in reader(name).skip(skip) {
        let r = request.unwrap();
        let pages = (r.offset_bytes + r.len_bytes).div_ceil(PAGE_BYTES) - r.offset_bytes / PAGE_BYTES;
        requests += 1;
        match r.op {
            Op::Write => writes += pages,
            Op::Read => reads += pages,
            Op::Trim => {}
        }
    }
    (requests, writes, reads)
}

fn small(mapping: Mapping) -> SsdConfig {
    let mut c = SsdConfig::default();
    c.flash.packages = 1;
    c.flash.planes_per_package = 2;
    c.flash.blocks_per_plane = 32;
    c.ftl.mapping = mapping;
    c.ftl.overprovision = 0.2;
    c.ftl.log_blocks = 4;
    c
}

#[test]
fn mqsim_traces_replay_with_matching_counts() {
    for (name, requests_in_trace) in [("tpcc-small.trace", 6_999), ("wsrch-small.trace", 24_783)] {
        let (requests, write_pages, read_pages) = trace_counts(name, 0);
        assert_eq!(requests, requests_in_trace, "{name}");
        for mapping in [Mapping::Page, Mapping::Block, Mapping::Hybrid] {
            let config = small(mapping);
            let mut store = nvmdb_flash::build(&config).unwrap();
            let report = nvmdb_flash::replay(store.as_mut(), reader(name), &ReplayOptions::default()).unwrap();
            store.check_invariants().unwrap();
            let s = report.stats;
            println!(
                "{name} {mapping:?}: {} page writes, WA {:.3}, {} erases, {} merges, mean {} ns, p99 {} ns",
                s.host_page_writes,
                s.write_amplification(),
                s.block_erases,
                s.merges,
                report.mean_response_ns,
                report.p99_response_ns
            );
            assert_eq!(report.requests, requests, "{name}");
            assert_eq!(s.host_page_writes, write_pages, "{name}: host writes = the trace's write pages");
            // Partial pages of writes are read first (read-modify-write).
            assert_eq!(s.host_page_reads, read_pages + report.rmw_pages, "{name}");
            assert!(s.flash_page_programs >= s.host_page_writes, "{name}: WA below 1");
            assert!(report.p99_response_ns >= report.mean_response_ns / 100 && report.max_response_ns > 0);
            assert!(report.p99_response_ns <= report.max_response_ns);
            assert!(s.flash_energy_pj > 0);
            if name == "tpcc-small.trace" {
                // 8 K page writes on a 3.2 K-page device: space must be reclaimed.
                assert!(s.block_erases > 0, "{name} {mapping:?}: no erase");
            }
        }
    }
}

#[test]
fn warmup_requests_are_left_out() {
    let name = "tpcc-small.trace";
    let warmup = 1_000;
    let (requests, write_pages, _) = trace_counts(name, warmup);
    let options = ReplayOptions { warmup_requests: warmup as u64, ..ReplayOptions::default() };
    let mut store = nvmdb_flash::build(&small(Mapping::Page)).unwrap();
    let report = nvmdb_flash::replay(store.as_mut(), reader(name), &options).unwrap();
    assert_eq!(report.requests, requests);
    assert_eq!(report.stats.host_page_writes, write_pages);
}

/// On tpcc-small with the default configuration and DiskSim devices kept apart, with and
/// without the pre-fill (the CLI's defaults), every buffer kind writes at most 1.5× the baseline's flash pages per host
/// page, and first writes never merge.
#[test]
fn tpcc_small_write_amplification_of_every_buffer_kind_is_near_the_baseline() {
    use nvmdb_flash::config::BufferKind;
    for prefill in [false, true] {
        let run = |kind: BufferKind| {
            let mut config = SsdConfig::default();
            config.buffer.kind = kind;
            let mut store = nvmdb_flash::build(&config).unwrap();
            let options = ReplayOptions { prefill, ..ReplayOptions::default() };
            // The CLI's defaults: DiskSim devices kept apart and realigned.
            let capacity = store.logical_pages() * u64::from(store.page_bytes());
            let scan = BufReader::new(File::open(trace_path("tpcc-small.trace")).unwrap());
            let layout = nvmdb_workload::DisksimLayout::scan(scan, u64::from(store.page_bytes()), capacity).unwrap();
            let requests = reader("tpcc-small.trace").with_disksim_layout(layout);
            let report = nvmdb_flash::replay(store.as_mut(), requests, &options).unwrap();
            store.check_invariants().unwrap();
            assert_eq!(report.prefilled_pages > 0, prefill);
            // Kept apart, the devices' 4 KB requests are mostly whole pages.
            assert!(report.rmw_pages * 4 < report.stats.host_page_writes, "{}", report.rmw_pages);
            report.stats
        };
        let baseline = run(BufferKind::None);
        assert!(baseline.write_amplification() > 0.0);
        for kind in [BufferKind::Ipl, BufferKind::Dpram, BufferKind::PcmLog] {
            let s = run(kind);
            let ratio = s.write_amplification() / baseline.write_amplification();
            assert!(
                ratio <= 1.5,
                "{kind:?} prefill={prefill}: {} vs {}",
                s.write_amplification(),
                baseline.write_amplification()
            );
            // Every merge comes from logged updates: first writes go straight to the FTL.
            assert!(s.merges <= s.logged_writes, "{kind:?}: {s:?}");
            assert_eq!(s.direct_writes > 0, !prefill, "{kind:?}: {s:?}");
            assert_eq!(
                s.direct_writes + s.logged_writes + s.out_of_place_writes + s.unchanged_writes,
                s.host_page_writes
            );
        }
    }
}
