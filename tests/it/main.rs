//! The integration tests: one binary (issue 22), a module per area.
//!
//! Run one area with a filter, e.g. `cargo test --test it -- tui::` or
//! `cargo test --test it -- --ignored bridge_rows::`.

mod common;

mod architecture;
mod bridge_apps;
mod bridge_failures;
mod bridge_lifetime;
mod bridge_output;
mod bridge_rows;
mod bridge_saves;
mod bridge_tui;
mod cli_errors;
mod cli_output;
mod cli_ship;
mod cli_subgraph_ns;
mod compare_break;
mod compare_cli;
mod compare_oracle;
mod compare_tui;
mod concurrent;
mod daily_loop;
mod delta_channel;
mod differential;
mod doctor;
mod doctor_live;
mod engine_cli;
mod fidelity;
mod graph_drawing;
mod handoff;
mod hostile_files;
mod langgraph_02;
mod lint;
mod messages;
mod oracle_fixtures;
mod postgres;
mod readme_examples;
mod replay_calls;
mod replay_shapes;
mod replay_tui;
mod rough_edges;
mod store_items;
mod store_tolerance;
mod terminal_safety;
mod tui;
mod tui_cli;
mod tui_conversation;
mod tui_files;
mod tui_graphs;
mod tui_tmux;
mod typed_leaves;
mod untrusted;
mod value_vectors;
mod warning_precision;
