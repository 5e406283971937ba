//! `superstep du`: the store doctor's size report, as a table or `--json`.

use super::CliError;
use crate::cli::DuArgs;
use crate::doctor::{du_text, sizes::measure};
use crate::store::{Mode, Store};
use std::io::Write;
use std::path::Path;

pub use du_text::bytes;

pub fn du(db: &Path, a: &DuArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let store = Store::open(db, Mode::ReadOnly)?;
    let du = measure(&store, a.thread.as_deref(), a.snapshot_frequency, a.tables)?;
    if a.out.json {
        serde_json::to_writer_pretty(&mut *out, &du)?;
        writeln!(out)?;
        return Ok(());
    }
    for l in du_text::lines(&du, a.top) {
        writeln!(out, "{l}")?;
    }
    Ok(())
}
