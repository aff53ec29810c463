//! The SSD configuration loader (TOML) over arbitrary text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nvmdb_flash::SsdConfig;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match SsdConfig::from_toml(text) {
        Ok(config) => {
            let keys = SsdConfig::toml_keys(text).expect("a loaded file has keys");
            let _ = config.check_given_keys(keys.iter().map(String::as_str));
            let _ = config.estimated_memory_bytes();
        }
        Err(e) => assert!(!e.to_string().contains('\n')),
    }
});
