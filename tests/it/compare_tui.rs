//! Compare and explain in the TUI, through the real keymap, update loop and runtime: `m` / `d`
//! (the diff against the mark, side by side when wide, unified when narrow, across threads),
//! `w` on a State row (provenance; Enter goes to the checkpoint), `:watch` (re-evaluated on
//! every checkpoint shown, history included) and `:break when` (`c` steps until it holds; the
//! rows are a straight run's). Snapshots in snapshots/compare_tui_*.snap.

use crate::common::normalize::{first_diff, Normalizer};
use crate::common::scratch;
use crate::common::snapshot_settings as settings;
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use superstep::app::effects::Runtime;
use superstep::app::keys::parse_keys;
use superstep::app::state::{Modal, Pane};
use superstep::app::App;
use superstep::engine::clock::FixedIds;
use superstep::engine::source::SpecSource;
use superstep::source::{GraphSource, Input, RunRequest, Start};
use superstep::spec::model::Breakpoints;

const CLOCK: u128 = 1_796_207_639_000_000_000;

struct Session {
    _dir: tempfile::TempDir,
    db: std::path::PathBuf,
    app: App<'static>,
}

impl Session {
    fn inspect(thread: &str) -> Session {
        let (dir, db) = scratch("compare.sqlite");
        let mut app = App::inspect(Runtime::inspect(&db).unwrap());
        app.state.db_path = "[TMP]/compare.sqlite".into();
        app.start(Some(thread.into()));
        Session { _dir: dir, db, app }
    }

    fn debug(spec: &str) -> Session {
        let lg: &'static _ = Box::leak(Box::new(
            superstep::engine::loaded::load(
                &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(spec),
            )
            .unwrap(),
        ));
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("tui.sqlite");
        let rt = Runtime::debug(&db, lg, Box::new(FixedIds::new(CLOCK, 0))).unwrap();
        let mut app = App::debug(rt);
        app.state.db_path = "[TMP]/tui.sqlite".into();
        app.state.graph_label = Some(spec.into());
        app.start(None);
        Session { _dir: dir, db, app }
    }

    fn keys(&mut self, k: &str) -> &mut Self {
        for key in parse_keys(k).unwrap() {
            self.app.key(key);
        }
        self
    }

    fn screen(&self, w: u16, h: u16) -> String {
        let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
        let state = &self.app.state;
        term.draw(|f| superstep::ui::render(state, f)).unwrap();
        term.backend().to_string()
    }

    fn message(&self) -> String {
        self.app
            .state
            .message
            .as_ref()
            .map(|m| m.text.clone())
            .unwrap_or_default()
    }
}

#[test]
fn the_diff_against_the_mark_side_by_side_unified_and_across_threads() {
    let _s = settings().bind_to_scope();
    let mut s = Session::inspect("chat_fork");
    // the fork's head marked, its update checkpoint (the edited AI message) selected
    s.keys("m j j d");
    let Some(Modal::Diff(d)) = &s.app.state.modal else {
        panic!("no diff view: {}", s.message())
    };
    assert!(d.a.starts_with("chat_fork · step 4 loop"), "{}", d.a);
    assert!(d.b.starts_with("chat_fork · step 2 update"), "{}", d.b);
    insta::assert_snapshot!("compare_tui_diff_side_by_side", s.screen(120, 30));
    insta::assert_snapshot!("compare_tui_diff_unified", s.screen(90, 30));
    // colour carries the meaning: removed red, changed yellow, added green
    let area = ratatui::layout::Rect::new(0, 0, 120, 30);
    let mut buf = ratatui::buffer::Buffer::empty(area);
    superstep::ui::draw(&s.app.state, &mut buf, area);
    let fg_of = |start: &str| {
        (0..30)
            .find_map(|y| {
                let row: String = (2..118).map(|x| buf[(x, y)].symbol().to_string()).collect();
                row.starts_with(start).then(|| buf[(2, y)].fg)
            })
            .unwrap_or_else(|| panic!("no row {start:?}"))
    };
    use ratatui::style::Color;
    assert_eq!(fg_of("- messages[2]"), Color::Red);
    assert_eq!(fg_of("~ turns"), Color::Yellow);
    assert_eq!(fg_of("+ task"), Color::Green);
    // across threads: the same step of chat_a against the mark
    s.keys("<Esc> :thread<Space>chat_a <Enter> j d");
    let Some(Modal::Diff(d)) = &s.app.state.modal else {
        panic!("no diff view: {}", s.message())
    };
    assert!(d.b.starts_with("chat_a · step 2 loop"), "{}", d.b);
    let text: Vec<String> = d
        .rows
        .iter()
        .map(|r| format!("{} {}", r.label, r.b))
        .collect();
    assert!(
        text.iter()
            .any(|t| t.contains("Tool weather ✓ \"Paris: sunny\"")),
        "{text:#?}"
    );
    // d without a mark says what to do
    s.keys("<Esc> m m d");
    assert!(s.message().starts_with("no mark"), "{}", s.message());
}

#[test]
fn provenance_of_a_state_row_and_going_to_its_checkpoint() {
    let _s = settings().bind_to_scope();
    let mut s = Session::inspect("chat_fork");
    s.keys("<Tab> w");
    let Some(Modal::Why(w)) = &s.app.state.modal else {
        panic!("no provenance view: {}", s.message())
    };
    assert_eq!(w.p.key, "messages");
    assert_eq!(w.p.contributions.len(), 5);
    insta::assert_snapshot!("compare_tui_why_messages", s.screen(120, 24));
    // the update_state contribution: Enter selects its checkpoint (step 2, source update)
    s.keys("k k <Enter>");
    assert!(s.app.state.modal.is_none());
    assert_eq!(s.app.state.focus, Pane::History);
    let h = s.app.state.selected_history().unwrap();
    assert_eq!((h.step, h.source.as_str()), (2, "update"));
    assert_eq!(
        s.app.state.current.as_ref().unwrap().snapshot.checkpoint_id,
        h.id,
        "the checkpoint is shown"
    );
    // a path through :why
    s.keys(":why<Space>messages.-1 <Enter>");
    let Some(Modal::Why(w)) = &s.app.state.modal else {
        panic!("no provenance view: {}", s.message())
    };
    assert_eq!(w.p.message_id.as_deref(), Some("ai-1"));
    s.keys("<Esc> :why<Space>nokey <Enter>");
    assert!(
        s.message().contains("no state key \"nokey\""),
        "{}",
        s.message()
    );
}

#[test]
fn watches_are_evaluated_on_every_checkpoint_shown() {
    let _s = settings().bind_to_scope();
    let mut s = Session::inspect("chat_fork");
    s.keys(":watch<Space>len(messages) <Enter>");
    s.keys(":watch<Space>messages[-1].type<Space>==<Space>\"ai\"<Space>and<Space>len(messages[-1].tool_calls)<Space>>0 <Enter>");
    s.keys(":watch<Space>messages[3].text <Enter>");
    // browsing history: each checkpoint's own values
    for (row, want) in [(0, "4"), (1, "3"), (2, "2"), (5, "2"), (6, "1")] {
        s.keys("g");
        for _ in 0..row {
            s.keys("j");
        }
        let snap = &s.app.state.current.as_ref().unwrap().snapshot;
        let n = snap
            .values
            .iter()
            .find(|(k, _)| k == "messages")
            .map(|(_, v)| v.as_array().map_or(0, Vec::len))
            .unwrap_or(0);
        let w = &s.app.state.compare.watches[0];
        let got = w.value.as_ref().unwrap().as_ref().unwrap().repr.clone();
        assert_eq!(got, n.to_string(), "row {row}");
        assert_eq!(got, want, "row {row}");
    }
    s.keys("g j j");
    insta::assert_snapshot!("compare_tui_watches", s.screen(120, 30));
    // a bad expression is an inline error at entry
    s.keys(":watch<Space>len(mesages) <Enter>");
    assert_eq!(
        s.message(),
        ":watch len(mesages): column 5: Variable `mesages` not found, did you mean `messages`?"
    );
    assert_eq!(s.app.state.compare.watches.len(), 3);
    s.keys(":unwatch<Space>2 <Enter>");
    assert_eq!(s.app.state.compare.watches.len(), 2);
}

#[test]
fn break_when_steps_until_the_expression_holds_and_the_rows_are_a_straight_runs() {
    let _s = settings().bind_to_scope();
    let mut s = Session::debug("graphs/loop.json");
    s.keys(":break<Space>when<Space>len(log)<Space>==<Space>3<Space>and<Space>n<Space>>=<Space>3 <Enter>");
    s.keys(":watch<Space>note <Enter> c");
    assert_eq!(
        s.message(),
        "break when len(log) == 3 and n >= 3: held after step 3 (True), 4 supersteps — c goes on"
    );
    let cur = s.app.state.current.as_ref().unwrap();
    assert!(cur.latest);
    assert_eq!(cur.snapshot.step, 3);
    insta::assert_snapshot!("compare_tui_break_when", s.screen(120, 30));
    // again: the expression no longer holds, the run goes on to its end
    s.keys("c");
    assert_eq!(
        s.message(),
        "done — break when len(log) == 3 and n >= 3 did not hold in 2 supersteps"
    );
    // the rows: those of a straight run
    let lg = superstep::engine::loaded::load(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("graphs/loop.json"),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let straight = dir.path().join("s.sqlite");
    let input = serde_json::json!({"n": 0, "limit": 5});
    SpecSource::new(&lg, &straight).run(RunRequest {
        thread: "t1".into(),
        start: Start::Fresh {
            input: Input::Value(input),
            checkpoint: None,
        },
        steps: None,
        before: Breakpoints::None,
        after: Breakpoints::None,
    });
    let norm = Normalizer::new(&lg);
    if let Some(d) = first_diff(&norm.normalize(&s.db), &norm.normalize(&straight), "") {
        panic!("the TUI's stepped run differs from a straight run:\n{d}");
    }
    // a bad expression: an inline error, nothing set
    s.keys(":break<Space>when<Space>len(lg) <Enter>");
    assert_eq!(
        s.message(),
        ":break when len(lg): column 5: Variable `lg` not found, did you mean `log`?"
    );
    assert_eq!(
        s.app.state.compare.break_when.as_ref().unwrap().text,
        "len(log) == 3 and n >= 3"
    );
    s.keys(":break<Space>when <Enter>");
    assert!(s.app.state.compare.break_when.is_none());
}
