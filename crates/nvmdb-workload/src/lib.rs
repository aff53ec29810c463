//! Workloads: block-trace parsers and synthetic generators.

pub mod lines;
pub mod pcm_trace;
pub mod request;
pub mod synth;
pub mod traces;

pub use request::{Content, Op, Request};
pub use traces::{TraceError, TraceFormat, TraceReader};
