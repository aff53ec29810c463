//! The flash array's per-block page arenas against a reference kept deliberately simple:
//! one map entry per programmed page (bytes, content identity, spare bytes, sector mask),
//! dropped at erase. Random programs (whole and partial, with and without spare bytes,
//! legal and not), erases and reads in every content mode must give the same results,
//! errors, data, spare bytes, sector masks, write pointers, erase counts and counters, and
//! each operation's start and end on its plane (a block's plane is the block number modulo
//! the planes; operations overlap in time), in a geometry whose pages per block and planes
//! are powers of two and in one whose are not, and without partial programming (where
//! the array keeps no sector masks). A copy inside the array
//! (`read_page_timing`, then `program_page_copy`) must do what reading the page and
//! programming its data and spare bytes whole would.

use std::collections::HashMap;

use nvmdb_device::flash::OpTiming;
use nvmdb_device::flash::{fingerprint64, SECTOR_BYTES, SPARE_STORED_BYTES};
use nvmdb_device::{DeviceError, FlashArray, FlashGeometry, FlashTiming, PageContent, PageData, Ppn};
use proptest::prelude::*;

/// Pages per block at most (the geometries have 3 or 4: a power of two and not).
const MAX_PAGES_PER_BLOCK: u32 = 4;
const BLOCKS: u32 = 6;
const PAGE_BYTES: u32 = 2048;
const SECTORS: u32 = PAGE_BYTES / SECTOR_BYTES;

/// `BLOCKS` blocks of `pages_per_block` pages over `planes` planes, with or without
/// partial programming.
fn geometry(pages_per_block: u32, planes: u32, partial: bool) -> FlashGeometry {
    FlashGeometry {
        packages: 1,
        planes_per_package: planes,
        blocks_per_plane: BLOCKS / planes,
        pages_per_block,
        page_bytes: PAGE_BYTES,
        spare_bytes: 64,
        endurance: 6,
        partial_programming: partial,
    }
}

/// The reference: the rules and stored state, one map entry per programmed page.
#[derive(Default)]
struct RefFlash {
    pages_per_block: u32,
    /// Whether sectors may be programmed separately.
    partial: bool,
    /// When each plane is next free, ns.
    busy_until_ns: Vec<u64>,
    next_page: [u32; BLOCKS as usize],
    erases: [u64; BLOCKS as usize],
    bytes: HashMap<Ppn, Vec<u8>>,
    fingerprints: HashMap<Ppn, u64>,
    spare: HashMap<Ppn, [u8; SPARE_STORED_BYTES]>,
    masks: HashMap<Ppn, u64>,
}

impl RefFlash {
    /// An operation of `service_ns` on `block`'s plane issued at `now_ns`: its start and end.
    fn occupy(&mut self, block: u64, now_ns: u64, service_ns: u64) -> (u64, u64) {
        let plane = (block % self.busy_until_ns.len() as u64) as usize;
        let start = now_ns.max(self.busy_until_ns[plane]);
        self.busy_until_ns[plane] = start + service_ns;
        (start, start + service_ns)
    }

    fn block_page(&self, ppn: Ppn) -> (usize, u32) {
        let per_block = u64::from(self.pages_per_block);
        ((ppn / per_block) as usize, (ppn % per_block) as u32)
    }

    fn check_block(&self, block: usize) -> Result<(), DeviceError> {
        if block >= BLOCKS as usize {
            return Err(DeviceError::OutOfRange { addr: block as u64, len: 1, capacity: u64::from(BLOCKS) });
        }
        if self.erases[block] >= 6 {
            return Err(DeviceError::WornOut { block: block as u64, erases: self.erases[block], endurance: 6 });
        }
        Ok(())
    }

    fn check_ppn(&self, ppn: Ppn) -> Result<(), DeviceError> {
        let pages = u64::from(BLOCKS * self.pages_per_block);
        if ppn >= pages {
            return Err(DeviceError::OutOfRange { addr: ppn, len: 1, capacity: pages });
        }
        Ok(())
    }

    fn check_spare(ppn: Ppn, spare: &[u8]) -> Result<(), DeviceError> {
        if spare.len() > SPARE_STORED_BYTES {
            return Err(DeviceError::BadPageSize { ppn, got: spare.len(), expected: SPARE_STORED_BYTES });
        }
        Ok(())
    }

    fn check_data(content: PageContent, ppn: Ppn, first: u32, data: &PageData) -> Result<(), DeviceError> {
        match (content, data) {
            (PageContent::Bytes, PageData::Bytes(b)) => {
                let offset = (first * SECTOR_BYTES) as usize;
                let whole = first == 0 && b.len() == PAGE_BYTES as usize;
                if !whole && (offset + b.len() > PAGE_BYTES as usize || b.len() % SECTOR_BYTES as usize != 0) {
                    return Err(DeviceError::BadPageSize { ppn, got: b.len(), expected: PAGE_BYTES as usize });
                }
                Ok(())
            }
            (PageContent::Bytes, _) => {
                Err(DeviceError::Config("this flash array stores bytes; program it with PageData::Bytes".into()))
            }
            _ => Ok(()),
        }
    }

    fn store(&mut self, content: PageContent, ppn: Ppn, first: u32, data: &PageData, spare: &[u8]) {
        match (content, data) {
            (PageContent::Bytes, PageData::Bytes(b)) => {
                let page = self.bytes.entry(ppn).or_insert_with(|| vec![0xFF; PAGE_BYTES as usize]);
                let offset = (first * SECTOR_BYTES) as usize;
                page[offset..offset + b.len()].copy_from_slice(b);
            }
            (PageContent::Fingerprint, PageData::Fingerprint(f)) => {
                self.fingerprints.insert(ppn, *f);
            }
            (PageContent::Fingerprint, PageData::Bytes(b)) => {
                self.fingerprints.insert(ppn, fingerprint64(b));
            }
            _ => {}
        }
        if !spare.is_empty() {
            let mut stored = [0xFF; SPARE_STORED_BYTES];
            stored[..spare.len()].copy_from_slice(spare);
            self.spare.insert(ppn, stored);
        }
    }

    fn program_page(
        &mut self,
        content: PageContent,
        ppn: Ppn,
        data: &PageData,
        spare: &[u8],
    ) -> Result<(), DeviceError> {
        Self::check_spare(ppn, spare)?;
        self.check_ppn(ppn)?;
        let (block, page) = self.block_page(ppn);
        self.check_block(block)?;
        let expected = self.next_page[block];
        if page < expected {
            return Err(DeviceError::ProgramNotErased { ppn });
        }
        if page > expected {
            return Err(DeviceError::ProgramOutOfOrder { ppn, block: block as u64, expected });
        }
        Self::check_data(content, ppn, 0, data)?;
        self.store(content, ppn, 0, data, spare);
        self.next_page[block] = page + 1;
        Ok(())
    }

    fn program_sectors(
        &mut self,
        content: PageContent,
        ppn: Ppn,
        first: u32,
        sectors: u32,
        data: &PageData,
        spare: &[u8],
    ) -> Result<(), DeviceError> {
        Self::check_spare(ppn, spare)?;
        if !spare.is_empty() && self.spare.contains_key(&ppn) {
            return Err(DeviceError::ProgramNotErased { ppn });
        }
        if !self.partial {
            return Err(DeviceError::PartialProgramDisabled);
        }
        self.check_ppn(ppn)?;
        if sectors == 0 || first + sectors > SECTORS {
            return Err(DeviceError::BadSectorRange { first, end: first + sectors, sectors: SECTORS });
        }
        let (block, page) = self.block_page(ppn);
        self.check_block(block)?;
        let next = self.next_page[block];
        let mask = ((1u64 << sectors) - 1) << first;
        let current = self.masks.get(&ppn).copied().unwrap_or(0);
        let opened = page < next && current != 0;
        if page > next {
            return Err(DeviceError::ProgramOutOfOrder { ppn, block: block as u64, expected: next });
        }
        if page < next && !opened {
            return Err(if page + 1 < next {
                DeviceError::ProgramOutOfOrder { ppn, block: block as u64, expected: next - 1 }
            } else {
                DeviceError::ProgramNotErased { ppn }
            });
        }
        if current & mask != 0 {
            return Err(DeviceError::ProgramNotErased { ppn });
        }
        Self::check_data(content, ppn, first, data)?;
        self.store(content, ppn, first, data, spare);
        self.masks.insert(ppn, current | mask);
        self.next_page[block] = next.max(page + 1);
        Ok(())
    }

    fn erase(&mut self, block: usize) -> Result<(), DeviceError> {
        self.check_block(block)?;
        self.next_page[block] = 0;
        self.erases[block] += 1;
        let first = block as u64 * u64::from(self.pages_per_block);
        for ppn in first..first + u64::from(self.pages_per_block) {
            self.bytes.remove(&ppn);
            self.fingerprints.remove(&ppn);
            self.spare.remove(&ppn);
            self.masks.remove(&ppn);
        }
        Ok(())
    }

    fn read(&self, content: PageContent, ppn: Ppn) -> PageData {
        match content {
            PageContent::Bytes => {
                PageData::Bytes(self.bytes.get(&ppn).cloned().unwrap_or_else(|| vec![0xFF; PAGE_BYTES as usize]))
            }
            PageContent::Fingerprint => {
                self.fingerprints.get(&ppn).map_or(PageData::Empty, |&f| PageData::Fingerprint(f))
            }
            PageContent::None => PageData::Empty,
        }
    }
}

#[derive(Debug, Clone)]
enum Op {
    /// Program the page (`ppn`); `kind` picks the data: 0 bytes, 1 fingerprint, 2 empty,
    /// 3 a short byte run (a size error in bytes mode).
    Page {
        ppn: u64,
        kind: u8,
        fill: u8,
        spare_len: usize,
    },
    Sectors {
        ppn: u64,
        first: u32,
        sectors: u32,
        kind: u8,
        fill: u8,
        spare_len: usize,
    },
    Erase {
        block: u32,
    },
    /// Program the block's next page (so that legal programs are common).
    Next {
        block: u32,
        kind: u8,
        fill: u8,
        spare_len: usize,
    },
    /// Read page `from` and program a copy of it into the block's next page.
    Copy {
        block: u32,
        from: u64,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let ppn = 0..u64::from(BLOCKS * MAX_PAGES_PER_BLOCK) + 1;
    prop_oneof![
        (ppn.clone(), 0..4u8, any::<u8>(), 0..SPARE_STORED_BYTES + 2)
            .prop_map(|(ppn, kind, fill, spare_len)| Op::Page { ppn, kind, fill, spare_len }),
        (ppn.clone(), 0..SECTORS + 1, 0..SECTORS + 1, 0..4u8, any::<u8>(), 0..SPARE_STORED_BYTES + 1).prop_map(
            |(ppn, first, sectors, kind, fill, spare_len)| Op::Sectors { ppn, first, sectors, kind, fill, spare_len }
        ),
        (0..BLOCKS + 1).prop_map(|block| Op::Erase { block }),
        (0..BLOCKS, 0..3u8, any::<u8>(), 0..SPARE_STORED_BYTES + 1)
            .prop_map(|(block, kind, fill, spare_len)| Op::Next { block, kind, fill, spare_len }),
        (0..BLOCKS, ppn.clone()).prop_map(|(block, from)| Op::Copy { block, from }),
    ]
}

fn data(kind: u8, fill: u8, len: usize) -> PageData {
    match kind {
        0 => PageData::Bytes((0..len).map(|i| fill.wrapping_add(i as u8)).collect()),
        1 => PageData::Fingerprint(u64::from(fill) * 0x0101_0101),
        2 => PageData::Empty,
        _ => PageData::Bytes(vec![fill; 100]),
    }
}

fn spare(fill: u8, len: usize) -> Vec<u8> {
    (0..len).map(|i| fill ^ i as u8).collect()
}

fn run(content: PageContent, pages_per_block: u32, planes: u32, partial: bool, ops: &[Op]) {
    let geometry = geometry(pages_per_block, planes, partial);
    let mut flash = FlashArray::new(geometry, FlashTiming::THESIS_TABLE_5_1, content).unwrap();
    let mut reference =
        RefFlash { pages_per_block, partial, busy_until_ns: vec![0; planes as usize], ..RefFlash::default() };
    let timing = FlashTiming::THESIS_TABLE_5_1;
    let pages = u64::from(BLOCKS * pages_per_block);
    let span = |t: OpTiming| (t.start_ns, t.end_ns);
    let block_of = |ppn: Ppn| ppn / u64::from(pages_per_block);
    // Page programs, sector programs, sectors programmed, erases, page reads.
    let mut counts = (0u64, 0u64, 0u64, 0u64, 0u64);
    for (i, op) in ops.iter().enumerate() {
        // Less than a program apart, so that operations queue on their planes.
        let now = i as u64 * timing.program_ns / 3;
        let (got, want) = match *op {
            Op::Page { ppn, kind, fill, spare_len } => {
                let (d, s) = (data(kind, fill, PAGE_BYTES as usize), spare(fill, spare_len));
                (
                    flash.program_page_with_spare(ppn, &d, &s, now).map(span),
                    reference
                        .program_page(content, ppn, &d, &s)
                        .map(|()| reference.occupy(block_of(ppn), now, timing.program_ns)),
                )
            }
            Op::Next { block, kind, fill, spare_len } => {
                let ppn = u64::from(block * pages_per_block + reference.next_page[block as usize]);
                let (d, s) = (data(kind, fill, PAGE_BYTES as usize), spare(fill, spare_len));
                (
                    flash.program_page_with_spare(ppn, &d, &s, now).map(span),
                    reference
                        .program_page(content, ppn, &d, &s)
                        .map(|()| reference.occupy(block_of(ppn), now, timing.program_ns)),
                )
            }
            Op::Sectors { ppn, first, sectors, kind, fill, spare_len } => {
                let (d, s) = (data(kind, fill, (sectors * SECTOR_BYTES) as usize), spare(fill, spare_len));
                (
                    flash.program_sectors_with_spare(ppn, first, &d, sectors, &s, now).map(span),
                    reference
                        .program_sectors(content, ppn, first, sectors, &d, &s)
                        .map(|()| reference.occupy(block_of(ppn), now, timing.program_ns)),
                )
            }
            Op::Erase { block } => (
                flash.erase_block(u64::from(block), now).map(span),
                reference.erase(block as usize).map(|()| reference.occupy(u64::from(block), now, timing.erase_ns)),
            ),
            Op::Copy { block, from } => {
                let ppn = u64::from(block * pages_per_block + reference.next_page[block as usize]);
                let got = flash.read_page_timing(from, now).map(span).and_then(|read| {
                    counts.4 += 1;
                    flash.program_page_copy(ppn, from, read.1).map(span)
                });
                let want = reference.check_ppn(from).and_then(|()| {
                    let (_, read_end) = reference.occupy(block_of(from), now, timing.read_ns);
                    let (d, s) = (reference.read(content, from), reference.spare.get(&from).copied());
                    reference
                        .program_page(content, ppn, &d, s.as_ref().map_or(&[][..], |s| s.as_slice()))
                        .map(|()| reference.occupy(block_of(ppn), read_end, timing.program_ns))
                });
                (got, want)
            }
        };
        assert_eq!(got, want, "operation {i}: {op:?}");
        if got.is_ok() {
            match *op {
                Op::Page { .. } | Op::Next { .. } | Op::Copy { .. } => counts.0 += 1,
                Op::Sectors { sectors, .. } => {
                    counts.1 += 1;
                    counts.2 += u64::from(sectors);
                }
                Op::Erase { .. } => counts.3 += 1,
            }
        }
        counts.4 += pages;
        for ppn in 0..pages {
            assert_eq!(flash.spare(ppn), reference.spare.get(&ppn).map(|s| s.as_slice()), "op {i}, spare of {ppn}");
            assert_eq!(flash.sector_mask(ppn), reference.masks.get(&ppn).copied(), "op {i}, mask of {ppn}");
            let (read, read_timing) = flash.read_page(ppn, now).unwrap();
            assert_eq!(read, reference.read(content, ppn), "op {i}, page {ppn}");
            assert_eq!(
                span(read_timing),
                reference.occupy(block_of(ppn), now, timing.read_ns),
                "op {i}, read of {ppn}"
            );
        }
        for block in 0..BLOCKS {
            assert_eq!(flash.write_pointer(u64::from(block)), reference.next_page[block as usize]);
            assert_eq!(flash.erase_count(u64::from(block)), reference.erases[block as usize]);
        }
    }
    let s = flash.stats();
    assert_eq!((s.page_programs, s.sector_programs, s.sectors_programmed, s.block_erases, s.page_reads), counts);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn arenas_match_the_reference_in_bytes_mode(ops in prop::collection::vec(op(), 1..60)) {
        run(PageContent::Bytes, 4, 2, true, &ops);
        run(PageContent::Bytes, 3, 3, true, &ops);
        run(PageContent::Bytes, 4, 2, false, &ops);
    }

    #[test]
    fn arenas_match_the_reference_in_fingerprint_mode(ops in prop::collection::vec(op(), 1..60)) {
        run(PageContent::Fingerprint, 4, 2, true, &ops);
        run(PageContent::Fingerprint, 3, 3, true, &ops);
        run(PageContent::Fingerprint, 4, 2, false, &ops);
    }

    #[test]
    fn arenas_match_the_reference_in_metadata_mode(ops in prop::collection::vec(op(), 1..60)) {
        run(PageContent::None, 4, 2, true, &ops);
        run(PageContent::None, 3, 3, true, &ops);
        run(PageContent::None, 4, 2, false, &ops);
    }
}
