//! Recorded replay's part of the bridge (issue 23; `crate::replay`): where the recorder keeps its
//! rows, the `--replay` settings a run is sent, and the calls a step reports. The recorder itself
//! is Python (`recorder.py`, `recordings.py`, `calldata.py`, shipped beside `bridge.py`).

use super::protocol::{WireRecordings, WireReport};
use crate::replay::store::Location;
use crate::replay::{Call, ReplayMode};
use std::path::Path;

/// How a source's later runs treat model and tool calls: `--replay` and `--no-record`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallSettings {
    pub mode: ReplayMode,
    pub record: bool,
}

impl Default for CallSettings {
    fn default() -> Self {
        CallSettings {
            mode: ReplayMode::Diverge,
            record: true,
        }
    }
}

impl CallSettings {
    /// What a `run` request carries: each field only when not the default (diverge, recording).
    pub fn wire(&self) -> (Option<String>, Option<bool>) {
        let replay = (self.mode != ReplayMode::Diverge).then(|| self.mode.name().to_string());
        (replay, (!self.record).then_some(false))
    }
}

/// Where the recorder keeps its rows for the store `db`: beside a SQLite file (an absolute path,
/// the bridge's working directory may differ), in a Postgres store's own database.
pub fn recordings(db: Option<&Path>) -> Option<WireRecordings> {
    let d = db?;
    if crate::store::Store::is_server(d) {
        return Some(WireRecordings::Postgres {
            url: d.display().to_string(),
        });
    }
    let d = std::path::absolute(d).unwrap_or_else(|_| d.to_path_buf());
    Some(match Location::of(&d) {
        Location::Sqlite(p) => WireRecordings::Sqlite {
            path: p.display().to_string(),
        },
        Location::Postgres(url) => WireRecordings::Postgres { url },
    })
}

/// The calls a committed step's tasks made, in task order, added to a run's.
pub fn collect(into: &mut Vec<Call>, report: &WireReport) {
    into.extend(report.tasks.iter().flat_map(|t| t.calls.iter().cloned()));
}
