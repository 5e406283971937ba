//! `R` and `--watch` on a Python graph. A reload starts the bridge afresh: a new interpreter
//! imports the app again — its own modules and everything they import, as `langgraph dev`'s reload
//! starts a new worker process — while the threads stay in the checkpoint file, so the next step
//! runs the new code from the thread's last committed checkpoint. The new bridge is started
//! before the old one goes: an edit that does not import (a syntax error) leaves the old code
//! loaded and says why. `--watch` polls the modification times of the app's own module files the
//! load imported (not the standard library's, not an installed package's).

use super::{shape_of, PythonSource};
use crate::snapshot::topology::Topology;
use crate::source::SourceError;
use std::path::PathBuf;
use std::time::{Instant, SystemTime};

/// The app's files and their modification times when the graph was (re)loaded.
#[derive(Debug, Default)]
pub(super) struct Stamps(Vec<(PathBuf, Option<SystemTime>)>);

fn mtime(p: &PathBuf) -> Option<SystemTime> {
    std::fs::metadata(p).and_then(|m| m.modified()).ok()
}

impl Stamps {
    pub(super) fn of(files: &[String]) -> Stamps {
        Stamps(
            files
                .iter()
                .map(PathBuf::from)
                .map(|p| {
                    let t = mtime(&p);
                    (p, t)
                })
                .collect(),
        )
    }

    /// The files whose modification time moved (or that appeared or went), stamped anew so a
    /// change is reported once.
    pub(super) fn take_changed(&mut self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for (p, t) in &mut self.0 {
            let now = mtime(p);
            if now != *t {
                *t = now;
                out.push(p.clone());
            }
        }
        out
    }

    pub(super) fn len(&self) -> usize {
        self.0.len()
    }
}

impl PythonSource {
    /// Start a new bridge on the same reference, interpreter and file; on success it replaces
    /// the old one (whose suspended run, if any, is dropped: the next step goes on from the
    /// thread's last checkpoint with `invoke(None)`).
    pub(super) fn reload_bridge(&mut self) -> Result<String, SourceError> {
        if self.pending.is_some() {
            return Err(SourceError::message(
                "a run is in progress",
                "wait for it, or Esc to cancel it, then reload",
            ));
        }
        let started = Instant::now();
        let (proc, info, loose) =
            Self::start(&self.reference, &self.interpreter, self.db.as_deref()).map_err(|e| {
                SourceError::message(
                    e,
                    "the code loaded before stays in use: fix it and reload again",
                )
            })?;
        // the old bridge shuts down as it is dropped
        self.proc = Some(proc);
        self.gone = None;
        self.finished = None;
        self.loose_output.extend(loose);
        self.stamps = Stamps::of(&info.files);
        self.topology = Topology::from_oracle_json(&info.topology).ok();
        self.shape = shape_of(&info, &self.reference.label);
        self.info = info;
        // the context and config in use, checked again against the new code's context_schema
        let settings = self.settings.clone();
        let notes = self.apply_settings(&settings)?;
        Ok(format!(
            "reloaded {} in {:.1} s (a new Python bridge; {} file(s) of the app imported): the thread is kept, the next step runs the new code{}",
            self.reference.label,
            started.elapsed().as_secs_f64(),
            self.stamps.len(),
            notes.iter().map(|n| format!(" · {n}")).collect::<String>()
        ))
    }

    /// `--watch`: whether an app file changed since the last look.
    pub(super) fn files_changed(&mut self) -> bool {
        !self.stamps.take_changed().is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_is_reported_once() {
        let dir = std::env::temp_dir().join(format!("superstep-stamps-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("app.py");
        std::fs::write(&f, "x = 1\n").unwrap();
        let mut s = Stamps::of(&[f.display().to_string()]);
        assert!(s.take_changed().is_empty());
        // a modification time of its own, whatever the file system's clock granularity
        let later = SystemTime::now() + std::time::Duration::from_secs(5);
        std::fs::File::options()
            .write(true)
            .open(&f)
            .unwrap()
            .set_modified(later)
            .unwrap();
        assert_eq!(s.take_changed(), vec![f.clone()]);
        assert!(s.take_changed().is_empty());
        std::fs::remove_file(&f).unwrap();
        assert_eq!(s.take_changed(), vec![f]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
