//! `envy-btree`: the CIDR 2011 B+-tree variants on eNVy and on PCM.

use nvmdb_btree::{BTree, Variant};
use nvmdb_device::{Pcm, PcmConfig};
use nvmdb_envy::{CleaningPolicy, Envy, EnvyConfig, EnvyMemory};
use nvmdb_lab::{Experiment, LabError, Outcome, RunContext, Table};
use nvmdb_memory::{CachedMemory, Memory};
use rand::Rng as _;
use serde_json::json;

use super::failed;

/// `envy-btree`.
#[derive(Debug)]
pub struct BtreeOnEnvy;

impl Experiment for BtreeOnEnvy {
    fn id(&self) -> &'static str {
        "envy-btree"
    }
    fn title(&self) -> &'static str {
        "Beyond the paper: the CIDR 2011 B+-tree variants on eNVy and on PCM"
    }
    fn source(&self) -> &'static str {
        "seed 004 (eNVy) with the B+-tree variants of seed 001 (CIDR 2011)"
    }
    fn run(&self, ctx: &RunContext) -> Result<Outcome, LabError> {
        let (entries, inserts) = ctx.scale.pick((50_000u64, 20_000u64), (1_000_000, 200_000));
        let mut table = Table::new(
            format!("{inserts} random inserts into a tree bulk-loaded with {entries} keys (4-line nodes)"),
            &[
                "variant",
                "eNVy: flash programs / insert",
                "eNVy: cleaning cost",
                "eNVy: simulated ns / insert, back to back",
                "PCM: lines written / insert",
                "PCM: bits written / insert",
                "PCM: memory cycles / insert",
            ],
        );
        let bar = ctx.progress(self.id(), Variant::ALL.len() as u64);
        let fail = |e: nvmdb_btree::BTreeError| LabError::Failed { id: self.id().into(), message: e.to_string() };
        for (i, variant) in Variant::ALL.into_iter().enumerate() {
            let mut keys_rng = ctx.rng(6);
            let keys: Vec<u64> = (0..entries + inserts).map(|_| keys_rng.gen::<u64>() >> 1).collect();
            let mut loaded: Vec<u64> = keys[..entries as usize].to_vec();
            loaded.sort_unstable();
            loaded.dedup();
            let pairs = || loaded.iter().map(|&k| (k, k));
            // eNVy sized so the tree fills about 60 % of the flash when done.
            let bytes = (entries + inserts) * 64 * 4 / 8;
            let pages = bytes.div_ceil(256);
            let segments = 32u32;
            let per_segment = (pages * 10 / 6).div_ceil(u64::from(segments)) as u32;
            let mut config =
                EnvyConfig::small(segments, per_segment.max(64), segments * per_segment.max(64) / 256, 0.6);
            config.cleaning = CleaningPolicy::Hybrid { partition_segments: 4 };
            let envy = Envy::format(config).map_err(failed(self.id()))?;
            let mut tree =
                BTree::bulk_load(EnvyMemory::new(envy), variant, 4, pairs(), 0.7, &mut ctx.rng(7)).map_err(fail)?;
            tree.memory_mut().envy_mut().reset_stats();
            let start_ns = tree.memory().envy().now_ns();
            for &k in &keys[entries as usize..] {
                tree.insert(k, k).map_err(fail)?;
            }
            let envy = tree.memory().envy();
            let s = envy.stats();
            let programs = (s.flush_programs + s.clean_programs) as f64 / inserts as f64;
            let ns = (envy.now_ns() - start_ns) as f64 / inserts as f64;
            let cost = s.cleaning_cost();
            let pcm = Pcm::new(PcmConfig::new(1 << 34))
                .map_err(|e| LabError::Failed { id: self.id().into(), message: e.to_string() })?;
            let mut on_pcm = BTree::bulk_load(CachedMemory::cidr2011(pcm), variant, 4, pairs(), 0.7, &mut ctx.rng(7))
                .map_err(fail)?;
            on_pcm.memory_mut().flush_all();
            on_pcm.memory_mut().reset_stats();
            for &k in &keys[entries as usize..] {
                on_pcm.insert(k, k).map_err(fail)?;
            }
            on_pcm.memory_mut().flush_all();
            let report = on_pcm.memory().report();
            table.row(vec![
                variant.name().into(),
                programs.into(),
                cost.into(),
                ns.into(),
                (report.pcm.lines_written as f64 / inserts as f64).into(),
                (report.pcm.bits_written as f64 / inserts as f64).into(),
                (report.estimated_cycles as f64 / inserts as f64).into(),
            ]);
            bar.set_position(i as u64 + 1);
        }
        bar.finish_and_clear();
        Ok(Outcome {
            summary:
                "The CIDR 2011 node variants run unchanged on eNVy through the Memory trait. On eNVy a write costs \
                      a whole 256 B page program when its page leaves the buffer, so variants that write fewer bits \
                      (the PCM metric) do not necessarily program fewer flash pages: what counts is how many distinct \
                      pages an insert dirties."
                    .into(),
            config: json!({"entries": entries, "inserts": inserts, "node_lines": 4, "seed": ctx.seed}),
            tables: vec![table],
            ..Outcome::default()
        })
    }
}
