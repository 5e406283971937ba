//! superstep: a terminal debugger for LangGraph-style graphs and their SqliteSaver checkpoints.

pub mod app;
pub mod bridge;
pub mod cli;
pub mod commands;
pub mod compare;
pub mod conversation;
pub mod doctor;
pub mod engine;
pub mod ids;
pub mod inspect;
pub mod keys;
pub mod lint;
pub mod open;
pub mod present;
pub mod replay;
pub mod snapshot;
pub mod source;
pub mod spec;
pub mod store;
pub mod text;
pub mod tui;
pub mod ui;
pub mod value;
pub mod versions;
