//! `--set KEY=VALUE` overrides over arbitrary text: one assignment per line.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nvmdb_flash::SsdConfig;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let mut config = SsdConfig::default();
    for assignment in text.lines() {
        if let Err(e) = config.set(assignment) {
            let message = e.to_string();
            assert!(message.contains("--set") && !message.contains('\n'));
            return;
        }
    }
    if config.validate().is_ok() {
        let _ = config.estimated_memory_bytes();
        let _ = config.check_given_keys(config.ignored_keys());
    }
});
