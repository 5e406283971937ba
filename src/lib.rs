//! superstep: a terminal debugger for LangGraph-style graphs and their SqliteSaver checkpoints.

pub mod cli;
pub mod commands;
pub mod ids;
pub mod inspect;
pub mod snapshot;
pub mod store;
pub mod value;
