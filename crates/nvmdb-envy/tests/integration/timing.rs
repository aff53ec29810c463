//! Host time: a write's latency includes any wait for a free buffer page, and the host
//! time moves on by that latency once; a read during an erase suspends it or waits.

use nvmdb_envy::{Envy, EnvyConfig, EnvyMemory};
use nvmdb_memory::Memory;

#[test]
fn a_wait_for_a_buffer_page_is_counted_once() {
    // A 4-page buffer in front of 9 µs programs: back-to-back writes of distinct pages
    // soon wait for the slot the head needs.
    let config = EnvyConfig::small(8, 16, 4, 0.5);
    let pages = config.logical_pages;
    let mut memory = EnvyMemory::new(Envy::format(config).unwrap());
    let (mut memory_waits, mut direct_waits) = (0, 0);
    for i in 0..4 * config.flash_pages() {
        let addr = (i * 7 % pages) * u64::from(config.page_bytes);
        let (now, latency, waits) = {
            let e = memory.envy();
            (e.now_ns(), e.stats().host_write_ns, e.stats().buffer_full_waits)
        };
        if i % 2 == 0 {
            // Through `Memory`: the host time moves by the write's latency, once.
            memory.write_bytes(addr, &[1]);
            let e = memory.envy();
            assert_eq!(e.now_ns() - now, e.stats().host_write_ns - latency, "write {i}");
            memory_waits += e.stats().buffer_full_waits - waits;
        } else {
            // `Envy::write` leaves the host time to its caller.
            let ns = memory.envy_mut().write(addr, &[1]).unwrap();
            let e = memory.envy();
            assert_eq!(e.now_ns(), now, "write {i}");
            assert_eq!(e.stats().host_write_ns - latency, ns);
            direct_waits += e.stats().buffer_full_waits - waits;
            memory.envy_mut().advance_to(now + ns);
        }
    }
    assert!(memory_waits > 100 && direct_waits > 100, "the writes must wait ({memory_waits}, {direct_waits})");
}

/// Writes distinct pages back to back until a clean has issued its erase; returns the
/// system with the erase in progress and a logical page whose copy is in flash.
fn erasing(suspend_reads: bool, parallel_banks: bool) -> (Envy, u64) {
    let mut config = EnvyConfig::small(8, 16, 4, 0.5);
    config.suspend_reads = suspend_reads;
    config.parallel_banks = parallel_banks;
    let mut envy = Envy::format(config).unwrap();
    let mut i = 0;
    while envy.stats().erases == 0 {
        let addr = (i * 7 % config.logical_pages) * u64::from(config.page_bytes);
        let ns = envy.write(addr, &[1]).unwrap();
        let now = envy.now_ns();
        envy.advance_to(now + ns);
        i += 1;
    }
    let in_flash = envy.page_positions().iter().position(Option::is_some).expect("a page in flash") as u64;
    assert!(envy.flash_idle_at_ns() > envy.now_ns() + 1_000_000, "the erase is in progress");
    (envy, in_flash)
}

#[test]
fn a_read_suspends_an_erase_only_with_suspend_on() {
    for parallel in [false, true] {
        let (mut envy, lpn) = erasing(true, parallel);
        let (read_ns, suspend_ns) = (envy.config().flash.read_ns, envy.config().suspend_ns);
        let page = u64::from(envy.config().page_bytes);
        let idle_before = envy.flash_idle_at_ns();
        let latency = envy.read(lpn * page, &mut [0]).unwrap();
        assert_eq!(latency, read_ns + suspend_ns, "parallel {parallel}: suspended for the read");
        assert_eq!(
            envy.flash_idle_at_ns(),
            idle_before + read_ns + suspend_ns,
            "parallel {parallel}: the erase resumes"
        );

        let (mut envy, lpn) = erasing(false, parallel);
        let now = envy.now_ns();
        let idle_before = envy.flash_idle_at_ns();
        let latency = envy.read(lpn * page, &mut [0]).unwrap();
        assert_eq!(latency, idle_before - now + read_ns, "parallel {parallel}: the read waits for the erase");
        assert_eq!(envy.flash_idle_at_ns(), idle_before + read_ns, "parallel {parallel}: then takes the bank");
    }
}
