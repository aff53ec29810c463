//! Workloads: block-trace parsers and synthetic generators.

pub mod request;

pub use request::{Content, Op, Request};
