//! The replay's own model of acknowledged state, and the check of a store against it.
//!
//! The model is written only from what the host sent and the store acknowledged, never
//! from what the store returns: a partial-page write patches the model's own page (in
//! bytes mode), although the host's read-modify-write sends the store the page it read
//! back. So a page the store lost stays lost in the model's eyes, whatever is written
//! over part of it later. A page holds every content its acknowledged history allows:
//! one, unless a power cut interrupted a request that wrote it, which may then read as
//! before the request or as after it.

use std::collections::BTreeMap;
use std::ops::Range;

use nvmdb_device::{PageContent, PageData};
use serde::{Deserialize, Serialize};

use crate::layer::{FlashError, PageStore};

/// What one check of a store against the model found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    /// Pages checked: every page written or trimmed (in metadata-only mode, every page
    /// that must be mapped).
    pub verified_pages: u64,
    /// Checked pages that read as never written (erased) although the model holds data.
    pub lost_pages: u64,
    /// Checked pages that read as other data than any the model allows (a trimmed page:
    /// any data).
    pub corrupt_pages: u64,
}

/// A page's content as the model keeps it: `None` never written or trimmed.
type Content = Option<PageData>;

pub(super) struct Model {
    content: PageContent,
    page_bytes: usize,
    /// Every content each written or trimmed page may read back as.
    pages: BTreeMap<u64, Vec<Content>>,
    /// The pages the request in progress has changed, with what each allowed before it.
    before_request: BTreeMap<u64, Vec<Content>>,
}

/// Whether a page reads as never written.
fn erased(data: &PageData) -> bool {
    match data {
        PageData::Empty => true,
        PageData::Bytes(b) => b.iter().all(|&x| x == 0xFF),
        PageData::Fingerprint(_) => false,
    }
}

impl Model {
    pub(super) fn new(content: PageContent, page_bytes: usize) -> Model {
        Model { content, page_bytes, pages: BTreeMap::new(), before_request: BTreeMap::new() }
    }

    /// A request starts: what it changes is kept, for [`Model::interrupted`].
    pub(super) fn begin_request(&mut self) {
        self.before_request.clear();
    }

    /// Notes page `lpn`'s contents before the request in progress first changes it.
    fn save(&mut self, lpn: u64) {
        if let std::collections::btree_map::Entry::Vacant(entry) = self.before_request.entry(lpn) {
            entry.insert(self.pages.get(&lpn).cloned().unwrap_or_else(|| vec![None]));
        }
    }

    /// The host wrote `data` as page `lpn`'s whole content (fingerprint mode keeps a
    /// content identity of bytes).
    pub(super) fn write(&mut self, lpn: u64, data: &PageData) {
        self.save(lpn);
        let expected = match (self.content, data) {
            (PageContent::Fingerprint, PageData::Bytes(b)) => {
                PageData::Fingerprint(nvmdb_device::flash::fingerprint64(b))
            }
            (_, d) => d.clone(),
        };
        self.pages.insert(lpn, vec![Some(expected)]);
    }

    /// The host wrote `bytes` over bytes `range` of page `lpn` (bytes mode): each content
    /// the model allows gets them; a page never written is erased (0xFF) around them.
    pub(super) fn patch(&mut self, lpn: u64, range: Range<usize>, bytes: &[u8]) {
        self.save(lpn);
        let page_bytes = self.page_bytes;
        let contents = self.pages.entry(lpn).or_insert_with(|| vec![None]);
        for content in contents.iter_mut() {
            let mut page = match content.take() {
                Some(PageData::Bytes(b)) if b.len() == page_bytes => b,
                _ => vec![0xFF; page_bytes],
            };
            page[range.clone()].copy_from_slice(bytes);
            *content = Some(PageData::Bytes(page));
        }
        contents.dedup();
    }

    /// The host trimmed page `lpn`.
    pub(super) fn trim(&mut self, lpn: u64) {
        self.save(lpn);
        self.pages.insert(lpn, vec![None]);
    }

    /// A power cut interrupted the request in progress (it was never acknowledged): each
    /// page it changed may read as before it or as after it.
    pub(super) fn interrupted(&mut self) {
        for (lpn, before) in std::mem::take(&mut self.before_request) {
            let contents = self.pages.entry(lpn).or_default();
            for content in before {
                if !contents.contains(&content) {
                    contents.push(content);
                }
            }
        }
    }

    /// Reads every page of the model back from `store` at `now_ns` and compares it with
    /// what the model allows; returns what it found and when the reads completed. In
    /// metadata-only mode there is no content to compare: every page the model says is
    /// written must be mapped (a page an interrupted request may or may not have written
    /// is not counted).
    pub(super) fn check(&self, store: &mut dyn PageStore, now_ns: u64) -> Result<(Check, u64), FlashError> {
        let mut check = Check::default();
        if self.content == PageContent::None {
            check.verified_pages = self.pages.values().filter(|c| c.iter().all(Option::is_some)).count() as u64;
            check.lost_pages = check.verified_pages.saturating_sub(store.health().mapped_pages);
            return Ok((check, now_ns));
        }
        let mut done_ns = now_ns;
        for (&lpn, contents) in &self.pages {
            let (data, read_ns) = store.read(lpn, now_ns)?;
            done_ns = done_ns.max(read_ns);
            check.verified_pages += 1;
            let allowed = |content: &Content| match content {
                None => erased(&data),
                Some(expected) => *expected == data || (erased(expected) && erased(&data)),
            };
            if contents.iter().any(allowed) {
                continue;
            }
            if erased(&data) {
                check.lost_pages += 1;
            } else {
                check.corrupt_pages += 1;
            }
        }
        Ok((check, done_ns))
    }
}
