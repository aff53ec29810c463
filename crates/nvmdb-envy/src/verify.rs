//! A model of acknowledged bytes, and the check of a recovered eNVy against it.
//!
//! The model is written only from what the host wrote and eNVy acknowledged (a write
//! that returned, a commit that returned, an abort), never from what eNVy returns, so a
//! byte eNVy lost stays lost in the model's eyes. A page holds every content its
//! acknowledged history allows: one, unless a power cut interrupted a write to it, which
//! may then read as before that write or as after it (each page's part of a write is
//! atomic, so the page as a whole is one or the other).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::config::EnvyConfig;
use crate::engine::Envy;
use crate::error::EnvyError;

/// What one check of eNVy against the model found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Check {
    /// Bytes compared: the whole logical space.
    pub verified_bytes: u64,
    /// Pages whose bytes match no content the model allows.
    pub lost_pages: u64,
    /// Bytes of those pages that differ from the acknowledged content.
    pub lost_bytes: u64,
}

/// A page's contents before the open transaction first wrote it: the acknowledged one
/// and the others an interrupted write allows.
type Saved = (Vec<u8>, Option<Vec<Vec<u8>>>);

/// The acknowledged contents of an eNVy's logical space (never-written bytes are 0).
#[derive(Debug, Clone)]
pub struct AckModel {
    bytes: Vec<u8>,
    page_bytes: usize,
    /// Per page an interrupted write touched: the other contents it may read as.
    others: BTreeMap<usize, Vec<Vec<u8>>>,
    /// The open transaction: each page it wrote, as it was before.
    transaction: Option<BTreeMap<usize, Saved>>,
}

impl AckModel {
    /// Host memory the model of a system of `config` holds, bytes: the acknowledged
    /// bytes of the whole logical space, and an open transaction's saved pages (at most
    /// [`EnvyConfig::max_transaction_pages`], each with its 56 B map entry and its share of
    /// the map's node). Pages an interrupted write leaves ambiguous come on top, after a
    /// power loss only.
    pub fn estimated_memory_bytes(config: &EnvyConfig) -> u64 {
        let saved_page = u64::from(config.page_bytes).saturating_add(64);
        config.logical_bytes().saturating_add(u64::from(config.max_transaction_pages).saturating_mul(saved_page))
    }

    /// An unwritten space of `capacity_bytes` in pages of `page_bytes`.
    pub fn new(capacity_bytes: usize, page_bytes: usize) -> AckModel {
        AckModel { bytes: vec![0; capacity_bytes], page_bytes, others: BTreeMap::new(), transaction: None }
    }

    /// The acknowledged bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The pages `addr .. addr + len` touches.
    fn pages(&self, addr: usize, len: usize) -> std::ops::Range<usize> {
        addr / self.page_bytes..(addr + len).div_ceil(self.page_bytes)
    }

    fn page(&self, page: usize) -> &[u8] {
        &self.bytes[page * self.page_bytes..(page + 1) * self.page_bytes]
    }

    /// eNVy acknowledged a write of `data` at `addr` (inside `0..capacity`).
    pub fn write(&mut self, addr: u64, data: &[u8]) {
        let addr = usize::try_from(addr).expect("the address lies in the model");
        for page in self.pages(addr, data.len()) {
            if self.transaction.as_ref().is_some_and(|saved| !saved.contains_key(&page)) {
                let before = (self.page(page).to_vec(), self.others.get(&page).cloned());
                self.transaction.as_mut().expect("open").insert(page, before);
            }
            let start = page * self.page_bytes;
            let (from, to) = (addr.max(start), (addr + data.len()).min(start + self.page_bytes));
            let new = &data[from - addr..to - addr];
            self.bytes[from..to].copy_from_slice(new);
            if let Some(others) = self.others.get_mut(&page) {
                for other in others.iter_mut() {
                    other[from - start..to - start].copy_from_slice(new);
                }
                let own = &self.bytes[start..start + self.page_bytes];
                others.retain(|other| other != own);
                others.dedup();
                if others.is_empty() {
                    self.others.remove(&page);
                }
            }
        }
    }

    /// A power cut interrupted a write of `data` at `addr` outside a transaction (it was
    /// never acknowledged): each page it touches may read as before it or as after it.
    pub fn interrupted_write(&mut self, addr: u64, data: &[u8]) {
        let at = usize::try_from(addr).expect("the address lies in the model");
        let before: Vec<(usize, Vec<Vec<u8>>)> = self
            .pages(at, data.len())
            .map(|page| {
                let mut contents = vec![self.page(page).to_vec()];
                contents.extend(self.others.get(&page).into_iter().flatten().cloned());
                (page, contents)
            })
            .collect();
        self.write(addr, data);
        for (page, contents) in before {
            let own = self.page(page).to_vec();
            let others = self.others.entry(page).or_default();
            for content in contents {
                if content != own && !others.contains(&content) {
                    others.push(content);
                }
            }
            if others.is_empty() {
                self.others.remove(&page);
            }
        }
    }

    /// A transaction began: its writes are kept apart until [`AckModel::commit`].
    pub fn begin(&mut self) {
        self.transaction = Some(BTreeMap::new());
    }

    /// The open transaction committed.
    pub fn commit(&mut self) {
        self.transaction = None;
    }

    /// The open transaction was aborted, or rolled back by recovery: every page it wrote
    /// is as before it. Nothing happens without one.
    pub fn roll_back(&mut self) {
        for (page, (bytes, others)) in self.transaction.take().unwrap_or_default() {
            let start = page * self.page_bytes;
            self.bytes[start..start + self.page_bytes].copy_from_slice(&bytes);
            match others {
                Some(others) => self.others.insert(page, others),
                None => self.others.remove(&page),
            };
        }
    }

    /// Whether a transaction is open.
    pub fn in_transaction(&self) -> bool {
        self.transaction.is_some()
    }

    /// Reads the whole logical space of `envy` (a page at a time) and compares each page
    /// with the contents the model allows. The reads move `envy`'s counters; the caller
    /// sets them back when the check is to be left out of a run's figures.
    pub fn check(&self, envy: &mut Envy) -> Result<Check, EnvyError> {
        let mut check = Check { verified_bytes: self.bytes.len() as u64, ..Check::default() };
        let mut read = vec![0u8; self.page_bytes];
        for (page, expected) in self.bytes.chunks(self.page_bytes).enumerate() {
            let read = &mut read[..expected.len()];
            envy.read((page * self.page_bytes) as u64, read)?;
            if read == expected || self.others.get(&page).is_some_and(|others| others.iter().any(|o| o == read)) {
                continue;
            }
            check.lost_pages += 1;
            check.lost_bytes += read.iter().zip(expected).filter(|(a, b)| a != b).count() as u64;
        }
        Ok(check)
    }
}
