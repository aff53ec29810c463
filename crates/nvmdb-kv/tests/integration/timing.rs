//! Where flash time comes from: the board SSD's measured latency (garbage collection
//! inside it, so a collection's copies and erases are counted but take no time) or the
//! NAND chip's datasheet times (every operation timed, a collection's included); and
//! `ipl`'s partial programs at the chip's program time under both.

use nvmdb_kv::config::sector_program_ns;
use nvmdb_kv::devices::one_log_write_ns;
use nvmdb_kv::workload::run;
use nvmdb_kv::{Benchmark, DevicePreset, Engine, EngineConfig, EngineKind, FlashTime, Stats, WorkloadSpec};

const RECORDS: u64 = 4_000;

/// The update benchmark of a flash-only engine with a three-page pool (8 KB pages), so
/// that nearly every operation writes a page back and the FTL collects garbage.
fn flash_only_update(flash_time: FlashTime) -> Stats {
    let mut config = EngineConfig::new(EngineKind::FlashOnly, RECORDS, 26);
    config.buffer_bytes = 3 * 8192;
    config.flash_time = flash_time;
    let mut engine = Engine::new(config).unwrap();
    let spec = WorkloadSpec::seed_benchmark(Benchmark::Update, RECORDS, 7);
    run(&mut engine, &spec, 1 << 16, &mut |_| {}).unwrap().stats
}

#[test]
fn the_measured_source_adds_no_garbage_collection_time_and_still_counts_its_erases() {
    let measured = flash_only_update(FlashTime::Measured);
    let chip = flash_only_update(FlashTime::Chip);
    for (name, s) in [("measured", &measured), ("chip", &chip)] {
        assert!(s.page_image_writes > 1_000, "{name}: {} page writes", s.page_image_writes);
        assert!(s.flash_erases > 0, "{name}: the FTL collected no garbage");
    }
    // Measured: every 8 KB page write takes exactly the SSD's 1.6 ms, garbage collection
    // or not; the collection's copies are programs beyond the engine's own writes.
    assert_eq!(measured.page_image_write_ns, measured.page_image_writes * 1_600_000);
    assert!(measured.flash_page_writes > measured.page_image_writes, "no garbage-collection copies");
    // Chip: an 8 KB page is four 2 KB programs of 250 µs, and the collection's copies
    // (75 µs read, 250 µs program per 2 KB) and erases (1.5 ms) add to the writes that
    // cause them.
    let programs_ns = chip.page_image_writes * 4 * 250_000;
    assert!(chip.page_image_write_ns > programs_ns, "{} ns for {programs_ns} ns of programs", chip.page_image_write_ns);
    // The source moves the flash write time.
    let mean = |s: &Stats| s.page_image_write_ns as f64 / s.page_image_writes as f64;
    assert!(mean(&chip) < mean(&measured), "chip {} ns, measured {} ns", mean(&chip), mean(&measured));
}

#[test]
fn ipl_partial_programs_take_the_chips_program_time_under_either_source() {
    for flash_time in FlashTime::ALL {
        // One log sector programmed on fresh devices, through the engine's device path.
        let mut config = EngineConfig::new(EngineKind::Ipl, 1_000, 26);
        config.flash_time = flash_time;
        assert_eq!(one_log_write_ns(&config).unwrap(), 250_000, "{flash_time:?}");
        assert_eq!(sector_program_ns(config.flash_page_bytes()), 250_000, "{flash_time:?}");
        // In a running engine: an update of a buffered page, then a sync, programs one
        // log sector and writes the metadata, and reads nothing.
        let mut engine = Engine::new(config).unwrap();
        for key in 0..100 {
            engine.insert(key, b"value").unwrap();
        }
        engine.sync().unwrap();
        let before = engine.stats();
        assert!(engine.update(7, b"other").unwrap());
        engine.sync().unwrap();
        let s = engine.stats().since(&before);
        assert_eq!((s.flash_sector_writes, s.flash_page_reads, s.flash_erases), (1, 0, 0), "{flash_time:?}");
        let page_write_ns = match flash_time {
            FlashTime::Measured => 1_600_000 * u64::from(engine.config().flash_page_bytes()) / 8192,
            FlashTime::Chip => 250_000,
        };
        assert_eq!(s.sim_ns, 250_000 + s.flash_page_writes * page_write_ns, "{flash_time:?}");
    }
}

#[test]
fn the_measured_ssd_is_only_the_boards() {
    let mut config = EngineConfig::new(EngineKind::FlashOnly, 100, 26);
    config.preset = DevicePreset::Chips;
    let error = Engine::new(config.clone()).unwrap_err().to_string();
    assert!(error.contains("measured") && error.contains("chips"), "{error}");
    config.flash_time = FlashTime::Chip;
    Engine::new(config).unwrap();
}
