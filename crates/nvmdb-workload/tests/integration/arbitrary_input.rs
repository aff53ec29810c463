//! Every parser over arbitrary bytes: no panic, and every error names a line that exists.

use nvmdb_workload::pcm_trace::PcmTraceReader;
use nvmdb_workload::{TraceFormat, TraceReader};
use proptest::prelude::*;

const FORMATS: [TraceFormat; 5] =
    [TraceFormat::Disksim, TraceFormat::Msr, TraceFormat::Spc, TraceFormat::Fiu, TraceFormat::Simple];

/// Lines in `bytes`, counting a last line without a terminator.
fn line_count(bytes: &[u8]) -> u64 {
    let newlines = bytes.iter().filter(|&&b| b == b'\n').count() as u64;
    newlines + u64::from(!bytes.is_empty() && !bytes.ends_with(b"\n"))
}

/// Bytes that look like trace lines often enough to reach past the first field.
fn tracey() -> impl Strategy<Value = Vec<u8>> {
    let token = prop_oneof![
        Just("W".to_string()),
        Just("R".to_string()),
        Just("0x".to_string()),
        Just("18446744073709551615".to_string()),
        Just("Write".to_string()),
        Just("0123456789abcdef0123456789abcdef".to_string()),
        "[0-9]{1,20}",
        "[ ,\t#\r\n]",
        any::<char>().prop_map(String::from),
    ];
    prop::collection::vec(token, 0..40).prop_map(|t| t.join(" ").into_bytes())
}

fn check_block_formats(bytes: &[u8]) {
    for format in FORMATS {
        for item in TraceReader::new(bytes, format).with_max_request_bytes(1 << 30) {
            match item {
                Ok(r) => {
                    assert!(r.len_bytes > 0 && r.len_bytes <= 1 << 30);
                    assert!(r.offset_bytes.checked_add(r.len_bytes).is_some());
                }
                Err(e) => {
                    assert!(e.line >= 1 && e.line <= line_count(bytes), "{format:?}: {e}");
                    assert!(!e.message.is_empty() && !e.message.contains('\n'), "{format:?}: {e}");
                }
            }
        }
    }
}

fn check_pcm(bytes: &[u8]) {
    for item in PcmTraceReader::new(bytes, 1 << 20) {
        if let Err(e) = item {
            assert!(e.line >= 1 && e.line <= line_count(bytes), "{e}");
            assert!(!e.message.is_empty() && !e.message.contains('\n'), "{e}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn block_traces_never_panic_on_bytes(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        check_block_formats(&bytes);
    }

    #[test]
    fn block_traces_never_panic_on_tokens(bytes in tracey()) {
        check_block_formats(&bytes);
    }

    #[test]
    fn pcm_traces_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512), tokens in tracey()) {
        check_pcm(&bytes);
        check_pcm(&tokens);
    }
}
