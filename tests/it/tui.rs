//! The TUI driven by scripted keys through the real keymap, update loop, effects runtime, engine
//! and store, rendered at a fixed size into ratatui's TestBackend. Fixed clock and ids make every
//! checkpoint id reproducible; temp-dir paths are replaced before rendering.

use crate::common;

use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::Terminal;
use superstep::app::effects::Runtime;
use superstep::app::keys::parse_keys;
use superstep::app::state::{Modal, Pane};
use superstep::app::App;
use superstep::engine::clock::FixedIds;
use superstep::engine::loaded::LoadedGraph;
use superstep::store::{Mode, Store};

const CLOCK: u128 = 1_796_207_639_000_000_000;

use crate::common::snapshot_settings as settings;

struct Session {
    dir: tempfile::TempDir,
    db: std::path::PathBuf,
    app: App<'static>,
    term: Terminal<TestBackend>,
}

fn spec(path: &std::path::Path) -> &'static LoadedGraph {
    Box::leak(Box::new(
        superstep::engine::loaded::load(path).expect("spec loads"),
    ))
}

fn repo_graph(name: &str) -> &'static LoadedGraph {
    spec(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("graphs")
            .join(name),
    )
}

impl Session {
    /// Debug mode on a spec, with a fresh DB in a temp dir and a new thread t1.
    fn debug(lg: &'static LoadedGraph) -> Session {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("tui.sqlite");
        let rt = Runtime::debug(&db, lg, Box::new(FixedIds::new(CLOCK, 0))).unwrap();
        let mut app = App::debug(rt);
        redact(&mut app, lg);
        app.start(None);
        Session {
            dir,
            db,
            app,
            term: Terminal::new(TestBackend::new(120, 40)).unwrap(),
        }
    }

    /// Read-only inspect mode on a copy of a LangGraph fixture.
    fn inspect(fixture: &str) -> Session {
        let (dir, db) = common::scratch(fixture);
        let rt = Runtime::inspect(&db).unwrap();
        let mut app = App::inspect(rt);
        app.state.db_path = format!("[TMP]/{fixture}");
        app.start(None);
        Session {
            dir,
            db,
            app,
            term: Terminal::new(TestBackend::new(120, 40)).unwrap(),
        }
    }

    fn keys(&mut self, k: &str) -> &mut Self {
        for key in parse_keys(k).unwrap() {
            self.app.key(key);
        }
        self
    }

    fn screen(&mut self) -> String {
        let state = &self.app.state;
        self.term.draw(|f| superstep::ui::render(state, f)).unwrap();
        self.term.backend().to_string()
    }

    fn snap(&mut self, name: &str) -> &mut Self {
        let screen = self.screen();
        insta::assert_snapshot!(name, screen);
        self
    }

    /// One pane alone, with styles (colour carries meaning there).
    fn styled_pane(&self, pane: Pane, w: u16, h: u16) -> String {
        let area = Rect::new(0, 0, w, h);
        let mut buf = Buffer::empty(area);
        superstep::ui::render_pane(&self.app.state, pane, &mut buf, area);
        format!("{buf:?}")
    }

    fn message(&self) -> String {
        self.app
            .state
            .message
            .as_ref()
            .map(|m| m.text.clone())
            .unwrap_or_default()
    }

    fn status(&self) -> String {
        self.app.state.pause().describe()
    }
}

fn redact(app: &mut App, lg: &LoadedGraph) {
    app.state.db_path = "[TMP]/tui.sqlite".into();
    app.state.graph_label = Some(format!(
        "graphs/{}",
        lg.path.file_name().unwrap().to_string_lossy()
    ));
}

/// `(source, step)` of every checkpoint of a thread, oldest first, read straight from the DB.
fn db_checkpoints(db: &std::path::Path, thread: &str) -> Vec<(String, i64)> {
    let store = Store::open(db, Mode::ReadOnly).unwrap();
    let mut rows = store.history(thread, "", None, 1000).unwrap();
    rows.reverse();
    rows.iter()
        .map(|r| {
            (
                r.metadata["source"].as_str().unwrap_or("").to_string(),
                r.metadata["step"].as_i64().unwrap_or(0),
            )
        })
        .collect()
}

#[test]
fn approval_step_interrupt_resume_time_travel_and_fork() {
    let _s = settings().bind_to_scope();
    let mut s = Session::debug(repo_graph("approval.json"));
    s.snap("tui_approval_01_start");
    assert_eq!(s.status(), "ready: next __start__");

    s.keys("n n n");
    assert_eq!(s.status(), "interrupt in approve");
    s.snap("tui_approval_02_interrupt");

    // the resume editor validates as you type
    s.keys("r tru");
    s.snap("tui_approval_03_resume_invalid");
    s.keys("e");
    s.snap("tui_approval_04_resume_valid");
    // like invoke(Command(resume=True)) and `superstep resume`: on to the next pause (the end)
    s.keys("<Enter>");
    assert!(s.app.state.modal.is_none());
    assert_eq!(s.status(), "done");
    assert!(
        s.message()
            .starts_with("resume: step 2 approve done · step 3 execute done"),
        "{}",
        s.message()
    );
    s.snap("tui_approval_05_resumed");

    // travel back to the checkpoint before approve and fork
    s.keys("j j t");
    assert!(matches!(
        s.app.state.modal,
        Some(Modal::ConfirmTravel { .. })
    ));
    s.snap("tui_approval_07_travel_confirm");
    s.keys("y");
    assert!(
        s.message().starts_with("time travel: landed on"),
        "{}",
        s.message()
    );
    s.snap("tui_approval_08_forked");

    s.keys("c");
    assert_eq!(s.status(), "interrupt in approve");
    s.keys("r \"no\" <Enter>");
    assert_eq!(s.status(), "done");
    s.snap("tui_approval_09_fork_rejected");

    let rows = db_checkpoints(&s.db, "t1");
    let sources: Vec<&str> = rows.iter().map(|(x, _)| x.as_str()).collect();
    assert_eq!(
        sources,
        ["input", "loop", "loop", "loop", "loop", "fork", "loop", "loop"],
        "{rows:?}"
    );
    let store = Store::open(&s.db, Mode::ReadOnly).unwrap();
    let th = superstep::inspect::Thread::open(&store, "t1", "", None).unwrap();
    let live = th.show(None).unwrap();
    let log = live.values.iter().find(|(k, _)| k == "log").unwrap();
    assert_eq!(
        superstep::value::to_view(&log.1, Default::default()),
        serde_json::json!(["drafted", "rejected", "cancelled"])
    );
}

#[test]
fn parallel_interrupts_answered_one_by_one_by_id() {
    let _s = settings().bind_to_scope();
    let mut s = Session::debug(repo_graph("parallel.json"));
    s.keys("n n");
    assert_eq!(s.status(), "interrupt in finance, legal");
    // a plain resume is ambiguous with two pending: the engine's RuntimeError, explained
    s.keys(":resume<Space>\"x\"<Enter>");
    assert!(s
        .message()
        .starts_with("RuntimeError: When there are multiple pending interrupts"));
    assert!(s.message().contains("answer them one by one"));
    s.snap("tui_parallel_01_plain_resume_error");

    s.keys("r");
    s.snap("tui_parallel_02_resume_two");
    s.keys("\"yes\" <Enter>");
    assert_eq!(s.status(), "interrupt in finance");
    s.snap("tui_parallel_03_partial");
    insta::assert_snapshot!(
        "tui_parallel_writes_styled",
        s.styled_pane(Pane::Writes, 100, 9)
    );
    insta::assert_snapshot!(
        "tui_parallel_interrupts_styled",
        s.styled_pane(Pane::Interrupts, 90, 5)
    );

    // like invoke(Command(resume=...)): the answer runs on to the end (finance, then merge)
    s.keys("r \"within\" <Enter>");
    assert_eq!(s.status(), "done");
    s.snap("tui_parallel_04_done");
    let store = Store::open(&s.db, Mode::ReadOnly).unwrap();
    let th = superstep::inspect::Thread::open(&store, "t1", "", None).unwrap();
    let live = th.show(None).unwrap();
    let summary = live.values.iter().find(|(k, _)| k == "summary").unwrap();
    assert_eq!(
        superstep::value::to_view(&summary.1, Default::default()),
        serde_json::json!("finance: within; legal: yes")
    );
}

#[test]
fn breakpoints_before_and_after() {
    let _s = settings().bind_to_scope();
    // the spec's interrupt_before
    let mut s = Session::debug(repo_graph("pipeline.json"));
    s.keys("c");
    assert_eq!(s.status(), "paused before publish");
    s.snap("tui_pipeline_paused_before");
    insta::assert_snapshot!(
        "tui_pipeline_graph_styled",
        s.styled_pane(Pane::Graph, 44, 8)
    );
    s.keys("c");
    assert_eq!(s.status(), "done");

    // break-after toggled on the selected node (Graph pane row: draft)
    let mut s = Session::debug(repo_graph("approval.json"));
    s.keys("B c");
    assert_eq!(s.status(), "paused after draft");
    s.keys("<Tab><Tab><Tab><Tab><Tab> j b");
    assert!(s.app.state.breaks_before.matches("approve"));
    s.snap("tui_approval_paused_after_draft");
    insta::assert_snapshot!(
        "tui_approval_graph_styled",
        s.styled_pane(Pane::Graph, 44, 8)
    );
    // LangGraph: continuing right after a pause marks every channel as seen, so the
    // break-before on approve (the very next node) does not fire; the TUI says why
    s.keys("c");
    assert_eq!(s.status(), "interrupt in approve");
    assert!(
        s.message().contains("break-before approve did not fire"),
        "{}",
        s.message()
    );
    // `*` row: every node
    s.keys("g b");
    assert!(s.app.state.breaks_before.all);
}

#[test]
fn errors_pause_and_update_state_fixes_them() {
    let _s = settings().bind_to_scope();
    let mut s = Session::debug(repo_graph("retry.json"));
    s.keys("c");
    assert!(s.status().starts_with("error in strict"), "{}", s.status());
    s.snap("tui_retry_01_error");
    insta::assert_snapshot!(
        "tui_retry_writes_styled",
        s.styled_pane(Pane::Writes, 100, 8)
    );
    // the update editor: as_node picker + JSON validated as you type
    s.keys("u <Down> {\"fixed\":<Space>tru");
    s.snap("tui_retry_02_update_editor");
    s.keys("e}<Up><Enter>");
    assert!(
        s.message().starts_with("update_state as (inferred)"),
        "{}",
        s.message()
    );
    s.keys("c");
    assert_eq!(s.status(), "done", "{}", s.message());
    s.snap("tui_retry_03_fixed_done");
}

#[test]
fn approval_drift_is_flagged_on_reexecution() {
    let _s = settings().bind_to_scope();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("drift.json"),
        r#"{"name": "drift", "code": "drift.star",
            "state": {"request": {}, "sent": {}, "log": {"reducer": "add", "type": "list"}},
            "nodes": ["approve_and_send"],
            "edges": [["__start__", "approve_and_send"], ["approve_and_send", "__end__"]],
            "input": {"request": "refund order 42"}}"#,
    )
    .unwrap();
    std::fs::write(
        dir.path().join("drift.star"),
        "def approve_and_send(state):\n    draft = llm(\"write an email: \" + state[\"request\"])\n    ok = interrupt({\"draft\": draft})\n    if ok:\n        effect(\"send_email\", draft)\n    return {\"sent\": draft if ok else None, \"log\": [\"sent\" if ok else \"dropped\"]}\n",
    )
    .unwrap();
    let mut s = Session::debug(spec(&dir.path().join("drift.json")));
    s.keys("n n r true<Enter>");
    assert!(
        s.message()
            .starts_with("APPROVAL DRIFT in approve_and_send"),
        "{}",
        s.message()
    );
    let run = s.app.state.run.clone().unwrap();
    let d: Vec<_> = run.drifts().collect();
    assert_eq!(d.len(), 1);
    assert_ne!(d[0].answered, d[0].now);
    s.snap("tui_drift_01_flagged");
    // the task's detail page spells it out (select the step-0 checkpoint where the task ran)
    s.keys("j <Tab><Tab> <Enter>");
    s.snap("tui_drift_02_task_detail");
}

#[test]
fn help_search_command_line_threads_and_new_thread() {
    let _s = settings().bind_to_scope();
    let mut s = Session::debug(repo_graph("approval.json"));
    s.keys("?");
    s.snap("tui_modal_help");
    s.keys("<Esc> n n");
    s.keys("/plan");
    s.snap("tui_modal_search");
    s.keys("<Enter>");
    assert_eq!(s.app.state.focus, Pane::State);
    assert!(s.message().contains("match 1 of"), "{}", s.message());
    s.snap("tui_search_hits");
    s.keys("<Esc> :step<Space>2");
    s.snap("tui_modal_command");
    s.keys("<Enter>");
    assert_eq!(s.status(), "interrupt in approve");
    // Enter on a value opens the viewer with the old value; on a write, the full write
    s.keys("<Esc> G <Enter>");
    s.snap("tui_modal_value_viewer");
    s.keys("<Esc> <Tab> <Tab> <Enter>");
    s.snap("tui_modal_write_viewer");
    s.keys("<Esc> N");
    s.snap("tui_modal_new_thread");
    s.keys("<Enter>");
    assert_eq!(s.app.state.thread.as_deref(), Some("t2"));
    s.keys("T");
    s.snap("tui_modal_thread_picker");
    s.keys("j <Enter>");
    assert_eq!(s.app.state.thread.as_deref(), Some("t2"));
    s.keys("T k <Enter>");
    assert_eq!(s.app.state.thread.as_deref(), Some("t1"));
    assert_eq!(s.status(), "interrupt in approve");
    s.keys("q");
    assert!(s.app.state.quit);
}

#[test]
fn layout_follows_width_too_small_screen_and_resize() {
    let _s = settings().bind_to_scope();
    let mut s = Session::debug(repo_graph("approval.json"));
    s.keys("n n n");
    s.term.backend_mut().resize(80, 24);
    s.term.autoresize().unwrap();
    s.snap("tui_layout_narrow_80x24");
    s.keys("<Tab>");
    s.snap("tui_layout_narrow_next_pane");
    s.term.backend_mut().resize(50, 12);
    s.term.autoresize().unwrap();
    s.snap("tui_layout_too_small");
    s.term.backend_mut().resize(120, 40);
    s.term.autoresize().unwrap();
    let wide = s.screen();
    assert!(wide.contains("Pending writes") && wide.contains("Interrupts"));
}

#[test]
fn inspect_mode_reads_any_db_and_never_writes() {
    let _s = settings().bind_to_scope();
    let mut s = Session::inspect("multi_interrupt.sqlite");
    let before = common::dir_state(s.dir.path());
    s.snap("tui_inspect_01_start");
    s.keys("n");
    assert!(s.message().contains("read-only inspect mode"));
    s.keys("T");
    s.snap("tui_inspect_02_threads");
    s.keys("<Esc> :thread<Space>partial<Enter>");
    assert_eq!(s.app.state.thread.as_deref(), Some("partial"));
    s.snap("tui_inspect_03_partial");
    s.keys("<Tab> <Tab> <Tab> <Tab> <Enter>");
    s.snap("tui_inspect_04_interrupt_viewer");
    drop(s.app);
    assert_eq!(before, common::dir_state(s.dir.path()));
    let _ = &s.db;
}

#[test]
fn recursion_limit_pause() {
    let _s = settings().bind_to_scope();
    let mut s = Session::debug(repo_graph("loop.json"));
    s.keys(":new<Space>long<Space>{\"n\":0,\"limit\":100}<Enter>");
    assert_eq!(s.app.state.thread.as_deref(), Some("long"));
    s.keys("c");
    assert_eq!(s.status(), "recursion limit 25 reached");
    assert!(
        s.message().contains("GraphRecursionError"),
        "{}",
        s.message()
    );
    s.snap("tui_loop_recursion_limit");
}

#[test]
fn subgraph_task_opens_its_namespace_and_backspace_returns() {
    let _s = settings().bind_to_scope();
    let mut s = Session::debug(repo_graph("subgraph.json"));
    s.keys("c");
    assert_eq!(s.status(), "interrupt in interview");
    let root_len = s.app.state.history.len();
    let task = s
        .app
        .state
        .subgraph_task()
        .cloned()
        .expect("interview is a subgraph task");
    let ns = task.ns.clone().unwrap();
    assert!(ns.starts_with("interview:"), "{ns}");
    // from any pane: s opens the namespace of the (only) subgraph task
    s.keys("s");
    assert_eq!(s.app.state.ns, ns);
    assert_eq!(s.app.state.ns_stack.len(), 1);
    // the subgraph's own checkpoints, its own node (ask) pending
    let h = &s.app.state.history;
    assert_eq!(h.len(), 2, "{h:?}");
    assert_eq!(h[0].interrupted, vec!["ask".to_string()]);
    assert!(
        s.screen().contains(&format!("ns {}", &ns[..18])),
        "{}",
        s.screen()
    );
    s.snap("tui_subgraph_01_namespace");
    // the subgraph view is read-only: running acts on the root graph
    s.keys("n");
    assert!(s.message().contains("Backspace returns"), "{}", s.message());
    // Enter on the root's interview task names the namespace
    s.keys("<BS>");
    assert_eq!(s.app.state.ns, "");
    assert!(s.app.state.ns_stack.is_empty());
    assert_eq!(s.app.state.history.len(), root_len);
    s.keys("<Tab><Tab> <Enter>");
    match &s.app.state.modal {
        Some(Modal::Viewer(v)) => {
            assert!(
                v.lines.iter().any(|l| l.text().contains(&ns)),
                "{:?}",
                v.lines
            )
        }
        m => panic!("{m:?}"),
    }
    // and the run goes on from the root: answer, finish
    s.keys("<Esc> r \"ok\"<Enter> c");
    assert_eq!(s.status(), "done");
}

#[test]
fn search_spans_every_loaded_checkpoint_with_next_and_previous() {
    let _s = settings().bind_to_scope();
    let mut s = Session::debug(repo_graph("approval.json"));
    s.keys("n n");
    let n = s.app.state.history.len();
    assert!(n >= 3);
    // "request" is in the input: every checkpoint's values hold it
    s.keys("/request<Enter>");
    let st = s.app.state.search.clone().unwrap();
    let hits = st.thread_hits.clone().unwrap();
    assert_eq!(st.searched, n);
    let cps: std::collections::BTreeSet<_> = hits.iter().map(|h| h.checkpoint.clone()).collect();
    assert!(cps.len() >= 2, "{hits:?}");
    assert!(s.message().contains("match 1 of"), "{}", s.message());
    assert_eq!(s.app.state.selected(Pane::History), 0);
    // ] walks the matches into older checkpoints: the selected checkpoint follows
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..hits.len() {
        s.keys("]");
        let cur = s
            .app
            .state
            .current
            .as_ref()
            .unwrap()
            .snapshot
            .checkpoint_id
            .clone();
        let sel = s.app.state.selected_history().unwrap().id.clone();
        assert_eq!(cur, sel);
        seen.insert(cur);
        assert!(matches!(s.app.state.focus, Pane::State | Pane::Writes));
        assert!(s
            .app
            .state
            .is_hit(Pane::History, s.app.state.selected(Pane::History)));
    }
    assert_eq!(seen, cps);
    assert!(
        s.message().contains("match 1 of"),
        "wrapped: {}",
        s.message()
    );
    // [ goes back to the last match (the oldest checkpoint)
    s.keys("[");
    assert!(
        s.message().contains(&format!("match {} of", hits.len())),
        "{}",
        s.message()
    );
    assert_eq!(s.app.state.selected(Pane::History), n - 1);
    s.snap("tui_search_thread_oldest");
    // a query matching nothing says how many checkpoints were searched
    s.keys("/zzzz-nothing<Enter>");
    assert!(
        s.message()
            .contains(&format!("of the {n} loaded checkpoints")),
        "{}",
        s.message()
    );
}

#[test]
fn long_history_pages_lazily_and_scrolls_to_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("long.sqlite");
    let g = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("graphs/loop.json");
    let o = common::superstep(&[
        "run",
        g.to_str().unwrap(),
        "-t",
        "long",
        "--input",
        "{\"n\":0,\"limit\":2500}",
        "--recursion-limit",
        "3000",
        "--db",
        db.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
    let rt = Runtime::inspect(&db).unwrap();
    let mut app = App::inspect(rt);
    app.start(None);
    let mut s = Session {
        dir,
        db,
        app,
        term: Terminal::new(TestBackend::new(120, 40)).unwrap(),
    };
    // the first frame holds one page, not the 2,502 checkpoints
    let loaded = s.app.state.history.len();
    assert!(loaded < 500, "{loaded}");
    assert!(s.app.state.history_more);
    assert!(s.screen().contains("+ loaded"));
    // scrolling near the end of the page fetches the next one
    s.keys(&format!("{}j", loaded - 10));
    assert!(s.app.state.history.len() > loaded);
    assert_eq!(
        s.app.state.history[s.app.state.selected(Pane::History)].step,
        2500 - (loaded as i64 - 10)
    );
    // a count past what is loaded lands exactly there
    s.keys("g 2000j");
    assert_eq!(s.app.state.selected_history().unwrap().step, 500);
    assert_eq!(s.app.state.current.as_ref().unwrap().snapshot.step, 500);
    // G loads the rest: the input checkpoint at the very end
    s.keys("G");
    assert!(!s.app.state.history_more);
    assert_eq!(s.app.state.history.len(), 2502);
    let h = s.app.state.selected_history().unwrap();
    assert_eq!((h.step, h.source.as_str()), (-1, "input"));
    assert_eq!(s.app.state.current.as_ref().unwrap().snapshot.step, -1);
    assert!(s.screen().contains("History · thread long · 2502 "));
    // ids strictly newest first, no duplicate at a page boundary
    let ids: Vec<_> = s.app.state.history.iter().map(|h| h.id.clone()).collect();
    assert!(ids.windows(2).all(|w| w[0] > w[1]));
    let _ = (&s.dir, &s.db);
}

/// Another process steps the thread the TUI is stepping: the TUI's next step is refused inline
/// (nothing written, the history stays one chain), live refresh shows the other writer's
/// checkpoints, and the step after that starts from them.
#[test]
fn another_writer_on_the_same_thread_is_reported_inline_then_followed() {
    let lg = repo_graph("countdown.json");
    let mut s = Session::debug(lg);
    s.keys("n");
    let before = db_checkpoints(&s.db, "t1").len();
    // the other writer: a second engine on its own connection, one superstep
    let mut other = superstep::engine::pregel::Engine::for_graph(
        lg,
        Store::open(&s.db, Mode::ReadWrite).unwrap(),
        "t1",
    );
    other
        .start(superstep::engine::pregel::Input::Continue, None)
        .unwrap();
    other.step().unwrap();
    assert_eq!(db_checkpoints(&s.db, "t1").len(), before + 1);
    s.keys("n");
    assert!(
        s.message().contains("moved on while this step ran"),
        "{}",
        s.message()
    );
    assert_eq!(
        db_checkpoints(&s.db, "t1").len(),
        before + 1,
        "the TUI wrote nothing"
    );
    // the reload after the refusal already shows the other writer's checkpoint
    assert_eq!(s.app.state.history.len(), before + 1);
    assert!(!s.app.tick(), "nothing new since");
    // a further step by the other writer arrives by live refresh
    other
        .start(superstep::engine::pregel::Input::Continue, None)
        .unwrap();
    other.step().unwrap();
    assert!(s.app.tick());
    assert_eq!(s.app.state.history.len(), before + 2);
    assert!(s.screen().contains("live ↻1"));
    // and the TUI's next step carries on from it: one chain, no fork
    s.keys("n");
    let rows = db_checkpoints(&s.db, "t1");
    assert_eq!(rows.len(), before + 3);
    let steps: Vec<i64> = rows.iter().map(|r| r.1).collect();
    let mut sorted = steps.clone();
    sorted.dedup();
    assert_eq!(
        sorted, steps,
        "no two checkpoints at the same step: {steps:?}"
    );
}
