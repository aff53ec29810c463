//! Workloads: block-trace parsers and synthetic generators.

pub mod request;
pub mod synth;
pub mod traces;

pub use request::{Content, Op, Request};
pub use traces::{TraceError, TraceFormat, TraceReader};
