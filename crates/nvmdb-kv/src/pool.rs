//! The buffer pool's frames: a page id's frame is found by indexing, and the frames form
//! a doubly linked list from least to most recently used, so a lookup, a touch and the
//! choice of a victim each take constant time.

use crate::page::Page;

/// Marks "no frame" (a page not resident, the end of the list).
const NONE: u32 = u32::MAX;

/// A resident page.
#[derive(Debug, Clone)]
pub(crate) struct Frame {
    pub page: Page,
    pub dirty: bool,
    /// Changed without log records (a merge or a rotation between siblings): written
    /// whole at the next write-back, not logged until then.
    pub whole: bool,
    /// Encoded records not yet written (the in-memory log sector).
    pub log: Vec<u8>,
    /// Neighbours in the recency list (toward the least and the most recently used).
    older: u32,
    newer: u32,
}

/// Host memory a resident page of records with `value_bytes`-byte values takes at most,
/// bytes: its frame; its decoded entries, the encoded bytes (up to a page) and per entry
/// its key and start (4 B each), each in a vector grown by doubling (its capacity up to
/// the next power of two); and for a logging engine (`logs`) its in-memory log sector.
pub(crate) fn frame_bytes(page_bytes: u32, value_bytes: usize, logs: Option<u32>) -> u64 {
    let page = u64::from(page_bytes).next_power_of_two();
    let entries = (u64::from(page_bytes) / (5 + value_bytes as u64)).next_power_of_two();
    std::mem::size_of::<Frame>() as u64 + page + entries * 8 + u64::from(logs.unwrap_or(0))
}

/// The frames, their index by page id and their recency order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Frames {
    frames: Vec<Frame>,
    /// Frame index of each page id, `NONE` when the page is not resident.
    by_page: Vec<u32>,
    /// Frame slots left by removed pages.
    free: Vec<u32>,
    /// Least and most recently used frames.
    oldest: u32,
    newest: u32,
    resident: usize,
}

impl Frames {
    /// An empty pool.
    pub fn new() -> Frames {
        Frames { oldest: NONE, newest: NONE, ..Frames::default() }
    }

    /// Pages resident.
    pub fn len(&self) -> usize {
        self.resident
    }

    fn index(&self, id: u32) -> Option<usize> {
        self.by_page.get(id as usize).filter(|&&i| i != NONE).map(|&i| i as usize)
    }

    /// Whether a page is resident.
    pub fn contains(&self, id: u32) -> bool {
        self.index(id).is_some()
    }

    /// A resident page's frame.
    pub fn get(&self, id: u32) -> &Frame {
        &self.frames[self.index(id).expect("resident")]
    }

    /// A resident page's frame, mutably.
    pub fn get_mut(&mut self, id: u32) -> &mut Frame {
        let i = self.index(id).expect("resident");
        &mut self.frames[i]
    }

    /// Makes a resident page the most recently used; returns its frame.
    pub fn touch(&mut self, id: u32) -> &mut Frame {
        let i = self.index(id).expect("resident") as u32;
        if self.newest != i {
            self.unlink(i);
            self.link_newest(i);
        }
        &mut self.frames[i as usize]
    }

    /// The least recently used page.
    pub fn oldest(&self) -> Option<u32> {
        (self.oldest != NONE).then(|| self.frames[self.oldest as usize].page.id)
    }

    /// Adds a page that is not resident as the most recently used.
    pub fn insert(&mut self, page: Page, dirty: bool) {
        let id = page.id as usize;
        if self.by_page.len() <= id {
            self.by_page.resize(id + 1, NONE);
        }
        assert_eq!(self.by_page[id], NONE, "page {id} is resident already");
        let frame = Frame { page, dirty, whole: false, log: Vec::new(), older: NONE, newer: NONE };
        let i = match self.free.pop() {
            Some(i) => {
                self.frames[i as usize] = frame;
                i
            }
            None => {
                self.frames.push(frame);
                (self.frames.len() - 1) as u32
            }
        };
        self.by_page[id] = i;
        self.link_newest(i);
        self.resident += 1;
    }

    /// Drops a resident page (its frame's slot is reused by a later insert).
    pub fn remove(&mut self, id: u32) {
        let i = self.index(id).expect("resident") as u32;
        self.unlink(i);
        self.by_page[id as usize] = NONE;
        self.free.push(i);
        self.resident -= 1;
    }

    /// The resident pages that are dirty, in ascending id order.
    pub fn dirty_pages(&self) -> Vec<u32> {
        let mut dirty = Vec::new();
        let mut i = self.oldest;
        while i != NONE {
            let frame = &self.frames[i as usize];
            if frame.dirty {
                dirty.push(frame.page.id);
            }
            i = frame.newer;
        }
        dirty.sort_unstable();
        dirty
    }

    fn unlink(&mut self, i: u32) {
        let (older, newer) = (self.frames[i as usize].older, self.frames[i as usize].newer);
        match older {
            NONE => self.oldest = newer,
            o => self.frames[o as usize].newer = newer,
        }
        match newer {
            NONE => self.newest = older,
            n => self.frames[n as usize].older = older,
        }
    }

    fn link_newest(&mut self, i: u32) {
        let frame = &mut self.frames[i as usize];
        frame.older = self.newest;
        frame.newer = NONE;
        match self.newest {
            NONE => self.oldest = i,
            n => self.frames[n as usize].newer = i,
        }
        self.newest = i;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_is_the_least_recently_touched_or_inserted() {
        let mut frames = Frames::new();
        assert_eq!(frames.oldest(), None);
        for id in [4, 1, 7] {
            frames.insert(Page::empty_leaf(id), false);
        }
        assert_eq!(frames.oldest(), Some(4));
        frames.touch(4);
        assert_eq!(frames.oldest(), Some(1));
        frames.get_mut(7).dirty = true;
        frames.get_mut(4).dirty = true;
        assert_eq!(frames.dirty_pages(), [4, 7]);
        frames.remove(1);
        assert!(!frames.contains(1));
        assert_eq!((frames.len(), frames.oldest()), (2, Some(7)));
        frames.insert(Page::empty_leaf(9), false);
        frames.touch(7);
        assert_eq!(frames.oldest(), Some(4));
        frames.remove(4);
        frames.remove(9);
        assert_eq!(frames.oldest(), Some(7));
        frames.remove(7);
        assert_eq!((frames.len(), frames.oldest()), (0, None));
    }
}
