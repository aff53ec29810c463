//! The ageing pass that brings an SSD to steady state before a measured window: a load
//! that writes every page of a footprint once, then as many uniformly random whole-page
//! overwrites of the footprint as it has pages, every write new content. A page-mapped
//! FTL's free blocks then stand at its garbage-collection reserve, so a workload measured
//! after it pays for garbage collection. The thesis experiments (`nvmdb-experiments`) and
//! `nvmdb ssd replay --age` both age a device with [`age`].
//!
//! The caller's load gives each page the content it should hold when the ageing ends.
//! The overwrite pass would replace it, so the load writes fresh content (a stream of its
//! own) to every page the overwrites will reach, and the last overwrite of such a page
//! carries the load's content back: every page ends the ageing holding its load content,
//! while the pages written, their order and their being new content are those of a plain
//! load and overwrite pass.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Salt of the overwrite pass's PRNG stream (pages and content ids), xored into the seed.
pub const AGE_STREAM: u64 = 0xA6E0_5EED_0F1A_5400;
/// Salt of the stream of the content the load writes to pages the overwrites reach.
pub const FILL_STREAM: u64 = 0xF111_5EED_0F1A_5400;

/// Host memory [`age`] holds per page of the footprint, bytes (the overwrite pass's last
/// write to each page and the load's content of each).
pub const BYTES_PER_PAGE: u64 = 16;

/// Ages a footprint of `pages` logical pages (`0..pages`): writes `load` — `(page,
/// content id, time)`, every page of the footprint once, in the caller's order — then
/// `pages` overwrites of uniformly random pages at time 0, calling `write(page, content id,
/// time)` for each write in order. Content ids of the overwrites and of the load's writes
/// to pages the overwrites reach come from streams of `seed`; each page ends holding the
/// content id `load` gave it (module docs). Holds [`BYTES_PER_PAGE`] bytes per page.
pub fn age<E>(
    pages: u64,
    seed: u64,
    load: impl IntoIterator<Item = (u64, u64, u64)>,
    mut write: impl FnMut(u64, u64, u64) -> Result<(), E>,
) -> Result<(), E> {
    let slots = usize::try_from(pages).expect("the footprint's pages fit in memory");
    // The overwrite pass's writes: a page and a content id each, from their own stream.
    let overwrites = || {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ AGE_STREAM);
        (0..pages).map(move |_| (rng.gen_range(0..pages), rng.gen::<u64>()))
    };
    // Per page: the index of the overwrite pass's last write to it (u64::MAX: none).
    let mut last_overwrite = vec![u64::MAX; slots];
    for (i, (page, _)) in (0u64..).zip(overwrites()) {
        last_overwrite[index(page)] = i;
    }
    let mut fill = Xoshiro256PlusPlus::seed_from_u64(seed ^ FILL_STREAM);
    let mut load_content = vec![0u64; slots];
    for (page, content, time_ns) in load {
        load_content[index(page)] = content;
        let written = if last_overwrite[index(page)] == u64::MAX { content } else { fill.gen() };
        write(page, written, time_ns)?;
    }
    for (i, (page, aged)) in (0u64..).zip(overwrites()) {
        let content = if last_overwrite[index(page)] == i { load_content[index(page)] } else { aged };
        write(page, content, 0)?;
    }
    Ok(())
}

/// A page of the footprint as an index (the footprint fits in memory: [`age`] checked).
fn index(page: u64) -> usize {
    usize::try_from(page).expect("a page of the footprint")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every page is written by the load and ends holding its load content; the overwrite
    /// pass writes as many pages as the footprint has, and the same seed gives the same
    /// writes.
    #[test]
    fn every_page_ends_with_its_load_content() {
        let pages = 500;
        let run = |seed| {
            let mut writes = Vec::new();
            let load = (0..pages).map(|p| (p, 1000 + p, p));
            age(pages, seed, load, |page, content, time| {
                writes.push((page, content, time));
                Ok::<_, ()>(())
            })
            .unwrap();
            writes
        };
        let writes = run(7);
        assert_eq!(writes.len() as u64, 2 * pages);
        assert_eq!(writes, run(7), "deterministic");
        assert_ne!(writes, run(8), "another seed, other writes");
        let mut last = vec![None; index(pages)];
        for &(page, content, _) in &writes {
            last[index(page)] = Some(content);
        }
        assert!((0..pages).all(|p| last[index(p)] == Some(1000 + p)), "every page holds its load content");
        // The overwrites reach about 1 − 1/e of the pages; those got fresh content at load.
        let reached = writes[..index(pages)].iter().filter(|&&(p, c, _)| c != 1000 + p).count();
        assert!((280..=350).contains(&reached), "{reached} pages reached by the overwrites");
    }
}
