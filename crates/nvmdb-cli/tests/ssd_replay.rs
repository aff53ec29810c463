//! `nvmdb ssd replay` end to end: JSON output, and one-line errors with exit code 2.

use std::process::Command;

fn nvmdb(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_nvmdb")).args(args).output().expect("nvmdb runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn temp_file(name: &str, text: &str) -> String {
    let path = std::env::temp_dir().join(format!("nvmdb-ssd-{}-{name}", std::process::id()));
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

const SMALL: [&str; 8] = [
    "--set",
    "flash.packages=1",
    "--set",
    "flash.planes_per_package=2",
    "--set",
    "flash.blocks_per_plane=32",
    "--set",
    "ftl.overprovision=0.2",
];

#[test]
fn replay_prints_the_required_json_keys() {
    let trace = temp_file("ok.trace", "W 0 4096\nW 4096 8192\nW 100 10\nR 0 4096\nT 0 4096\n");
    let mut args = vec!["ssd", "replay", "--trace", &trace, "--format", "simple", "--json"];
    args.extend(SMALL);
    let (code, stdout, stderr) = nvmdb(&args);
    assert_eq!(code, 0, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    for key in [
        "host_page_writes",
        "flash_page_programs",
        "write_amplification",
        "block_erases",
        "merges",
        "mean_response_ns",
        "p99_response_ns",
        "energy_pj",
        "pcm_bits_written",
        "dedup_pages_removed",
        "content_mode",
    ] {
        assert!(json.get(key).is_some(), "missing {key}");
    }
    assert_eq!(json["host_page_writes"], 4);
    assert_eq!(json["content_mode"], "none");
}

#[test]
fn bad_input_exits_2_with_one_line_naming_the_place() {
    let trace = temp_file("bad.trace", "W 0 4096\n\nW 0 x\n");
    let (code, _, stderr) = nvmdb(&["ssd", "replay", "--trace", &trace, "--format", "simple"]);
    assert_eq!(code, 2);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.trim().ends_with(&format!("{trace}:3: length 'x' is not a non-negative integer")), "{stderr}");

    let (code, _, stderr) = nvmdb(&["ssd", "replay", "--trace", &trace, "--format", "simple", "--set", "ftl.gc=lifo"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--set ftl.gc=lifo") && stderr.lines().count() == 1, "{stderr}");

    let config = temp_file("bad.toml", "[ftl]\nmaping = \"page\"\n");
    let (code, _, stderr) = nvmdb(&["ssd", "replay", "--trace", &trace, "--format", "simple", "--config", &config]);
    assert_eq!(code, 2);
    assert!(stderr.contains(&config) && stderr.contains("maping"), "{stderr}");

    let (code, _, stderr) = nvmdb(&["ssd", "replay", "--trace", &trace, "--format", "csv"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("csv"), "{stderr}");
}

#[test]
fn power_loss_at_recovers_and_verifies_every_written_page() {
    let trace = temp_file("pl.trace", "W 0 4096\nW 4096 8192\nW 100 10\nR 0 4096\nW 200 30\nW 8192 4096\n");
    for kind in ["none", "ipl", "dpram", "pcm-log"] {
        let buffer = format!("buffer.kind={kind}");
        let mut args = vec!["ssd", "replay", "--trace", &trace, "--format", "simple", "--json", "--power-loss-at", "3"];
        args.extend(SMALL);
        args.extend(["--set", "content=bytes", "--set", &buffer]);
        let (code, stdout, stderr) = nvmdb(&args);
        assert_eq!(code, 0, "{kind}: {stderr}");
        let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(json["power_cycles"], 1, "{kind}");
        assert_eq!(json["verified_pages"], 3, "{kind}");
        assert_eq!((&json["lost_pages"], &json["corrupt_pages"]), (&0.into(), &0.into()), "{kind}");
    }
    // Metadata only: the pages must still be mapped.
    let mut args = vec!["ssd", "replay", "--trace", &trace, "--format", "simple", "--json", "--power-loss-at", "3"];
    args.extend(SMALL);
    let (code, stdout, stderr) = nvmdb(&args);
    assert_eq!(code, 0, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!((&json["verified_pages"], &json["lost_pages"]), (&3.into(), &0.into()));
    // IPL does not recover in fingerprint mode: one line naming the flag, exit 2.
    args.extend(["--set", "content=fingerprint", "--set", "buffer.kind=ipl"]);
    let (code, _, stderr) = nvmdb(&args);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("--power-loss-at") && stderr.contains("ipl") && stderr.trim().lines().count() == 1,
        "{stderr}"
    );
}
