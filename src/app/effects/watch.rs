//! Another process's changes: the file's stamp looked at between dispatches, a store replaced or
//! gone, a lock waited out.

use super::*;

impl<'g> Runtime<'g> {
    /// Whether another process changed the DB since the last look (its own effects do not
    /// count: the app calls [`Runtime::mark_seen`] after each dispatch). A read-only store opened `immutable`
    /// is opened again on any change (then no longer immutable if a writer keeps a `-wal`).
    pub fn external_change(&mut self) -> bool {
        if self.locked {
            // a read failed on another process's lock: once it is gone, read again
            match self.store.stamp() {
                Ok(now) => {
                    self.locked = false;
                    self.stamp = Some(now);
                    self.notice = Some(Action::Info(format!(
                        "{}: the other process's lock is gone: read again",
                        self.store.label()
                    )));
                    return true;
                }
                Err(_) => return false,
            }
        }
        // the file itself: replaced by another (a `mv` over it) or deleted since it was opened;
        // the open handle would go on reading the old one and call it live
        match self.store.presence() {
            crate::store::Presence::Gone => {
                if !self.gone {
                    self.gone = true;
                    self.notice = Some(Action::Failed {
                        error: format!(
                            "{}: the file was deleted or moved away: what is shown is what it held when last read, nothing live",
                            self.store.label()
                        ),
                        hint: String::new(),
                    });
                }
                return false;
            }
            crate::store::Presence::Replaced if self.source.is_none() || self.read_only => {
                self.gone = false;
                return match tui_store(&self.db, Mode::ReadOnly) {
                    Ok(s) => {
                        self.store = s;
                        self.stamp = self.store.stamp().ok();
                        self.notice = Some(Action::Info(format!(
                            "{}: the file was replaced by another: opened the new one",
                            self.store.label()
                        )));
                        true
                    }
                    Err(e) => {
                        self.notice = Some(Action::Failed {
                            error: format!(
                                "the file was replaced by another, which cannot be read: {e}"
                            ),
                            hint: String::new(),
                        });
                        false
                    }
                };
            }
            crate::store::Presence::Replaced => {
                if !self.gone {
                    self.gone = true;
                    self.notice = Some(Action::Failed {
                        error: format!(
                            "{}: the file was replaced by another under the TUI: steps still write to the one opened; restart to work on the new one",
                            self.store.label()
                        ),
                        hint: String::new(),
                    });
                }
                return false;
            }
            crate::store::Presence::Same => self.gone = false,
        }
        let now = match self.store.stamp() {
            Ok(now) => now,
            Err(e) if is_lock_error(&e.to_string()) => {
                // another process's write holds the DB longer than LOCK_WAIT: read again after
                self.locked = true;
                self.notice = Some(Action::Info(format!(
                    "{}: another process holds the DB locked (a write in progress): read again when the lock is gone",
                    self.store.label()
                )));
                return false;
            }
            Err(e) => {
                if !self.unreachable {
                    self.unreachable = true;
                    self.notice = Some(Action::Failed {
                        error: format!("live refresh: {e}"),
                        hint: "tried again every tick; what is shown is what was last read".into(),
                    });
                }
                return false;
            }
        };
        if self.unreachable {
            // back: whatever a failed load left on screen is read again
            self.unreachable = false;
            self.stamp = Some(now);
            self.notice = Some(Action::Info(format!(
                "{}: reachable again: reloaded",
                self.store.label()
            )));
            return true;
        }
        if self.stamp.as_ref() == Some(&now) {
            return false;
        }
        let first = self.stamp.is_none();
        // an immutable connection trusts its page cache: open the file again to see the change
        if self.store.needs_reopen() {
            if let Ok(s) = tui_store(&self.db, Mode::ReadOnly) {
                self.store = s;
            }
        }
        self.stamp = self.store.stamp().ok();
        !first
    }

    /// What the last look at the file found to say (the file replaced or gone), once.
    pub fn take_notice(&mut self) -> Option<Action> {
        self.notice.take()
    }

    /// Take the DB as it is now as seen: what this process's own effects wrote is not an
    /// external change.
    pub fn mark_seen(&mut self) {
        // a stamp that cannot be read now (the DB locked) keeps the last one: forgetting it
        // would make the next change look like the first look, and go unseen
        if let Ok(s) = self.store.stamp() {
            self.stamp = Some(s);
        }
    }
}
