//! `diff`, `diverge` and `why` on threads real LangGraph wrote (tests/oracle/gen_compare.py:
//! forks, a subgraph, Send, parallel interrupts, messages with tool calls). The diffs and
//! divergence points are checked against what the generator computed from LangGraph's own
//! `get_state_history`; provenance against the `writes` rows themselves.
//!
//! `SUPERSTEP_FIXTURES=DIR` points at freshly generated fixtures (`.ci/run` does that).

use serde_json::{json, Value as Json};
use std::path::{Path, PathBuf};
use superstep::compare::{diff, diverge, why};
use superstep::inspect::Thread;
use superstep::snapshot::topology::Topology;
use superstep::store::{CheckpointRow, Mode, Store};

fn dir() -> PathBuf {
    std::env::var_os("SUPERSTEP_FIXTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures"))
}

fn fixture() -> (Json, Store) {
    let d = dir();
    let text = std::fs::read_to_string(d.join("compare.json")).unwrap();
    let store = Store::open(&d.join("compare.sqlite"), Mode::ReadOnly).unwrap();
    (serde_json::from_str(&text).unwrap(), store)
}

/// The same fixture written by PostgresSaver (tests/postgres/ci.sh: `SUPERSTEP_PG_FIXTURES`
/// holds `compare.json` and `compare.pgurl`).
fn pg_fixture() -> (Json, Store) {
    let d = PathBuf::from(std::env::var_os("SUPERSTEP_PG_FIXTURES").unwrap_or_else(|| {
        panic!("SUPERSTEP_PG_FIXTURES is not set: tests/postgres/ci.sh generates the PostgresSaver fixtures")
    }));
    let text = std::fs::read_to_string(d.join("compare.json")).unwrap();
    let url = std::fs::read_to_string(d.join("compare.pgurl")).unwrap();
    let store = Store::open(Path::new(url.trim()), Mode::ReadOnly).unwrap();
    (serde_json::from_str(&text).unwrap(), store)
}

#[test]
#[ignore = "needs the PostgresSaver fixtures (tests/postgres/ci.sh)"]
fn pg_diffs_and_divergences_match_the_computation_over_get_state_history() {
    let (fx, store) = pg_fixture();
    check_diffs(&fx, &store);
    check_divergences(&fx, &store);
}

fn topology(fx: &Json, thread: &str, ns: &str) -> Topology {
    let t = fx["threads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["thread_id"] == thread && t["checkpoint_ns"] == ns)
        .unwrap_or_else(|| panic!("no dump of {thread:?} {ns:?}"));
    Topology::from_oracle_json(&t["topology"]).unwrap()
}

fn open<'s>(fx: &Json, store: &'s Store, side: &Json) -> (Thread<'s>, CheckpointRow) {
    let (t, ns) = (
        side["thread_id"].as_str().unwrap(),
        side["checkpoint_ns"].as_str().unwrap(),
    );
    let th = Thread::open(store, t, ns, Some(topology(fx, t, ns))).unwrap();
    let row = store
        .checkpoint(t, ns, side["checkpoint_id"].as_str())
        .unwrap()
        .unwrap();
    (th, row)
}

/// A multiset as sorted JSON texts.
fn sorted(j: &Json) -> Vec<String> {
    let mut v: Vec<String> = j
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.to_string())
        .collect();
    v.sort();
    v
}

#[test]
fn diffs_match_the_computation_over_get_state_history() {
    let (fx, store) = fixture();
    check_diffs(&fx, &store);
}

fn check_diffs(fx: &Json, store: &Store) {
    let cases = fx["compare"]["diffs"].as_array().unwrap();
    assert!(cases.len() >= 12, "{} diff cases", cases.len());
    let mut kinds = std::collections::BTreeSet::new();
    for c in cases {
        let label = c["label"].as_str().unwrap();
        let (ta, ra) = open(fx, store, &c["a"]);
        let (tb, rb) = open(fx, store, &c["b"]);
        let d = diff::diff(
            &ta.snapshot_of(&ra, false).unwrap(),
            &tb.snapshot_of(&rb, false).unwrap(),
        );
        let got = serde_json::to_value(&d).unwrap();
        let want = &c["expected"];
        assert_eq!(got["same"], want["same"], "{label}: same");
        assert_eq!(got["next"], want["next"], "{label}: next");
        // values: key by key, each change exactly
        let by_key = |l: &Json| -> Vec<(String, Json)> {
            let mut v: Vec<(String, Json)> = l
                .as_array()
                .unwrap()
                .iter()
                .map(|c| (c["key"].as_str().unwrap().to_string(), c.clone()))
                .collect();
            v.sort_by(|a, b| a.0.cmp(&b.0));
            v
        };
        assert_eq!(
            by_key(&got["values"]),
            by_key(&want["values"]),
            "{label}: values"
        );
        for c in got["values"].as_array().unwrap() {
            kinds.insert(c["change"].as_str().unwrap().to_string());
            for m in c["messages"].as_array().into_iter().flatten() {
                kinds.insert(format!("message {}", m["op"].as_str().unwrap()));
                if m.get("tool_calls").is_some() {
                    kinds.insert("tool_calls".into());
                }
            }
        }
        for f in ["tasks", "interrupts", "pending_writes"] {
            for side in ["removed", "added"] {
                assert_eq!(
                    sorted(&got[f][side]),
                    sorted(&want[f][side]),
                    "{label}: {f}.{side}"
                );
                if !got[f][side].as_array().unwrap().is_empty() {
                    kinds.insert(format!("{f} {side}"));
                }
            }
        }
    }
    // the cases cover every kind of difference the diff reports
    for k in [
        "changed",
        "messages",
        "message added",
        "message edited",
        "message removed",
        "tool_calls",
        "tasks added",
        "tasks removed",
        "interrupts added",
        "pending_writes removed",
    ] {
        assert!(kinds.contains(k), "no case shows {k:?}: {kinds:?}");
    }
}

#[test]
fn divergence_points_match_the_computation_over_get_state_history() {
    let (fx, store) = fixture();
    check_divergences(&fx, &store);
}

fn check_divergences(fx: &Json, store: &Store) {
    let cases = fx["compare"]["divergences"].as_array().unwrap();
    assert!(cases.len() >= 9, "{} divergence cases", cases.len());
    for c in cases {
        let label = c["label"].as_str().unwrap();
        let (ta, ra) = open(fx, store, &c["a"]);
        let (tb, rb) = open(fx, store, &c["b"]);
        if c["one_argument"] == true {
            let other = diverge::other_branch(store, &ra).unwrap().unwrap();
            assert_eq!(
                other.checkpoint_id, rb.checkpoint_id,
                "{label}: other branch"
            );
        }
        let d = diverge::diverge(store, &ta, &ra, &tb, &rb).unwrap();
        let want = &c["expected"];
        let id = |s: &Option<diff::Side>| json!(s.as_ref().map(|s| s.checkpoint_id.clone()));
        assert_eq!(json!(d.diverged), want["diverged"], "{label}: diverged");
        assert_eq!(json!(d.index), want["index"], "{label}: index");
        assert_eq!(id(&d.common), want["common"], "{label}: common");
        assert_eq!(id(&d.at_a), want["at_a"], "{label}: at_a");
        assert_eq!(id(&d.at_b), want["at_b"], "{label}: at_b");
        assert_eq!(json!(d.differs), want["differs"], "{label}: differs");
        let mut keys: Vec<&str> = d.values.iter().map(|v| v.key()).collect();
        keys.sort();
        assert_eq!(json!(keys), want["value_keys"], "{label}: value keys");
        assert_eq!(json!(d.next), want["next"], "{label}: next");
        let tasks: serde_json::Map<String, Json> = d
            .tasks
            .iter()
            .map(|t| (t.task_path.clone(), json!({"a": t.a, "b": t.b})))
            .collect();
        assert_eq!(Json::Object(tasks), want["tasks"], "{label}: tasks");
    }
}

/// One `writes` row, read with plain SQL: (channel, value view).
fn write_row(db: &Path, w: (&str, &str, &str, &str, i64)) -> Option<(String, Json)> {
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    conn.query_row(
        "SELECT channel, type, value FROM writes WHERE thread_id = ?1 AND checkpoint_ns = ?2 \
         AND checkpoint_id = ?3 AND task_id = ?4 AND idx = ?5",
        rusqlite::params![w.0, w.1, w.2, w.3, w.4],
        |r| {
            let ty: String = r.get(1)?;
            let v: Vec<u8> = r.get(2)?;
            Ok((r.get::<_, String>(0)?, ty, v))
        },
    )
    .ok()
    .map(|(ch, ty, v)| {
        let t = superstep::value::Typed::decode(&ty, &v).unwrap();
        (ch, t.view(superstep::value::ViewOptions::default()))
    })
}

#[test]
fn provenance_names_the_write_rows_that_hold_each_contribution() {
    let (fx, store) = fixture();
    let db = dir().join("compare.sqlite");
    let mut checked = 0;
    let mut origins = std::collections::BTreeSet::new();
    for (thread, ns_of) in [
        ("chat_a", None),
        ("chat_fork", None),
        ("send_a", None),
        ("par_a", None),
        ("sub_a", None),
        ("sub_a", Some(())),
    ] {
        let ns = match ns_of {
            None => String::new(),
            Some(()) => store
                .namespaces(thread)
                .unwrap()
                .into_iter()
                .find(|n| !n.is_empty())
                .unwrap(),
        };
        let th = Thread::open(&store, thread, &ns, Some(topology(&fx, thread, &ns))).unwrap();
        let head = store.checkpoint(thread, &ns, None).unwrap().unwrap();
        let snap = th.snapshot_of(&head, true).unwrap();
        for (key, value) in &snap.values {
            let p = why::why(&store, &th, &head, key, &[], "").unwrap();
            assert!(
                !p.contributions.is_empty(),
                "{thread} {key}: no contribution"
            );
            let value = superstep::value::to_view(value, Default::default());
            let mut covered = vec![0usize; value.as_array().map_or(0, Vec::len)];
            for c in &p.contributions {
                let Some(w) = &c.write else {
                    continue;
                };
                origins.insert(format!("{:?}", c.origin));
                let row = (
                    thread,
                    ns.as_str(),
                    c.parent_checkpoint_id.as_deref().unwrap(),
                    w.task_id.as_str(),
                    w.idx,
                );
                let (channel, stored) =
                    write_row(&db, row).unwrap_or_else(|| panic!("{thread} {key}: no row {row:?}"));
                assert_eq!(channel, *key, "{thread} {key}: row {row:?}");
                assert_eq!(stored, w.value, "{thread} {key}: row {row:?}");
                for &i in &c.indexes {
                    covered[i] += 1;
                }
                checked += 1;
            }
            // a list that only grew: every item is put there by exactly one write
            if value.is_array() && !p.contributions.iter().any(|c| c.write.is_none()) {
                assert!(
                    covered.iter().all(|&n| n == 1),
                    "{thread} {key}: items covered {covered:?}"
                );
            }
        }
    }
    assert!(checked >= 20, "{checked} contributions checked");
    for o in ["Input", "Node"] {
        assert!(origins.contains(o), "no {o} contribution: {origins:?}");
    }
}

#[test]
fn provenance_of_one_message_follows_its_id_to_the_write_that_made_it() {
    let (fx, store) = fixture();
    let th = Thread::open(
        &store,
        "chat_fork",
        "",
        Some(topology(&fx, "chat_fork", "")),
    )
    .unwrap();
    let head = store.checkpoint("chat_fork", "", None).unwrap().unwrap();
    // the AI message the fork replaced (same id): made by the agent, then by update_state
    let p = why::why(&store, &th, &head, "messages", &[why::Seg::Index(1)], ".1").unwrap();
    assert_eq!(p.message_id.as_deref(), Some("ai-1"));
    let who: Vec<String> = p
        .contributions
        .iter()
        .map(|c| format!("{:?}", c.origin))
        .collect();
    assert_eq!(who, vec!["Node", "UpdateState"], "{p:#?}");
    assert_eq!(
        p.value["tool_calls"][0]["args"],
        json!({"city": "Oslo"}),
        "the fork's message"
    );
    // the last message: the agent's answer on the fork's branch
    let p = why::why(
        &store,
        &th,
        &head,
        "messages",
        &[why::Seg::Index(-1)],
        ".-1",
    )
    .unwrap();
    assert_eq!(p.contributions.len(), 1);
    let w = p.contributions[0].write.as_ref().unwrap();
    assert_eq!(w.node, "agent");
    assert!(
        p.value["content"].as_str().unwrap().contains("Oslo"),
        "{p:#?}"
    );
}
