//! The B+-tree's changes: a change applied to a resident page and logged, descents,
//! splits and rebalancing.

use super::layout::{LOG_ROOM, NO_SLOT};
use super::Engine;
use crate::page::{Change, Node, Page, Record};
use crate::KvError;

impl Engine {
    /// Applies a change to a resident page and logs it.
    pub(super) fn change(&mut self, id: u32, change: Change) -> Result<(), KvError> {
        let lsn = self.next_lsn;
        self.next_lsn += 1;
        let logged = self.config.kind.logs() && self.table[id as usize] != NO_SLOT;
        let frame = self.fetch(id)?;
        frame.page.apply(lsn, &change);
        frame.dirty = true;
        if logged && !frame.whole {
            let record = Record { lsn, page: id, change };
            if frame.log.len() + record.encoded_len() > LOG_ROOM {
                self.flush_log(id)?;
            }
            let frame = self.frames.get_mut(id);
            record.encode_into(&mut frame.log);
        }
        Ok(())
    }

    /// The leaf for `key` and the path to it (each inner page and the child taken).
    pub(super) fn descend(&mut self, key: u32) -> Result<(u32, Vec<(u32, u16)>), KvError> {
        let mut id = self.root;
        let mut path = Vec::new();
        loop {
            let frame = self.fetch(id)?;
            match &frame.page.node {
                Node::Leaf(_) => return Ok((id, path)),
                Node::Inner { keys, children } => {
                    let child = keys.partition_point(|k| *k <= key);
                    path.push((id, child as u16));
                    id = children[child];
                }
            }
        }
    }

    /// The leaf for `key` and its path, with room for `need` more bytes: full pages on
    /// the way are split first, so no page ever holds more than a page (not even in the
    /// middle of an operation, whose records may be written and merged at any time).
    pub(super) fn leaf_with_room(&mut self, key: u32, need: usize) -> Result<(u32, Vec<(u32, u16)>), KvError> {
        let page_bytes = self.config.page_bytes as usize;
        loop {
            let (leaf, path) = self.descend(key)?;
            if self.fetch(leaf)?.page.size + need <= page_bytes {
                return Ok((leaf, path));
            }
            self.split(leaf, &path)?;
        }
    }

    /// Splits page `id` (reached by `path`) in two, adding the separator to its parent,
    /// or to a new root. When the parent has no room it is split instead (its parent
    /// first, and so on); the caller descends again.
    pub(super) fn split(&mut self, id: u32, path: &[(u32, u16)]) -> Result<(), KvError> {
        if let Some((&(parent, _), above)) = path.split_last() {
            if self.fetch(parent)?.page.size + 8 > self.config.page_bytes as usize {
                return self.split(parent, above);
            }
        }
        let frame = self.fetch(id)?;
        let mid = frame.page.len() / 2;
        let (separator, right_node) = match &frame.page.node {
            Node::Leaf(leaf) => (leaf.keys()[mid], Node::Leaf(leaf.split_off_copy(mid))),
            Node::Inner { keys, children } => {
                (keys[mid], Node::Inner { keys: keys[mid + 1..].to_vec(), children: children[mid + 1..].to_vec() })
            }
        };
        self.change(id, Change::Truncate { keep: mid as u16 })?;
        let right = self.alloc_page()?;
        let lsn = self.next_lsn;
        self.next_lsn += 1;
        self.install(Page::new(right, lsn, right_node), true)?;
        match path.last() {
            Some(&(parent, child)) => {
                self.change(parent, Change::InnerInsert { slot: child, key: separator, child: right })
            }
            None => {
                let root = self.alloc_page()?;
                let lsn = self.next_lsn;
                self.next_lsn += 1;
                let node = Node::Inner { keys: vec![separator], children: vec![id, right] };
                self.install(Page::new(root, lsn, node), true)?;
                self.root = root;
                Ok(())
            }
        }
    }

    /// Underflow after a delete, from page `id` (reached by `path`) up. A leaf that is empty
    /// merges with a sibling (always possible: the sibling alone fits a page), and a leaf
    /// under a quarter of a page merges when the two fit in three quarters of one (so
    /// that the next insert does not split them again). An inner page left without keys
    /// (one child) merges with a sibling, the parent's separator pulled down between
    /// them, or, when the sibling is too full for that, takes one child from it through
    /// the parent. A merge keeps the left page, written whole, frees the right one and
    /// removes their separator from the parent, which may then underflow in turn; a root
    /// left with one child gives way to it. Every page involved is in the pool, and the
    /// whole change commits at the next sync (or not at all), like a split.
    pub(super) fn rebalance(&mut self, mut id: u32, mut path: Vec<(u32, u16)>) -> Result<(), KvError> {
        let page_bytes = self.config.page_bytes as usize;
        while let Some((parent, child)) = path.pop() {
            let page = &self.fetch(id)?.page;
            let (is_leaf, must) = (matches!(page.node, Node::Leaf { .. }), page.is_empty());
            let underfull = must || (is_leaf && page.size < page_bytes / 4);
            if !underfull {
                return Ok(());
            }
            let child = usize::from(child);
            let Node::Inner { keys, children } = &self.fetch(parent)?.page.node else {
                unreachable!("a path holds inner pages")
            };
            let (sep_slot, left, right) =
                if child > 0 { (child - 1, children[child - 1], id) } else { (0, id, children[1]) };
            let separator = keys[sep_slot];
            let left_page = self.fetch(left)?.page.clone();
            let right_page = self.fetch(right)?.page.clone();
            let merged = left_page.merged_with(&right_page, separator, 0);
            let limit = if must { page_bytes } else { page_bytes * 3 / 4 };
            if merged.size <= limit {
                self.rewrite(left, merged.node)?;
                self.free_page(right)?;
                self.change(parent, Change::InnerDelete { slot: sep_slot as u16 })?;
                id = parent;
                continue;
            }
            if !must {
                return Ok(());
            }
            // An inner page without keys beside a sibling too full to take its child:
            // one child moves over from the sibling, its separator up to the parent.
            assert!(!is_leaf, "an empty leaf always fits beside its sibling");
            let (Node::Inner { keys: lk, children: lc }, Node::Inner { keys: rk, children: rc }) =
                (&left_page.node, &right_page.node)
            else {
                unreachable!("siblings of an inner page are inner pages")
            };
            if left == id {
                let node = Node::Inner { keys: vec![separator], children: vec![lc[0], rc[0]] };
                let rest = Node::Inner { keys: rk[1..].to_vec(), children: rc[1..].to_vec() };
                self.change(parent, Change::InnerSetKey { slot: sep_slot as u16, key: rk[0] })?;
                self.rewrite(left, node)?;
                self.rewrite(right, rest)?;
            } else {
                let last = lk.len() - 1;
                let node = Node::Inner { keys: vec![separator], children: vec![lc[last + 1], rc[0]] };
                self.change(parent, Change::InnerSetKey { slot: sep_slot as u16, key: lk[last] })?;
                self.change(left, Change::Truncate { keep: last as u16 })?;
                self.rewrite(right, node)?;
            }
            return Ok(());
        }
        // `id` is the root: a root inner page with one child gives way to it.
        if let Node::Inner { keys, children } = &self.fetch(id)?.page.node {
            if keys.is_empty() {
                self.root = children[0];
                self.free_page(id)?;
            }
        }
        Ok(())
    }
}
