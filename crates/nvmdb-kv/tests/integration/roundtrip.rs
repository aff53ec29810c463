//! Every engine, pages of 1 KB, 3 KB (three 1 KB flash pages) and 64 KB (two 32 KB flash
//! pages) and a four-page pool: 3,000 inserts read back, then a sync, unsynced updates
//! and a power loss: recovery returns the synced values.

use nvmdb_kv::{Engine, EngineConfig, EngineKind};

#[test]
fn every_engine_answers_from_its_devices_and_keeps_synced_data_over_a_power_loss() {
    for (kind, page_kb) in EngineKind::ALL.into_iter().flat_map(|k| [(k, 1), (k, 3), (k, 64)]) {
        let mut c = EngineConfig::new(kind, 3000, 20);
        c.page_bytes = page_kb * 1024;
        c.buffer_bytes = 4 * u64::from(c.page_bytes);
        c.size_for(3000, 20);
        let mut e = Engine::new(c.clone()).unwrap();
        for i in 0..3000u32 {
            let k = (i * 7919) % 3000;
            e.insert(k, format!("v{k}").as_bytes()).unwrap();
        }
        e.check().unwrap();
        for k in 0..3000u32 {
            assert_eq!(e.get(k).unwrap(), Some(format!("v{k}").into_bytes()), "{kind:?} {page_kb} KB {k}");
        }
        e.sync().unwrap();
        for k in 0..100u32 {
            e.update(k, b"x").unwrap();
        }
        let dev = e.crash();
        let mut e = Engine::open(c, dev).unwrap();
        e.check().unwrap();
        for k in 0..3000u32 {
            assert_eq!(e.get(k).unwrap(), Some(format!("v{k}").into_bytes()), "{kind:?} {page_kb} KB {k}");
        }
    }
}
