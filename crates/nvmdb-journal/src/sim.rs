//! A run of real SQLite on the simulated devices: the safe face of the VFS.

use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::ops::Deref;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use rusqlite::{Connection, OpenFlags};
use serde::Serialize;

use crate::config::JournalConfig;
use crate::devices::{DeviceParams, Devices};
use crate::error::JournalError;
use crate::journal::{CopyStats, PcmJournal, Recovery};
use crate::vfs::{CutActivity, Registration, Shared};

/// Why [`Simulation::try_recover`] failed, and the devices when the journal's recovery
/// was what failed.
pub type RecoveryFailure = (JournalError, Option<Box<Devices>>);

/// The DB page size the runs use (Section 6.1: 1 KB).
pub const PAGE_SIZE: u32 = 1024;

static NEXT_VFS: AtomicU64 = AtomicU64::new(0);

/// A simulated machine: persistent devices, the journal's DRAM state, and a registered
/// SQLite VFS over them.
#[derive(Debug)]
pub struct Simulation {
    registration: Registration,
    config: JournalConfig,
}

/// A SQLite connection on a [`Simulation`]; it borrows the simulation, so the VFS
/// outlives it.
#[derive(Debug)]
pub struct Db<'s> {
    conn: Connection,
    _sim: PhantomData<&'s Simulation>,
}

impl Deref for Db<'_> {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        &self.conn
    }
}

/// SQLite's rollback-journal modes the VFS serves (WAL is not one: it writes no
/// rollback journal).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JournalMode {
    /// `DELETE`: the commit deletes the journal (SQLite's default).
    Delete,
    /// `TRUNCATE`: the commit truncates the journal to 0 bytes; in PCM the same as a
    /// deletion.
    Truncate,
    /// `PERSIST`: the commit zeroes the journal header and the journal stays; the next
    /// transaction's header starts a new journal over it.
    Persist,
    /// `OFF`: no journal.
    Off,
}

impl JournalMode {
    /// The mode's name as SQLite's `PRAGMA journal_mode` takes it.
    pub fn name(self) -> &'static str {
        match self {
            JournalMode::Delete => "DELETE",
            JournalMode::Truncate => "TRUNCATE",
            JournalMode::Persist => "PERSIST",
            JournalMode::Off => "OFF",
        }
    }
}

/// Counters of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct RunStats {
    /// PCM cells programmed (bit updates), Flip-N-Write flag cells included.
    pub total_bit_updates: u64,
    /// The most programs of any one PCM cell (the hottest cell).
    pub max_bit_updates: u64,
    /// PCM bit energy plus block-device page energy, pJ.
    pub energy_pj: u64,
    /// Simulated device time, ns.
    pub time_ns: u64,
    /// The PCM's part of `energy_pj`, pJ.
    pub pcm_energy_pj: u64,
    /// The PCM's part of `time_ns`, ns.
    pub pcm_time_ns: u64,
    /// Device writes (PCM and storage): the power-cut index space.
    pub device_writes: u64,
    /// Block-device pages written.
    pub storage_pages_written: u64,
    /// PCM frame copies at the reuse limit.
    pub frame_copies: u64,
    /// Journal garbage-collection runs.
    pub gc_runs: u64,
    /// What the frame copies copied.
    pub copies: CopyStats,
}

impl Simulation {
    /// A fresh machine.
    pub fn new(config: JournalConfig, params: &DeviceParams, seed: u64) -> Result<Simulation, JournalError> {
        let devices = Devices::new(params)?;
        let journal = PcmJournal::new(config, params.journal_bytes)?;
        Self::assemble(config, devices, journal, seed)
    }

    /// The machine after a power cut: only `devices` survived. Recovery rebuilds the
    /// journal's DRAM state from PCM; SQLite then finds any hot journal and rolls back.
    pub fn recover(config: JournalConfig, devices: Devices, seed: u64) -> Result<(Simulation, Recovery), JournalError> {
        Self::try_recover(config, devices, seed).map_err(|(e, _)| e)
    }

    /// [`Simulation::recover`], giving the devices back when the journal's recovery
    /// fails (a power cut armed with [`Devices::cut_power_after_restore`] may fall in
    /// it); `None` when the failure came later, in registering the new VFS.
    pub fn try_recover(
        config: JournalConfig,
        mut devices: Devices,
        seed: u64,
    ) -> Result<(Simulation, Recovery), RecoveryFailure> {
        devices.restore_power();
        let (journal, recovery) = match PcmJournal::recover(config, &mut devices) {
            Ok(recovered) => recovered,
            Err(e) => return Err((e, Some(Box::new(devices)))),
        };
        let sim = Self::assemble(config, devices, journal, seed).map_err(|e| (e, None))?;
        Ok((sim, recovery))
    }

    fn assemble(
        config: JournalConfig,
        devices: Devices,
        journal: PcmJournal,
        seed: u64,
    ) -> Result<Simulation, JournalError> {
        let shared = Shared {
            devices,
            journal,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            temp_files: BTreeMap::new(),
            error: None,
            shadow: None,
            commits: 0,
            cut_activity: None,
            journals: BTreeMap::new(),
        };
        crate::vfs::seed_sqlite_prng(seed);
        let name = format!("nvmdb-pcm-journal-{}", NEXT_VFS.fetch_add(1, Ordering::Relaxed));
        let registration = Registration::register(&name, Arc::new(Mutex::new(shared)))?;
        Ok(Simulation { registration, config })
    }

    /// The journal configuration.
    pub fn config(&self) -> &JournalConfig {
        &self.config
    }

    /// Opens database file `name` with 1 KB pages and SQLite's default rollback journal
    /// (`journal_mode=DELETE`, `synchronous=FULL`).
    pub fn open(&self, name: &str) -> Result<Db<'_>, JournalError> {
        self.open_with(name, true)
    }

    /// Opens database file `name`; without `journaling`, `journal_mode=OFF` (the
    /// paper's "no journaling" of Figure 19).
    pub fn open_with(&self, name: &str, journaling: bool) -> Result<Db<'_>, JournalError> {
        self.open_in_mode(name, if journaling { JournalMode::Delete } else { JournalMode::Off })
    }

    /// Opens database file `name` with 1 KB pages, `synchronous=FULL` and SQLite's
    /// rollback-journal `mode`.
    pub fn open_in_mode(&self, name: &str, mode: JournalMode) -> Result<Db<'_>, JournalError> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags_and_vfs(name, flags, self.registration.name())?;
        // No string, blob or row longer than a device file could be stored: refuse one
        // before SQLite builds it in memory ("string or blob too big").
        let max_len = i32::try_from(crate::devices::MAX_FILE_BYTES).unwrap_or(i32::MAX);
        conn.set_limit(rusqlite::limits::Limit::SQLITE_LIMIT_LENGTH, max_len);
        conn.pragma_update(None, "page_size", PAGE_SIZE)?;
        conn.pragma_update(None, "journal_mode", mode.name())?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        Ok(Db { conn, _sim: PhantomData })
    }

    /// Puts a database file image on the block device without accounting (loading a
    /// saved image before the run).
    pub fn load_file(&self, name: &str, bytes: Vec<u8>) {
        self.with_shared(|s| s.devices.storage.load(name, bytes));
    }

    /// The bytes of a database file on the block device.
    pub fn file(&self, name: &str) -> Option<Vec<u8>> {
        self.with_shared(|s| s.devices.storage.file(name).map(<[u8]>::to_vec))
    }

    /// Runs `f` on the shared state (between SQLite calls).
    pub fn with_shared<R>(&self, f: impl FnOnce(&mut Shared) -> R) -> R {
        let mut guard = self.registration.shared().lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut guard)
    }

    /// Cuts the power at device write `index` (1-based, counted from this machine's
    /// first write ever).
    pub fn cut_power_at(&self, index: u64) {
        self.with_shared(|s| s.devices.cut_power_at(index));
    }

    /// Arms a second cut for the recovery after this machine's power loss: device write
    /// `index` (1-based, counted from this machine's first write ever) and every later one
    /// are refused once the power is restored.
    pub fn cut_power_after_restore(&self, index: u64) {
        self.with_shared(|s| s.devices.cut_power_after_restore(index));
    }

    /// Transactions committed since power-up, as the VFS sees the commit point
    /// ([`Shared::commits`]).
    pub fn commits(&self) -> u64 {
        self.with_shared(|s| s.commits)
    }

    /// What SQLite was doing at the first device write or sync the power cut refused.
    pub fn cut_activity(&self) -> Option<CutActivity> {
        self.with_shared(|s| s.cut_activity)
    }

    /// Whether the power is cut.
    pub fn is_cut(&self) -> bool {
        self.with_shared(|s| s.devices.is_cut())
    }

    /// Whether a cut interrupted anything ([`Devices::cut_interrupted`]).
    pub fn cut_interrupted(&self) -> bool {
        self.with_shared(|s| s.devices.cut_interrupted())
    }

    /// The counters so far.
    pub fn stats(&self) -> RunStats {
        self.with_shared(|s| RunStats {
            total_bit_updates: s.devices.pcm.stats().bits_written,
            max_bit_updates: s.devices.pcm.wear_report().max_cell_writes,
            energy_pj: s.devices.energy_pj(),
            time_ns: s.devices.time_ns(),
            pcm_energy_pj: s.devices.pcm_energy_pj(),
            pcm_time_ns: s.devices.pcm.stats().storage_time_ns,
            device_writes: s.devices.writes(),
            storage_pages_written: s.devices.storage.stats().pages_written,
            frame_copies: s.journal.frame_copies,
            gc_runs: s.journal.gc_runs,
            copies: s.journal.copies,
        })
    }

    /// Ends the machine: drops the VFS and all DRAM state, and keeps the persistent
    /// devices. Every [`Db`] must have been dropped (the borrow checker sees to it).
    pub fn into_devices(self) -> Devices {
        let shared = Arc::clone(self.registration.shared());
        drop(self.registration);
        let shared = Arc::try_unwrap(shared).expect("no file is open once every connection is closed");
        shared.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner).devices
    }
}
