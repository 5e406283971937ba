//! `superstep lint`: one positive and one negative case per rule, and the seed graphs: exactly the
//! ones that demonstrate a pitfall are flagged.

use crate::common;
use common::*;
use superstep::lint::lint_source;

fn rules(src: &str) -> Vec<(&'static str, usize)> {
    lint_source("t.star", src, &[("n".into(), "n".into())])
        .unwrap()
        .into_iter()
        .map(|f| (f.rule, f.line))
        .collect()
}

#[test]
fn ss001_effect_before_interrupt() {
    assert_eq!(
        rules("def n(s):\n    effect('charge')\n    ok = interrupt('ok?')\n    return {}\n"),
        [("SS001", 2)]
    );
    assert_eq!(
        rules("def n(s):\n    print('hi')\n    interrupt('ok?')\n"),
        [("SS001", 2)]
    );
    // after the interrupt, or on a path that returns first: fine
    assert!(rules("def n(s):\n    ok = interrupt('ok?')\n    effect('charge')\n").is_empty());
    assert!(rules("def n(s):\n    if s['done']:\n        effect('x')\n        return {}\n    interrupt('q')\n").iter().all(|r| r.0 != "SS001"));
}

#[test]
fn ss002_interrupt_under_state_or_nondeterministic_condition() {
    assert_eq!(
        rules("def n(s):\n    if s['vip']:\n        interrupt('q')\n"),
        [("SS002", 3)]
    );
    assert_eq!(
        rules("def n(s):\n    if random() < 0.5:\n        interrupt('q')\n"),
        [("SS002", 3)]
    );
    // an early exit on state guards the interrupts after it
    assert_eq!(rules("def n(s):\n    a = interrupt('a')\n    if not s['up']:\n        fail('down')\n    b = interrupt('b')\n"), [("SS002", 5)]);
    // conditions on the answers themselves are replayed identically: fine
    assert!(rules(
        "def n(s):\n    a = interrupt('a')\n    if a == 'x':\n        b = interrupt('b')\n"
    )
    .is_empty());
    assert!(rules("def n(s):\n    for i in range(3):\n        a = interrupt('a')\n        if a:\n            return {}\n").is_empty());
}

#[test]
fn ss003_unserialisable_payload() {
    assert!(
        rules("def cb(x):\n    return x\ndef n(s):\n    interrupt({'callback': cb})\n")
            .contains(&("SS003", 4))
    );
    assert!(rules("def n(s):\n    interrupt(lambda x: x)\n").contains(&("SS003", 2)));
    assert!(rules("def n(s):\n    interrupt({'tags': set([1])})\n").contains(&("SS003", 2)));
    assert!(rules("def n(s):\n    interrupt({'cb': 'name', 'n': len(s)})\n").is_empty());
}

#[test]
fn ss004_payload_drift() {
    assert_eq!(
        rules("def n(s):\n    d = llm(s['q'])\n    ok = interrupt({'approve': d})\n"),
        [("SS004", 3)]
    );
    assert_eq!(
        rules("def n(s):\n    x = uuid4()\n    y = 'id ' + x\n    interrupt(y)\n"),
        [("SS004", 4)]
    );
    // from state (computed in an earlier node): fine
    assert!(rules("def n(s):\n    ok = interrupt({'approve': s['draft']})\n").is_empty());
}

#[test]
fn ss005_interrupt_order_can_vary() {
    let r = rules("def n(s):\n    if s['mode'] == 'a':\n        interrupt('1')\n        interrupt('2')\n    else:\n        interrupt('3')\n");
    assert!(r.contains(&("SS005", 2)), "{r:?}");
    let r = rules("def n(s):\n    for item in s['items']:\n        interrupt(item)\n");
    assert!(r.contains(&("SS005", 2)), "{r:?}");
    // the same number of questions on both paths: fine
    assert!(rules("def n(s):\n    a = interrupt('1')\n    if a:\n        b = interrupt('2')\n    else:\n        b = interrupt('3')\n").is_empty());
}

#[test]
fn exactly_the_pitfall_graphs_are_flagged() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("graphs");
    let mut flagged = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let o = superstep(&["lint", p.to_str().unwrap(), "--json"]);
        let code = o.status.code();
        let findings: serde_json::Value = serde_json::from_str(&stdout(&o))
            .unwrap_or_else(|e| panic!("{}: {e}: {}", p.display(), stderr(&o)));
        let n = findings.as_array().unwrap().len();
        assert_eq!(code, Some(if n > 0 { 1 } else { 0 }), "{}", p.display());
        if n > 0 {
            flagged.push(p.file_stem().unwrap().to_string_lossy().into_owned());
        }
    }
    flagged.sort();
    // ask_sub records an effect before its interrupt to show the re-run; subgraph, nested and
    // nested_mid run it as a subgraph
    let want = [
        "aliasing",
        "ask_sub",
        "drift",
        "error_between",
        "nested",
        "nested_mid",
        "side_effects",
        "subgraph",
    ];
    assert_eq!(flagged, want);
    // and a bad spec is exit 2
    let o = superstep(&["lint", "/nonexistent.json"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn ss006_state_changed_in_place() {
    assert_eq!(
        rules("def n(s):\n    s['items'].append(1)\n    return {}\n"),
        [("SS006", 2)]
    );
    assert_eq!(rules("def n(s):\n    s['meta']['k'] = 2\n"), [("SS006", 2)]);
    assert_eq!(rules("def n(s):\n    s['items'] += [1]\n"), [("SS006", 2)]);
    // through an alias, a loop variable, .get()
    assert_eq!(
        rules("def n(s):\n    items = s['items']\n    items += ['x']\n    for m in s['msgs']:\n        m['seen'] = True\n    s.get('d', {}).update({})\n"),
        [("SS006", 3), ("SS006", 5), ("SS006", 6)]
    );
    // rebinding a key of the state dict, changing a copy or a fresh value: fine
    assert!(rules("def n(s):\n    s['x'] = 1\n    items = list(s['items'])\n    items.append(1)\n    out = []\n    out.append(s['n'])\n    return {'items': items + out}\n").is_empty());
    assert!(
        rules("def n(s):\n    items = s['items']\n    items = []\n    items.append(1)\n")
            .is_empty()
    );
}
