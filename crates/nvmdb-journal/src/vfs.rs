//! The SQLite VFS: the only module with `unsafe` code. SQLite calls these `extern "C"`
//! functions through the `sqlite3_vfs` and `sqlite3_io_methods` tables; each one turns
//! its raw arguments into safe Rust values at once and calls [`Shared`].
//!
//! The main database file goes to the block device, the main journal to the PCM
//! journal, and every other file (statement journals, temporary databases) to plain
//! memory with no accounting. WAL is not supported (`xShmMap` is absent, iVersion 1 I/O).
#![allow(unsafe_code, reason = "a SQLite VFS is a table of C callbacks over raw pointers")]

use std::collections::BTreeMap;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::{Arc, Mutex, MutexGuard};

use libsqlite3_sys as ffi;
use rand::RngCore;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;

use crate::devices::Devices;
use crate::error::JournalError;
use crate::journal::PcmJournal;
use crate::layout::JOURNAL_HEADER_BYTES;

/// The suffix SQLite gives a rollback journal's name.
pub const JOURNAL_SUFFIX: &str = "-journal";
const MAX_PATHNAME: c_int = 512;

/// Everything the VFS callbacks act on.
#[derive(Debug)]
pub struct Shared {
    /// The persistent devices.
    pub devices: Devices,
    /// The journal manager (its fields are the DRAM state).
    pub journal: PcmJournal,
    /// SQLite's randomness (journal checksum nonces), seeded.
    pub rng: Xoshiro256PlusPlus,
    /// Files that are neither the database nor its journal: volatile, not accounted.
    pub temp_files: BTreeMap<String, Vec<u8>>,
    /// The first error the VFS returned to SQLite since the last [`Shared::take_error`].
    pub error: Option<JournalError>,
    /// When set, a plain copy of every journal file as SQLite wrote it, against which
    /// every journal read is checked.
    pub shadow: Option<Shadow>,
    /// Transactions committed, as the VFS sees the commit point: a journal SQLite began
    /// (its header sector written at offset 0) and did not read back from its start was
    /// finalized: deleted, truncated to 0 bytes, or (`journal_mode=PERSIST`) its header
    /// zeroed, and the first device write of that completed (the commit point: the hot
    /// flag cleared, or the zeroed header written). Autocommit statements count as the transactions
    /// they are; a rollback (a `ROLLBACK`, a hot journal's) reads the journal from its
    /// start first and does not count.
    pub commits: u64,
    /// What SQLite was doing at the first device write or sync a power cut refused.
    pub cut_activity: Option<CutActivity>,
    /// The journals begun since this machine powered up, by database, and whether
    /// SQLite has read each back from its start (a rollback's playback).
    pub journals: BTreeMap<String, JournalLife>,
}

/// What SQLite was doing at a device write or sync, as the VFS sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CutActivity {
    /// Writing the rollback journal (its header, page numbers, page images, checksums).
    JournalWrite,
    /// Writing, truncating or deleting the database file in a transaction.
    DatabaseWrite,
    /// A sync of the journal or the database file.
    Sync,
    /// The commit point: deleting, truncating or zeroing the header of a journal SQLite
    /// did not read back.
    Commit,
    /// A rollback: the database writes after SQLite read the journal back, and the
    /// journal's deletion then.
    Rollback,
}

/// A journal begun since power-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JournalLife {
    /// Written, not read back.
    Written,
    /// Read back from its start (a rollback is under way).
    PlayedBack,
}

/// Plain copies of the journal files, to check that reads return what was written.
#[derive(Debug, Clone, Default)]
pub struct Shadow {
    files: BTreeMap<String, Vec<u8>>,
    /// Journal reads checked.
    pub reads: u64,
    /// Journal bytes checked.
    pub bytes: u64,
    /// Reads whose bytes or length differed from the copy.
    pub mismatches: u64,
}

impl Shadow {
    fn write(&mut self, db: &str, offset: u64, data: &[u8]) {
        let file = self.files.entry(db.to_string()).or_default();
        let end = offset as usize + data.len();
        if file.len() < end {
            file.resize(end, 0);
        }
        file[offset as usize..end].copy_from_slice(data);
    }

    fn check(&mut self, db: &str, offset: u64, got: &[u8], n: usize) {
        let file = self.files.get(db).map_or(&[][..], Vec::as_slice);
        let mut want = vec![0u8; got.len()];
        let m = read_vec(file, offset, &mut want);
        self.reads += 1;
        self.bytes += got.len() as u64;
        if m != n || want != got {
            self.mismatches += 1;
        }
    }

    fn delete(&mut self, db: &str) {
        self.files.remove(db);
    }
}

impl Shared {
    fn note(&mut self, e: JournalError) -> c_int {
        let code = match e {
            JournalError::Full(_) => ffi::SQLITE_FULL,
            _ => ffi::SQLITE_IOERR,
        };
        self.error.get_or_insert(e);
        code
    }

    /// Takes the error noted last, if any.
    pub fn take_error(&mut self) -> Option<JournalError> {
        self.error.take()
    }

    /// Passes `result` on, noting `activity` if it is the first power cut refused.
    fn track<T>(&mut self, activity: CutActivity, result: Result<T, JournalError>) -> Result<T, JournalError> {
        if let (Err(JournalError::PowerCut(_)), None) = (&result, self.cut_activity) {
            self.cut_activity = Some(activity);
        }
        result
    }

    /// What a write to database file `name` is part of: a rollback once its journal was
    /// read back.
    fn database_activity(&self, name: &str) -> CutActivity {
        match self.journals.get(name) {
            Some(JournalLife::PlayedBack) => CutActivity::Rollback,
            _ => CutActivity::DatabaseWrite,
        }
    }

    /// Finalizes the journal of `db` (`end`: the deletion, truncation or header zeroing),
    /// counting a commit on a journal not read back once the first device write of its
    /// finalization completed: clearing the hot flag, or writing the zeroed header, is the
    /// commit point (the writes after it may be cut; recovery finishes them).
    fn finalize(
        &mut self,
        db: &str,
        end: impl FnOnce(&mut Shared) -> Result<(), JournalError>,
    ) -> Result<(), JournalError> {
        let life = self.journals.get(db).copied();
        let activity = if life == Some(JournalLife::Written) { CutActivity::Commit } else { CutActivity::Rollback };
        let writes = self.devices.writes();
        let result = end(self);
        let result = self.track(activity, result);
        if result.is_ok() || self.devices.writes() > writes {
            self.commits += u64::from(life == Some(JournalLife::Written));
            self.journals.remove(db);
        }
        result
    }
}

type SharedRef = Mutex<Shared>;

fn lock(shared: &SharedRef) -> MutexGuard<'_, Shared> {
    shared.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Seeds SQLite's process-wide PRNG, from which it draws journal checksum nonces. SQLite
/// seeds it from the default VFS, not ours, so without this the nonces, and so the
/// journal's bit updates, would change from run to run. The PRNG is shared by every
/// connection in the process: runs are deterministic when run one at a time.
pub fn seed_sqlite_prng(seed: u64) {
    // Zero means "no seed" to SQLite.
    let seed = ((seed ^ seed >> 32) as u32 | 1) as c_int;
    // SAFETY: SQLITE_TESTCTRL_PRNG_SEED takes an int and a database pointer, null here
    // (use the int); it stores the seed and resets the PRNG under SQLite's own mutex.
    unsafe {
        ffi::sqlite3_test_control(ffi::SQLITE_TESTCTRL_PRNG_SEED, seed, std::ptr::null_mut::<ffi::sqlite3>());
    }
}

/// Caps the heap SQLite allocates in this process (`sqlite3_hard_heap_limit64`): past
/// `bytes`, an allocation fails and the statement ends with "out of memory" instead of
/// growing without bound. Process-wide, like SQLite's own setting.
pub fn limit_sqlite_heap(bytes: u64) {
    let bytes = i64::try_from(bytes).unwrap_or(i64::MAX);
    // SAFETY: sqlite3_hard_heap_limit64 takes a plain integer and sets the limit under
    // SQLite's own mutex.
    unsafe {
        ffi::sqlite3_hard_heap_limit64(bytes);
    }
}

/// A registered VFS. Unregistered and freed on drop; connections opened on it must be
/// closed first (the safe wrapper in `sim.rs` borrows this for each connection).
#[derive(Debug)]
pub struct Registration {
    vfs: *mut ffi::sqlite3_vfs,
    name: CString,
    shared: Arc<SharedRef>,
}

impl Registration {
    /// Registers a VFS named `name` over `shared`.
    pub fn register(name: &str, shared: Arc<SharedRef>) -> Result<Registration, JournalError> {
        let name = CString::new(name).map_err(|_| JournalError::Config("VFS name has a NUL".into()))?;
        let vfs = Box::new(ffi::sqlite3_vfs {
            iVersion: 2,
            szOsFile: std::mem::size_of::<File>() as c_int,
            mxPathname: MAX_PATHNAME,
            pNext: std::ptr::null_mut(),
            zName: name.as_ptr(),
            pAppData: Arc::as_ptr(&shared) as *mut c_void,
            xOpen: Some(x_open),
            xDelete: Some(x_delete),
            xAccess: Some(x_access),
            xFullPathname: Some(x_full_pathname),
            xDlOpen: None,
            xDlError: None,
            xDlSym: None,
            xDlClose: None,
            xRandomness: Some(x_randomness),
            xSleep: Some(x_sleep),
            xCurrentTime: Some(x_current_time),
            xGetLastError: Some(x_get_last_error),
            xCurrentTimeInt64: Some(x_current_time_int64),
            xSetSystemCall: None,
            xGetSystemCall: None,
            xNextSystemCall: None,
        });
        let vfs = Box::into_raw(vfs);
        // SAFETY: `vfs` points to a fully initialised table that lives until `drop`
        // unregisters it; `zName` and `pAppData` are owned by the returned value.
        let rc = unsafe { ffi::sqlite3_vfs_register(vfs, 0) };
        if rc != ffi::SQLITE_OK {
            // SAFETY: SQLite refused the table, so nothing else refers to it.
            drop(unsafe { Box::from_raw(vfs) });
            return Err(JournalError::Sqlite(format!("sqlite3_vfs_register returned {rc}")));
        }
        Ok(Registration { vfs, name, shared })
    }

    /// The name connections open it by.
    pub fn name(&self) -> &str {
        self.name.to_str().expect("the name was made from a str")
    }

    /// The state the callbacks share.
    pub fn shared(&self) -> &Arc<SharedRef> {
        &self.shared
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        // SAFETY: `self.vfs` was registered in `register`; no connection uses it any more
        // (the safe wrapper's borrows end before this drop), so after unregistering
        // SQLite holds no pointer to it and the box can be freed.
        unsafe {
            ffi::sqlite3_vfs_unregister(self.vfs);
            drop(Box::from_raw(self.vfs));
        }
    }
}

enum Kind {
    Database(String),
    Journal(String),
    Temp(String),
}

struct FileState {
    shared: Arc<SharedRef>,
    kind: Kind,
}

/// SQLite's file object, extended with our state.
#[repr(C)]
struct File {
    base: ffi::sqlite3_file,
    state: *mut FileState,
}

static IO_METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 1,
    xClose: Some(x_close),
    xRead: Some(x_read),
    xWrite: Some(x_write),
    xTruncate: Some(x_truncate),
    xSync: Some(x_sync),
    xFileSize: Some(x_file_size),
    xLock: Some(x_lock),
    xUnlock: Some(x_unlock),
    xCheckReservedLock: Some(x_check_reserved_lock),
    xFileControl: Some(x_file_control),
    xSectorSize: Some(x_sector_size),
    xDeviceCharacteristics: Some(x_device_characteristics),
    xShmMap: None,
    xShmLock: None,
    xShmBarrier: None,
    xShmUnmap: None,
    xFetch: None,
    xUnfetch: None,
};

/// The shared state of a VFS.
///
/// # Safety
/// `vfs` must be a table made by [`Registration::register`] that is still registered.
unsafe fn shared_of<'a>(vfs: *mut ffi::sqlite3_vfs) -> &'a SharedRef {
    // SAFETY: per the contract, `pAppData` is `Arc::as_ptr` of the registration's Arc,
    // which outlives every call SQLite makes through the table.
    unsafe { &*((*vfs).pAppData as *const SharedRef) }
}

/// The state of an open file.
///
/// # Safety
/// `file` must be a `File` that `x_open` initialised and `x_close` has not closed.
unsafe fn state_of<'a>(file: *mut ffi::sqlite3_file) -> &'a mut FileState {
    // SAFETY: per the contract `file` is our `File`, whose `state` came from
    // `Box::into_raw` in `x_open`; SQLite does not call one file from two threads at once.
    unsafe { &mut *(*(file as *mut File)).state }
}

/// A C string argument as a Rust string; `None` for a null pointer.
///
/// # Safety
/// `name` must be null or a NUL-terminated string that lives for the call.
unsafe fn name_of(name: *const c_char) -> Option<String> {
    if name.is_null() {
        return None;
    }
    // SAFETY: per the contract the pointer is a NUL-terminated string.
    Some(unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned())
}

/// A mutable byte buffer from SQLite.
///
/// # Safety
/// `ptr` must point to `len` writable bytes for the call.
unsafe fn buf_mut<'a>(ptr: *mut c_void, len: c_int) -> &'a mut [u8] {
    // SAFETY: per the contract.
    unsafe { std::slice::from_raw_parts_mut(ptr as *mut u8, len.max(0) as usize) }
}

unsafe extern "C" fn x_open(
    vfs: *mut ffi::sqlite3_vfs,
    name: ffi::sqlite3_filename,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    // SAFETY: SQLite passes our registered table and a name that is null or a C string.
    let (shared, name) = unsafe { (shared_of(vfs), name_of(name)) };
    let kind = if flags & ffi::SQLITE_OPEN_WAL != 0 {
        return ffi::SQLITE_CANTOPEN;
    } else if flags & ffi::SQLITE_OPEN_MAIN_JOURNAL != 0 {
        match name.as_deref().and_then(|n| n.strip_suffix(JOURNAL_SUFFIX)) {
            Some(db) => Kind::Journal(db.to_string()),
            None => return ffi::SQLITE_CANTOPEN,
        }
    } else if flags & ffi::SQLITE_OPEN_MAIN_DB != 0 {
        match name {
            Some(n) => Kind::Database(n),
            None => return ffi::SQLITE_CANTOPEN,
        }
    } else {
        let mut guard = lock(shared);
        let n = name.unwrap_or_else(|| format!("temp-{}", guard.rng.next_u64()));
        guard.temp_files.entry(n.clone()).or_default();
        Kind::Temp(n)
    };
    // SAFETY: `pAppData` is the registration's Arc, alive during this call.
    let arc = unsafe {
        Arc::increment_strong_count((*vfs).pAppData as *const SharedRef);
        Arc::from_raw((*vfs).pAppData as *const SharedRef)
    };
    let state = Box::into_raw(Box::new(FileState { shared: arc, kind }));
    // SAFETY: SQLite gives `szOsFile` = size_of::<File>() writable, suitably aligned
    // bytes at `file`, and `out_flags` is null or writable.
    unsafe {
        std::ptr::write(file as *mut File, File { base: ffi::sqlite3_file { pMethods: &IO_METHODS }, state });
        if !out_flags.is_null() {
            *out_flags = flags;
        }
    }
    ffi::SQLITE_OK
}

unsafe extern "C" fn x_delete(vfs: *mut ffi::sqlite3_vfs, name: *const c_char, _sync_dir: c_int) -> c_int {
    // SAFETY: SQLite passes our registered table and a C string.
    let (shared, name) = unsafe { (shared_of(vfs), name_of(name)) };
    let Some(name) = name else { return ffi::SQLITE_IOERR_DELETE };
    let mut guard = lock(shared);
    let g = &mut *guard;
    let result = if let Some(db) = name.strip_suffix(JOURNAL_SUFFIX) {
        let r = g.finalize(db, |g| g.journal.delete(&mut g.devices, db));
        if let (Ok(()), Some(shadow)) = (&r, g.shadow.as_mut()) {
            shadow.delete(db);
        }
        r
    } else if g.temp_files.remove(&name).is_some() {
        Ok(())
    } else if g.devices.storage.file(&name).is_some() {
        let r = g.devices.file_delete(&name);
        g.track(g.database_activity(&name), r)
    } else {
        Ok(())
    };
    match result {
        Ok(()) => ffi::SQLITE_OK,
        Err(e) => {
            g.note(e);
            ffi::SQLITE_IOERR_DELETE
        }
    }
}

unsafe extern "C" fn x_access(
    vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    _flags: c_int,
    out: *mut c_int,
) -> c_int {
    // SAFETY: SQLite passes our registered table and a C string.
    let (shared, name) = unsafe { (shared_of(vfs), name_of(name)) };
    let guard = lock(shared);
    let exists = match name.as_deref() {
        None => false,
        Some(n) => match n.strip_suffix(JOURNAL_SUFFIX) {
            Some(db) => guard.journal.exists(db),
            None => guard.devices.storage.file(n).is_some() || guard.temp_files.contains_key(n),
        },
    };
    // SAFETY: `out` is a writable int.
    unsafe { *out = c_int::from(exists) };
    ffi::SQLITE_OK
}

unsafe extern "C" fn x_full_pathname(
    _vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    n_out: c_int,
    out: *mut c_char,
) -> c_int {
    // SAFETY: `name` is a C string; `out` has `n_out` writable bytes.
    unsafe {
        let bytes = CStr::from_ptr(name).to_bytes_with_nul();
        if bytes.len() > n_out.max(0) as usize {
            return ffi::SQLITE_CANTOPEN;
        }
        std::ptr::copy_nonoverlapping(bytes.as_ptr() as *const c_char, out, bytes.len());
    }
    ffi::SQLITE_OK
}

unsafe extern "C" fn x_randomness(vfs: *mut ffi::sqlite3_vfs, n: c_int, out: *mut c_char) -> c_int {
    // SAFETY: our table; `out` has `n` writable bytes.
    let (shared, buf) = unsafe { (shared_of(vfs), buf_mut(out as *mut c_void, n)) };
    lock(shared).rng.fill_bytes(buf);
    n
}

unsafe extern "C" fn x_sleep(_vfs: *mut ffi::sqlite3_vfs, micros: c_int) -> c_int {
    micros
}

/// A fixed time (2026-01-01, Julian day 2461041.5): runs do not read the wall clock.
const JULIAN_DAY_MS: i64 = 212_634_007_200_000;

unsafe extern "C" fn x_current_time(_vfs: *mut ffi::sqlite3_vfs, out: *mut f64) -> c_int {
    // SAFETY: `out` is a writable double.
    unsafe { *out = JULIAN_DAY_MS as f64 / 86_400_000.0 };
    ffi::SQLITE_OK
}

unsafe extern "C" fn x_current_time_int64(_vfs: *mut ffi::sqlite3_vfs, out: *mut ffi::sqlite3_int64) -> c_int {
    // SAFETY: `out` is a writable 64-bit int.
    unsafe { *out = JULIAN_DAY_MS };
    ffi::SQLITE_OK
}

unsafe extern "C" fn x_get_last_error(_vfs: *mut ffi::sqlite3_vfs, _n: c_int, _out: *mut c_char) -> c_int {
    0
}

unsafe extern "C" fn x_close(file: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: `file` was opened by `x_open` and is closed once; taking the box back
    // drops the state, and the methods pointer is cleared.
    unsafe {
        let f = file as *mut File;
        drop(Box::from_raw((*f).state));
        (*f).state = std::ptr::null_mut();
        (*f).base.pMethods = std::ptr::null();
    }
    ffi::SQLITE_OK
}

unsafe extern "C" fn x_read(file: *mut ffi::sqlite3_file, buf: *mut c_void, amt: c_int, offset: i64) -> c_int {
    // SAFETY: an open file of ours; `buf` has `amt` writable bytes.
    let (state, buf) = unsafe { (state_of(file), buf_mut(buf, amt)) };
    let offset = offset.max(0) as u64;
    let mut guard = lock(&state.shared);
    let g = &mut *guard;
    let got = match &state.kind {
        Kind::Database(name) => Ok(g.devices.file_read(name, offset, buf)),
        Kind::Journal(db) => {
            let r = g.journal.read(&mut g.devices, db, offset, buf);
            if let (Ok(n), Some(shadow)) = (&r, g.shadow.as_mut()) {
                shadow.check(db, offset, buf, *n);
            }
            // A playback reads the journal's magic (8 bytes) at its start; the check for
            // a hot journal reads 1 byte, and a savepoint's rollback reads on from later.
            if offset == 0 && buf.len() >= 8 {
                g.journals.insert(db.clone(), JournalLife::PlayedBack);
            }
            r
        }
        Kind::Temp(name) => Ok(read_vec(g.temp_files.get(name).map_or(&[][..], Vec::as_slice), offset, buf)),
    };
    match got {
        Ok(n) if n == buf.len() => ffi::SQLITE_OK,
        Ok(_) => ffi::SQLITE_IOERR_SHORT_READ,
        Err(e) => {
            g.note(e);
            ffi::SQLITE_IOERR_READ
        }
    }
}

fn read_vec(data: &[u8], offset: u64, buf: &mut [u8]) -> usize {
    let start = (offset as usize).min(data.len());
    let n = (data.len() - start).min(buf.len());
    buf[..n].copy_from_slice(&data[start..start + n]);
    buf[n..].fill(0);
    n
}

unsafe extern "C" fn x_write(file: *mut ffi::sqlite3_file, buf: *const c_void, amt: c_int, offset: i64) -> c_int {
    // SAFETY: an open file of ours; `buf` has `amt` readable bytes.
    let (state, data) = unsafe { (state_of(file), std::slice::from_raw_parts(buf as *const u8, amt.max(0) as usize)) };
    let offset = offset.max(0) as u64;
    let mut guard = lock(&state.shared);
    let g = &mut *guard;
    let result = match &state.kind {
        Kind::Database(name) => {
            let r = g.devices.file_write(name, offset, data);
            g.track(g.database_activity(name), r)
        }
        Kind::Journal(db) => {
            let header = offset == 0 && data.len() as u64 == JOURNAL_HEADER_BYTES;
            // Under PERSIST SQLite ends a journal by zeroing the start of its header.
            let zeroing = offset == 0 && !header && data.iter().all(|&b| b == 0) && g.journals.contains_key(db);
            let r = if zeroing {
                g.finalize(db, |g| g.journal.write(&mut g.devices, db, offset, data))
            } else {
                let r = g.journal.write(&mut g.devices, db, offset, data);
                if header && r.is_ok() {
                    g.journals.insert(db.clone(), JournalLife::Written);
                }
                g.track(CutActivity::JournalWrite, r)
            };
            if let (Ok(()), Some(shadow)) = (&r, g.shadow.as_mut()) {
                shadow.write(db, offset, data);
            }
            r
        }
        Kind::Temp(name) => write_temp(g.temp_files.entry(name.clone()).or_default(), offset, data),
    };
    match result {
        Ok(()) => ffi::SQLITE_OK,
        Err(e) => match g.note(e) {
            ffi::SQLITE_FULL => ffi::SQLITE_FULL,
            _ => ffi::SQLITE_IOERR_WRITE,
        },
    }
}

fn write_temp(file: &mut Vec<u8>, offset: u64, data: &[u8]) -> Result<(), JournalError> {
    let end = offset as usize + data.len();
    if end as u64 > crate::devices::MAX_FILE_BYTES {
        return Err(JournalError::Full("temporary file too large".into()));
    }
    if file.len() < end {
        file.resize(end, 0);
    }
    file[offset as usize..end].copy_from_slice(data);
    Ok(())
}

unsafe extern "C" fn x_truncate(file: *mut ffi::sqlite3_file, size: i64) -> c_int {
    // SAFETY: an open file of ours.
    let state = unsafe { state_of(file) };
    let size = size.max(0) as u64;
    let mut guard = lock(&state.shared);
    let g = &mut *guard;
    let result = match &state.kind {
        Kind::Database(name) => {
            let r = g.devices.file_truncate(name, size);
            g.track(g.database_activity(name), r)
        }
        Kind::Journal(db) => {
            let r = if size == 0 {
                g.finalize(db, |g| g.journal.truncate(&mut g.devices, db, size))
            } else {
                let r = g.journal.truncate(&mut g.devices, db, size);
                g.track(CutActivity::JournalWrite, r)
            };
            if let (Ok(()), Some(shadow), 0) = (&r, g.shadow.as_mut(), size) {
                shadow.delete(db);
            }
            r
        }
        Kind::Temp(name) => {
            g.temp_files.entry(name.clone()).or_default().truncate(size as usize);
            Ok(())
        }
    };
    match result {
        Ok(()) => ffi::SQLITE_OK,
        Err(e) => {
            g.note(e);
            ffi::SQLITE_IOERR_TRUNCATE
        }
    }
}

unsafe extern "C" fn x_sync(file: *mut ffi::sqlite3_file, _flags: c_int) -> c_int {
    // SAFETY: an open file of ours.
    let state = unsafe { state_of(file) };
    let mut guard = lock(&state.shared);
    let r = guard.devices.sync();
    match guard.track(CutActivity::Sync, r) {
        Ok(()) => ffi::SQLITE_OK,
        Err(_) => ffi::SQLITE_IOERR_FSYNC,
    }
}

unsafe extern "C" fn x_file_size(file: *mut ffi::sqlite3_file, out: *mut ffi::sqlite3_int64) -> c_int {
    // SAFETY: an open file of ours; `out` is writable.
    let state = unsafe { state_of(file) };
    let guard = lock(&state.shared);
    let size = match &state.kind {
        Kind::Database(name) => guard.devices.storage.file(name).map_or(0, <[u8]>::len) as u64,
        Kind::Journal(db) => guard.journal.size(db),
        Kind::Temp(name) => guard.temp_files.get(name).map_or(0, Vec::len) as u64,
    };
    // SAFETY: `out` is a writable 64-bit int.
    unsafe { *out = size as ffi::sqlite3_int64 };
    ffi::SQLITE_OK
}

unsafe extern "C" fn x_lock(_file: *mut ffi::sqlite3_file, _level: c_int) -> c_int {
    ffi::SQLITE_OK
}

unsafe extern "C" fn x_unlock(_file: *mut ffi::sqlite3_file, _level: c_int) -> c_int {
    ffi::SQLITE_OK
}

unsafe extern "C" fn x_check_reserved_lock(_file: *mut ffi::sqlite3_file, out: *mut c_int) -> c_int {
    // SAFETY: `out` is a writable int. One process, one connection at a time: no other
    // holder of a reserved lock exists.
    unsafe { *out = 0 };
    ffi::SQLITE_OK
}

unsafe extern "C" fn x_file_control(_file: *mut ffi::sqlite3_file, _op: c_int, _arg: *mut c_void) -> c_int {
    ffi::SQLITE_NOTFOUND
}

unsafe extern "C" fn x_sector_size(_file: *mut ffi::sqlite3_file) -> c_int {
    JOURNAL_HEADER_BYTES as c_int
}

unsafe extern "C" fn x_device_characteristics(_file: *mut ffi::sqlite3_file) -> c_int {
    0
}
