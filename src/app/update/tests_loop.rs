//! `update` for the daily loop on a Python graph (issue 20): new threads named by `-t`, follow-up
//! turns, reload, tracebacks. Plain Actions, no terminal, no bridge.

use super::*;
use serde_json::json;

fn python_state() -> AppState {
    let mut s = AppState::new(
        Mode::Debug,
        "/tmp/x/app.sqlite",
        Some("app.py:graph".into()),
        GraphInfo {
            name: "chat".into(),
            nodes: vec![NodeInfo {
                name: "reply".into(),
                successors: vec![],
            }],
            state_keys: vec!["messages".into()],
            input: None,
            ..GraphInfo::default()
        },
    );
    s.threads = vec![ThreadRow {
        id: "t1".into(),
        checkpoints: 3,
        latest: "c2".into(),
    }];
    s
}

/// `superstep app.py:graph -t mine`: `N` proposes `mine`, not `t2` (it proposed `t1`); a `-t`
/// naming an existing thread leaves the usual proposal.
#[test]
fn new_thread_proposes_the_t_name() {
    let mut s = python_state();
    s.wanted_thread = Some("mine".into());
    update(&mut s, Action::OpenNewThread);
    let Some(Modal::NewThread { name, .. }) = &s.modal else {
        panic!("{:?}", s.modal)
    };
    assert_eq!(name.text, "mine");
    s.modal = None;
    s.wanted_thread = Some("t1".into());
    update(&mut s, Action::OpenNewThread);
    let Some(Modal::NewThread { name, .. }) = &s.modal else {
        panic!()
    };
    assert_eq!(name.text, "t2");
    let _ = json!(null);
}
