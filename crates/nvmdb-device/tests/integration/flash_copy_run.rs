//! `FlashArray::copy_pages`, a run of page copies in one call, against the copies it
//! stands for: for each source, `read_page_timing` with read suspend off, then
//! `program_page_copy` into the next page, issued at the same times. Random programs
//! (whole and partial, with spare bytes), erases and runs of copies (from one block or
//! several, within the destination block, from pages not programmed, into worn-out,
//! programmed or out-of-order pages, past the block's end) in every content mode, with
//! read suspend on, must leave the two arrays alike: every page's data, spare bytes and
//! sector mask, write pointers, erase counts, counters and plane times; a run the copies
//! would not complete is refused whole and changes nothing.

use nvmdb_device::flash::{SectorTag, SECTOR_BYTES};
use nvmdb_device::{DeviceError, FlashArray, FlashGeometry, FlashTiming, PageContent, PageData, Ppn};
use proptest::prelude::*;

const BLOCKS: u32 = 6;
const PAGE_BYTES: u32 = 1024;

fn geometry(pages_per_block: u32, planes: u32) -> FlashGeometry {
    FlashGeometry {
        packages: 1,
        planes_per_package: planes,
        blocks_per_plane: BLOCKS / planes,
        pages_per_block,
        page_bytes: PAGE_BYTES,
        spare_bytes: 64,
        endurance: 3,
        partial_programming: true,
    }
}

#[derive(Debug, Clone)]
enum Op {
    /// Program a block's next page whole (with `spare` spare bytes).
    Next {
        block: u32,
        fill: u8,
        spare: usize,
    },
    /// Program one sector of a page, tagged when `tagged`.
    Sector {
        ppn: u64,
        sector: u32,
        fill: u8,
        tagged: bool,
    },
    Erase {
        block: u32,
    },
    /// Copy `sources` into the pages from `to` on (`None`: the block's next page), issued
    /// `gap` ns after the previous copy's program end (the first at the operation's time),
    /// each program `delay` ns after its read's issue.
    Copy {
        sources: Vec<u64>,
        block: u32,
        to: Option<u32>,
        gap: u64,
        delay: u64,
    },
}

fn op(pages: u64) -> impl Strategy<Value = Op> {
    let ppn = 0..pages + 2;
    prop_oneof![
        3 => (0..BLOCKS, any::<u8>(), 0..17usize).prop_map(|(block, fill, spare)| Op::Next { block, fill, spare }),
        1 => (ppn.clone(), 0..PAGE_BYTES / SECTOR_BYTES, any::<u8>(), any::<bool>())
            .prop_map(|(ppn, sector, fill, tagged)| Op::Sector { ppn, sector, fill, tagged }),
        1 => (0..BLOCKS).prop_map(|block| Op::Erase { block }),
        4 => (
            prop_oneof![
                // Pages of one block of 4, in order or not (of two blocks of 3).
                (0..BLOCKS, prop::collection::vec(0..4u64, 0..5)).prop_map(move |(b, pages)| pages
                    .into_iter()
                    .map(|p| u64::from(b) * 4 + p)
                    .collect::<Vec<_>>()),
                prop::collection::vec(ppn, 0..5),
            ],
            0..BLOCKS,
            prop::option::weighted(0.2, 0..5u32),
            0..300_000u64,
            0..50_000u64,
        )
            .prop_map(|(sources, block, to, gap, delay)| Op::Copy { sources, block, to, gap, delay }),
    ]
}

/// Everything the two arrays could hold differently.
fn state(flash: &FlashArray) -> impl PartialEq + std::fmt::Debug {
    let g = *flash.geometry();
    let mut reader = flash.clone();
    let pages: Vec<_> = (0..g.pages())
        .map(|ppn| {
            let data = reader.read_page(ppn, 0).expect("in range").0;
            let tags: Vec<Option<SectorTag>> =
                (0..g.sectors_per_page()).map(|s| flash.sector_tag(ppn, s).copied()).collect();
            (data, flash.spare(ppn).map(<[u8]>::to_vec), flash.sector_mask(ppn), tags)
        })
        .collect();
    let blocks: Vec<_> = (0..g.blocks()).map(|b| (flash.write_pointer(b), flash.erase_count(b))).collect();
    let planes: Vec<_> = (0..g.planes()).map(|p| flash.plane_busy_until_ns(p)).collect();
    (pages, blocks, planes, *flash.stats())
}

fn page_data(content: PageContent, fill: u8, len: usize) -> PageData {
    match content {
        PageContent::Bytes => PageData::Bytes((0..len).map(|i| fill.wrapping_mul(3).wrapping_add(i as u8)).collect()),
        PageContent::Fingerprint => PageData::Fingerprint(u64::from(fill) * 0x0101),
        PageContent::None => PageData::Empty,
    }
}

/// The copies one by one, as `copy_pages` describes them; stops at the first failure.
fn copy_one_by_one(
    flash: &mut FlashArray,
    sources: &[Ppn],
    to: Ppn,
    mut schedule: impl FnMut(Option<u64>) -> (u64, u64),
) -> Result<Option<u64>, DeviceError> {
    let mut end = None;
    for (k, &from) in sources.iter().enumerate() {
        let (read_at, program_at) = schedule(end);
        let suspend = flash.read_suspend_ns();
        flash.set_read_suspend(None);
        let read = flash.read_page_timing(from, read_at);
        flash.set_read_suspend(suspend);
        read?;
        end = Some(flash.program_page_copy(to + k as u64, from, program_at)?.end_ns);
    }
    Ok(end)
}

fn run(content: PageContent, pages_per_block: u32, planes: u32, ops: &[Op]) {
    let g = geometry(pages_per_block, planes);
    let mut fast = FlashArray::new(g, FlashTiming::THESIS_TABLE_5_1, content).unwrap();
    fast.set_read_suspend(Some(5_000));
    let mut slow = fast.clone();
    for (i, op) in ops.iter().enumerate() {
        let now = i as u64 * 70_000;
        match op {
            Op::Next { block, fill, spare } => {
                let ppn =
                    u64::from(block * pages_per_block + fast.write_pointer(u64::from(*block)).min(pages_per_block - 1));
                let data = page_data(content, *fill, PAGE_BYTES as usize);
                let spare: Vec<u8> = (0..*spare).map(|b| fill ^ b as u8).collect();
                let a = fast.program_page_with_spare(ppn, &data, &spare, now);
                assert_eq!(a, slow.program_page_with_spare(ppn, &data, &spare, now));
            }
            Op::Sector { ppn, sector, fill, tagged } => {
                let data = page_data(content, *fill, SECTOR_BYTES as usize);
                let a = if *tagged {
                    let tag = [SectorTag { fingerprint: u64::from(*fill), spare: [*fill; 16] }];
                    (
                        fast.program_sectors_tagged(*ppn, *sector, &data, &tag, &[], now),
                        slow.program_sectors_tagged(*ppn, *sector, &data, &tag, &[], now),
                    )
                } else {
                    (
                        fast.program_sectors(*ppn, *sector, &data, 1, now),
                        slow.program_sectors(*ppn, *sector, &data, 1, now),
                    )
                };
                assert_eq!(a.0, a.1);
            }
            Op::Erase { block } => {
                assert_eq!(fast.erase_block(u64::from(*block), now), slow.erase_block(u64::from(*block), now));
            }
            Op::Copy { sources, block, to, gap, delay } => {
                let page = to.unwrap_or_else(|| fast.write_pointer(u64::from(*block)));
                let to = u64::from(block * pages_per_block + page);
                let schedule = |end: Option<u64>| {
                    let issue = end.map_or(now, |e| e + gap);
                    (issue, issue + delay)
                };
                let before = state(&fast);
                let got = fast.copy_pages(sources, to, schedule);
                let mut trial = slow.clone();
                let want = copy_one_by_one(&mut trial, sources, to, schedule);
                let fits = u64::from(page) + sources.len() as u64 <= u64::from(pages_per_block);
                match (&got, &want) {
                    (Ok(_), _) => {
                        assert_eq!(got, want, "operation {i}: {op:?}");
                        slow = trial;
                    }
                    (Err(_), Err(_)) if fits => {
                        assert_eq!(got, want, "operation {i}: {op:?}");
                        assert_eq!(state(&fast), before, "a refused run changes nothing: {op:?}");
                    }
                    (Err(_), _) => {
                        assert!(!fits, "only a run past its block's end is refused when the copies would complete");
                        assert_eq!(state(&fast), before, "a refused run changes nothing: {op:?}");
                    }
                }
            }
        }
        assert_eq!(state(&fast), state(&slow), "after operation {i}: {op:?}");
    }
}

/// Copies of runs of consecutive pages (a block's pages in order, as a clean lists its
/// victim's live pages, each third page left out at random), with the other operations,
/// on blocks of 12 pages: the array copies consecutive sources together, at most 2 KiB
/// of page bytes (two of these pages) in one slice.
fn long_run_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => op(72),
        3 => (0..BLOCKS, prop::collection::vec(any::<bool>(), 12), 0..BLOCKS, 0..300_000u64, 0..50_000u64)
            .prop_map(|(b, live, block, gap, delay)| Op::Copy {
                sources: (0..12u64).filter(|&p| live[p as usize] || p % 3 != 0).map(|p| u64::from(b) * 12 + p).collect(),
                block,
                to: None,
                gap,
                delay,
            }),
        3 => (0..BLOCKS, any::<u8>()).prop_map(|(block, fill)| Op::Next { block, fill, spare: 16 }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn runs_of_consecutive_sources_are_their_copies_one_by_one(ops in prop::collection::vec(long_run_op(), 1..80)) {
        for content in [PageContent::Bytes, PageContent::Fingerprint, PageContent::None] {
            run(content, 12, 1, &ops);
            run(content, 12, 3, &ops);
        }
    }

    #[test]
    fn a_run_of_copies_is_its_copies_one_by_one(ops in prop::collection::vec(op(24), 1..60)) {
        for content in [PageContent::Bytes, PageContent::Fingerprint, PageContent::None] {
            run(content, 4, 2, &ops);
            run(content, 3, 3, &ops);
        }
    }
}
