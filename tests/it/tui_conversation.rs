//! Real agent states in the TUI: LangChain messages as a conversation and the value viewer
//! (move, fold, search, breadcrumb, copy), on `agent.sqlite` — threads real LangGraph wrote with
//! `create_react_agent` and langchain_core's fake chat model (tests/oracle/gen_agent.py).

use crate::common;

use ratatui::backend::TestBackend;
use ratatui::Terminal;
use superstep::app::effects::Runtime;
use superstep::app::keys::parse_keys;
use superstep::app::state::{Modal, Pane};
use superstep::app::viewer::Viewer;
use superstep::app::App;

use crate::common::snapshot_settings as settings;

struct Session {
    _dir: tempfile::TempDir,
    app: App<'static>,
    term: Terminal<TestBackend>,
}

impl Session {
    /// Read-only inspect mode on a copy of the agent fixture, on `thread`.
    fn open(thread: &str) -> Session {
        Session::open_in("agent.sqlite", thread)
    }

    /// Read-only inspect mode on a copy of the fixture `file`, on `thread`.
    fn open_in(file: &str, thread: &str) -> Session {
        let (dir, db) = common::scratch(file);
        let rt = Runtime::inspect(&db).unwrap();
        let mut app = App::inspect(rt);
        app.state.db_path = format!("[TMP]/{file}");
        app.start(Some(thread.into()));
        Session {
            _dir: dir,
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

    fn viewer(&self) -> &Viewer {
        match &self.app.state.modal {
            Some(Modal::Viewer(v)) => v,
            m => panic!("no viewer open: {m:?}"),
        }
    }

    /// The path of the node under the viewer's cursor.
    fn crumb(&self) -> String {
        let v = self.viewer();
        v.lines[v.cursor].crumb.clone()
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
fn a_tool_calling_agent_reads_as_a_conversation() {
    let _s = settings().bind_to_scope();
    let mut s = Session::open("react");
    // the State row: how many messages, the last one, and what this checkpoint added
    s.keys("<Tab>");
    assert_eq!(s.app.state.focus, Pane::State);
    let screen = s.screen();
    assert!(
        screen.contains("~ messages  +1 message (AI) · 12 msgs · last: AI \"The Hôtel du Louvre"),
        "{screen}"
    );
    s.snap("tui_conversation_01_state");
    // the step before: the tool result that failed
    s.keys("<S-Tab> j <Tab>");
    assert!(
        s.screen()
            .contains("+1 message (Tool error) · 11 msgs · last: Tool calculator ✗"),
        "{}",
        s.screen()
    );
    // Enter: the conversation, newest at the bottom, the cursor on it
    s.keys("<S-Tab> k <Tab> <Enter>");
    assert_eq!(s.crumb(), "messages[11]");
    let v = s.viewer();
    let text: Vec<String> = v.lines.iter().map(|l| l.text()).collect();
    // each tool result sits under its call, in the gutter its own index
    let call = text
        .iter()
        .position(|l| l.contains("→ get_weather(city=\"Paris\")"))
        .unwrap();
    assert!(
        text[call + 1].contains("#3   Tool      ✓ Paris: 18°C"),
        "{text:#?}"
    );
    assert!(text[call + 2].contains("→ calculator(expression=\"2**10\")"));
    assert!(text[call + 3].contains("#4   Tool      ✓ 1024"));
    assert!(text
        .iter()
        .any(|l| l.contains("#10  Tool      ✗ Error: ZeroDivisionError('division by zero')")));
    // usage and provider metadata are folded away
    assert!(!text.iter().any(|l| l.contains("fake-gpt")), "{text:#?}");
    s.snap("tui_conversation_02_viewer");
    // i: ids, tool call ids, token usage and model, on demand
    s.keys("i");
    let text: Vec<String> = s.viewer().lines.iter().map(|l| l.text()).collect();
    assert!(text.iter().any(|l| l.contains("tool_call_id call_calc_2")));
    assert!(text
        .iter()
        .any(|l| l.contains("128 tokens (107 in, 21 out)")));
    assert!(text.iter().any(|l| l.contains("fake-gpt")));
    assert_eq!(s.crumb(), "messages[11]", "the cursor stays on its message");
    s.snap("tui_conversation_03_ids");
    // Enter on a message: its stored fields under it; v: the raw JSON tree
    s.keys("i k k <Enter>");
    let v = s.viewer();
    assert!(v.lines[v.cursor + 1..].iter().any(|l| l
        .text()
        .contains("\"langchain_core.messages.tool.ToolMessage\"")));
    s.keys("v");
    assert!(s
        .viewer()
        .lines
        .iter()
        .any(|l| l.text().contains("tool_call_id") && l.text().contains("\"call_calc_2\"")));
}

#[test]
fn a_600_message_thread_opens_at_its_newest_message() {
    let _s = settings().bind_to_scope();
    let mut s = Session::open("long");
    s.keys("<Tab>");
    assert!(s
        .screen()
        .contains("messages  600 msgs · last: AI \"Turn 149"));
    s.keys("<Enter>");
    assert_eq!(s.crumb(), "messages[599]");
    let v = s.viewer();
    assert_eq!(v.scroll + v.height, v.lines.len(), "scrolled to the end");
    assert_eq!(v.cursor, v.lines.len() - 1, "a one-line message");
    s.snap("tui_conversation_600_end");
    // g / G / PgUp / End move in it
    s.keys("g");
    assert_eq!(s.viewer().cursor, 0);
    s.keys("j");
    assert_eq!(s.crumb(), "messages");
    s.keys("G");
    assert_eq!(s.crumb(), "messages[599]");
    let h = s.viewer().height;
    s.keys("<PageUp>");
    assert_eq!(s.viewer().cursor, s.viewer().lines.len() - h);
    s.keys("<End>");
    assert_eq!(s.crumb(), "messages[599]");
    // / searches the conversation, n / N walk the matches
    s.keys("/turn<Space>148<Enter>");
    assert!(
        s.message().starts_with("/turn 148: match 1 of 2"),
        "{}",
        s.message()
    );
    assert_eq!(s.crumb(), "messages[592]");
    s.keys("n");
    assert_eq!(s.crumb(), "messages[595]");
    s.keys("N");
    assert_eq!(s.crumb(), "messages[592]");
}

#[test]
fn the_value_viewer_folds_searches_shows_the_path_and_copies() {
    let _s = settings().bind_to_scope();
    // an interrupt whose payload holds a tool call and the AI message that made it
    let mut s = Session::open("review");
    s.keys("<Tab><Tab><Tab><Tab>");
    assert_eq!(s.app.state.focus, Pane::Interrupts);
    s.keys("<Enter>");
    let text: Vec<String> = s.viewer().lines.iter().map(|l| l.text()).collect();
    assert!(text.iter().any(|l| l == "▾ value  {3 keys}"), "{text:#?}");
    assert!(text
        .iter()
        .any(|l| l.contains("question   \"Run this tool call?\"")));
    // the message in the payload reads as one
    assert!(text
        .iter()
        .any(|l| l.contains("▾ message  AI calls get_weather(city=\"Paris\"), calculator")));
    // down to tool_call: the breadcrumb follows, Enter folds it to one line
    s.keys("j j j j j j");
    assert_eq!(s.crumb(), "value.tool_call");
    s.keys("<Enter>");
    let v = s.viewer();
    assert!(
        v.lines[v.cursor]
            .text()
            .starts_with("  ▸ tool_call  {4 keys}  {\"name\":\"get_weather\""),
        "{}",
        v.lines[v.cursor].text()
    );
    s.snap("tui_viewer_folded");
    // search: matches in the unfolded lines, the breadcrumb names the match's path
    s.keys("g /paris<Enter>");
    assert!(
        s.message().starts_with("/paris: match 1 of 3"),
        "{}",
        s.message()
    );
    // the folded line's preview matches first
    assert_eq!(s.crumb(), "value.tool_call");
    s.keys("n");
    assert_eq!(s.crumb(), "value.message");
    s.keys("n");
    assert_eq!(s.crumb(), "value.message.tool_calls[0]");
    s.snap("tui_viewer_searched");
    // y copies the node as JSON, Y its path (sent with OSC 52 by the terminal loop)
    s.keys("y");
    let copied: serde_json::Value =
        serde_json::from_str(s.app.state.clipboard.as_deref().unwrap()).unwrap();
    assert_eq!(copied["name"], "get_weather");
    assert_eq!(copied["args"]["city"], "Paris");
    assert!(s.message().contains("via OSC 52"), "{}", s.message());
    s.keys("Y");
    assert_eq!(
        s.app.state.clipboard.as_deref(),
        Some("value.message.tool_calls[0]")
    );
    // Esc closes the search prompt first, then the viewer
    s.keys("/x <Esc>");
    assert!(s.viewer().find.is_none());
    s.keys("<Esc>");
    assert!(s.app.state.modal.is_none());
}

/// The viewer opens on the newest message's first line (`#N  Role …`), that line on screen and
/// drawn reversed, at every terminal size — and stays on that message when the terminal is
/// resized. A reply taller than the viewer (agent_answer.sqlite: a 3,035-character itinerary)
/// opens at its first line, not scrolled into its middle with the cursor on a blank line.
#[test]
fn the_viewer_opens_on_the_newest_message_at_every_size() {
    let sizes = [
        (80, 24),
        (100, 24),
        (120, 40),
        (200, 60),
        (90, 30),
        (160, 45),
    ];
    let threads = [
        ("agent.sqlite", "react", 11),
        ("agent.sqlite", "long", 599),
        ("agent.sqlite", "react_paused", 1),
        ("agent.sqlite", "kinds", 5),
        ("agent_answer.sqlite", "itinerary", 4),
    ];
    let check = |s: &mut Session, idx: usize, what: &str| {
        let v = s.viewer();
        let line = v.lines[v.cursor].text();
        assert!(
            line.trim_start().starts_with(&format!("#{idx} ")),
            "{what}: the cursor is on {line:?} (crumb {}), not on message #{idx}'s first line",
            v.lines[v.cursor].crumb
        );
        assert!(
            v.scroll <= v.cursor && v.cursor < v.scroll + v.height,
            "{what}: cursor {} off screen (scroll {}, height {})",
            v.cursor,
            v.scroll,
            v.height
        );
        // the message fits: it ends at the bottom (or everything fits); else it starts at the top
        let end = (v.cursor..v.lines.len())
            .take_while(|i| {
                *i == v.cursor
                    || (v.lines[*i].crumb.starts_with(&format!("messages[{idx}]"))
                        && v.lines[*i].toggle.is_none())
            })
            .last()
            .unwrap();
        if end - v.cursor < v.height {
            assert!(
                end < v.scroll + v.height,
                "{what}: the message's end is off screen"
            );
        } else {
            assert_eq!(
                v.scroll, v.cursor,
                "{what}: a tall message starts at the top"
            );
        }
        // on screen: the one row drawn reversed is that line
        let (w, h) = s.app.state.size;
        s.term.backend_mut().resize(w, h);
        s.screen();
        let buf = s.term.backend().buffer().clone();
        let reversed: Vec<String> = (0..h)
            .filter_map(|y| {
                let row: String = (0..w)
                    .filter(|x| {
                        buf[(*x, y)]
                            .modifier
                            .contains(ratatui::style::Modifier::REVERSED)
                    })
                    .map(|x| buf[(x, y)].symbol().to_string())
                    .collect();
                row.contains(&format!("#{idx} ")).then_some(row)
            })
            .collect();
        assert_eq!(reversed.len(), 1, "{what}: no reversed row shows #{idx}");
    };
    let open = |file: &str, thread: &str, (w, h): (u16, u16)| {
        let mut s = Session::open_in(file, thread);
        s.app.dispatch(superstep::app::action::Action::Resize(w, h));
        s.keys("<Tab> <Enter>");
        s
    };
    // deep inside the long reply, widened: the reply has fewer lines, the cursor stays in it
    // (it used to keep its line offset and land past the reply, on the "was" line)
    let mut s = open("agent_answer.sqlite", "itinerary", (80, 24));
    s.keys("G k k");
    assert_eq!(s.crumb(), "messages[4].content");
    s.app
        .dispatch(superstep::app::action::Action::Resize(200, 60));
    assert!(
        s.crumb().starts_with("messages[4]"),
        "widened: the cursor left the reply for {:?}",
        s.viewer().lines[s.viewer().cursor].text()
    );
    for (file, thread, idx) in threads {
        for size in sizes {
            let mut s = open(file, thread, size);
            check(&mut s, idx, &format!("{thread} at {size:?}"));
            // resized while open: still on the newest message's first line
            for (w2, h2) in sizes {
                let mut s = open(file, thread, size);
                s.app
                    .dispatch(superstep::app::action::Action::Resize(w2, h2));
                let v = s.viewer();
                let line = v.lines[v.cursor].text();
                assert!(
                    line.trim_start().starts_with(&format!("#{idx} ")),
                    "{thread} opened at {size:?}, resized to {w2}x{h2}: the cursor is on {line:?}"
                );
                assert!(v.scroll <= v.cursor && v.cursor < v.scroll + v.height);
            }
        }
    }
}

/// A task's result and a pending write read as the messages they hold: the Tasks pane says
/// `done messages: Tool get_weather ✓ "Paris: 18°C…"` (it said `done        {"messages":[T`),
/// and a write of one message is that message (it said `1 msg · last: Tool …`).
#[test]
fn task_results_and_writes_read_as_their_messages() {
    let mut s = Session::open("react");
    // step 1: the two parallel tool calls ran (tools ×2, Send)
    s.keys("9j");
    let screen = s.screen();
    assert!(
        screen.contains("│▸ 2cfbee10 tools done messages: Tool get_we"),
        "{screen}"
    );
    assert!(
        screen.contains("│  5bd6e628 tools done messages: Tool calcul"),
        "{screen}"
    );
    assert!(
        screen.contains("WRITE     Tool get_weather ✓ \"Paris: 18°C, light rain"),
        "{screen}"
    );
    assert!(!screen.contains("1 msg · last"), "{screen}");
    assert!(!screen.contains("{\"messages\""), "{screen}");
}

/// A task paused by `interrupt({...})` says what it asks, key by key, in the Tasks and
/// Interrupts panes (`interrupted question: "Run this tool call?"`; it was `interrupted [{"`).
#[test]
fn an_interrupted_task_says_what_it_asks() {
    let mut s = Session::open("review");
    s.app
        .dispatch(superstep::app::action::Action::Resize(200, 40));
    s.term.backend_mut().resize(200, 40);
    let screen = s.screen();
    assert!(
        screen.contains("review interrupted question: \"Run this tool call?\"  tool_call: {"),
        "{screen}"
    );
    assert!(
        screen.contains("review 52012fcb question: \"Run this tool call?\""),
        "{screen}"
    );
}
