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
    let path =
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("nvmdb-ssd-{}-{name}", std::process::id()));
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

    // IPL in fingerprint mode tags each log sector in the spare area, which must have room.
    let (code, _, stderr) = nvmdb(&[
        "ssd",
        "replay",
        "--trace",
        &trace,
        "--format",
        "simple",
        "--set",
        "buffer.kind=ipl",
        "--set",
        "content=fingerprint",
        "--set",
        "flash.spare_bytes=64",
    ]);
    assert_eq!(code, 2);
    assert!(stderr.contains("flash.spare_bytes") && stderr.lines().count() == 1, "{stderr}");

    let (code, _, stderr) = nvmdb(&["ssd", "replay", "--trace", &trace, "--format", "csv"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("csv"), "{stderr}");
}

#[test]
fn power_loss_at_recovers_and_verifies_every_written_page() {
    // Page 0 is trimmed between the two cuts, page 4 (never written but by the pre-fill)
    // after both.
    let trace = temp_file(
        "pl.trace",
        "W 0 4096\nW 4096 8192\nW 100 10\nR 0 4096\nW 200 30\nW 8192 4096\nT 0 4096\nW 12288 4096\nT 16384 4096\n",
    );
    for kind in ["none", "ipl", "dpram", "pcm-log"] {
        for dedup in ["false", "true"] {
            for cut in ["3", "7"] {
                let what = format!("{kind}, dedup {dedup}, cut after {cut}");
                let buffer = format!("buffer.kind={kind}");
                let dedup = format!("dedup.enabled={dedup}");
                let mut args =
                    vec!["ssd", "replay", "--trace", &trace, "--format", "simple", "--json", "--power-loss-at", cut];
                args.extend(SMALL);
                args.extend(["--set", "content=bytes", "--set", &buffer, "--set", &dedup]);
                let (code, stdout, stderr) = nvmdb(&args);
                assert_eq!(code, 0, "{what}: {stderr}");
                let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
                assert_eq!(json["power_cycles"], 1, "{what}");
                assert_eq!(json["verified_pages"], 5, "{what}: pages 0 to 4");
                assert_eq!((&json["lost_pages"], &json["corrupt_pages"]), (&0.into(), &0.into()), "{what}");
            }
        }
    }
    // Deduplication that shares pages (an FIU trace's content ids in fingerprint mode):
    // pages 0 and 2 share, then 1 and 3, then 1 and 2.
    let ids = ["a", "b", "a", "c", "b", "a"];
    let pages = [0, 8, 16, 0, 24, 8];
    let fiu: String = (0..6).map(|i| format!("{} 1 p {} 8 W 6 0 {:0>32}\n", i + 1, pages[i], ids[i])).collect();
    let fiu = temp_file("pl.fiu", &fiu);
    for kind in ["none", "ipl", "dpram", "pcm-log"] {
        for cut in ["0", "3", "5"] {
            let what = format!("{kind}, dedup, fingerprint, cut after {cut}");
            let buffer = format!("buffer.kind={kind}");
            let mut args = vec!["ssd", "replay", "--trace", &fiu, "--format", "fiu", "--json", "--power-loss-at", cut];
            args.extend(SMALL);
            args.extend(["--set", "content=fingerprint", "--set", &buffer, "--set", "dedup.enabled=true"]);
            if kind != "none" {
                // A whole-page change is written out of place, through the deduplicating FTL.
                args.extend(["--set", "buffer.delta=full-page"]);
            }
            let (code, stdout, stderr) = nvmdb(&args);
            assert_eq!(code, 0, "{what}: {stderr}");
            let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
            assert_eq!(json["verified_pages"], 4, "{what}");
            assert_eq!(json["dedup_pages_removed"], 3, "{what}");
            assert_eq!((&json["lost_pages"], &json["corrupt_pages"]), (&0.into(), &0.into()), "{what}");
        }
    }
    // Metadata only: the pages must still be mapped.
    let mut args = vec!["ssd", "replay", "--trace", &trace, "--format", "simple", "--json", "--power-loss-at", "3"];
    args.extend(SMALL);
    let (code, stdout, stderr) = nvmdb(&args);
    assert_eq!(code, 0, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        (&json["verified_pages"], &json["lost_pages"]),
        (&3.into(), &0.into()),
        "pages 1 to 3: 0 and 4 are trimmed"
    );
    // Fingerprint mode without content in the trace: every buffer kind recovers.
    for kind in ["none", "ipl", "dpram", "pcm-log"] {
        let buffer = format!("buffer.kind={kind}");
        let mut args = vec!["ssd", "replay", "--trace", &trace, "--format", "simple", "--json", "--power-loss-at", "5"];
        args.extend(SMALL);
        args.extend(["--set", "content=fingerprint", "--set", &buffer]);
        let (code, stdout, stderr) = nvmdb(&args);
        assert_eq!(code, 0, "{kind}, fingerprint: {stderr}");
        let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(json["verified_pages"], 5, "{kind}, fingerprint: pages 0 to 4");
        assert_eq!((&json["lost_pages"], &json["corrupt_pages"]), (&0.into(), &0.into()), "{kind}, fingerprint");
    }
}

#[test]
fn pcm_accounting_is_reported_and_a_bad_value_exits_2_naming_the_key() {
    let trace = temp_file("acct.trace", "W 0 4096\nW 0 4096\nW 0 512\nR 0 4096\n");
    let run = |extra: &[&str]| {
        let mut args = vec!["ssd", "replay", "--trace", &trace, "--format", "simple", "--json"];
        args.extend(SMALL);
        args.extend(["--set", "buffer.kind=pcm-log", "--set", "buffer.pcm_mb=1"]);
        args.extend(extra);
        nvmdb(&args)
    };
    let (code, stdout, stderr) = run(&[]);
    assert_eq!(code, 0, "{stderr}");
    let cells: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(cells["config"]["buffer"]["pcm_accounting"], "cells");
    assert!(cells["pcm_bits_written"].as_u64().is_some_and(|b| b > 0), "{stdout}");

    let (code, stdout, stderr) = run(&["--set", "buffer.pcm_accounting=words"]);
    assert_eq!(code, 0, "{stderr}");
    let words: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(words["config"]["buffer"]["pcm_accounting"], "words");
    assert!(words["pcm_bits_written"].is_null() && words["pcm_max_cell_writes"].is_null(), "{stdout}");
    assert_eq!(words["pcm_energy_pj"], cells["pcm_energy_pj"]);
    assert_eq!(words["flash_page_programs"], cells["flash_page_programs"]);

    let (code, _, stderr) = run(&["--set", "buffer.pcm_accounting=lines"]);
    assert_eq!(code, 2);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("--set buffer.pcm_accounting=lines"), "{stderr}");
}

/// IPL in its own layout from the command line: it replays, logs and merges, survives a
/// power cut in every content mode, and the keys it ignores or cannot use exit 2 naming
/// them.
#[test]
fn ipl_native_replays_recovers_and_refuses_what_it_ignores() {
    // Page 0 is updated twelve times by 100 B: logged, then merged when its unit's 32 log
    // sectors are full (with 64-page units, four log pages of eight sectors).
    let mut text = String::from("W 0 4096\nW 4096 4096\n");
    for i in 0..40 {
        text.push_str(&format!("W {} 100\n", 100 * (i % 30)));
    }
    text.push_str("R 0 4096\nT 4096 4096\n");
    let trace = temp_file("native.trace", &text);
    let base = ["ssd", "replay", "--trace", &trace, "--format", "simple", "--json"];
    let run = |extra: &[&str]| {
        let mut args = base.to_vec();
        args.extend(SMALL);
        args.extend(["--set", "buffer.kind=ipl-native"]);
        args.extend(extra);
        nvmdb(&args)
    };
    let (code, stdout, stderr) = run(&[]);
    assert_eq!(code, 0, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["config"]["buffer"]["kind"], "ipl-native");
    assert!(json["logged_writes"].as_u64().is_some_and(|n| n > 0), "{stdout}");
    assert!(json["merges"].as_u64().is_some_and(|n| n > 0), "{stdout}");
    assert!(json["block_erases"].as_u64().is_some_and(|n| n > 0), "{stdout}");
    for content in ["bytes", "fingerprint", "none"] {
        for cut in ["2", "20", "41"] {
            let what = format!("{content}, cut after {cut}");
            let content = format!("content={content}");
            let (code, stdout, stderr) = run(&["--set", &content, "--power-loss-at", cut]);
            assert_eq!(code, 0, "{what}: {stderr}");
            let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
            assert_eq!(json["power_cycles"], 1, "{what}");
            assert!(json["verified_pages"].as_u64().is_some_and(|n| n >= 1), "{what}: {stdout}");
            assert_eq!((&json["lost_pages"], &json["corrupt_pages"]), (&0.into(), &0.into()), "{what}");
        }
    }
    for (set, keys) in [
        ("ftl.gc=fifo", ["ftl.gc", "ipl-native"]),
        ("buffer.pcm_mb=4", ["buffer.pcm_mb", "ipl-native"]),
        ("buffer.merge=logged-pages", ["buffer.merge", "ipl-native"]),
        ("dedup.enabled=true", ["dedup.enabled", "ipl-native"]),
        ("ftl.wear_leveling=static", ["ftl.wear_leveling", "ipl-native"]),
    ] {
        let (code, _, stderr) = run(&["--set", "content=fingerprint", "--set", set]);
        assert_eq!(code, 2, "{set}: {stderr}");
        assert!(keys.iter().all(|k| stderr.contains(k)) && stderr.lines().count() == 1, "{set}: {stderr}");
    }
    let (code, _, stderr) = run(&["--set", "flash.spare_bytes=16", "--set", "content=fingerprint"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("flash.spare_bytes") && stderr.lines().count() == 1, "{stderr}");
    // The "no effect" error names the stack as it is, without an FTL mapping.
    let (_, _, stderr) = run(&["--set", "ftl.gc=fifo"]);
    assert!(!stderr.contains("ftl.mapping"), "{stderr}");
    // Records are pending at the end of a pass: with the pre-fill every write is an update,
    // so page 0's last ten records after the merge at the 33rd, and page 1's trim record;
    // a drain merges them. Ageing and passes: the ageing merges units (counted nowhere), the
    // last pass is reported alone, and the drain leaves nothing pending.
    let json = |extra: &[&str]| -> serde_json::Value {
        let (code, stdout, stderr) = run(extra);
        assert_eq!(code, 0, "{extra:?}: {stderr}");
        serde_json::from_str(&stdout).unwrap()
    };
    let kept = json(&[]);
    assert_eq!((&kept["pending_log_records"], &kept["pending_log_pages"]), (&11.into(), &2.into()), "{kept}");
    let drained = json(&["--drain"]);
    assert_eq!((&drained["pending_log_records"], &drained["drained"]), (&0.into(), &true.into()), "{drained}");
    assert_eq!(drained["merges"].as_u64(), kept["merges"].as_u64().map(|m| m + 1), "one unit with records");
    for content in ["bytes", "fingerprint", "none"] {
        let content = format!("content={content}");
        let aged = json(&["--set", &content, "--age", "--passes", "3", "--drain"]);
        assert!(aged["aged_pages"].as_u64().is_some_and(|n| n > 0), "{content}: {aged}");
        assert_eq!(
            (&aged["passes"], &aged["drained"], &aged["pending_log_records"]),
            (&3.into(), &true.into(), &0.into())
        );
        let last = &aged["last_pass"];
        assert_eq!(last["requests"], 44, "{content}: {aged}");
        assert!(last["merges"].as_u64().is_some_and(|n| n > 0), "{content}: {aged}");
        assert!(aged["block_erases"].as_u64() > last["block_erases"].as_u64(), "{content}: {aged}");
    }
}

/// MQSim's tpcc-small, vendored in the repository's data/.
fn tpcc_small() -> String {
    format!("{}/../../data/mqsim/tpcc-small.trace", env!("CARGO_MANIFEST_DIR"))
}

/// Table 5.1's SSD sized to 1 GB of data, as `thesis-mqsim-traces` runs it.
const ONE_GB: [&str; 4] = ["--set", "flash.blocks_per_plane=61", "--set", "ftl.overprovision=0.1"];

fn json_of(args: &[&str]) -> serde_json::Value {
    let (code, stdout, stderr) = nvmdb(args);
    assert_eq!(code, 0, "{args:?}: {stderr}");
    serde_json::from_str(&stdout).unwrap()
}

#[test]
fn a_drain_pays_for_every_pending_record_and_the_json_says_what_is_pending() {
    let trace = tpcc_small();
    let base = ["ssd", "replay", "--trace", &trace, "--format", "disksim", "--set", "buffer.kind=dpram", "--json"];
    let kept = json_of(&base);
    let drained = json_of(&[&base[..], &["--drain"]].concat());
    // Without a drain d-PRAM's log never fills on one pass: nothing reaches flash, and its
    // records are pending at the end.
    assert_eq!((&kept["flash_page_programs"], &kept["drained"]), (&0.into(), &false.into()));
    assert!(kept["pending_log_records"].as_u64().unwrap() > 0, "{kept}");
    assert!(kept["pending_log_pages"].as_u64().unwrap() > 0, "{kept}");
    // The drain merges them: flash pages programmed, nothing pending.
    assert!(drained["flash_page_programs"].as_u64().unwrap() > 0, "{drained}");
    assert!(drained["merges"].as_u64().unwrap() > 0, "{drained}");
    assert_eq!((&drained["pending_log_records"], &drained["pending_log_pages"]), (&0.into(), &0.into()));
    assert_eq!(drained["drained"], true);
    assert!(drained["energy_pj"].as_u64() > kept["energy_pj"].as_u64());
    for key in ["flash_page_reads", "flash_sector_programs", "gc_page_copies", "pending_dram_pages", "last_pass"] {
        assert!(kept.get(key).is_some(), "missing {key}");
    }
    assert!(kept["last_pass"].is_null(), "one pass: no last-pass figures");
}

#[test]
fn ageing_and_passes_erase_blocks_and_report_the_last_pass() {
    let trace = tpcc_small();
    let mut args = vec!["ssd", "replay", "--trace", &trace, "--format", "disksim", "--json", "--age", "--passes", "4"];
    args.extend(ONE_GB);
    let json = json_of(&args);
    assert!(json["aged_pages"].as_u64().unwrap() > 0 && json["prefilled_pages"] == 0, "{json}");
    assert_eq!(json["passes"], 4);
    let last = &json["last_pass"];
    assert_eq!(last["requests"], 6999);
    assert_eq!(json["requests"], 4 * 6999);
    let erases = last["block_erases"].as_u64().unwrap();
    assert!(erases > 0, "garbage collection runs under the trace on an aged device");
    assert!(json["block_erases"].as_u64().unwrap() > erases, "the whole run erased more than its last pass");
    // Without ageing, the pre-filled device has room for one pass of the trace.
    let mut fresh = vec!["ssd", "replay", "--trace", &trace, "--format", "disksim", "--json"];
    fresh.extend(ONE_GB);
    assert_eq!(json_of(&fresh)["block_erases"], 0);
}

#[test]
fn the_new_flags_refuse_a_range_or_combination_that_does_nothing() {
    let trace = tpcc_small();
    let run = |extra: &[&str]| {
        let mut args = vec!["ssd", "replay", "--trace", &trace, "--format", "disksim"];
        args.extend(extra);
        nvmdb(&args)
    };
    for (extra, names) in [
        (&["--passes", "0"][..], &["--passes"][..]),
        (&["--passes", "10001"], &["--passes"]),
        (&["--age", "--prefill", "true"], &["--age", "--prefill"]),
        (&["--age", "--prefill", "false"], &["--age", "--prefill"]),
        (&["--drain"], &["--drain", "buffer.kind"]),
    ] {
        let (code, stdout, stderr) = run(extra);
        assert_eq!(code, 2, "{extra:?}: {stderr}");
        assert!(stdout.is_empty() && stderr.trim().lines().count() == 1, "{extra:?}: {stderr}");
        assert!(names.iter().all(|n| stderr.contains(n)), "{extra:?}: {stderr}");
    }
    // A DRAM buffer alone has pages to drain.
    let (code, _, stderr) = run(&["--drain", "--set", "dram.pages=64", "--json"]);
    assert_eq!(code, 0, "{stderr}");
}
