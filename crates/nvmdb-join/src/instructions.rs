//! Instructions the joins declare to the CPU time model (`nvmdb_memory::timing`) beside
//! their loads and stores: estimates of x86-64 instructions per step, the same for every
//! algorithm so that their times compare fairly.
//!
//! The memory counts one instruction per cache line a load or store touches; these are
//! the others. A copied or folded record is one access per line but one move per 8 B
//! word, so a word costs [`WORD`] on top.
//!
//! The joins also declare which accesses are independent (their addresses do not depend
//! on each other's values, so an out-of-order core overlaps their misses): the lines of
//! one record read or copied, the R and S records a match reads, a hash-table insertion's
//! bucket head and entry, and the lines a bucket reset zeroes. Everything else is timed
//! one access after another: a key's hash chooses the bucket or partition the next access
//! goes to, a chain entry gives the next, and an ID list gives the record to read.

/// Hashing a key: the MurmurHash3 finaliser's three shift-xor pairs and two multiplies,
/// and masking the bucket index.
pub(crate) const HASH: u64 = 9;
/// Choosing a partition from a hash code (shift, multiply, shift) and indexing its list
/// or stream.
pub(crate) const PARTITION: u64 = 4;
/// Appending to a partition's stream or ID list: cursor, chunk-full test, increment.
pub(crate) const APPEND: u64 = 3;
/// Delta-encoding or decoding one ID unit: subtract or add, escape compare, branch.
pub(crate) const DELTA: u64 = 3;
/// A hash-table insertion's bookkeeping: entry address, count, bound test, dirty bound.
pub(crate) const INSERT: u64 = 4;
/// One entry of a probe chain: hash compare, branch, null test, loop.
pub(crate) const CHAIN_STEP: u64 = 4;
/// Comparing a candidate's join key with the probing key: compare, branch.
pub(crate) const KEY_COMPARE: u64 = 2;
/// One 8 B word of a record copied or folded into the result: a move and the
/// rotate-xor fold.
pub(crate) const WORD: u64 = 2;
/// Emitting a result pair: count, checksum rotate, xor, add.
pub(crate) const EMIT: u64 = 4;
/// One iteration of a loop over records or ID units: increment, compare, branch.
pub(crate) const LOOP: u64 = 2;

/// [`WORD`] for every word of `bytes` bytes.
pub(crate) fn words(bytes: u64) -> u64 {
    WORD * bytes.div_ceil(8)
}
