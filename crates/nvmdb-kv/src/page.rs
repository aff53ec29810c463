//! B+-tree pages and the physiological log records that change them, with their byte
//! layouts (little-endian throughout).
//!
//! A page image is `[kind u8][count u16][page_lsn u64][page id u32]` followed by its
//! entries, zero-padded to the page size. A leaf (kind 1) entry is `[key u32][len u8]
//! [value]`; an inner page (kind 2) holds `[child0 u32]` then `count` times `[key u32]
//! [child u32]`: child `i` covers the keys `keys[i-1] <= k < keys[i]`.
//!
//! A log record is `[lsn u64][page u32][tag u8]` and a payload (see [`Change`]). Every
//! change the tree makes to a page is one record applied by [`Page::apply`], both when the
//! change is made and when a page is rebuilt from its image and its logged records, so the
//! two can never disagree.

use crate::KvError;

/// Largest value, bytes.
pub const MAX_VALUE_BYTES: usize = 64;
/// Bytes of a page image's header.
pub const PAGE_HEADER_BYTES: usize = 15;
/// Bytes of a log record's header (lsn, page, tag).
pub const RECORD_HEADER_BYTES: usize = 13;

const KIND_LEAF: u8 = 1;
const KIND_INNER: u8 = 2;

/// A leaf's entries as its page image encodes them: `bytes` is the image up to its last
/// entry (the header bytes are left zero and filled in by [`Page::encode`]), with each
/// entry's key and start kept beside it. A page read from a device is indexed in place,
/// without copying its values, and encoding it is one copy.
#[derive(Clone, PartialEq, Eq)]
pub struct Leaf {
    keys: Vec<u32>,
    /// Where each entry starts in `bytes`.
    starts: Vec<u32>,
    /// A zeroed header, then the entries `[key u32][len u8][value]` in key order.
    bytes: Vec<u8>,
}

impl Default for Leaf {
    fn default() -> Leaf {
        Leaf { keys: Vec::new(), starts: Vec::new(), bytes: vec![0; PAGE_HEADER_BYTES] }
    }
}

impl Leaf {
    /// A leaf of `entries`, in ascending key order.
    pub fn from_entries<'a>(entries: impl IntoIterator<Item = (u32, &'a [u8])>) -> Leaf {
        let mut leaf = Leaf::default();
        for (key, value) in entries {
            leaf.insert(leaf.len(), key, value);
        }
        leaf
    }

    /// Keys in ascending order.
    pub fn keys(&self) -> &[u32] {
        &self.keys
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether the leaf has no entries.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The entries, in key order.
    pub fn entries(&self) -> impl Iterator<Item = (u32, &[u8])> + '_ {
        (0..self.len()).map(|i| (self.keys[i], self.value(i)))
    }

    /// The value at `slot`.
    pub fn value(&self, slot: usize) -> &[u8] {
        let at = self.starts[slot] as usize + 4;
        let len = usize::from(self.bytes[at]);
        &self.bytes[at + 1..at + 1 + len]
    }

    /// Encoded size of the header and entries, bytes.
    fn encoded_len(&self) -> usize {
        self.bytes.len()
    }

    fn start(&self, slot: usize) -> usize {
        self.starts.get(slot).map_or(self.bytes.len(), |&s| s as usize)
    }

    /// Moves the bytes from `at` on by `delta` bytes and the starts of the entries from
    /// `slot` on with them.
    fn shift(&mut self, slot: usize, at: usize, delta: isize) {
        let old_len = self.bytes.len();
        let new_len = old_len.checked_add_signed(delta).expect("a shift stays within the page");
        if delta > 0 {
            self.bytes.resize(new_len, 0);
            self.bytes.copy_within(at..old_len, at + delta.unsigned_abs());
        } else {
            self.bytes.copy_within(at..old_len, at - delta.unsigned_abs());
            self.bytes.truncate(new_len);
        }
        for start in &mut self.starts[slot..] {
            *start = start.checked_add_signed(delta as i32).expect("starts stay within the page");
        }
    }

    fn insert(&mut self, slot: usize, key: u32, value: &[u8]) {
        let at = self.start(slot);
        self.shift(slot, at, (5 + value.len()) as isize);
        self.bytes[at..at + 4].copy_from_slice(&key.to_le_bytes());
        self.bytes[at + 4] = value.len() as u8;
        self.bytes[at + 5..at + 5 + value.len()].copy_from_slice(value);
        self.keys.insert(slot, key);
        self.starts.insert(slot, at as u32);
    }

    fn update(&mut self, slot: usize, value: &[u8]) {
        let at = self.starts[slot] as usize + 4;
        let old = usize::from(self.bytes[at]);
        if old != value.len() {
            self.shift(slot + 1, at + 1 + old, value.len() as isize - old as isize);
        }
        self.bytes[at] = value.len() as u8;
        self.bytes[at + 1..at + 1 + value.len()].copy_from_slice(value);
    }

    fn delete(&mut self, slot: usize) {
        let (at, end) = (self.start(slot), self.start(slot + 1));
        self.shift(slot + 1, end, at as isize - end as isize);
        self.keys.remove(slot);
        self.starts.remove(slot);
    }

    fn truncate(&mut self, keep: usize) {
        self.bytes.truncate(self.start(keep));
        self.keys.truncate(keep);
        self.starts.truncate(keep);
    }

    /// The entries from `slot` on, as a leaf of their own.
    pub fn split_off_copy(&self, slot: usize) -> Leaf {
        let from = self.start(slot);
        let mut bytes = Vec::with_capacity(PAGE_HEADER_BYTES + self.bytes.len() - from);
        bytes.resize(PAGE_HEADER_BYTES, 0);
        bytes.extend_from_slice(&self.bytes[from..]);
        let base = from - PAGE_HEADER_BYTES;
        let starts = self.starts[slot..].iter().map(|&s| s - base as u32).collect();
        Leaf { keys: self.keys[slot..].to_vec(), starts, bytes }
    }

    /// Indexes the `count` entries of a leaf image in place; `None` when they overrun it
    /// or a value is longer than [`MAX_VALUE_BYTES`].
    fn index(mut image: Vec<u8>, count: usize) -> Option<Leaf> {
        let mut keys = Vec::with_capacity(count);
        let mut starts = Vec::with_capacity(count);
        let mut at = PAGE_HEADER_BYTES;
        for _ in 0..count {
            let entry = image.get(at..at + 5)?;
            let len = usize::from(entry[4]);
            if len > MAX_VALUE_BYTES || at + 5 + len > image.len() {
                return None;
            }
            keys.push(u32::from_le_bytes(entry[..4].try_into().ok()?));
            starts.push(at as u32);
            at += 5 + len;
        }
        image.truncate(at);
        image[..PAGE_HEADER_BYTES].fill(0);
        Some(Leaf { keys, starts, bytes: image })
    }
}

impl std::fmt::Debug for Leaf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries((0..self.len()).map(|i| (self.keys[i], String::from_utf8_lossy(self.value(i))))).finish()
    }
}

/// A page's entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    /// Keys in ascending order and their values.
    Leaf(Leaf),
    /// Separator keys in ascending order and `keys.len() + 1` children.
    Inner { keys: Vec<u32>, children: Vec<u32> },
}

/// One change to one page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Inserts `key` with `value` at `slot` of a leaf.
    LeafInsert { slot: u16, key: u32, value: Vec<u8> },
    /// Replaces the value at `slot` of a leaf.
    LeafUpdate { slot: u16, value: Vec<u8> },
    /// Removes the entry at `slot` of a leaf.
    LeafDelete { slot: u16 },
    /// Inserts separator `key` at `slot` of an inner page and `child` right of it.
    InnerInsert { slot: u16, key: u32, child: u32 },
    /// Keeps the first `keep` entries (a split's left half): a leaf's first `keep` keys,
    /// an inner page's first `keep` keys and `keep + 1` children.
    Truncate { keep: u16 },
    /// Removes separator `slot` of an inner page and the child right of it (a merge of
    /// two children).
    InnerDelete { slot: u16 },
    /// Replaces separator `slot` of an inner page (a child moved between two siblings).
    InnerSetKey { slot: u16, key: u32 },
}

/// A logged change: the log sequence number orders it against the page's image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// Log sequence number (unique, increasing).
    pub lsn: u64,
    /// The page changed.
    pub page: u32,
    /// The change.
    pub change: Change,
}

/// A page in memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// Page id.
    pub id: u32,
    /// LSN of the last change applied.
    pub lsn: u64,
    /// Entries.
    pub node: Node,
    /// Encoded image size, bytes (kept as changes are applied).
    pub size: usize,
}

impl Page {
    /// An empty leaf.
    pub fn empty_leaf(id: u32) -> Page {
        Page { id, lsn: 0, node: Node::Leaf(Leaf::default()), size: PAGE_HEADER_BYTES }
    }

    /// A page over `node`, its size computed.
    pub fn new(id: u32, lsn: u64, node: Node) -> Page {
        let size = match &node {
            Node::Leaf(leaf) => leaf.encoded_len(),
            Node::Inner { keys, .. } => PAGE_HEADER_BYTES + 4 + 8 * keys.len(),
        };
        Page { id, lsn, node, size }
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.keys().len()
    }

    /// Whether the page has no keys.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The page's keys.
    pub fn keys(&self) -> &[u32] {
        match &self.node {
            Node::Leaf(leaf) => leaf.keys(),
            Node::Inner { keys, .. } => keys,
        }
    }

    /// The page `self` and its right sibling `right` make together (a merge): a leaf's
    /// entries in order, or an inner page's keys with `separator` (the parent's key between
    /// the two) pulled down between them. The result is not a log record: the merged page
    /// is written whole.
    pub fn merged_with(&self, right: &Page, separator: u32, lsn: u64) -> Page {
        let node = match (&self.node, &right.node) {
            (Node::Leaf(left), Node::Leaf(other)) => {
                Node::Leaf(Leaf::from_entries(left.entries().chain(other.entries())))
            }
            (Node::Inner { keys, children }, Node::Inner { keys: rk, children: rc }) => Node::Inner {
                keys: keys.iter().chain([&separator]).chain(rk).copied().collect(),
                children: children.iter().chain(rc).copied().collect(),
            },
            _ => panic!("page {} and page {} are not siblings of one level", self.id, right.id),
        };
        Page::new(self.id, lsn, node)
    }

    /// Applies a change (a broken precondition, such as a slot out of range, is a broken
    /// invariant of the log and panics).
    pub fn apply(&mut self, lsn: u64, change: &Change) {
        match (&mut self.node, change) {
            (Node::Leaf(leaf), Change::LeafInsert { slot, key, value }) => {
                leaf.insert(usize::from(*slot), *key, value);
                self.size = leaf.encoded_len();
            }
            (Node::Leaf(leaf), Change::LeafUpdate { slot, value }) => {
                leaf.update(usize::from(*slot), value);
                self.size = leaf.encoded_len();
            }
            (Node::Leaf(leaf), Change::LeafDelete { slot }) => {
                leaf.delete(usize::from(*slot));
                self.size = leaf.encoded_len();
            }
            (Node::Inner { keys, children }, Change::InnerInsert { slot, key, child }) => {
                keys.insert(usize::from(*slot), *key);
                children.insert(usize::from(*slot) + 1, *child);
                self.size += 8;
            }
            (Node::Leaf(leaf), Change::Truncate { keep }) => {
                leaf.truncate(usize::from(*keep));
                self.size = leaf.encoded_len();
            }
            (Node::Inner { keys, children }, Change::Truncate { keep }) => {
                let keep = usize::from(*keep);
                self.size -= 8 * (keys.len() - keep);
                keys.truncate(keep);
                children.truncate(keep + 1);
            }
            (Node::Inner { keys, children }, Change::InnerDelete { slot }) => {
                keys.remove(usize::from(*slot));
                children.remove(usize::from(*slot) + 1);
                self.size -= 8;
            }
            (Node::Inner { keys, .. }, Change::InnerSetKey { slot, key }) => keys[usize::from(*slot)] = *key,
            (node, change) => panic!("log record {change:?} does not apply to {node:?}"),
        }
        self.lsn = lsn;
    }

    /// The page image, `page_bytes` long.
    pub fn encode(&self, page_bytes: usize) -> Vec<u8> {
        assert!(self.size <= page_bytes, "page {} holds {} bytes in a {page_bytes} B page", self.id, self.size);
        let mut out = Vec::with_capacity(page_bytes);
        match &self.node {
            Node::Leaf(leaf) => {
                out.extend_from_slice(&leaf.bytes);
                self.encode_header(KIND_LEAF, leaf.len(), &mut out);
            }
            Node::Inner { keys, children } => {
                out.resize(PAGE_HEADER_BYTES, 0);
                self.encode_header(KIND_INNER, keys.len(), &mut out);
                out.extend_from_slice(&children[0].to_le_bytes());
                for (k, c) in keys.iter().zip(&children[1..]) {
                    out.extend_from_slice(&k.to_le_bytes());
                    out.extend_from_slice(&c.to_le_bytes());
                }
            }
        }
        debug_assert_eq!(out.len(), self.size);
        out.resize(page_bytes, 0);
        out
    }

    fn encode_header(&self, kind: u8, count: usize, out: &mut [u8]) {
        out[0] = kind;
        out[1..3].copy_from_slice(&(count as u16).to_le_bytes());
        out[3..11].copy_from_slice(&self.lsn.to_le_bytes());
        out[11..15].copy_from_slice(&self.id.to_le_bytes());
    }

    /// Decodes a page image; `None` when the bytes are not a well-formed image. A leaf
    /// keeps the image's buffer.
    pub fn decode(image: Vec<u8>) -> Option<Page> {
        let mut r = Reader { bytes: &image, at: 0 };
        let kind = r.u8()?;
        let count = usize::from(r.u16()?);
        let lsn = r.u64()?;
        let id = r.u32()?;
        let node = match kind {
            KIND_LEAF => Node::Leaf(Leaf::index(image, count)?),
            KIND_INNER => {
                let mut keys = Vec::with_capacity(count);
                let mut children = Vec::with_capacity(count + 1);
                children.push(r.u32()?);
                for _ in 0..count {
                    keys.push(r.u32()?);
                    children.push(r.u32()?);
                }
                Node::Inner { keys, children }
            }
            _ => return None,
        };
        Some(Page::new(id, lsn, node))
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let out = self.bytes.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(out)
    }
    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes(self.take(2)?.try_into().ok()?))
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn value_bytes(&mut self) -> Option<&[u8]> {
        let len = usize::from(self.u8()?);
        if len > MAX_VALUE_BYTES {
            return None;
        }
        self.take(len)
    }
    fn value(&mut self) -> Option<Vec<u8>> {
        self.value_bytes().map(<[u8]>::to_vec)
    }
}

const TAG_LEAF_INSERT: u8 = 1;
const TAG_LEAF_UPDATE: u8 = 2;
const TAG_LEAF_DELETE: u8 = 3;
const TAG_INNER_INSERT: u8 = 4;
const TAG_TRUNCATE: u8 = 5;
const TAG_INNER_DELETE: u8 = 6;
const TAG_INNER_SET_KEY: u8 = 7;

impl Record {
    /// Appends the record's bytes to `out`.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.lsn.to_le_bytes());
        out.extend_from_slice(&self.page.to_le_bytes());
        match &self.change {
            Change::LeafInsert { slot, key, value } => {
                out.push(TAG_LEAF_INSERT);
                out.extend_from_slice(&slot.to_le_bytes());
                out.extend_from_slice(&key.to_le_bytes());
                out.push(value.len() as u8);
                out.extend_from_slice(value);
            }
            Change::LeafUpdate { slot, value } => {
                out.push(TAG_LEAF_UPDATE);
                out.extend_from_slice(&slot.to_le_bytes());
                out.push(value.len() as u8);
                out.extend_from_slice(value);
            }
            Change::LeafDelete { slot } => {
                out.push(TAG_LEAF_DELETE);
                out.extend_from_slice(&slot.to_le_bytes());
            }
            Change::InnerInsert { slot, key, child } => {
                out.push(TAG_INNER_INSERT);
                out.extend_from_slice(&slot.to_le_bytes());
                out.extend_from_slice(&key.to_le_bytes());
                out.extend_from_slice(&child.to_le_bytes());
            }
            Change::Truncate { keep } => {
                out.push(TAG_TRUNCATE);
                out.extend_from_slice(&keep.to_le_bytes());
            }
            Change::InnerDelete { slot } => {
                out.push(TAG_INNER_DELETE);
                out.extend_from_slice(&slot.to_le_bytes());
            }
            Change::InnerSetKey { slot, key } => {
                out.push(TAG_INNER_SET_KEY);
                out.extend_from_slice(&slot.to_le_bytes());
                out.extend_from_slice(&key.to_le_bytes());
            }
        }
    }

    /// Encoded size, bytes.
    pub fn encoded_len(&self) -> usize {
        RECORD_HEADER_BYTES
            + match &self.change {
                Change::LeafInsert { value, .. } => 7 + value.len(),
                Change::LeafUpdate { value, .. } => 3 + value.len(),
                Change::LeafDelete { .. } | Change::Truncate { .. } | Change::InnerDelete { .. } => 2,
                Change::InnerSetKey { .. } => 6,
                Change::InnerInsert { .. } => 10,
            }
    }

    /// Decodes every record of `bytes`, which must hold whole records only.
    pub fn decode_all(bytes: &[u8]) -> Result<Vec<Record>, KvError> {
        let mut r = Reader { bytes, at: 0 };
        let mut out = Vec::new();
        while r.at < bytes.len() {
            let record = Record::decode_one(&mut r)
                .ok_or_else(|| KvError::Corrupt(format!("malformed log record at byte {}", r.at)))?;
            out.push(record);
        }
        Ok(out)
    }

    fn decode_one(r: &mut Reader) -> Option<Record> {
        let lsn = r.u64()?;
        let page = r.u32()?;
        let change = match r.u8()? {
            TAG_LEAF_INSERT => {
                let slot = r.u16()?;
                let key = r.u32()?;
                Change::LeafInsert { slot, key, value: r.value()? }
            }
            TAG_LEAF_UPDATE => {
                let slot = r.u16()?;
                Change::LeafUpdate { slot, value: r.value()? }
            }
            TAG_LEAF_DELETE => Change::LeafDelete { slot: r.u16()? },
            TAG_INNER_INSERT => Change::InnerInsert { slot: r.u16()?, key: r.u32()?, child: r.u32()? },
            TAG_TRUNCATE => Change::Truncate { keep: r.u16()? },
            TAG_INNER_DELETE => Change::InnerDelete { slot: r.u16()? },
            TAG_INNER_SET_KEY => Change::InnerSetKey { slot: r.u16()?, key: r.u32()? },
            _ => return None,
        };
        Some(Record { lsn, page, change })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_and_records_round_trip() {
        let mut page = Page::empty_leaf(7);
        let changes = [
            Change::LeafInsert { slot: 0, key: 5, value: b"five".to_vec() },
            Change::LeafInsert { slot: 0, key: 2, value: b"two".to_vec() },
            Change::LeafUpdate { slot: 1, value: b"FIVE!".to_vec() },
            Change::LeafInsert { slot: 2, key: 9, value: b"nine".to_vec() },
            Change::LeafDelete { slot: 0 },
            Change::Truncate { keep: 1 },
        ];
        let mut log = Vec::new();
        for (i, change) in changes.iter().enumerate() {
            let record = Record { lsn: i as u64 + 1, page: 7, change: change.clone() };
            let before = log.len();
            record.encode_into(&mut log);
            assert_eq!(log.len() - before, record.encoded_len());
        }
        let mut rebuilt = Page::empty_leaf(7);
        for record in Record::decode_all(&log).unwrap() {
            page.apply(record.lsn, &record.change);
            rebuilt.apply(record.lsn, &record.change);
        }
        assert_eq!(page.node, Node::Leaf(Leaf::from_entries([(5, &b"FIVE!"[..])])));
        assert_eq!(page.size, PAGE_HEADER_BYTES + 5 + 5);
        let image = page.encode(128);
        assert_eq!(image.len(), 128);
        assert_eq!(Page::decode(image), Some(page.clone()));
        assert_eq!(rebuilt, page);
        let inner = Page::new(3, 4, Node::Inner { keys: vec![10, 20], children: vec![1, 2, 4] });
        assert_eq!(Page::decode(inner.encode(64)), Some(inner.clone()));
        let mut log = Vec::new();
        for change in [Change::InnerDelete { slot: 0 }, Change::InnerSetKey { slot: 0, key: 15 }] {
            let record = Record { lsn: 9, page: 3, change };
            record.encode_into(&mut log);
        }
        let mut changed = inner.clone();
        for record in Record::decode_all(&log).unwrap() {
            changed.apply(record.lsn, &record.change);
        }
        assert_eq!(changed.node, Node::Inner { keys: vec![15], children: vec![1, 4] });
        assert_eq!(changed, Page::new(3, 9, changed.node.clone()), "the size follows the changes");
        let right = Page::new(5, 2, Node::Inner { keys: vec![40], children: vec![6, 7] });
        let merged = changed.merged_with(&right, 30, 10);
        assert_eq!(merged.node, Node::Inner { keys: vec![15, 30, 40], children: vec![1, 4, 6, 7] });
        assert_eq!(merged.size, changed.size + right.size - PAGE_HEADER_BYTES - 4 + 8);
        let leaf = page.merged_with(&rebuilt, 0, 11);
        assert_eq!(leaf.size, 2 * page.size - PAGE_HEADER_BYTES);
        assert_eq!(Page::decode(vec![0u8; 64]), None);
    }

    #[test]
    fn a_leaf_changed_in_place_encodes_as_one_built_from_its_entries() {
        let mut model: Vec<(u32, Vec<u8>)> = Vec::new();
        let mut page = Page::empty_leaf(1);
        let mut lsn = 0;
        let mut apply = |page: &mut Page, change: Change| {
            lsn += 1;
            page.apply(lsn, &change);
        };
        for k in 0..40u32 {
            let key = (k * 17) % 41;
            let slot = model.partition_point(|(m, _)| *m < key);
            let value = vec![b'a' + (k % 26) as u8; 1 + (k as usize * 7) % MAX_VALUE_BYTES];
            model.insert(slot, (key, value.clone()));
            apply(&mut page, Change::LeafInsert { slot: slot as u16, key, value });
        }
        for (slot, len) in [(0, 64), (5, 1), (39, 30), (20, 20)] {
            model[slot].1 = vec![b'z'; len];
            apply(&mut page, Change::LeafUpdate { slot: slot as u16, value: vec![b'z'; len] });
        }
        for slot in [0, 10, 37] {
            model.remove(slot);
            apply(&mut page, Change::LeafDelete { slot: slot as u16 });
        }
        let expect = |model: &[(u32, Vec<u8>)]| Leaf::from_entries(model.iter().map(|(k, v)| (*k, v.as_slice())));
        assert_eq!(page.node, Node::Leaf(expect(&model)));
        let Node::Leaf(leaf) = &page.node else { unreachable!() };
        assert_eq!(leaf.split_off_copy(20), expect(&model[20..]));
        assert_eq!(page.size, PAGE_HEADER_BYTES + model.iter().map(|(_, v)| 5 + v.len()).sum::<usize>());
        let decoded = Page::decode(page.encode(4096)).unwrap();
        assert_eq!(decoded, page);
        apply(&mut page, Change::Truncate { keep: 12 });
        model.truncate(12);
        assert_eq!(page.node, Node::Leaf(expect(&model)));
        assert_eq!(Page::decode(page.encode(4096)), Some(page));
    }
}
