//! Arbitrary key sequences through the whole TUI (keymap, update loop, effects, engine, store)
//! debugging graphs/approval.json on a fresh DB, then one frame rendered. Property: no panic,
//! whatever is pressed (bad JSON in editors, time travel, update_state, quitting, resizing).
#![no_main]
use libfuzzer_sys::fuzz_target;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use std::sync::OnceLock;
use superstep::app::effects::Runtime;
use superstep::app::App;
use superstep::engine::clock::FixedIds;
use superstep::engine::loaded::LoadedGraph;

fn graph() -> &'static LoadedGraph {
    static G: OnceLock<LoadedGraph> = OnceLock::new();
    G.get_or_init(|| {
        let p = concat!(env!("CARGO_MANIFEST_DIR"), "/../graphs/approval.json");
        superstep::engine::loaded::load(std::path::Path::new(p)).expect("approval graph loads")
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(keys) = superstep::app::keys::parse_keys(text) else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("superstep-fuzz-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let db = dir.join("tui.sqlite");
    for s in ["", "-wal", "-shm", "-journal"] {
        let _ = std::fs::remove_file(format!("{}{s}", db.display()));
    }
    let lg = graph();
    let ids = Box::new(FixedIds::new(1_796_207_639_000_000_000, 7));
    let rt = Runtime::debug(&db, lg, ids).expect("runtime opens");
    let mut app = App::debug(rt);
    app.start(None);
    for k in keys.into_iter().take(64) {
        if app.state.quit {
            break;
        }
        app.key(k);
    }
    for (w, h) in [(120u16, 40u16), (20, 5)] {
        let area = Rect::new(0, 0, w, h);
        let mut buf = Buffer::empty(area);
        superstep::ui::draw(&app.state, &mut buf, area);
    }
});
