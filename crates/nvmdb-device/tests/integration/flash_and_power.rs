//! Flash rules, timing, erase counts, and power loss across every device.

use nvmdb_device::flash::OpTiming;
use nvmdb_device::{
    DeviceError, FlashArray, FlashGeometry, FlashTiming, PageContent, PageData, Pcm, PcmConfig, PowerLoss, Volatile,
    VolatileKind, VolatileParams,
};

fn geometry() -> FlashGeometry {
    FlashGeometry {
        packages: 1,
        planes_per_package: 2,
        blocks_per_plane: 4,
        pages_per_block: 4,
        page_bytes: 2048,
        spare_bytes: 64,
        endurance: 3,
        partial_programming: true,
    }
}

fn array(content: PageContent) -> FlashArray {
    FlashArray::new(geometry(), FlashTiming::THESIS_TABLE_5_1, content).unwrap()
}

fn bytes(b: u8) -> PageData {
    PageData::Bytes(vec![b; 2048])
}

#[test]
fn program_before_erase_is_rejected() {
    let mut f = array(PageContent::Bytes);
    f.program_page(0, &bytes(1), 0).unwrap();
    assert_eq!(f.program_page(0, &bytes(2), 0), Err(DeviceError::ProgramNotErased { ppn: 0 }));
    assert_eq!(f.read_page(0, 0).unwrap().0, bytes(1), "the first program's data is intact");
    f.erase_block(0, 0).unwrap();
    f.program_page(0, &bytes(2), 0).unwrap();
    assert_eq!(f.read_page(0, 0).unwrap().0, bytes(2));
}

#[test]
fn out_of_order_program_is_rejected() {
    let mut f = array(PageContent::None);
    assert_eq!(
        f.program_page(2, &PageData::Empty, 0),
        Err(DeviceError::ProgramOutOfOrder { ppn: 2, block: 0, expected: 0 })
    );
}

#[test]
fn erase_counts_are_exact() {
    let mut f = array(PageContent::None);
    for _ in 0..2 {
        f.erase_block(5, 0).unwrap();
    }
    f.erase_block(1, 0).unwrap();
    let counts: Vec<u64> = f.erase_counts().collect();
    assert_eq!(counts, vec![0, 1, 0, 0, 0, 2, 0, 0]);
    assert_eq!(f.stats().block_erases, 3);
}

#[test]
fn planes_overlap_and_one_plane_serialises() {
    let mut f = array(PageContent::None);
    let t = FlashTiming::THESIS_TABLE_5_1.program_ns;
    // Blocks 0 and 1 sit on planes 0 and 1; block 2 on plane 0 again.
    let a = f.program_page(0, &PageData::Empty, 1000).unwrap();
    let b = f.program_page(4, &PageData::Empty, 1000).unwrap();
    let c = f.program_page(8, &PageData::Empty, 1000).unwrap();
    assert_eq!(a, OpTiming { start_ns: 1000, end_ns: 1000 + t });
    assert_eq!(b, OpTiming { start_ns: 1000, end_ns: 1000 + t }, "different planes overlap");
    assert_eq!(c, OpTiming { start_ns: 1000 + t, end_ns: 1000 + 2 * t }, "same plane queues");
}

#[test]
fn a_read_queues_behind_an_erase_unless_suspend_is_on() {
    let timing = FlashTiming::THESIS_TABLE_5_1;
    let (r, e) = (timing.read_ns, timing.erase_ns);
    // Off (the default): the read on the erasing plane waits for the erase.
    let mut f = array(PageContent::None);
    assert_eq!(f.read_suspend_ns(), None);
    let erase = f.erase_block(0, 1000).unwrap();
    assert_eq!(erase, OpTiming { start_ns: 1000, end_ns: 1000 + e });
    let (_, read) = f.read_page(0, 2000).unwrap();
    assert_eq!(read, OpTiming { start_ns: 1000 + e, end_ns: 1000 + e + r }, "queued behind the erase");
    assert_eq!(f.plane_busy_until_ns(0), 1000 + e + r);
    // On: the read starts after the suspend, and the erase ends later by suspend + read.
    let mut f = array(PageContent::None);
    f.set_read_suspend(Some(700));
    f.erase_block(0, 1000).unwrap();
    let (_, read) = f.read_page(0, 2000).unwrap();
    assert_eq!(read, OpTiming { start_ns: 2700, end_ns: 2700 + r }, "served during the erase");
    assert_eq!(f.plane_busy_until_ns(0), 1000 + e + 700 + r, "the erase resumes after the read");
    // A second read during the erase suspends it again.
    let (_, again) = f.read_page(1, 5000).unwrap();
    assert_eq!(again, OpTiming { start_ns: 5700, end_ns: 5700 + r });
    assert_eq!(f.plane_busy_until_ns(0), 1000 + e + 2 * (700 + r));
    // The other plane is idle: its read neither waits nor pays the suspend.
    let (_, idle) = f.read_page(4, 2000).unwrap();
    assert_eq!(idle, OpTiming { start_ns: 2000, end_ns: 2000 + r });
    // After the erase, reads do not suspend anything.
    let after = 1000 + e + 2 * (700 + r);
    let (_, late) = f.read_page(0, after).unwrap();
    assert_eq!(late, OpTiming { start_ns: after, end_ns: after + r });
    assert_eq!(f.stats().page_reads, 4);
    assert_eq!(f.stats().busy_ns, e + 4 * r, "a suspend is not busy time of the plane's work");
}

#[test]
fn worn_out_block_errors() {
    let mut f = array(PageContent::None);
    for _ in 0..3 {
        f.erase_block(2, 0).unwrap();
    }
    assert_eq!(f.erase_block(2, 0), Err(DeviceError::WornOut { block: 2, erases: 3, endurance: 3 }));
    assert!(matches!(f.program_page(8, &PageData::Empty, 0), Err(DeviceError::WornOut { .. })));
}

#[test]
fn geometry_beyond_u64_is_a_config_error() {
    let huge = FlashGeometry { packages: u32::MAX, planes_per_package: u32::MAX, blocks_per_plane: 2, ..geometry() };
    let err = FlashArray::new(huge, FlashTiming::THESIS_TABLE_5_1, PageContent::None).unwrap_err();
    assert!(matches!(err, DeviceError::Config(ref m) if m.contains("2^64")), "{err}");
}

#[test]
fn partial_programming_appends_sectors() {
    let mut f = array(PageContent::Bytes);
    f.program_sectors(0, 0, &PageData::Bytes(vec![7; 512]), 1, 0).unwrap();
    f.program_sectors(0, 1, &PageData::Bytes(vec![8; 1024]), 2, 0).unwrap();
    assert_eq!(
        f.program_sectors(0, 2, &PageData::Bytes(vec![9; 512]), 1, 0),
        Err(DeviceError::ProgramNotErased { ppn: 0 })
    );
    let (data, _) = f.read_page(0, 0).unwrap();
    let PageData::Bytes(page) = data else { panic!("bytes mode returns bytes") };
    assert_eq!(&page[..512], &[7; 512][..]);
    assert_eq!(&page[512..1536], &[8; 1024][..]);
    assert_eq!(&page[1536..], &[0xFF; 512][..], "unprogrammed sector reads erased");
    assert_eq!(f.stats().sectors_programmed, 3);
}

#[test]
fn a_partial_program_takes_a_page_programs_time_and_its_sectors_share_of_energy() {
    let t = FlashTiming::THESIS_TABLE_5_1;
    let mut f = array(PageContent::Bytes);
    // One sector of four on a plane that is idle at 0: the whole program time.
    let one = f.program_sectors(0, 0, &PageData::Bytes(vec![7; 512]), 1, 0).unwrap();
    assert_eq!(one.end_ns - one.start_ns, t.program_ns);
    assert_eq!(f.stats().energy_pj, t.program_pj / 4);
    // Two more sectors of the same page, issued when the plane is free again.
    let two = f.program_sectors(0, 1, &PageData::Bytes(vec![8; 1024]), 2, one.end_ns).unwrap();
    assert_eq!(two.end_ns - two.start_ns, t.program_ns);
    assert_eq!(f.stats().energy_pj, t.program_pj / 4 + t.program_pj * 2 / 4);
}

#[test]
fn fingerprint_mode_keeps_identities() {
    let mut f = array(PageContent::Fingerprint);
    f.program_page(0, &PageData::Fingerprint(42), 0).unwrap();
    assert_eq!(f.read_page(0, 0).unwrap().0, PageData::Fingerprint(42));
    assert_eq!(f.read_page(1, 0).unwrap().0, PageData::Empty);
}

#[test]
fn power_loss_drops_volatile_and_keeps_nonvolatile() {
    let mut dram = Volatile::dram(64);
    let mut sram = Volatile::new(VolatileKind::Sram, VolatileParams::SRAM, 64);
    let mut bsram = Volatile::battery_sram(64);
    let mut pcm = Pcm::new(PcmConfig::new(4096)).unwrap();
    let mut flash = array(PageContent::Bytes);
    for v in [&mut dram, &mut sram, &mut bsram] {
        v.write(8, &[1, 2, 3]).unwrap();
    }
    pcm.write_bytes(8, &[1, 2, 3]).unwrap();
    flash.program_page(0, &bytes(5), 0).unwrap();

    dram.power_loss();
    sram.power_loss();
    bsram.power_loss();
    pcm.power_loss();
    flash.power_loss();

    let mut buf = [0u8; 3];
    dram.read(8, &mut buf).unwrap();
    assert_eq!(buf, [0, 0, 0], "DRAM loses its contents");
    sram.read(8, &mut buf).unwrap();
    assert_eq!(buf, [0, 0, 0], "SRAM without battery loses its contents");
    bsram.read(8, &mut buf).unwrap();
    assert_eq!(buf, [1, 2, 3], "battery-backed SRAM keeps its contents");
    pcm.read_bytes(8, &mut buf).unwrap();
    assert_eq!(buf, [1, 2, 3], "PCM keeps its contents");
    assert_eq!(flash.read_page(0, 0).unwrap().0, bytes(5), "flash keeps its contents");
}

#[test]
fn a_partially_programmed_page_takes_more_sectors_after_later_pages() {
    let mut f = array(PageContent::Bytes);
    f.program_sectors(0, 0, &PageData::Bytes(vec![1; 512]), 1, 0).unwrap();
    f.program_page(1, &bytes(2), 0).unwrap();
    assert_eq!(f.sector_mask(0), Some(1));
    f.program_sectors(0, 1, &PageData::Bytes(vec![3; 512]), 1, 0).unwrap();
    assert_eq!(f.sector_mask(0), Some(0b11));
    assert_eq!(f.write_pointer(0), 2, "a later partial program does not move the write pointer back");
    // A page programmed whole takes no partial program, nor does a programmed sector.
    assert_eq!(
        f.program_sectors(1, 3, &PageData::Bytes(vec![4; 512]), 1, 0),
        Err(DeviceError::ProgramNotErased { ppn: 1 })
    );
    assert_eq!(
        f.program_sectors(0, 1, &PageData::Bytes(vec![4; 512]), 1, 0),
        Err(DeviceError::ProgramNotErased { ppn: 0 })
    );
    let PageData::Bytes(page) = f.read_page(0, 0).unwrap().0 else { panic!("bytes mode returns bytes") };
    assert_eq!((&page[..512], &page[512..1024], page[1024]), (&[1u8; 512][..], &[3u8; 512][..], 0xFF));
}

#[test]
fn sector_tags_are_kept_per_sector_until_the_erase() {
    use nvmdb_device::flash::{SectorTag, SECTOR_SPARE_BYTES};
    let mut f = array(PageContent::Fingerprint);
    let tag = |n: u8| SectorTag { fingerprint: u64::from(n) * 1000, spare: [n; SECTOR_SPARE_BYTES] };
    f.program_sectors_tagged(0, 0, &PageData::Fingerprint(7), &[tag(1)], &[9; 4], 0).unwrap();
    f.program_sectors_tagged(0, 2, &PageData::Fingerprint(8), &[tag(2), tag(3)], &[], 0).unwrap();
    assert_eq!(f.sector_tag(0, 0), Some(&tag(1)));
    assert_eq!(f.sector_tag(0, 1), None, "an erased sector has no tag");
    assert_eq!((f.sector_tag(0, 2), f.sector_tag(0, 3)), (Some(&tag(2)), Some(&tag(3))));
    assert_eq!(f.sector_mask(0), Some(0b1101));
    assert_eq!(&f.spare(0).unwrap()[..4], &[9; 4]);
    // A tagged sector is programmed like any other: it must be erased.
    assert_eq!(
        f.program_sectors_tagged(0, 3, &PageData::Fingerprint(9), &[tag(4)], &[], 0),
        Err(DeviceError::ProgramNotErased { ppn: 0 })
    );
    assert_eq!(f.sector_tag(0, 3), Some(&tag(3)), "a refused program leaves the tag");
    f.erase_block(0, 0).unwrap();
    assert_eq!(f.sector_tag(0, 0), None);
    // A geometry whose spare area has no room for a tag per sector refuses tags.
    let small = FlashGeometry { spare_bytes: 32, ..geometry() };
    let mut f = FlashArray::new(small, FlashTiming::THESIS_TABLE_5_1, PageContent::Fingerprint).unwrap();
    assert!(matches!(
        f.program_sectors_tagged(0, 0, &PageData::Fingerprint(1), &[tag(1)], &[], 0),
        Err(DeviceError::BadPageSize { .. })
    ));
    assert_eq!(f.sector_mask(0), None, "nothing was programmed");
}

#[test]
fn a_read_into_a_buffer_is_read_page_without_the_allocation() {
    // Two arrays driven alike, one read with `read_page`, the other with `read_page_into`:
    // the same bytes, timings, counters and plane times, erased pages and suspends included.
    let mut by_value = array(PageContent::Bytes);
    let mut into = array(PageContent::Bytes);
    for f in [&mut by_value, &mut into] {
        f.program_page(0, &bytes(7), 0).unwrap();
        f.program_sectors(1, 1, &PageData::Bytes(vec![3; 512]), 1, 0).unwrap();
        f.erase_block(4, 100).unwrap();
        f.set_read_suspend(Some(700));
    }
    let mut buffer = vec![1u8; 10];
    for (ppn, now) in [(0, 50), (1, 200), (2, 300), (16, 400), (17, 1_000_000_000), (0, 2_000_000_000)] {
        let (data, timing) = by_value.read_page(ppn, now).unwrap();
        assert_eq!(into.read_page_into(ppn, now, &mut buffer).unwrap(), timing, "page {ppn}");
        assert_eq!(data, PageData::Bytes(buffer.clone()), "page {ppn}");
        assert_eq!(into.stats(), by_value.stats());
        assert_eq!(into.plane_busy_until_ns(0), by_value.plane_busy_until_ns(0));
        assert_eq!(into.plane_busy_until_ns(1), by_value.plane_busy_until_ns(1));
    }
    assert!(matches!(into.read_page_into(64, 0, &mut buffer), Err(DeviceError::OutOfRange { .. })));
    let mut metadata = array(PageContent::None);
    assert!(matches!(metadata.read_page_into(0, 0, &mut buffer), Err(DeviceError::Config(_))));
    assert_eq!(metadata.stats().page_reads, 0, "a refused read counts nothing");
}

#[test]
fn a_retimed_array_runs_as_one_built_with_its_timing_and_planes() {
    let slow = FlashTiming { erase_ns: 50_000_000, ..FlashTiming::THESIS_TABLE_5_1 };
    let fast = FlashTiming { program_ns: 100_000, erase_ns: 1_000_000, ..FlashTiming::THESIS_TABLE_5_1 };
    let four_planes = FlashGeometry { packages: 2, blocks_per_plane: 2, ..geometry() };
    let mut retimed = array(PageContent::Bytes);
    let mut built = FlashArray::new(four_planes, fast, PageContent::Bytes).unwrap();
    // The same operations on both; their times differ.
    let history = |f: &mut FlashArray| {
        f.program_page(0, &bytes(1), 0).unwrap();
        f.program_page(4, &bytes(2), 0).unwrap();
        f.erase_block(3, 0).unwrap();
    };
    history(&mut retimed);
    history(&mut built);
    assert_eq!(retimed.timing(), &FlashTiming::THESIS_TABLE_5_1);
    let idle = retimed.all_idle_at_ns();
    assert!(idle > built.all_idle_at_ns(), "the slow erase is still running in the built array's time");
    retimed.retime(fast, 2, 2).unwrap();
    assert_eq!(retimed.geometry(), &four_planes);
    assert_eq!(retimed.timing(), &fast);
    assert!((0..4).all(|plane| retimed.plane_busy_until_ns(plane) == idle), "every plane free from the busiest");
    assert_eq!(retimed.erase_count(3), 1);
    assert_eq!(retimed.read_page(0, idle).unwrap().0, bytes(1), "the pages stay");
    // From a common start, each operation takes the built array's time on the built array's plane.
    let start = idle;
    for (block, page) in [(2u64, 0u64), (5, 0), (2, 1), (7, 0)] {
        let ppn = block * 4 + page;
        let a = retimed.program_page(ppn, &bytes(7), start).unwrap();
        let b = built.program_page(ppn, &bytes(7), start).unwrap();
        assert_eq!(a, b, "block {block}");
        assert_eq!(retimed.geometry().plane_of_block(block), block % 4);
    }
    assert_eq!(retimed.erase_block(6, start).unwrap(), built.erase_block(6, start).unwrap());
    // Blocks that do not divide into the planes are refused, and nothing changes.
    assert!(matches!(retimed.retime(slow, 3, 1), Err(DeviceError::Config(_))));
    assert_eq!(retimed.geometry(), &four_planes);
    assert_eq!(retimed.timing(), &fast);
}
