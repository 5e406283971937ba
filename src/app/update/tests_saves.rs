//! `update` while a Python graph's step runs (issue 21 item 8): `q` cancels the run and quits once
//! it has stopped (it used to cancel and stay open). Plain Actions, no terminal, no bridge.

use super::*;

fn running() -> AppState {
    let mut s = AppState::new(Mode::Debug, "/tmp/x/app.sqlite", None, GraphInfo::default());
    update(&mut s, Action::RunStarted("step".into()));
    assert!(s.running.is_some());
    s
}

#[test]
fn q_while_a_step_runs_cancels_it_then_quits() {
    let mut s = running();
    let effects = update(&mut s, Action::Quit);
    assert!(effects.contains(&Effect::CancelRun), "{effects:?}");
    assert!(!s.quit, "not before the run has stopped");
    assert!(s.message.as_ref().unwrap().text.contains("quitting"));
    // the bridge answers the cancel: the TUI goes
    update(
        &mut s,
        Action::Failed {
            error: "cancelled: the step was interrupted (Esc / Ctrl-C)".into(),
            hint: String::new(),
        },
    );
    assert!(s.quit);
}

#[test]
fn q_twice_quits_at_once_and_esc_only_cancels() {
    let mut s = running();
    update(&mut s, Action::Quit);
    update(&mut s, Action::Quit);
    assert!(s.quit, "a second q does not wait");
    let mut s = running();
    update(&mut s, Action::Cancel);
    update(
        &mut s,
        Action::Failed {
            error: "cancelled".into(),
            hint: String::new(),
        },
    );
    assert!(!s.quit, "Esc cancels and stays");
}
