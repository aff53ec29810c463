//! `FlashArray::program_page_bytes` (a whole page programmed from a byte slice) against
//! `program_page` of the same bytes as `PageData::Bytes`, and `read_page_timing` followed
//! by `stored_page_bytes` against `read_page_into`: random whole and partial programs
//! (in order and not, of the page's size and not), erases past the endurance and reads
//! with read suspend on, in every content mode, must give the same results and errors and
//! leave the arrays alike (every page's data, spare bytes and sector mask, write pointers,
//! erase counts, counters and plane times).

use nvmdb_device::{FlashArray, FlashGeometry, FlashTiming, PageContent, PageData, Ppn};
use proptest::prelude::*;

const BLOCKS: u32 = 4;
const PAGES_PER_BLOCK: u32 = 4;
const PAGE_BYTES: u32 = 1024;

fn geometry(partial: bool) -> FlashGeometry {
    FlashGeometry {
        packages: 1,
        planes_per_package: 2,
        blocks_per_plane: BLOCKS / 2,
        pages_per_block: PAGES_PER_BLOCK,
        page_bytes: PAGE_BYTES,
        spare_bytes: 16,
        endurance: 3,
        partial_programming: partial,
    }
}

#[derive(Debug, Clone)]
enum Op {
    /// Program page `ppn` whole (`None`: its block's next page) with `len` bytes of `fill`.
    Whole {
        block: u32,
        ppn: Option<u64>,
        len: usize,
        fill: u8,
        at: u64,
    },
    /// Program the first sector of a block's next page (both arrays alike).
    Sector {
        block: u32,
        fill: u8,
    },
    Erase {
        block: u32,
    },
    /// Read page `ppn` at `at`.
    Read {
        ppn: u64,
        at: u64,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let pages = u64::from(BLOCKS * PAGES_PER_BLOCK);
    prop_oneof![
        6 => (0..BLOCKS, prop::option::weighted(0.2, 0..pages + 2), prop::sample::select(vec![1024usize, 1024, 1024, 512, 0, 2048]), any::<u8>(), 0..200_000u64)
            .prop_map(|(block, ppn, len, fill, at)| Op::Whole { block, ppn, len, fill, at }),
        1 => (0..BLOCKS, any::<u8>()).prop_map(|(block, fill)| Op::Sector { block, fill }),
        2 => (0..BLOCKS).prop_map(|block| Op::Erase { block }),
        4 => (0..pages + 2, 0..200_000u64).prop_map(|(ppn, at)| Op::Read { ppn, at }),
    ]
}

/// Everything an array could hold differently.
fn state(flash: &FlashArray) -> impl PartialEq + std::fmt::Debug {
    let g = *flash.geometry();
    let mut copy = flash.clone();
    let pages: Vec<_> = (0..g.pages())
        .map(|ppn: Ppn| {
            (copy.read_page(ppn, 0).map(|(d, _)| d).ok(), flash.spare(ppn).map(<[u8]>::to_vec), flash.sector_mask(ppn))
        })
        .collect();
    let pointers: Vec<u32> = (0..g.blocks()).map(|b| flash.write_pointer(b)).collect();
    let busy: Vec<u64> = (0..g.planes()).map(|p| flash.plane_busy_until_ns(p)).collect();
    let erases: Vec<u64> = flash.erase_counts().collect();
    (pages, pointers, busy, erases, *flash.stats())
}

fn run(content: PageContent, partial: bool, ops: &[Op]) {
    let mut fast = FlashArray::new(geometry(partial), FlashTiming::THESIS_TABLE_5_1, content).unwrap();
    fast.set_read_suspend(Some(3_000));
    let mut simple = fast.clone();
    let ppb = u64::from(PAGES_PER_BLOCK);
    for (step, op) in ops.iter().enumerate() {
        match *op {
            Op::Whole { block, ppn, len, fill, at } => {
                let ppn = ppn.unwrap_or(u64::from(block) * ppb + u64::from(fast.write_pointer(u64::from(block))));
                let bytes = vec![fill; len];
                let a = fast.program_page_bytes(ppn, &bytes, at);
                let b = simple.program_page(ppn, &PageData::Bytes(bytes), at);
                assert_eq!(a.map_err(|e| e.to_string()), b.map_err(|e| e.to_string()), "step {step}: {op:?}");
            }
            Op::Sector { block, fill } => {
                let ppn = u64::from(block) * ppb + u64::from(fast.write_pointer(u64::from(block)));
                let data = PageData::Bytes(vec![fill; 512]);
                for flash in [&mut fast, &mut simple] {
                    let _ = flash.program_sectors(ppn, 0, &data, 1, 0);
                }
            }
            Op::Erase { block } => {
                for flash in [&mut fast, &mut simple] {
                    let _ = flash.erase_block(u64::from(block), 0);
                }
            }
            Op::Read { ppn, at } => {
                if content != PageContent::Bytes {
                    continue;
                }
                let mut buffer = Vec::new();
                let a = fast.read_page_timing(ppn, at).map(|t| {
                    let bytes =
                        fast.stored_page_bytes(ppn).map_or_else(|| vec![0xFF; PAGE_BYTES as usize], <[u8]>::to_vec);
                    (t, bytes)
                });
                let b = simple.read_page_into(ppn, at, &mut buffer).map(|t| (t, buffer));
                assert_eq!(a.map_err(|e| e.to_string()), b.map_err(|e| e.to_string()), "step {step}: {op:?}");
            }
        }
        assert_eq!(state(&fast), state(&simple), "step {step}: {op:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn a_program_from_a_slice_and_a_read_of_the_stored_bytes_are_their_references(
        ops in prop::collection::vec(op(), 1..60),
        partial in any::<bool>(),
    ) {
        for content in [PageContent::Bytes, PageContent::Fingerprint, PageContent::None] {
            run(content, partial, &ops);
        }
    }
}
