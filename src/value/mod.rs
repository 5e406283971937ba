//! The value model: LangGraph's typed envelope (`serde.dumps_typed`) and msgpack extension types,
//! decoded structurally (nothing is imported or instantiated) into [`rmpv::Value`], and a JSON
//! *view* of those values for display and for the StateSnapshot-shaped JSON output.
//!
//! Pure: no IO. See spec §12.

mod envelope;
pub mod ext;
mod view;

pub use envelope::{decode_msgpack, encode_msgpack, Typed, MAX_DEPTH};
pub use ext::{Interrupt, Send};
pub use view::{from_plain_json, from_view, to_view, ViewOptions};

/// Errors from decoding stored values.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ValueError {
    #[error("unknown serialization type {0:?} (expected msgpack, json, null, bytes, bytearray or pickle)")]
    UnknownType(String),
    #[error("corrupt msgpack: {0}")]
    Msgpack(String),
    #[error("{0} trailing byte(s) after the msgpack value")]
    Trailing(usize),
    #[error("corrupt json: {0}")]
    Json(String),
    #[error("value cannot be encoded as msgpack: {0}")]
    Encode(String),
}
