//! The configuration loader over arbitrary text: no panic, and every error is one line that
//! names a line of the file (TOML) or the `--set` flag.

use nvmdb_flash::SsdConfig;
use proptest::prelude::*;

/// Text that looks like a configuration often enough to reach the range checks.
fn configish() -> impl Strategy<Value = String> {
    let key = prop_oneof![
        Just("flash.packages"),
        Just("flash.page_bytes"),
        Just("flash.blocks_per_plane"),
        Just("flash.pages_per_block"),
        Just("flash.planes_per_package"),
        Just("flash.endurance"),
        Just("ftl.overprovision"),
        Just("ftl.mapping"),
        Just("ftl.gc_free_blocks"),
        Just("ftl.log_blocks"),
        Just("buffer.kind"),
        Just("buffer.pcm_mb"),
        Just("dedup.enabled"),
        Just("dedup.segments"),
        Just("content"),
        Just("seed"),
    ];
    let value = prop_oneof![
        Just("0".to_string()),
        Just("4294967295".to_string()),
        Just("9223372036854775807".to_string()),
        Just("-1".to_string()),
        Just("nan".to_string()),
        Just("0.99999".to_string()),
        Just("hybrid".to_string()),
        Just("pcm-log".to_string()),
        Just("true".to_string()),
        "[0-9]{1,12}",
        ".{0,8}",
    ];
    (key, value).prop_map(|(k, v)| format!("{k}={v}"))
}

fn check_set(assignments: &[String]) {
    let mut config = SsdConfig::default();
    for assignment in assignments {
        if let Err(e) = config.set(assignment) {
            let message = e.to_string();
            assert!(message.contains("--set") && !message.contains('\n'), "{message}");
            return;
        }
    }
    if let Err(e) = config.validate() {
        assert!(!e.to_string().contains('\n'), "{e}");
        return;
    }
    // A valid configuration's estimate is finite and its ignored keys are real keys.
    assert!(config.estimated_memory_bytes() > 0);
    let toml = toml::to_string(&config).unwrap();
    let keys = SsdConfig::toml_keys(&toml).unwrap();
    assert!(config.ignored_keys().iter().all(|k| keys.iter().any(|given| given == k)));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn toml_text_never_panics(text in ".{0,300}") {
        if let Err(e) = SsdConfig::from_toml(&text) {
            let message = e.to_string();
            prop_assert!(!message.contains('\n'), "{}", message);
        }
        let _ = SsdConfig::toml_keys(&text);
    }

    #[test]
    fn toml_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let text = String::from_utf8_lossy(&bytes);
        if let Err(e) = SsdConfig::from_toml(&text) {
            prop_assert!(!e.to_string().contains('\n'));
        }
    }

    #[test]
    fn set_sequences_never_panic(assignments in prop::collection::vec(configish(), 0..6)) {
        check_set(&assignments);
    }

    #[test]
    fn syntax_errors_name_a_line(lines in prop::collection::vec("[a-z]{1,6} = [0-9]{1,3}", 0..5), junk in "[\\[=\"]{1,3}") {
        let text = format!("{}\n{junk}\n", lines.join("\n"));
        if let Err(e) = SsdConfig::from_toml(&text) {
            let message = e.to_string();
            prop_assert!(message.contains("line ") || message.contains("unknown field"), "{}", message);
        }
    }
}
