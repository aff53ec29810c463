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

/// The verifier keeps its own model of acknowledged bytes: pages an unprotected DRAM
/// buffer loses at the cut are reported right after the recovery, and 10-byte writes over
/// them afterwards (read-modify-writes of the erased pages the store returns) do not hide
/// the loss at the end.
#[test]
fn lost_pages_are_reported_after_recovery_and_partial_writes_do_not_hide_them() {
    let config = [
        "--set",
        "flash.packages=1",
        "--set",
        "flash.planes_per_package=2",
        "--set",
        "flash.blocks_per_plane=16",
        "--set",
        "flash.pages_per_block=8",
        "--set",
        "ftl.overprovision=0.25",
        "--set",
        "content=bytes",
        "--set",
        "dram.pages=6",
        "--set",
        "dram.power_loss_protection=false",
    ];
    let run = |text: &str, name: &str| {
        let trace = temp_file(name, text);
        let mut args = vec!["ssd", "replay", "--trace", &trace, "--format", "simple", "--json"];
        args.extend(config);
        args.extend(["--prefill", "false", "--power-loss-at", "2"]);
        let (code, stdout, stderr) = nvmdb(&args);
        assert_eq!(code, 0, "{stderr}");
        let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        let after = &json["power_loss"]["after_recovery"];
        let found = |j: &serde_json::Value| {
            [&j["verified_pages"], &j["lost_pages"], &j["corrupt_pages"]].map(|v| v.as_u64().unwrap())
        };
        (found(after), found(&json))
    };
    let whole = run("W 0 4096\nW 8192 4096\n", "dram-lost.trace");
    assert_eq!(whole, ([2, 2, 0], [2, 2, 0]), "both pages lost, at the cut and at the end");
    let patched = run("W 0 4096\nW 8192 4096\nW 100 10\nW 8292 10\n", "dram-patched.trace");
    assert_eq!(patched, ([2, 2, 0], [2, 0, 2]), "lost at the cut; at the end 10 bytes over erased flash");
}

/// Deterministic test bytes: SplitMix64 of `seed` and each 8-byte index.
fn test_bytes(seed: u64, len: usize) -> Vec<u8> {
    (0..len.div_ceil(8) as u64)
        .flat_map(|i| {
            let mut z = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(i.wrapping_mul(0xBF58_476D_1CE4_E5B9));
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            (z ^ (z >> 31)).to_le_bytes()
        })
        .take(len)
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A `simple` trace whose writes carry their data (`W offset 0xHEX`) reads back exactly
/// what was written (`--reads`), through every buffer kind, the DRAM buffer, and
/// deduplication, which removes the pages whose data repeats.
#[test]
fn a_trace_with_data_reads_back_what_was_written_through_every_stack() {
    const PAGE: usize = 4096;
    const PAGES: usize = 24;
    // The model: every byte as the host wrote it; never written bytes read as ff.
    let mut model = vec![0xFFu8; PAGES * PAGE];
    let (mut text, mut expected) = (String::new(), Vec::new());
    let write = |text: &mut String, model: &mut [u8], offset: usize, data: &[u8]| {
        model[offset..offset + data.len()].copy_from_slice(data);
        text.push_str(&format!("W {offset} 0x{}\n", hex(data)));
    };
    // Twelve pages of distinct data, then six pages holding the same bytes as pages 0..6.
    for page in 0..18 {
        write(&mut text, &mut model, page * PAGE, &test_bytes((page % 12) as u64, PAGE));
    }
    let mut read = |text: &mut String, model: &[u8], offset: usize, len: usize| {
        text.push_str(&format!("R {offset} {len}\n"));
        expected.push(hex(&model[offset..offset + len]));
    };
    // Small writes at scattered places (some across a page boundary), reads between them,
    // and an unaligned two-page write.
    for i in 0..300u64 {
        let offset = (i as usize * 7919 * 13) % (PAGES * PAGE - 400);
        let len = 1 + (i as usize * 37) % 300;
        write(&mut text, &mut model, offset, &test_bytes(1000 + i, len));
        if i % 10 == 0 {
            read(&mut text, &model, offset.saturating_sub(50), len + 100);
        }
    }
    write(&mut text, &mut model, 5 * PAGE + 1000, &test_bytes(77, 2 * PAGE));
    for page in 0..PAGES {
        read(&mut text, &model, page * PAGE, PAGE);
    }
    let trace = temp_file("data.trace", &text);
    let reads = temp_file("data.reads", "");
    let mut stacks: Vec<Vec<String>> = Vec::new();
    for kind in ["none", "ipl", "dpram", "pcm-log"] {
        for dedup in [false, true] {
            stacks.push(vec![format!("buffer.kind={kind}"), format!("dedup.enabled={dedup}")]);
        }
    }
    stacks.push(vec!["buffer.kind=ipl-native".into()]);
    stacks.push(vec!["dram.pages=4".into(), "dedup.enabled=true".into()]);
    for stack in stacks {
        let mut args = vec!["ssd", "replay", "--trace", &trace, "--format", "simple", "--json", "--prefill", "false"];
        args.extend(SMALL);
        args.extend(["--set", "content=bytes", "--reads", &reads]);
        for set in &stack {
            args.extend(["--set", set.as_str()]);
        }
        let (code, stdout, stderr) = nvmdb(&args);
        assert_eq!(code, 0, "{stack:?}: {stderr}");
        let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        let got = std::fs::read_to_string(&reads).unwrap();
        let got: Vec<&str> = got.lines().collect();
        assert_eq!(got.len(), expected.len(), "{stack:?}");
        for (i, (got, want)) in got.iter().zip(&expected).enumerate() {
            assert!(got == want, "{stack:?}: read {i} differs");
        }
        let removed = json["dedup_pages_removed"].as_u64().unwrap();
        let dedup = stack.iter().any(|s| s == "dedup.enabled=true");
        assert!(if dedup { removed >= 6 } else { removed == 0 }, "{stack:?}: {removed} pages removed");
        println!(
            "{stack:?}: {} reads as written, {removed} pages removed by dedup, {} merges",
            got.len(),
            json["merges"]
        );
    }
}

/// A short workload with data: every page of 48 written (8 repeating another page's data,
/// for deduplication), then whole-page rewrites, small writes, trims and reads, enough to
/// make the FTL collect garbage and the log schemes merge.
fn crash_workload() -> String {
    const PAGE: usize = 4096;
    const PAGES: usize = 48;
    let mut text = String::new();
    for page in 0..PAGES {
        text.push_str(&format!("W {} 0x{}\n", page * PAGE, hex(&test_bytes(page as u64 % 40, PAGE))));
    }
    for i in 0..90usize {
        let page = (i * 7) % PAGES;
        let line = match i % 6 {
            0 | 3 => format!("W {} 0x{}\n", page * PAGE, hex(&test_bytes(100 + (i % 30) as u64, PAGE))),
            1 | 4 => format!("W {} 0x{}\n", page * PAGE + (i * 61) % 4000, hex(&test_bytes(500 + i as u64, 40))),
            2 => format!("R {} {PAGE}\n", page * PAGE),
            _ => format!("T {} {PAGE}\n", page * PAGE),
        };
        text.push_str(&line);
    }
    text
}

/// `ssd replay --power-loss-at-write N` at every device write of a short workload, for
/// stacks whose recovery writes and stacks whose does not; at a few first cuts spread over
/// the run, `--power-loss-during-recovery M` at every device write of the recovery. Every
/// run recovers with nothing acknowledged lost, checked right after the recovery and at
/// the end; the cuts fall in the host's writes, GC, merges and flushes.
#[test]
fn cuts_at_every_device_write_and_again_in_recovery_lose_nothing() {
    let trace = temp_file("crash.trace", &crash_workload());
    let run = |stack: &[&str], cut: u64, second: Option<u64>| {
        let cut = cut.to_string();
        let second = second.map(|m| m.to_string());
        let mut args = vec!["ssd", "replay", "--trace", &trace, "--format", "simple", "--json", "--prefill", "false"];
        args.extend([
            "--set",
            "flash.packages=1",
            "--set",
            "flash.planes_per_package=2",
            "--set",
            "flash.blocks_per_plane=8",
            "--set",
            "flash.pages_per_block=8",
            "--set",
            "ftl.overprovision=0.5",
            "--set",
            "content=bytes",
            "--power-loss-at-write",
            &cut,
        ]);
        if let Some(m) = &second {
            args.extend(["--power-loss-during-recovery", m.as_str()]);
        }
        args.extend(stack);
        nvmdb(&args)
    };
    // Each stack, and the activity some cut must fall in besides the host's writes (with
    // deduplication the workload programs too few pages for GC: its cuts fall in the
    // host's flash and PCM writes, and its recovery writes). The buffered stacks drain at
    // the end, so cuts fall in the drain's merges and write-backs too.
    let stacks: [(&[&str], Option<&str>); 6] = [
        (&[], Some("gc")),
        (&["--set", "dedup.enabled=true", "--set", "dedup.pcm_mb=1"], None),
        (&["--set", "buffer.kind=ipl", "--drain"], Some("merge")),
        (&["--set", "buffer.kind=pcm-log", "--set", "buffer.pcm_mb=1", "--drain"], Some("merge")),
        (&["--set", "buffer.kind=ipl-native", "--drain"], Some("merge")),
        (&["--set", "dram.pages=4", "--set", "dram.power_loss_protection=true", "--drain"], Some("flush")),
    ];
    let mut total = 0;
    for (stack, expected) in stacks {
        let (mut tried, mut activities, mut recoveries) = (0u64, std::collections::BTreeSet::new(), Vec::new());
        for cut in 1.. {
            let (code, stdout, stderr) = run(stack, cut, None);
            if code == 2 && stderr.contains("past the end of the run") {
                break;
            }
            assert_eq!(code, 0, "{stack:?}, cut {cut}: {stderr}");
            let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
            let loss = &json["power_loss"];
            assert_eq!(loss["device_write"], cut, "{stack:?}");
            let after = &loss["after_recovery"];
            assert!(after["verified_pages"].as_u64().unwrap() > 0, "{stack:?}, cut {cut}");
            for (check, what) in [(after, "after recovery"), (&json, "at the end")] {
                assert_eq!(
                    (&check["lost_pages"], &check["corrupt_pages"]),
                    (&0.into(), &0.into()),
                    "{stack:?}, cut {cut}, {what}"
                );
            }
            activities.insert(loss["activity"].as_str().unwrap().to_string());
            recoveries.push(loss["recovery_device_writes"].as_u64().unwrap());
            tried += 1;
        }
        // Second cuts, in the recovery after first cuts spread over the run.
        let mut second_cuts = 0u64;
        for i in 0..4 {
            let cut = tried * (2 * i + 1) / 8 + 1;
            let writes = recoveries[cut as usize - 1];
            for m in 1..=writes {
                let (code, stdout, stderr) = run(stack, cut, Some(m));
                assert_eq!(code, 0, "{stack:?}, cut {cut} then {m}: {stderr}");
                let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
                assert_eq!(json["power_loss"]["recovery_cut"], m, "{stack:?}");
                let after = &json["power_loss"]["after_recovery"];
                for (check, what) in [(after, "after recovery"), (&json, "at the end")] {
                    assert_eq!(
                        (&check["lost_pages"], &check["corrupt_pages"]),
                        (&0.into(), &0.into()),
                        "{stack:?}, cut {cut} then {m}, {what}"
                    );
                }
                second_cuts += 1;
            }
            let (code, _, stderr) = run(stack, cut, Some(writes + 1));
            assert_eq!(code, 2, "{stack:?}: a second cut past the recovery: {stderr}");
        }
        println!("{stack:?}: {tried} crash points tried (every device write, activities {activities:?}), {second_cuts} second cuts in recovery, nothing lost");
        assert!(tried > 50, "{stack:?}: {tried}");
        if let Some(expected) = expected {
            assert!(activities.contains(expected), "{stack:?}: no cut fell in a {expected}: {activities:?}");
        }
        if stack.iter().any(|a| a.starts_with("dedup") || a.starts_with("dram")) {
            assert!(second_cuts > 0, "{stack:?}: its recovery writes, and a second cut falls in it");
        }
        total += tried + second_cuts;
    }
    println!("{total} crash runs in all");
}

/// A cut past the end of the run never happens: one line naming the flag, exit 2.
#[test]
fn a_cut_past_the_end_exits_2_naming_the_flag() {
    let trace = temp_file("past.trace", "W 0 4096\nW 4096 4096\nR 0 4096\nW 100 10\n");
    let run = |extra: &[&str]| {
        let mut args = vec!["ssd", "replay", "--trace", &trace, "--format", "simple", "--json"];
        args.extend(SMALL);
        args.extend(extra);
        nvmdb(&args)
    };
    let (code, stdout, stderr) = run(&["--power-loss-at", "4"]);
    assert_eq!(code, 0, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["power_loss"]["operation"], 4);
    let (code, stdout, stderr) = run(&["--power-loss-at", "5"]);
    assert_eq!((code, stdout.as_str(), stderr.lines().count()), (2, "", 1), "{stderr}");
    assert_eq!(stderr.trim(), "--power-loss-at: request 5 is past the end of the run (4 requests in all)");
    // Requests count across passes.
    let (code, _, stderr) = run(&["--power-loss-at", "5", "--passes", "2"]);
    assert_eq!(code, 0, "{stderr}");
    // Device writes: the trace makes 3 (no pre-fill counted).
    let (code, stdout, stderr) = run(&["--power-loss-at-write", "3"]);
    assert_eq!(code, 0, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!((&json["power_loss"]["device_write"], &json["power_loss"]["activity"]), (&3.into(), &"host".into()));
    for (flags, message) in [
        (
            &["--power-loss-at-write", "4"][..],
            "--power-loss-at-write: device write 4 is past the end of the run (3 device writes in all)",
        ),
        (
            &["--power-loss-at-write", "2", "--power-loss-during-recovery", "1"][..],
            "--power-loss-during-recovery: device write 1 is past the end of the recovery (0 device writes in all)",
        ),
        (
            &["--power-loss-at-write", "2", "--power-loss-at", "1"][..],
            "--power-loss-at and --power-loss-at-write: a replay cuts the power once; give one",
        ),
        (
            &["--power-loss-during-recovery", "1"][..],
            "error: --power-loss-during-recovery has no effect without --power-loss-at or --power-loss-at-write (see \
             --help)",
        ),
    ] {
        let (code, stdout, stderr) = run(flags);
        assert_eq!((code, stdout.as_str(), stderr.trim()), (2, "", message), "{flags:?}");
    }
    let (code, _, stderr) = run(&["--power-loss-at-write", "0"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--power-loss-at-write"), "{stderr}");
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
