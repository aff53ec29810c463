//! `Pcm::storage_write_known` (a range written when some of its bytes are known to hold
//! their stored values) against `Pcm::storage_write` of the same bytes, and
//! `Pcm::storage_read_head` (a range read whole, only its first bytes copied) against
//! `Pcm::storage_read`: on random sequences two devices, one used each way, must return
//! the same times and bytes and hold the same bytes, counters, wear, written lines and
//! host memory, for every encoding, both accountings, the three storage timings (and each
//! timed by a program budget, counting every cell), and with and without Start-Gap (whose
//! gap every line write moves).

use nvmdb_device::{FlipNWrite, Pcm, PcmAccounting, PcmConfig, PcmStorageTiming};
use proptest::prelude::*;

use crate::common::{budget_timings, timings};

/// Device bytes: two 64-line chunks and a little more, so ranges cross chunks.
const BYTES: u64 = 130 * 64;

/// One write: its address and length, the unchanged bytes (start and end as fractions of
/// the range, in 1/256ths), the seed of the other bytes, and whether the second device
/// also writes with `storage_write` (so that the two paths interleave).
type KnownWrite = (u64, usize, (u8, u8), u64, bool);

fn known_writes() -> impl Strategy<Value = Vec<KnownWrite>> {
    let addr = prop_oneof![0..BYTES, (0..BYTES / 64).prop_map(|l| l * 64)];
    let len = prop_oneof![0usize..24, 0usize..600, Just(64usize), Just(512usize)];
    prop::collection::vec((addr, len, any::<(u8, u8)>(), any::<u64>(), prop::bool::weighted(0.2)), 1..40)
}

fn check_known(
    group_bits: Option<u32>,
    timing: PcmStorageTiming,
    accounting: PcmAccounting,
    start_gap: bool,
    writes: Vec<KnownWrite>,
) -> Result<(), TestCaseError> {
    let mut config = PcmConfig::new(BYTES);
    config.flip_n_write = group_bits.map(|n| FlipNWrite::new(n).unwrap());
    config.storage = timing;
    config.accounting = accounting;
    config.start_gap_interval = start_gap.then_some(7);
    let (mut whole, mut known) = (Pcm::new(config).unwrap(), Pcm::new(config).unwrap());
    for (i, (addr, len, (a, b), seed, both_whole)) in writes.into_iter().enumerate() {
        let len = len.min((BYTES - addr) as usize);
        let (a, b) = (len * usize::from(a.min(b)) / 255, len * usize::from(a.max(b)) / 255);
        let mut data = vec![0u8; len];
        whole.peek_bytes(addr, &mut data).unwrap();
        let mut x = seed;
        for (at, byte) in data.iter_mut().enumerate() {
            x = x.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(1);
            // Outside the unchanged bytes, some bytes keep their value too.
            if !(a..b).contains(&at) && x >> 63 == 1 {
                *byte = (x >> 40) as u8;
            }
        }
        let t = whole.storage_write(addr, &data).unwrap();
        let got = if both_whole {
            known.storage_write(addr, &data).unwrap()
        } else {
            known.storage_write_known(addr, &data, a..b).unwrap()
        };
        prop_assert_eq!(got, t, "write {} ({} B at {}, unchanged {}..{}): time", i, len, addr, a, b);
        prop_assert_eq!(known.stats(), whole.stats(), "write {}: counters", i);
        // The range read back whole, and read whole copying only its first `a` bytes.
        let (mut all, mut head) = (vec![0u8; len], vec![0u8; a]);
        let t = whole.storage_read(addr, &mut all).unwrap();
        prop_assert_eq!(known.storage_read_head(addr, len as u64, &mut head).unwrap(), t, "read {}: time", i);
        prop_assert_eq!(&head[..], &all[..a]);
        prop_assert_eq!(known.stats(), whole.stats(), "read {}: counters", i);
    }
    let (mut a, mut b) = (vec![0u8; BYTES as usize], vec![0u8; BYTES as usize]);
    whole.peek_bytes(0, &mut a).unwrap();
    known.peek_bytes(0, &mut b).unwrap();
    prop_assert!(a == b, "the devices hold different bytes");
    prop_assert_eq!(known.wear_report(), whole.wear_report());
    prop_assert_eq!(known.heap_bytes(), whole.heap_bytes());
    for line in 0..=BYTES / 64 {
        for lane in 0..9 {
            for bit in [0, 13, 63] {
                prop_assert_eq!(known.cell_writes(line, lane, bit), whole.cell_writes(line, lane, bit));
            }
        }
    }
    Ok(())
}

proptest! {
    #[test]
    fn a_write_with_known_bytes_counts_what_the_whole_write_counts(
        group_bits in prop::option::of(prop::sample::select(vec![8u32, 16, 32, 64])),
        timing in timings(),
        words in any::<bool>(),
        start_gap in prop::bool::weighted(0.25),
        writes in known_writes(),
    ) {
        let accounting = if words { PcmAccounting::Words } else { PcmAccounting::Cells };
        check_known(group_bits, timing, accounting, start_gap, writes)?;
    }

    #[test]
    fn a_write_with_known_bytes_takes_the_whole_writes_time_under_a_program_budget(
        group_bits in prop::option::of(prop::sample::select(vec![8u32, 64])),
        timing in budget_timings(),
        start_gap in prop::bool::weighted(0.25),
        writes in known_writes(),
    ) {
        check_known(group_bits, timing, PcmAccounting::Cells, start_gap, writes)?;
    }
}

#[test]
fn known_bytes_and_heads_lie_within_the_range() {
    let mut pcm = Pcm::new(PcmConfig::new(BYTES)).unwrap();
    assert!(pcm.storage_write_known(BYTES - 8, &[0; 16], 0..0).is_err(), "a range past the end is an error");
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| pcm.storage_write_known(0, &[0; 16], 8..17)));
    assert!(caught.is_err(), "unchanged bytes past the data are refused");
    assert!(pcm.storage_read_head(BYTES - 8, 16, &mut [0; 4]).is_err(), "a read past the end is an error");
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| pcm.storage_read_head(0, 4, &mut [0; 8])));
    assert!(caught.is_err(), "a head longer than the read is refused");
    assert_eq!(pcm.stats().storage_ops, 0);
}
