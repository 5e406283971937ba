//! LangChain messages as a conversation: recognised wherever they appear in a JSON view (state
//! values, task results, pending writes, interrupt payloads) and laid out for people — role,
//! name, wrapped content, tool calls with their arguments and each tool result under its call;
//! ids, token usage and provider metadata on demand. The TUI's panes and viewer and the CLI's
//! human output both use this module; `--json` output never does.
//!
//! * [`message`]: recognising a message in a JSON view ([`Message::from_view`]).
//! * [`render`]: a list of messages as lines of toned segments.
//! * [`summary`]: one-line forms (`42 msgs · last: AI "…"`, `+2 messages (AI tool_call search, Tool result)`).
//! * [`wrap`]: cutting and wrapping by display width.

pub mod message;
pub mod render;
pub mod summary;
pub mod wrap;

pub use message::{is_conversation, messages_in, Message, Role};
pub use render::{render, Line, Options, Seg, Tone};
pub use summary::{delta_line, list_line, message_line};
