//! One block I/O request, as every trace format is parsed into.

use serde::{Deserialize, Serialize};

/// The kind of request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Op {
    /// Read.
    Read,
    /// Write.
    Write,
    /// Trim (discard).
    Trim,
}

/// What a trace says about the content a write carries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Content {
    /// Nothing: content-free trace.
    Unknown,
    /// One content identity per 4 KB page of the request (e.g. an FIU trace's MD5, folded
    /// to 64 bits; or a synthetic generator's content id).
    PageIds(Vec<u64>),
    /// The real bytes of the whole request.
    Bytes(Vec<u8>),
}

/// One request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Request {
    /// Arrival time, ns since the trace's start.
    pub time_ns: u64,
    /// Kind.
    pub op: Op,
    /// Byte offset.
    pub offset_bytes: u64,
    /// Length in bytes.
    pub len_bytes: u64,
    /// Content of a write.
    pub content: Content,
}
