//! One module per command group.

pub mod lab;
pub mod pcm;
