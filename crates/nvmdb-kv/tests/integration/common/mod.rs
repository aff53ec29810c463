//! What the differential and crash tests share: a small configuration that makes
//! splits, evictions and merges frequent, operations, and a `BTreeMap` model.

use std::collections::BTreeMap;

use nvmdb_kv::{Engine, EngineConfig, EngineKind, KvError};

/// 1 KB pages, a three-page pool, four pages per erase block and a 1 KB log area per
/// block (two flash log sectors, or eight 128 B PCM units).
pub fn small_config(kind: EngineKind) -> EngineConfig {
    let mut config = EngineConfig::new(kind, 0, 0);
    config.page_bytes = 1024;
    config.buffer_bytes = 3 * 1024;
    config.erase_block_bytes = 4 * 1024;
    config.log_area_bytes = 1024;
    config.capacity_pages = 400;
    config
}

/// The operations of the tests are those of `nvmdb kv run`'s operations files.
pub use nvmdb_kv::file_format::FileOp as Op;

pub type Model = BTreeMap<u32, Vec<u8>>;

/// Applies an operation to the model; returns what the engine must answer.
pub fn model_apply(model: &mut Model, op: &Op) -> String {
    match op {
        Op::Insert(k, v) => format!("{}", model.insert(*k, v.clone()).is_some()),
        Op::Update(k, v) => match model.get_mut(k) {
            Some(old) => {
                *old = v.clone();
                "true".into()
            }
            None => "false".into(),
        },
        Op::Delete(k) => format!("{}", model.remove(k).is_some()),
        Op::Get(k) => format!("{:?}", model.get(k)),
        Op::Scan(lo, hi) => {
            let entries: Vec<(u32, Vec<u8>)> =
                if lo <= hi { model.range(*lo..=*hi).map(|(k, v)| (*k, v.clone())).collect() } else { Vec::new() };
            format!("{entries:?}")
        }
        Op::Sync => "()".into(),
    }
}

/// Applies an operation to the engine; returns its answer in the model's form.
pub fn engine_apply(engine: &mut Engine, op: &Op) -> Result<String, KvError> {
    Ok(match op {
        Op::Insert(k, v) => format!("{}", engine.insert(*k, v)?),
        Op::Update(k, v) => format!("{}", engine.update(*k, v)?),
        Op::Delete(k) => format!("{}", engine.delete(*k)?),
        Op::Get(k) => format!("{:?}", engine.get(*k)?.as_ref()),
        Op::Scan(lo, hi) => format!("{:?}", engine.scan(*lo, *hi)?),
        Op::Sync => format!("{:?}", engine.sync()?),
    })
}

/// Everything the engine holds.
pub fn contents(engine: &mut Engine) -> Model {
    engine.scan(0, u32::MAX).expect("scan").into_iter().collect()
}
