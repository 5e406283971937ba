//! The TUI and the file under it (issue 15 items 7, 8, 14): a file replaced or deleted while
//! shown, a DB locked by another process, and more threads than one listing holds.

use crate::common;

use superstep::app::effects::Runtime;
use superstep::app::App;

fn message(app: &App) -> String {
    app.state
        .message
        .as_ref()
        .map(|m| m.text.clone())
        .unwrap_or_default()
}

fn thread_ids(app: &App) -> Vec<String> {
    app.state.threads.iter().map(|t| t.id.clone()).collect()
}

/// Item 8: a DB opened while its `-wal` existed, then replaced with `mv` or deleted: the TUI
/// kept showing the old threads as `live ↻N`. Replacement (another inode) is reopened; a
/// deletion is said.
#[test]
fn a_replaced_file_is_reopened_and_a_deleted_one_is_said() {
    let (dir, db) = common::scratch("interrupt.sqlite");
    // a live writer: WAL mode, its -wal next to the file while the TUI opens it
    let writer = rusqlite::Connection::open(&db).unwrap();
    writer
        .query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))
        .unwrap();
    writer
        .execute_batch("CREATE TABLE IF NOT EXISTS touch (x); INSERT INTO touch VALUES (1);")
        .unwrap();
    assert!(dir.path().join("interrupt.sqlite-wal").exists());
    let mut app = App::inspect(Runtime::inspect(&db).unwrap());
    app.start(None);
    assert!(thread_ids(&app).contains(&"single_paused".to_string()));
    assert!(!app.tick(), "nothing changed yet");
    drop(writer);

    // another file moved over the path
    let other = dir.path().join("other.sqlite");
    std::fs::copy(common::fixture("multi_interrupt.sqlite"), &other).unwrap();
    std::fs::rename(&other, &db).unwrap();
    assert!(app.tick());
    assert!(
        thread_ids(&app).contains(&"partial".to_string())
            && !thread_ids(&app).contains(&"single_paused".to_string()),
        "{:?}",
        thread_ids(&app)
    );
    assert!(
        message(&app).contains("the file was replaced by another: opened the new one"),
        "{}",
        message(&app)
    );

    // deleted
    std::fs::remove_file(&db).unwrap();
    app.tick();
    assert!(
        message(&app).contains("the file was deleted or moved away"),
        "{}",
        message(&app)
    );
    // said once, not every tick
    app.state.message = None;
    assert!(!app.tick());
    assert!(app.state.message.is_none());
}

/// A real LangGraph DB plus `n` threads `t000000`…, each one checkpoint copied from `single`.
fn many_threads(n: usize) -> (tempfile::TempDir, std::path::PathBuf) {
    let (dir, db) = common::scratch("interrupt.sqlite");
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute(
        "INSERT INTO checkpoints
         WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i + 1 < ?1)
         SELECT printf('t%06d', i), c.checkpoint_ns, c.checkpoint_id, NULL, c.type, c.checkpoint, c.metadata
         FROM k, (SELECT * FROM checkpoints WHERE thread_id = 'single' ORDER BY checkpoint_id DESC LIMIT 1) c",
        [n as i64],
    )
    .unwrap();
    drop(c);
    (dir, db)
}

/// Item 14: the thread picker stopped at 10,000 threads without saying so (`G` landed on
/// thread 9,987 of 100,000). It pages: moving past the loaded threads loads the next ones, `G`
/// all of them; the title says more are there; `-t` finds any thread.
#[test]
fn the_thread_picker_pages_past_ten_thousand_threads() {
    let (_dir, db) = many_threads(100_000);
    let mut app = App::inspect(Runtime::inspect(&db).unwrap());
    app.start(None);
    assert_eq!(app.state.threads.len(), 10_000);
    assert!(app.state.threads_more);
    let key = |app: &mut App, k: &str| {
        for key in superstep::app::keys::parse_keys(k).unwrap() {
            app.key(key);
        }
    };
    key(&mut app, "T");
    let title = {
        let area = ratatui::layout::Rect::new(0, 0, 140, 40);
        let mut buf = ratatui::buffer::Buffer::empty(area);
        superstep::ui::draw(&app.state, &mut buf, area);
        format!("{buf:?}")
    };
    assert!(
        title.contains("first 10000 by id (more load as you move down"),
        "{title}"
    );
    // G: every thread, the cursor on the last one
    key(&mut app, "G");
    assert_eq!(app.state.threads.len(), 100_010);
    assert!(!app.state.threads_more);
    let Some(superstep::app::state::Modal::ThreadPicker { sel }) = &app.state.modal else {
        panic!("the picker closed")
    };
    assert_eq!(*sel, 100_009);
    assert_eq!(app.state.threads[*sel].id, "t099999");
    key(&mut app, "<Enter>");
    assert_eq!(app.state.thread.as_deref(), Some("t099999"));

    // paging by moving down past the loaded rows
    let mut app = App::inspect(Runtime::inspect(&db).unwrap());
    app.start(None);
    key(&mut app, "T");
    for _ in 0..10_000 {
        key(&mut app, "j");
    }
    assert_eq!(app.state.threads.len(), 20_000);
    // a thread far past the first page, named on the command line
    let o = common::superstep(&["--db", db.to_str().unwrap(), "-t", "t099999", "--print"]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert!(
        common::stdout(&o).contains("thread t099999"),
        "{}",
        common::stdout(&o)
    );
}

/// Item 7: a key pressed while another process held a rollback-journal EXCLUSIVE lock for 15 s
/// froze the UI for 14 s (past the 5 s busy timeout), and after the commit the status kept
/// saying `database is locked` and the new checkpoint did not appear. A TUI read now waits at
/// most 200 ms, says the DB is locked, and reads again when the lock is gone.
#[test]
fn a_locked_db_keeps_keys_working_and_is_read_again_after_the_commit() {
    let (_dir, db) = common::scratch("interrupt.sqlite"); // rollback journal (DELETE)
    let mut app = App::inspect(Runtime::inspect(&db).unwrap());
    app.start(Some("noint".into()));
    let before = app.state.history.len();
    assert!(before >= 2);
    // the other process: an exclusive write transaction that adds a checkpoint to `noint`
    let writer = rusqlite::Connection::open(&db).unwrap();
    writer.execute_batch("BEGIN EXCLUSIVE").unwrap();
    writer
        .execute(
            "INSERT INTO checkpoints SELECT thread_id, checkpoint_ns, '1ff00000-0000-6000-8000-000000000000', checkpoint_id, type, checkpoint, metadata
             FROM checkpoints WHERE thread_id = 'noint' ORDER BY checkpoint_id DESC LIMIT 1",
            [],
        )
        .unwrap();
    // keys during the lock: answered while the lock is still held (the commit below comes later, in
    // this thread), the lock said; 60 s is a hang guard, not a timing claim
    let t0 = std::time::Instant::now();
    for key in superstep::app::keys::parse_keys("j j").unwrap() {
        app.key(key);
    }
    app.tick();
    let took = t0.elapsed();
    assert!(
        took < std::time::Duration::from_secs(60),
        "keys took {took:?} during the lock"
    );
    let shown = message(&app);
    assert!(shown.contains("database is locked"), "{shown}");
    assert!(
        shown.contains("read again when the lock is gone"),
        "{shown}"
    );
    // the commit: the next tick reads again, shows the new checkpoint, and says so
    writer.execute_batch("COMMIT").unwrap();
    assert!(app.tick());
    assert_eq!(app.state.history.len(), before + 1, "{}", message(&app));
    assert!(
        message(&app).contains("lock is gone: read again"),
        "{}",
        message(&app)
    );
}
