use std::collections::BTreeMap;

use super::*;
use crate::config::EngineKind;

/// Key counts of the root's children when the root is an inner page with two inner
/// children.
fn two_inner_children(engine: &mut Engine) -> Option<(usize, usize)> {
    let Node::Inner { children, .. } = engine.fetch(engine.root).unwrap().page.node.clone() else { return None };
    if children.len() != 2 {
        return None;
    }
    let mut counts = [0; 2];
    for (count, id) in counts.iter_mut().zip(children) {
        let page = &engine.fetch(id).unwrap().page;
        if matches!(page.node, Node::Leaf { .. }) {
            return None;
        }
        *count = page.len();
    }
    Some((counts[0], counts[1]))
}

/// Fills one inner page beside another, then deletes the other's keys until it has
/// none: being unable to merge with its full sibling, it takes one child from it.
/// `ascending` fills the right inner page and empties the left one; otherwise the
/// reverse.
fn an_inner_page_without_keys_takes_a_child_from_a_full_sibling(kind: EngineKind, ascending: bool) {
    let mut config = EngineConfig::new(kind, 0, 0);
    config.page_bytes = 1024;
    config.buffer_bytes = 8 * 1024;
    config.erase_block_bytes = 4 * 1024;
    config.log_area_bytes = 1024;
    config.capacity_pages = 600;
    let mut engine = Engine::new(config).unwrap();
    let full = (1024 - PAGE_HEADER_BYTES_INNER) / 8;
    let mut model = BTreeMap::new();
    let value = [b'v'; 64];
    let key_at = |i: u32| if ascending { i } else { 1_000_000 - i };
    let mut i = 0;
    loop {
        engine.insert(key_at(i), &value).unwrap();
        model.insert(key_at(i), value.to_vec());
        i += 1;
        let counts = two_inner_children(&mut engine);
        let filled = if ascending { counts.map(|c| c.1) } else { counts.map(|c| c.0) };
        if filled == Some(full) {
            break;
        }
        assert!(i < 5000, "{kind:?}: no inner page filled up");
    }
    engine.sync().unwrap();
    let mut rotated = false;
    for j in 0..i {
        let key = if ascending { key_at(j) } else { key_at(i - 1 - j) };
        assert!(engine.delete(key).unwrap());
        model.remove(&key);
        engine.check().unwrap_or_else(|e| panic!("{kind:?} after deleting {key}: {e}"));
        let counts = two_inner_children(&mut engine);
        let filled = if ascending { counts.map(|c| c.1) } else { counts.map(|c| c.0) };
        if filled == Some(full - 1) {
            rotated = true;
            break;
        }
    }
    assert!(rotated, "{kind:?}: the emptied inner page never took a child from its full sibling");
    let got: BTreeMap<u32, Vec<u8>> = engine.scan(0, u32::MAX).unwrap().into_iter().collect();
    assert_eq!(got, model);
    engine.sync().unwrap();
    let mut engine = Engine::open(engine.config().clone(), engine.crash()).unwrap();
    engine.check().unwrap();
    let got: BTreeMap<u32, Vec<u8>> = engine.scan(0, u32::MAX).unwrap().into_iter().collect();
    assert_eq!(got, model, "{kind:?}: after a power loss");
}

/// Page header and the first child of an inner page, bytes.
const PAGE_HEADER_BYTES_INNER: usize = crate::page::PAGE_HEADER_BYTES + 4;

/// Levels of the tree.
fn depth(engine: &mut Engine) -> usize {
    let mut id = engine.root;
    let mut levels = 1;
    while let Node::Inner { children, .. } = &engine.fetch(id).unwrap().page.node {
        id = children[0];
        levels += 1;
    }
    levels
}

/// Deleting the low 97% of a three-level tree's keys in order empties whole inner
/// pages: they merge with their siblings, and the tree loses a level.
#[test]
fn inner_pages_merge_and_the_tree_loses_a_level() {
    for kind in EngineKind::ALL {
        let mut config = EngineConfig::new(kind, 0, 0);
        config.page_bytes = 1024;
        config.buffer_bytes = 8 * 1024;
        config.erase_block_bytes = 4 * 1024;
        config.log_area_bytes = 1024;
        config.capacity_pages = 1200;
        let mut engine = Engine::new(config).unwrap();
        for k in 0..4000 {
            engine.insert(k, &[b'v'; 64]).unwrap();
        }
        engine.sync().unwrap();
        assert_eq!(depth(&mut engine), 3, "{kind:?}");
        for k in 0..3880 {
            assert!(engine.delete(k).unwrap());
            if k % 97 == 0 {
                engine.check().unwrap_or_else(|e| panic!("{kind:?} after deleting {k}: {e}"));
            }
        }
        engine.sync().unwrap();
        engine.check().unwrap();
        assert_eq!(depth(&mut engine), 2, "{kind:?}: {} pages", engine.pages());
        let keys: Vec<u32> = engine.scan(0, u32::MAX).unwrap().into_iter().map(|(k, _)| k).collect();
        assert_eq!(keys, (3880..4000).collect::<Vec<_>>());
    }
}

#[test]
fn an_inner_page_without_keys_takes_a_child_from_either_full_sibling() {
    for kind in EngineKind::ALL {
        an_inner_page_without_keys_takes_a_child_from_a_full_sibling(kind, true);
        an_inner_page_without_keys_takes_a_child_from_a_full_sibling(kind, false);
    }
}
