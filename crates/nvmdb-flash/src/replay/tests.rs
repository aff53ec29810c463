use nvmdb_device::{PageContent, PageData};
use nvmdb_workload::{Content, Op};
use rand::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::*;
use crate::config::SsdConfig;
use crate::layer::{FlashError, Pending};

fn small(content: PageContent) -> Box<dyn PageStore> {
    let mut config = SsdConfig { content, ..SsdConfig::default() };
    config.flash.packages = 1;
    config.flash.planes_per_package = 2;
    config.flash.blocks_per_plane = 16;
    config.flash.pages_per_block = 8;
    config.ftl.overprovision = 0.3;
    crate::stack::build(&config).unwrap()
}

fn write(time_ns: u64, offset_bytes: u64, bytes: Vec<u8>) -> Result<Request, String> {
    Ok(Request { time_ns, op: Op::Write, offset_bytes, len_bytes: bytes.len() as u64, content: Content::Bytes(bytes) })
}

#[test]
fn requests_split_into_pages_with_read_modify_write_for_partial_pages() {
    let mut store = small(PageContent::Bytes);
    let options = ReplayOptions { content: PageContent::Bytes, ..ReplayOptions::default() };
    // Page 0 whole, then bytes 4000..4200 (end of page 0, start of page 1): two RMWs.
    let requests = vec![write(0, 0, vec![1; 4096]), write(1_000_000, 4000, vec![2; 200])];
    let report = replay(store.as_mut(), requests.into_iter(), &options).unwrap();
    assert_eq!(report.stats.host_page_writes, 3);
    assert_eq!(report.rmw_pages, 2);
    assert_eq!(report.stats.host_page_reads, 2);
    let PageData::Bytes(page0) = store.read(0, 0).unwrap().0 else { panic!("bytes mode returns bytes") };
    assert!(page0[..4000].iter().all(|&b| b == 1) && page0[4000..].iter().all(|&b| b == 2));
    let PageData::Bytes(page1) = store.read(1, 0).unwrap().0 else { panic!("bytes mode returns bytes") };
    assert!(page1[..104].iter().all(|&b| b == 2) && page1[104..].iter().all(|&b| b == 0xFF));
    store.check_invariants().unwrap();
}

#[test]
fn synthetic_bytes_are_the_seeds_stream_without_short_periods() {
    let mut store = small(PageContent::Bytes);
    let options = ReplayOptions { content: PageContent::Bytes, seed: 5, ..ReplayOptions::default() };
    let page = |lpn: u64| {
        Ok::<_, String>(Request {
            time_ns: 0,
            op: Op::Write,
            offset_bytes: lpn * 4096,
            len_bytes: 4096,
            content: Content::Unknown,
        })
    };
    replay(store.as_mut(), [page(0), page(1)].into_iter(), &options).unwrap();
    let mut stream = vec![0; 2 * 4096];
    Xoshiro256PlusPlus::seed_from_u64(5 ^ SYNTHETIC_BYTES_STREAM).fill_bytes(&mut stream);
    let PageData::Bytes(page0) = store.read(0, 0).unwrap().0 else { panic!("bytes mode returns bytes") };
    let PageData::Bytes(page1) = store.read(1, 0).unwrap().0 else { panic!("bytes mode returns bytes") };
    assert_eq!((&page0[..], &page1[..]), (&stream[..4096], &stream[4096..]), "the stream, in write order");
    for period in 1..4096 {
        assert_ne!(page0[period..], page0[..4096 - period], "a period of {period} bytes");
    }
}

#[test]
fn response_times_p99_and_warmup() {
    let mut store = small(PageContent::None);
    // 200 one-page writes far apart: each takes one program (200 µs, Table 5.1).
    let requests = (0..200u64).map(|i| {
        Ok::<_, String>(Request {
            time_ns: i * 10_000_000,
            op: Op::Write,
            offset_bytes: i * 4096,
            len_bytes: 4096,
            content: Content::Unknown,
        })
    });
    let options = ReplayOptions { warmup_requests: 100, ..ReplayOptions::default() };
    let report = replay(store.as_mut(), requests, &options).unwrap();
    assert_eq!(report.requests, 100);
    assert_eq!(report.stats.host_page_writes, 100);
    assert_eq!((report.mean_response_ns, report.p99_response_ns), (200_000, 200_000));
    assert_eq!(report.content_mode, PageContent::None);
    assert_eq!(report.summary().write_amplification, 1.0);
    // Three one-page requests at once on two planes (striped round-robin): the third
    // waits for the first.
    let mut store = small(PageContent::None);
    let same_time = [0u64, 1, 2].map(|page| {
        Ok::<_, String>(Request {
            time_ns: 0,
            op: Op::Write,
            offset_bytes: page * 4096,
            len_bytes: 4096,
            content: Content::Unknown,
        })
    });
    let report = replay(store.as_mut(), same_time.into_iter(), &ReplayOptions::default()).unwrap();
    assert_eq!((report.mean_response_ns, report.p99_response_ns), (266_666, 400_000));
}

#[test]
fn input_errors_are_reported_and_addresses_wrap() {
    let mut store = small(PageContent::None);
    let bad = vec![Err::<Request, String>("line 3: bad".into())];
    assert_eq!(
        replay(store.as_mut(), bad.into_iter(), &ReplayOptions::default()),
        Err(ReplayError::Input("line 3: bad".to_string()))
    );
    let beyond = store.logical_pages() * 4096;
    let wrapped = vec![write(0, beyond, vec![0; 4096])];
    let report = replay(store.as_mut(), wrapped.into_iter(), &ReplayOptions::default()).unwrap();
    assert_eq!(report.wrapped_pages, 1);
    // A trace shorter than its warm-up measures nothing.
    let short = vec![write(0, 0, vec![0; 4096]), write(1, 0, vec![0; 4096])];
    let options = ReplayOptions { warmup_requests: 5, ..ReplayOptions::default() };
    let report = replay(store.as_mut(), short.into_iter(), &options).unwrap();
    assert_eq!((report.requests, report.stats.host_page_writes, report.lifetime_host_bytes()), (0, 0, None));
}

/// Whole-page writes of pages `0..pages`, then 100 B writes (logged by a log layer) and
/// reads of them, 1 ms apart.
fn updates(pages: u64) -> Vec<Request> {
    let request = |i: u64, op, lpn: u64, len| Request {
        time_ns: i * 1_000_000,
        op,
        offset_bytes: lpn * 4096,
        len_bytes: len,
        content: Content::Unknown,
    };
    let mut requests: Vec<Request> = (0..pages).map(|p| request(p, Op::Write, p, 4096)).collect();
    requests.extend((0..pages).map(|p| request(pages + p, Op::Write, p, 100)));
    requests.extend((0..pages).map(|p| request(2 * pages + p, Op::Read, p, 4096)));
    requests
}

fn log_store(kind: crate::config::BufferKind) -> Box<dyn PageStore> {
    let mut config = SsdConfig::default();
    config.flash.packages = 1;
    config.flash.planes_per_package = 2;
    config.flash.blocks_per_plane = 16;
    config.ftl.overprovision = 0.3;
    config.buffer.kind = kind;
    config.buffer.pcm_mb = 1;
    crate::stack::build(&config).unwrap()
}

#[test]
fn passes_replay_the_same_requests_and_report_the_last_alone() {
    let trace = updates(40);
    let run = |passes| {
        let mut store = log_store(crate::config::BufferKind::Dpram);
        let options = ReplayOptions { passes, ..ReplayOptions::default() };
        replay(store.as_mut(), trace.iter().cloned().map(Ok::<_, String>), &options).unwrap()
    };
    let one = run(1);
    assert_eq!((one.passes, one.last_pass.is_none()), (1, true));
    let three = run(3);
    assert_eq!(three, run(3), "deterministic");
    assert_eq!(three.requests, 3 * 120);
    assert_eq!(three.stats.host_page_writes, 3 * 80);
    let last = three.last_pass.as_deref().expect("the last pass");
    assert_eq!((last.requests, last.write_requests, last.read_requests), (120, 80, 40));
    assert_eq!(last.stats.host_page_writes, 80);
    // Every write of a pass after the first updates a page written before: none is a
    // first write, and the counters are the run's minus the first two passes'.
    assert_eq!(last.stats.direct_writes, 0);
    assert_eq!(three.stats.direct_writes, 40);
    assert_eq!(last.stats.logged_writes + last.stats.out_of_place_writes, 80);
    // A pass starts when the one before has completed, and keeps the trace's gaps.
    assert!(last.span_ns >= 119 * 1_000_000 && three.span_ns >= 3 * last.span_ns, "{three:?}");
    assert_eq!((last.pending, last.health), (three.pending, three.health), "the end state is the run's");
}

#[test]
fn a_drain_carries_every_pending_record_to_flash_and_counts_it() {
    let trace = updates(40);
    for kind in [crate::config::BufferKind::Ipl, crate::config::BufferKind::Dpram, crate::config::BufferKind::PcmLog] {
        let run = |drain| {
            let mut store = log_store(kind);
            let options = ReplayOptions { drain, passes: 2, ..ReplayOptions::default() };
            let report = replay(store.as_mut(), trace.iter().cloned().map(Ok::<_, String>), &options).unwrap();
            store.check_invariants().unwrap();
            assert_eq!(store.pending(), report.pending, "{kind:?}");
            report
        };
        let (kept, drained) = (run(false), run(true));
        assert!(kept.pending.log_records > 0 && kept.pending.log_pages > 0, "{kind:?}: {:?}", kept.pending);
        assert_eq!(drained.pending, Pending::default(), "{kind:?}");
        assert!(drained.drained && !kept.drained);
        let (k, d) = (&kept.stats, &drained.stats);
        assert!(d.merges > k.merges && d.flash_page_programs > k.flash_page_programs, "{kind:?}: {k:?} {d:?}");
        assert!(drained.energy_pj() > kept.energy_pj() && d.gc_time_ns > k.gc_time_ns, "{kind:?}");
        // The drain follows the last pass: its work is in the last pass's figures too.
        let (kl, dl) = (&kept.last_pass.as_ref().unwrap().stats, &drained.last_pass.as_ref().unwrap().stats);
        assert_eq!(dl.merges - kl.merges, d.merges - k.merges, "{kind:?}");
        assert_eq!(d.host_page_writes, k.host_page_writes, "{kind:?}: the drain writes no host page");
    }
}

#[test]
fn ageing_writes_every_page_twice_out_of_every_figure() {
    let trace = updates(40);
    for kind in [crate::config::BufferKind::None, crate::config::BufferKind::Ipl, crate::config::BufferKind::PcmLog] {
        let mut store = log_store(kind);
        let pages = store.logical_pages();
        let options = ReplayOptions { age: true, content: PageContent::Fingerprint, ..ReplayOptions::default() };
        let report = replay(store.as_mut(), trace.iter().cloned().map(Ok::<_, String>), &options).unwrap();
        assert_eq!(report.aged_pages, 2 * pages, "{kind:?}");
        assert_eq!(report.stats.host_page_writes, 80, "{kind:?}: the trace's writes alone");
        // On an aged device no trace write is a first write, and every page is mapped.
        assert_eq!(report.stats.direct_writes, 0, "{kind:?}");
        assert_eq!(report.health.mapped_pages, pages, "{kind:?}");
        store.check_invariants().unwrap();
    }
}

#[test]
fn wrapping_and_overlong_requests_are_errors_not_silent() {
    let mut store = small(PageContent::None);
    let request = |offset_bytes, len_bytes| {
        Ok::<_, String>(Request { time_ns: 0, op: Op::Read, offset_bytes, len_bytes, content: Content::Unknown })
    };
    let capacity = store.logical_pages() * 4096;
    for (offset, len, why) in [(u64::MAX - 10, 4096, "crosses 2^64"), (0, capacity + 1, "longer than the device")] {
        match replay(store.as_mut(), [request(offset, len)].into_iter(), &ReplayOptions::default()) {
            Err(ReplayError::Store { request: 0, error: FlashError::Request(message) }) => {
                assert!(message.contains(why), "{message}")
            }
            other => panic!("{offset}+{len}: {other:?}"),
        }
    }
    // A page just below 2^64 still runs, wrapped.
    let report =
        replay(store.as_mut(), [request(u64::MAX - 8191, 4096)].into_iter(), &ReplayOptions::default()).unwrap();
    assert_eq!((report.stats.host_page_reads, report.wrapped_pages), (1, 1));
}
