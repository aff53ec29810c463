//! MQSim's two real traces (TPC-C and web search, DiskSim format) through the baseline,
//! IPL, d-PRAM and the PCM log buffer.

use std::io::BufReader;
use std::path::PathBuf;

use nvmdb_device::PageContent;
use nvmdb_lab::{Experiment, LabError, Outcome, RunContext, Table};
use nvmdb_workload::traces::{TraceFormat, TraceReader};
use serde_json::json;

use super::{failed, ssd_config};
use crate::config::BufferKind;
use crate::replay::{replay, ReplayOptions};

/// The traces, as shipped in `shared/traces/`.
const TRACES: [&str; 2] = ["tpcc-small.trace", "wsrch-small.trace"];

/// Where the traces are: `$NVMDB_TRACES`, else `../shared/traces`, else `/work/shared/traces`.
fn trace_dir() -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("NVMDB_TRACES").map(PathBuf::from),
        Some(PathBuf::from("../shared/traces")),
        Some(PathBuf::from("/work/shared/traces")),
    ];
    candidates.into_iter().flatten().find(|dir| dir.join(TRACES[0]).is_file())
}

/// `thesis-mqsim-traces`.
#[derive(Debug)]
pub struct MqsimTraces;

impl Experiment for MqsimTraces {
    fn id(&self) -> &'static str {
        "thesis-mqsim-traces"
    }
    fn title(&self) -> &'static str {
        "MQSim's TPC-C and web-search traces through the baseline, IPL, d-PRAM and the PCM log buffer"
    }
    fn source(&self) -> &'static str {
        "seed 000 Section 5.1 configurations on real traces (MQSim repository, traces/, DiskSim format)"
    }
    fn run(&self, ctx: &RunContext) -> Result<Outcome, LabError> {
        let fail = failed(self.id());
        let dir = trace_dir().ok_or_else(|| {
            fail("MQSim traces not found: set NVMDB_TRACES to the directory holding tpcc-small.trace".into())
        })?;
        let mut base = ssd_config(1024, ctx.seed);
        base.content = PageContent::None;
        base.buffer.pcm_mb = 16;
        let kinds = [
            ("baseline (page FTL)", BufferKind::None),
            ("IPL", BufferKind::Ipl),
            ("d-PRAM", BufferKind::Dpram),
            ("PCM log (ours)", BufferKind::PcmLog),
        ];
        let mut table = Table::new(
            "MQSim traces (content-free: update deltas drawn from 50–150 B), 16 MB PCM, 1 GB-class flash",
            &[
                "trace",
                "configuration",
                "requests",
                "flash page programs",
                "merges",
                "erases",
                "mean response (µs)",
                "energy (mJ)",
                "PCM bits written",
            ],
        );
        let bar = ctx.progress(self.id(), (TRACES.len() * kinds.len()) as u64);
        for trace in TRACES {
            for (name, kind) in kinds {
                let mut config = base.clone();
                config.buffer.kind = kind;
                let mut store = crate::stack::build(&config).map_err(|e| fail(e.to_string()))?;
                let path = dir.join(trace);
                let file = std::fs::File::open(&path).map_err(|e| fail(format!("{}: {e}", path.display())))?;
                let reader = TraceReader::new(BufReader::new(file), TraceFormat::Disksim);
                let options = ReplayOptions { warmup_requests: 0, content: PageContent::None, seed: ctx.seed };
                let report = replay(store.as_mut(), reader, &options).map_err(|e| fail(format!("{trace}: {e}")))?;
                store.check_invariants().map_err(&fail)?;
                bar.inc(1);
                let s = report.stats;
                table.row(vec![
                    trace.into(),
                    name.into(),
                    report.requests.into(),
                    s.flash_page_programs.into(),
                    s.merges.into(),
                    s.block_erases.into(),
                    (report.mean_response_ns as f64 / 1e3).into(),
                    (report.energy_pj() as f64 / 1e9).into(),
                    s.pcm_bits_written.into(),
                ]);
            }
        }
        bar.finish_and_clear();
        Ok(Outcome {
            summary: "MQSim's tpcc-small (6,999 requests, 2,618 writes) and wsrch-small (24,783, almost all reads) replayed through each configuration, metadata-only (the traces carry no content).".into(),
            config: json!({"seed": ctx.seed, "ssd": base, "traces": TRACES, "content_mode": "none"}),
            tables: vec![table],
            plots: Vec::new(),
            notes: vec![
                "The traces carry no content, so each update of an already written page is logged as one change of 50–150 B drawn from buffer.delta_bytes_min..max (IPL's measured TPC-C range); first writes are whole pages. Addresses beyond the device wrap around, page by page.".into(),
                "The thesis did not run these traces; they show the schemes on real, non-synthetic request streams. Both are short, so most writes are first writes of pages: block-mapped schemes program them in place only when they arrive in block order, and merge otherwise.".into(),
            ],
        })
    }
}
