//! `update` for recorded replay (issue 23): `R` cycles the replay mode and hands it to the source;
//! a run's calls are counted for the status line. Plain Actions, no terminal, no bridge.

use super::*;
use crate::app::action::{RunKind, RunResult};
use crate::replay::{Call, CallStatus, ReplayMode};

fn state() -> AppState {
    AppState::new(
        Mode::Debug,
        "/tmp/x/app.sqlite",
        Some("app.py:graph".into()),
        GraphInfo::default(),
    )
}

#[test]
fn r_cycles_the_replay_mode_and_sets_it_on_the_source() {
    let mut s = state();
    assert_eq!(s.replay, ReplayMode::Diverge);
    let fx = update(&mut s, Action::CycleReplay);
    assert_eq!(s.replay, ReplayMode::Strict);
    assert!(matches!(fx[..], [Effect::SetReplay(ReplayMode::Strict)]));
    assert!(s
        .message
        .as_ref()
        .unwrap()
        .text
        .starts_with("replay strict"));
    update(&mut s, Action::CycleReplay);
    let fx = update(&mut s, Action::CycleReplay);
    assert_eq!(s.replay, ReplayMode::Diverge);
    assert!(matches!(fx[..], [Effect::SetReplay(ReplayMode::Diverge)]));
}

#[test]
fn a_run_counts_its_calls_for_the_status_line() {
    let mut s = state();
    let call = |status| -> Call {
        serde_json::from_value(serde_json::json!({
            "task_id": "t", "ns": "a:t", "node": "a", "attempt": 1, "seq": 0, "kind": "model",
            "name": "M", "status": status, "request": "", "response": ""
        }))
        .unwrap()
    };
    update(
        &mut s,
        Action::Ran(Box::new(RunResult {
            kind: RunKind::Continue,
            thread: "t1".into(),
            reports: vec![],
            landed: None,
            output: vec![],
            calls: vec![
                call(CallStatus::Recorded),
                call(CallStatus::Recorded),
                call(CallStatus::Live),
            ],
        })),
    );
    assert_eq!((s.last_calls.recorded, s.last_calls.live), (2, 1));
}
