//! Typed leaves — datetime, date, time, timedelta, UUID, Decimal, bytes, Enum — say their type in
//! the human views and stay tagged in `--json`, on values real LangGraph wrote (serde.sqlite,
//! tests/oracle/gen_serde.py).

use crate::common;
use common::*;

use crate::common::snapshot_settings as settings;

fn run_ok(args: &[&str]) -> String {
    let o = superstep(args);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
    stdout(&o)
}

#[test]
fn typed_leaves_say_their_type_for_people_and_stay_tagged_in_json() {
    let db = fixture("serde.sqlite");
    let db = db.to_str().unwrap();
    let human = run_ok(&["show", "--db", db, "-t", "rich"]);
    for line in [
        "  when    datetime 2024-05-04T06:32:42+00:00",
        "  uid     UUID 12345678-1234-5678-1234-567812345678",
        "  amount  Decimal 9.99",
        "  blob    bytes 00ff (2 B)",
        "  ids     set({1,2,3})",
        "  ratio   nan",
    ] {
        assert!(human.contains(line), "{line:?} in\n{human}");
    }
    settings().bind(|| insta::assert_snapshot!("cli_typed_leaves", human));
    let json: serde_json::Value =
        serde_json::from_str(&run_ok(&["show", "--db", db, "-t", "rich", "--json"])).unwrap();
    assert_eq!(
        json["values"]["when"],
        serde_json::json!({"__type__": "datetime.datetime", "value": "2024-05-04T06:32:42+00:00"})
    );
    assert_eq!(json["values"]["uid"]["__type__"], "uuid.UUID");
    // the TUI: the State pane's rows, and the viewer's typed line (the tag is dim, the value blue)
    let frame = run_ok(&["--db", db, "-t", "rich", "--print", "--keys", "<Tab>"]);
    assert!(
        frame.contains("when    datetime 2024-05-04T06:32:42+00:00"),
        "{frame}"
    );
    settings().bind(|| insta::assert_snapshot!("tui_typed_leaves", frame));
    let frame = run_ok(&[
        "--db",
        db,
        "-t",
        "rich",
        "--print",
        "--keys",
        "<Tab> j j <Enter>",
    ]);
    assert!(
        frame.contains("when  datetime 2024-05-04T06:32:42+00:00"),
        "{frame}"
    );
    // v: the raw tree shows the tagged object itself
    let frame = run_ok(&[
        "--db",
        db,
        "-t",
        "rich",
        "--print",
        "--keys",
        "<Tab> j j <Enter> v",
    ]);
    assert!(frame.contains("\"datetime.datetime\""), "{frame}");
}
