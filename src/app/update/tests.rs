//! `update` with plain Actions: no terminal, no store, no engine.

use super::run::breaks;
use super::*;
use crate::app::action::{HistoryEntry, ResumeArg, RunKind, RunResult};
use crate::app::views::history_lanes;
use crate::engine::interrupts::{Effect as NodeEffect, InterruptCall};
use crate::engine::{StepReport, TaskReport};
use crate::ids::{interrupt_id, task_ns};
use crate::value::from_view;
use serde_json::json;

fn entry(id: &str, parent: Option<&str>, step: i64) -> HistoryEntry {
    HistoryEntry {
        id: id.into(),
        parent: parent.map(String::from),
        step,
        source: "loop".into(),
        next: vec!["approve".into()],
        pending: vec![],
        interrupted: vec![],
        errored: vec![],
        created_at: "2026-12-02T10:00:00+00:00".into(),
    }
}

fn debug_state() -> AppState {
    let mut s = AppState::new(
        Mode::Debug,
        "/tmp/x/app.sqlite",
        Some("graphs/approval.json".into()),
        GraphInfo {
            name: "approval".into(),
            nodes: ["draft", "approve", "execute"]
                .iter()
                .map(|n| NodeInfo {
                    name: n.to_string(),
                    successors: vec![],
                })
                .collect(),
            state_keys: vec!["draft".into()],
            input: Some(json!({"request": "x"})),
            input_form: None,
            fixed_before: BreakSet::default(),
            fixed_after: BreakSet::default(),
            reloadable: false,
            reducer_keys: vec![],
        },
    );
    s.thread = Some("t1".into());
    s.history = vec![
        entry("c2", Some("c1"), 1),
        entry("c1", Some("c0"), 0),
        entry("c0", None, -1),
    ];
    s
}

fn with_pending(s: &mut AppState, ids: &[(&str, &str)]) {
    s.history[0].pending = ids
        .iter()
        .map(|(id, node)| (id.to_string(), node.to_string(), json!({"q": node})))
        .collect();
    s.history[0].interrupted = ids.iter().map(|(_, n)| n.to_string()).collect();
}

fn type_text(s: &mut AppState, text: &str) {
    for c in text.chars() {
        update(s, Action::Input(crate::app::action::InputKey::Char(c)));
    }
}

#[test]
fn a_count_prefix_steps_n_times() {
    let mut s = debug_state();
    update(&mut s, Action::Digit(1));
    update(&mut s, Action::Digit(2));
    let e = update(&mut s, Action::Step);
    assert!(
        matches!(e.as_slice(), [Effect::Step { n: 12, thread, .. }] if thread == "t1"),
        "{e:?}"
    );
    assert_eq!(s.count, None);
    let e = update(&mut s, Action::Step);
    assert!(matches!(e.as_slice(), [Effect::Step { n: 1, .. }]));
}

#[test]
fn stepping_is_explained_not_done_in_inspect_mode() {
    let mut s = debug_state();
    s.mode = Mode::Inspect;
    for a in [
        Action::Step,
        Action::Continue,
        Action::OpenResume,
        Action::OpenUpdate,
        Action::OpenNewThread,
    ] {
        assert!(update(&mut s, a).is_empty());
        let m = s.message.take().expect("a message");
        assert!(m.text.contains("read-only inspect mode"), "{}", m.text);
    }
    update(&mut s, Action::ToggleBreakBefore);
    assert!(s.message.unwrap().text.contains("need a graph spec"));
}

#[test]
fn stepping_with_a_pending_interrupt_points_at_resume() {
    let mut s = debug_state();
    with_pending(&mut s, &[("aaaa1111", "approve")]);
    assert!(update(&mut s, Action::Step).is_empty());
    assert!(s
        .message
        .as_ref()
        .unwrap()
        .text
        .contains("press r to answer"));
    s.history[0].pending.clear();
    s.history[0].next.clear();
    assert!(update(&mut s, Action::Continue).is_empty());
    assert!(s.message.as_ref().unwrap().text.starts_with("done"));
}

#[test]
fn breakpoints_toggle_on_the_selected_node_and_star() {
    let mut s = debug_state();
    s.sel[Pane::Graph.index()] = 2; // approve
    update(&mut s, Action::ToggleBreakBefore);
    assert!(s.breaks_before.matches("approve") && !s.breaks_before.matches("draft"));
    update(&mut s, Action::ToggleBreakAfter);
    assert!(s.breaks_after.matches("approve"));
    update(&mut s, Action::ToggleBreakBefore);
    assert!(s.breaks_before.is_empty());
    s.sel[Pane::Graph.index()] = 0; // *
    update(&mut s, Action::ToggleBreakBefore);
    assert!(s.breaks_before.all);
    assert_eq!(
        s.breaks_before.to_engine(),
        crate::spec::model::Breakpoints::All
    );
    // turning one node off from "*" keeps the others
    s.sel[Pane::Graph.index()] = 1;
    update(&mut s, Action::ToggleBreakBefore);
    assert!(!s.breaks_before.matches("draft") && s.breaks_before.matches("execute"));
    let e = update(&mut s, Action::Step);
    let Effect::Step { breaks, .. } = &e[0] else {
        panic!()
    };
    assert_eq!(
        breaks.before,
        crate::spec::model::Breakpoints::Nodes(vec!["approve".into(), "execute".into()])
    );
}

#[test]
fn resume_answers_several_interrupts_by_id_partially() {
    let mut s = debug_state();
    with_pending(
        &mut s,
        &[("id_legal_0000", "legal"), ("id_fin_000000", "finance")],
    );
    update(&mut s, Action::OpenResume);
    let Some(Modal::Resume { items, .. }) = &s.modal else {
        panic!("{:?}", s.modal)
    };
    assert_eq!(items.len(), 2);
    type_text(&mut s, "tru");
    // invalid JSON: stays open, error inline
    assert!(update(&mut s, Action::Submit).is_empty());
    let Some(Modal::Resume { error: Some(e), .. }) = &s.modal else {
        panic!()
    };
    assert!(e.contains("invalid JSON"), "{e}");
    type_text(&mut s, "e");
    let e = update(&mut s, Action::Submit);
    assert_eq!(
        e,
        vec![Effect::Resume {
            thread: "t1".into(),
            answer: ResumeArg::ById(vec![("id_legal_0000".into(), json!(true))]),
            breaks: breaks(&s),
        }]
    );
    assert!(s.modal.is_none());
}

#[test]
fn one_pending_interrupt_is_a_plain_resume_and_tab_moves_between_several() {
    let mut s = debug_state();
    with_pending(&mut s, &[("only", "approve")]);
    update(&mut s, Action::OpenResume);
    type_text(&mut s, "\"yes\"");
    let e = update(&mut s, Action::Submit);
    assert!(
        matches!(&e[0], Effect::Resume { answer: ResumeArg::Plain(v), .. } if *v == json!("yes"))
    );

    with_pending(&mut s, &[("a", "x"), ("b", "y")]);
    update(&mut s, Action::OpenResume);
    update(&mut s, Action::NextField);
    type_text(&mut s, "2");
    let e = update(&mut s, Action::Submit);
    assert!(
        matches!(&e[0], Effect::Resume { answer: ResumeArg::ById(m), .. } if *m == vec![("b".to_string(), json!(2))])
    );
    // nothing typed: an error, no effect
    update(&mut s, Action::OpenResume);
    assert!(update(&mut s, Action::Submit).is_empty());
}

#[test]
fn nothing_to_resume_is_explained() {
    let mut s = debug_state();
    assert!(update(&mut s, Action::OpenResume).is_empty());
    assert!(s.message.unwrap().text.starts_with("nothing to resume"));
}

#[test]
fn time_travel_picks_in_history_confirms_then_replays() {
    let mut s = debug_state();
    s.focus = Pane::State;
    assert!(update(&mut s, Action::OpenTimeTravel).is_empty());
    assert_eq!(s.focus, Pane::History);
    let e = update(&mut s, Action::Down);
    assert!(matches!(&e[0], Effect::LoadCheckpoint { id, latest: false, .. } if id == "c1"));
    update(&mut s, Action::OpenTimeTravel);
    let Some(Modal::ConfirmTravel { checkpoint, lines }) = &s.modal else {
        panic!()
    };
    assert_eq!(checkpoint, "c1");
    assert!(
        lines.iter().any(|l| l.contains("1 newer checkpoint stays")),
        "{lines:#?}"
    );
    let e = update(&mut s, Action::Confirm);
    assert!(matches!(&e[0], Effect::TimeTravel { checkpoint, .. } if checkpoint == "c1"));
    // cancel path
    update(&mut s, Action::OpenTimeTravel);
    update(&mut s, Action::Cancel);
    assert!(s.modal.is_none());
}

#[test]
fn update_state_uses_the_picked_as_node_and_the_selected_checkpoint() {
    let mut s = debug_state();
    s.sel[Pane::History.index()] = 1;
    update(&mut s, Action::OpenUpdate);
    update(&mut s, Action::NextField); // draft
    update(&mut s, Action::NextField); // approve
    type_text(&mut s, "{\"draft\": 1}");
    let e = update(&mut s, Action::Submit);
    assert_eq!(
        e,
        vec![Effect::UpdateState {
            thread: "t1".into(),
            ns: String::new(),
            checkpoint: Some("c1".into()),
            values: json!({"draft": 1}),
            as_node: Some("approve".into()),
        }]
    );
}

#[test]
fn new_thread_validates_name_and_input() {
    let mut s = debug_state();
    s.threads = vec![ThreadRow {
        id: "t1".into(),
        checkpoints: 3,
        latest: "c2".into(),
    }];
    update(&mut s, Action::OpenNewThread);
    let Some(Modal::NewThread { name, input, .. }) = &s.modal else {
        panic!()
    };
    assert_eq!(name.text, "t2");
    assert_eq!(input.text, "{\"request\":\"x\"}");
    let e = update(&mut s, Action::Submit);
    assert!(
        matches!(&e[0], Effect::NewThread { thread, input } if thread == "t2" && *input == json!({"request": "x"}))
    );
}

#[test]
fn the_command_line_covers_the_commands() {
    let mut s = debug_state();
    let e = update(&mut s, Action::Command(":step 3".into()));
    assert!(matches!(&e[0], Effect::Step { n: 3, .. }));
    assert!(matches!(
        update(&mut s, Action::Command("c".into()))[0],
        Effect::Continue { .. }
    ));
    with_pending(&mut s, &[("abcd1234", "legal"), ("ef567890", "finance")]);
    let e = update(
        &mut s,
        Action::Command("resume legal=true ef56=\"no\"".into()),
    );
    assert!(
        matches!(&e[0], Effect::Resume { answer: ResumeArg::ById(m), .. }
        if *m == vec![("abcd1234".to_string(), json!(true)), ("ef567890".to_string(), json!("no"))])
    );
    // a plain resume with two pending goes to the engine, which explains the RuntimeError
    let e = update(&mut s, Action::Command("resume \"x\"".into()));
    assert!(matches!(
        &e[0],
        Effect::Resume {
            answer: ResumeArg::Plain(_),
            ..
        }
    ));
    assert!(update(&mut s, Action::Command("resume zz=1".into())).is_empty());
    assert!(s
        .message
        .as_ref()
        .unwrap()
        .text
        .contains("no pending interrupt \"zz\""));
    let e = update(
        &mut s,
        Action::Command("update approve {\"draft\": 2}".into()),
    );
    assert!(
        matches!(&e[0], Effect::UpdateState { as_node: Some(n), checkpoint: None, .. } if n == "approve")
    );
    assert!(update(&mut s, Action::Command("thread nope".into())).is_empty());
    assert!(s.message.as_ref().unwrap().text.contains("no thread"));
    update(&mut s, Action::Command("break execute".into()));
    assert!(s.breaks_before.matches("execute"));
    update(&mut s, Action::Command("clear".into()));
    assert!(s.breaks_before.is_empty());
    update(&mut s, Action::Command("frobnicate".into()));
    assert!(s
        .message
        .as_ref()
        .unwrap()
        .text
        .starts_with("unknown command :frobnicate"));
    update(&mut s, Action::Command("checkpoint c0".into()));
    assert_eq!(s.selected(Pane::History), 2);
    update(&mut s, Action::Command("q".into()));
    assert!(s.quit);
}

#[test]
fn history_lanes_show_forks() {
    // f2 -> f1(fork of c1); c3 -> c2 -> c1 -> c0
    let h = vec![
        entry("f2", Some("f1"), 3),
        entry("f1", Some("c1"), 2),
        entry("c3", Some("c2"), 3),
        entry("c2", Some("c1"), 2),
        entry("c1", Some("c0"), 1),
        entry("c0", None, 0),
    ];
    assert_eq!(history_lanes(&h), ["●", "●", "│ ●", "│ ●", "●─╯", "●"]);
}

fn report(calls: Vec<InterruptCall>, effects: usize) -> StepReport {
    StepReport {
        step: 2,
        tasks: vec![TaskReport {
            id: "task-1".into(),
            name: "approve".into(),
            path: vec![
                crate::ids::PathPart::Str("__pregel_pull".into()),
                crate::ids::PathPart::Str("approve".into()),
            ],
            traceback: None,
            outcome: crate::engine::TaskOutcome::Done,
            writes: vec![],
            attempts: 1,
            calls,
            effects: (0..effects)
                .map(|_| NodeEffect {
                    name: "send".into(),
                    data: rmpv::Value::Nil,
                    attempt: 1,
                })
                .collect(),
        }],
        checkpoint: Some("c3".into()),
        pause: None,
    }
}

#[test]
fn approval_drift_is_flagged_when_the_reexecuted_payload_differs() {
    let mut s = debug_state();
    let id = interrupt_id(&task_ns("", "approve", "task-1"), 0);
    s.seen_interrupts.insert(id.clone(), json!({"draft": "A"}));
    let call = |draft: &str| InterruptCall::Resumed {
        index: 0,
        payload: from_view(&json!({"draft": draft})).unwrap(),
        answer: rmpv::Value::Boolean(true),
    };
    update(
        &mut s,
        Action::Ran(Box::new(RunResult {
            kind: RunKind::Resume,
            thread: "t1".into(),
            reports: vec![report(vec![call("A")], 1)],
            landed: None,
            output: vec![],
            calls: vec![],
        })),
    );
    let run = s.run.clone().unwrap();
    assert_eq!(run.drifts().count(), 0);
    assert_eq!(
        run.steps[0].tasks[0].calls,
        vec![CallView::Resumed {
            index: 0,
            answer: "true".into()
        }]
    );
    assert_eq!(
        run.steps[0].tasks[0].effects,
        vec![("send".to_string(), 1, 1)]
    );
    // the same task re-executed with another payload: drift, and the effect ran again
    update(
        &mut s,
        Action::Ran(Box::new(RunResult {
            kind: RunKind::Resume,
            thread: "t1".into(),
            reports: vec![report(vec![call("B")], 1)],
            landed: None,
            output: vec![],
            calls: vec![],
        })),
    );
    let run = s.run.clone().unwrap();
    let d: Vec<_> = run.drifts().collect();
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].answered, json!({"draft": "A"}));
    assert_eq!(d[0].now, json!({"draft": "B"}));
    assert_eq!(run.steps[0].tasks[0].execution, 2);
    assert_eq!(
        run.steps[0].tasks[0].effects,
        vec![("send".to_string(), 1, 2)]
    );
    let m = s.message.unwrap();
    assert_eq!(m.level, Level::Warn);
    assert!(
        m.text.starts_with("APPROVAL DRIFT in approve"),
        "{}",
        m.text
    );
}

#[test]
fn pauses_reach_the_status_line() {
    let mut s = debug_state();
    let mut r = report(vec![], 0);
    r.pause = Some(crate::engine::Pause::Before(vec!["execute".into()]));
    update(
        &mut s,
        Action::Ran(Box::new(RunResult {
            kind: RunKind::Continue,
            thread: "t1".into(),
            reports: vec![r],
            landed: None,
            output: vec![],
            calls: vec![],
        })),
    );
    assert_eq!(s.pause().describe(), "paused before execute");
    s.run_pause = None;
    with_pending(&mut s, &[("i", "approve")]);
    assert_eq!(s.pause().describe(), "interrupt in approve");
    s.history[0].pending.clear();
    s.history[0].interrupted.clear();
    s.history[0].errored = vec![("approve".into(), "ValueError('x')".into())];
    assert_eq!(s.pause().describe(), "error in approve: ValueError('x')");
}

#[test]
fn engine_errors_become_a_status_message_with_a_hint() {
    let mut s = debug_state();
    update(
        &mut s,
        Action::Failed {
            error: "RuntimeError: When there are multiple pending interrupts".into(),
            hint: "answer them by id".into(),
        },
    );
    let m = s.message.unwrap();
    assert_eq!(m.level, Level::Error);
    assert!(m.text.ends_with("— answer them by id"));
}

#[test]
fn movement_clamps_and_counts_and_esc_clears() {
    let mut s = debug_state();
    s.focus = Pane::History;
    update(&mut s, Action::Digit(9));
    let e = update(&mut s, Action::Down);
    assert_eq!(s.selected(Pane::History), 2);
    assert!(matches!(&e[0], Effect::LoadCheckpoint { id, .. } if id == "c0"));
    update(&mut s, Action::Top);
    assert_eq!(s.selected(Pane::History), 0);
    update(&mut s, Action::FocusNext);
    assert_eq!(s.focus, Pane::State);
    update(&mut s, Action::FocusPrev);
    update(&mut s, Action::FocusPrev);
    assert_eq!(s.focus, Pane::Graph);
    update(&mut s, Action::Digit(3));
    update(&mut s, Action::Cancel);
    assert_eq!(s.count, None);
    update(&mut s, Action::Help);
    update(&mut s, Action::Cancel);
    assert!(s.modal.is_none());
}

#[test]
fn text_fields_edit_at_the_cursor() {
    let mut t = TextInput::new("ab");
    use crate::app::action::InputKey::*;
    t.edit(&Left);
    t.edit(&Char('é'));
    assert_eq!((t.text.as_str(), t.cursor), ("aéb", 2));
    t.edit(&Backspace);
    t.edit(&Home);
    t.edit(&Delete);
    assert_eq!(t.text, "b");
    t.edit(&Clear);
    assert_eq!(t.text, "");
    assert_eq!(check_json(" "), Ok(None));
    assert!(check_json("{")
        .unwrap_err()
        .starts_with("invalid JSON: EOF while parsing"));
}

/// `N` proposes `t2` and the spec's input, selected: typing replaces them (it appended to them:
/// `{}{"messages": …}`, invalid JSON, so the README's own `N` instructions failed), a cursor
/// key keeps the proposal to edit, Backspace clears it.
#[test]
fn new_thread_typing_replaces_the_proposed_name_and_input() {
    use crate::app::action::InputKey::*;
    let mut s = debug_state();
    update(&mut s, Action::OpenNewThread);
    for c in "{\"request\": \"y\"}".chars() {
        update(&mut s, Action::Input(Char(c)));
    }
    let e = update(&mut s, Action::Submit);
    assert!(
        matches!(&e[0], Effect::NewThread { thread, input } if thread == "t1" && *input == json!({"request": "y"})),
        "{e:?}"
    );
    // a cursor key: edit the proposal
    let mut t = TextInput::proposal("{}");
    t.edit(&Left);
    t.edit(&Char(' '));
    assert_eq!((t.text.as_str(), t.proposed), ("{ }", false));
    // Backspace: clear it
    let mut t = TextInput::proposal("t1");
    t.edit(&Backspace);
    assert_eq!(t.text, "");
    t.edit(&Char('a'));
    assert_eq!(t.text, "a");
}

/// The output pane names an execution as the Tasks pane does: a task run again after a resume is
/// `re-run #2` in both (LangGraph's attempt restarts at 1 in every execution, so the output pane
/// no longer says "attempt 1" there); attempts are named only for an execution that was retried.
#[test]
fn output_pane_and_tasks_pane_agree_on_re_runs() {
    use crate::app::viewer::Section;
    let mut s = debug_state();
    let out = |attempt: u32, text: &str| crate::source::TaskOutput {
        task_id: "task-1".into(),
        node: "approve".into(),
        ns: String::new(),
        attempt,
        stream: "stdout".into(),
        text: format!("{text}\n"),
    };
    let ran = |output| {
        Action::Ran(Box::new(RunResult {
            kind: RunKind::Continue,
            thread: "t1".into(),
            reports: vec![report(vec![], 0)],
            landed: None,
            output,
            calls: vec![],
        }))
    };
    update(&mut s, ran(vec![out(1, "first run")]));
    // the same task again (a resume re-runs it): its second execution, retried once
    update(
        &mut s,
        ran(vec![out(1, "second run"), out(2, "second run, retry")]),
    );
    assert_eq!(s.run.as_ref().unwrap().steps[0].tasks[0].execution, 2);
    update(&mut s, Action::OpenOutput);
    let Some(Modal::Viewer(v)) = &s.modal else {
        panic!("no output viewer")
    };
    let Section::Text(lines) = &v.sections[0] else {
        panic!("not text")
    };
    let text = lines.join("\n") + "\n";
    assert!(text.contains("step 2 · approve · task task-1\n"), "{text}");
    assert!(
        text.contains("step 2 · approve · task task-1 · re-run #2 · attempt 1\n"),
        "{text}"
    );
    assert!(
        text.contains("step 2 · approve · task task-1 · re-run #2 · attempt 2\n"),
        "{text}"
    );
    assert!(!text.contains("task task-1 · attempt"), "{text}");
}
