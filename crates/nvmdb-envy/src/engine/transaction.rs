//! Shadow-copy transactions (the paper's extension).

use std::collections::BTreeSet;

use nvmdb_device::Activity;

use super::Envy;
use crate::error::EnvyError;
use crate::layout::{header, Entry};

impl Envy {
    /// Begins a transaction: until `commit`, the pre-image of every page written stays
    /// in place (a shadow copy, protected from cleaning), and `abort` or a power cut
    /// restores it.
    pub fn begin(&mut self) -> Result<(), EnvyError> {
        if self.txn_pages.is_some() {
            return Err(EnvyError::Transaction("a transaction is already open"));
        }
        self.dev.set_u64(header::TXN, 1)?;
        self.txn_pages = Some(BTreeSet::new());
        self.txn_count = 0;
        Ok(())
    }

    pub(super) fn record_shadow(&mut self, lpn: u32, old: Entry) -> Result<(), EnvyError> {
        if self.txn_count == self.config.max_transaction_pages {
            return Err(EnvyError::Transaction("the transaction writes more pages than max_transaction_pages"));
        }
        // Shadows stay live: with them, the flash must still leave some position a dead
        // page, or cleaning could free nothing.
        let capacity = u64::from(self.config.positions()) * self.pages_per_segment();
        if self.config.logical_pages + u64::from(self.txn_count) + 1 >= capacity {
            return Err(EnvyError::Transaction("the transaction's shadow pages would fill the flash"));
        }
        let k = self.txn_count;
        let bytes: Vec<u8> = [lpn, old.encode()].iter().flat_map(|v| v.to_le_bytes()).collect();
        self.dev.sram_write(self.layout.shadows + 8 * u64::from(k), &bytes)?;
        self.dev.set_u32(header::TXN + 4, k + 1)?;
        self.txn_count = k + 1;
        self.txn_pages.as_mut().expect("open").insert(lpn);
        match old {
            Entry::Flash(ppn) => {
                // copy_on_write drops the ownership; the shadow keeps the page live.
                self.flash_shadow[ppn as usize] = k + 1;
            }
            Entry::Sram(slot) => self.slot_shadow[slot as usize] = k + 1,
            Entry::Unmapped => {}
        }
        Ok(())
    }

    /// Commits: one atomic write closes the transaction; the shadows become dead.
    pub fn commit(&mut self) -> Result<(), EnvyError> {
        if self.txn_pages.is_none() {
            return Err(EnvyError::Transaction("commit without begin"));
        }
        self.doing(Activity::Commit, |e| e.dev.set_u64(header::TXN, 0))?;
        for k in 0..self.txn_count {
            let (_, old) = self.shadow_entry(k);
            match old {
                Entry::Flash(ppn) => self.unmark_flash_shadow(ppn),
                Entry::Sram(slot) => self.slot_shadow[slot as usize] = 0,
                Entry::Unmapped => {}
            }
        }
        self.txn_pages = None;
        self.txn_count = 0;
        self.stats.commits += 1;
        Ok(())
    }

    /// Rolls back: repoints every written page to its pre-image (newest first), then
    /// closes the transaction. Repeating it after a cut is harmless.
    pub fn abort(&mut self) -> Result<(), EnvyError> {
        if self.txn_pages.is_none() {
            return Err(EnvyError::Transaction("abort without begin"));
        }
        for k in (0..self.txn_count).rev() {
            let (lpn, old) = self.shadow_entry(k);
            let current = self.entry(lpn);
            if current == old {
                continue;
            }
            self.set_entry(lpn, old)?;
            if let Entry::Flash(ppn) = current {
                self.disown(ppn);
            }
            match old {
                Entry::Flash(ppn) => {
                    self.unmark_flash_shadow(ppn);
                    self.own(ppn, lpn);
                }
                Entry::Sram(slot) => self.slot_shadow[slot as usize] = 0,
                Entry::Unmapped => {}
            }
        }
        self.dev.set_u64(header::TXN, 0)?;
        self.txn_pages = None;
        self.txn_count = 0;
        self.stats.aborts += 1;
        Ok(())
    }

    /// Whether a transaction is open.
    pub fn in_transaction(&self) -> bool {
        self.txn_pages.is_some()
    }
}
