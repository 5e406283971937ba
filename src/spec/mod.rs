//! Graph specs as data: the JSON model (`model/`) and what the Starlark code's syntax says
//! (`reads.rs`, `aliasing.rs`). Loading a spec with its code and compiling it for the engine is
//! `engine::loaded`; running its Starlark is `engine::starlark`. This module imports nothing
//! from `engine/`.

pub mod aliasing;
pub mod model;
pub mod reads;

use starlark::syntax::{Dialect, DialectTypes};

/// The Starlark a spec's code is written in (parsed here for what it reads and mutates, run by
/// `engine::starlark`, linted by `lint`).
pub fn dialect() -> Dialect {
    Dialect {
        enable_top_level_stmt: true,
        enable_f_strings: true,
        enable_keyword_only_arguments: true,
        enable_types: DialectTypes::ParseOnly,
        ..Dialect::Standard
    }
}
