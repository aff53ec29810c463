//! Host time: a write's latency includes any wait for a free buffer page, and the host
//! time moves on by that latency once.

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
