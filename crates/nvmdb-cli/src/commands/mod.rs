//! One module per command group.

pub mod bench;
pub mod btree;
pub mod envy;
pub mod join;
pub mod journal;
pub mod kv;
pub mod kv_demo;
pub mod lab;
pub mod pcm;
pub mod ssd;
pub mod trace;
