//! `check --graph NEWREF`: the store's threads read against new graph code without running it.
//!
//! For each thread's newest checkpoint (and, for a thread parked inside a subgraph, the
//! subgraph's newest checkpoint in that call's namespace), what LangGraph 1.2.24 would do with
//! it under the new graph:
//! * **nodes**: a task waiting at the checkpoint (an interrupt, a breakpoint, an error to retry)
//!   whose node the new graph lacks is never run again — LangGraph prepares tasks from the
//!   graph's nodes, so the thread silently loses it;
//! * **subgraphs**: a thread parked inside a subgraph call needs the new graph to have that node
//!   as a subgraph, and the subgraph's own nodes and keys, checked the same way;
//! * **state keys**: a value held for a key the new graph does not have is dropped on load
//!   (added keys start empty: noted, not breaking);
//! * **channel kinds**: a DeltaChannel key (a `_DeltaSnapshot` stored, or its value rebuilt
//!   from the ancestors' writes) read by any other channel class comes back differently;
//!   a plain value read by a new DeltaChannel is its seed (noted, not breaking);
//! * **classes**: every class a stored value names (msgpack extensions 0-5, nested ones too),
//!   asked of the new code's serializer through the graph source
//!   (`GraphSource::revive_classes`: the bridge for a Python graph) — not importable, refused by
//!   an allow-list, or revived as something else.
//!
//! A thread is *parked* when its newest checkpoint has work left (`next` or an interrupt).
//! Broken threads are reported whether parked or not (a finished thread's state would read
//! differently); only a broken parked thread fails the check.

use crate::inspect::{InspectError, Thread};
use crate::snapshot::topology::{is_reserved_channel, ChannelKind, Topology};
use crate::source::GraphSource;
use crate::store::Store;
use crate::value::ext::{Ext, EXT_DELTA_SNAPSHOT};
use rmpv::Value;
use serde::Serialize;
use std::collections::HashMap;

/// One thing the new graph would do differently with a thread.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Finding {
    /// The namespace of the checkpoint concerned (`""`: the root).
    pub ns: String,
    /// `node`, `subgraph`, `key`, `channel`, `class`.
    pub what: &'static str,
    /// Whether it breaks the thread (otherwise a note).
    pub breaks: bool,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ThreadCheck {
    pub thread_id: String,
    pub checkpoint_id: String,
    pub parked: bool,
    /// `next` of the newest checkpoint.
    pub next: Vec<String>,
    pub broken: bool,
    pub findings: Vec<Finding>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq, Default)]
pub struct Report {
    pub store: String,
    pub graph: String,
    pub checked: u64,
    pub parked: u64,
    pub broken: u64,
    pub parked_broken: u64,
    /// Threads with a finding, in thread-id order.
    pub threads: Vec<ThreadCheck>,
}

#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error(transparent)]
    Inspect(#[from] InspectError),
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    #[error("{0}")]
    Source(String),
}

/// Where in a thread a class was found.
struct ClassAt {
    thread: usize,
    ns: String,
    key: String,
    class: usize,
}

/// Every class a value names (extension codes 0-5, their payloads walked too, and a
/// `_DeltaSnapshot`'s content), each listed once in `list`; `out` gets their indexes.
fn classes_in(
    v: &Value,
    seen: &mut HashMap<(i8, Vec<u8>), usize>,
    list: &mut Vec<(i8, Vec<u8>)>,
    out: &mut Vec<usize>,
) {
    match v {
        Value::Array(a) => a.iter().for_each(|x| classes_in(x, seen, list, out)),
        Value::Map(m) => m.iter().for_each(|(k, x)| {
            classes_in(k, seen, list, out);
            classes_in(x, seen, list, out);
        }),
        Value::Ext(code, data) if (0..=5).contains(code) => {
            let i = *seen.entry((*code, data.clone())).or_insert_with(|| {
                list.push((*code, data.clone()));
                list.len() - 1
            });
            if !out.contains(&i) {
                out.push(i);
            }
            if let Ok(inner) = crate::value::decode_msgpack(data) {
                classes_in(&inner, seen, list, out);
            }
        }
        Value::Ext(code, data) if *code == EXT_DELTA_SNAPSHOT => {
            if let Ext::DeltaSnapshot(inner) = Ext::parse(*code, data) {
                classes_in(&inner, seen, list, out);
            }
        }
        _ => {}
    }
}

fn kind_name(k: &ChannelKind) -> String {
    match k.reducer_id() {
        Some(r) => format!("{}({})", k.class_name(), r.display()),
        None => k.class_name().to_string(),
    }
}

/// Checks one namespace's newest checkpoint against the new topology; returns whether it is
/// parked, its `next`, its id.
#[allow(clippy::too_many_arguments)]
fn check_ns(
    store: &Store,
    src: &dyn GraphSource,
    thread: &str,
    ns: &str,
    index: usize,
    findings: &mut Vec<Finding>,
    seen: &mut HashMap<(i8, Vec<u8>), usize>,
    classes: &mut Vec<(i8, Vec<u8>)>,
    at: &mut Vec<ClassAt>,
) -> Result<(bool, Vec<String>, String), CheckError> {
    let th = Thread::open(store, thread, ns, None)?;
    let row = store
        .checkpoint(thread, ns, None)?
        .ok_or_else(|| CheckError::Source(format!("thread {thread:?}: no checkpoint in {ns:?}")))?;
    let snap = th.snapshot_of(&row, true)?;
    let cp = store.decode(&row)?;
    let parked = !snap.next.is_empty() || snap.interrupts().next().is_some();
    let new: Option<Topology> = src.topology(ns);
    let mut note = |what, breaks, reason: String| {
        findings.push(Finding {
            ns: ns.to_string(),
            what,
            breaks,
            reason,
        })
    };
    let Some(new) = new else {
        let node = ns.rsplit('|').next().unwrap_or(ns);
        let node = node.split(':').next().unwrap_or(node);
        note(
            "subgraph",
            true,
            format!("parked inside subgraph {node:?}, which the new graph does not have as a subgraph node"),
        );
        return Ok((parked, snap.next.clone(), row.checkpoint_id.clone()));
    };
    // nodes: tasks waiting here whose node is gone
    for task in &snap.tasks {
        if task.finished || new.node(&task.name).is_some() {
            continue;
        }
        let how = if !task.interrupts.is_empty() {
            "waits on an interrupt in node"
        } else if task.error.is_some() {
            "waits to retry node"
        } else {
            "is paused before node"
        };
        note(
            "node",
            true,
            format!(
                "{how} {:?}, which the new graph does not have (renamed or removed): LangGraph would never run it",
                task.name
            ),
        );
    }
    // keys and channel kinds
    let counters = row
        .metadata
        .get("counters_since_delta_snapshot")
        .and_then(serde_json::Value::as_object);
    let mut held: Vec<&str> = cp
        .channel_values
        .iter()
        .map(|(k, _)| k.as_str())
        .chain(
            counters
                .into_iter()
                .flat_map(|c| c.keys().map(String::as_str)),
        )
        .filter(|k| !is_reserved_channel(k))
        .collect();
    held.sort_unstable();
    held.dedup();
    for k in held {
        let stored = cp.value(k);
        let snapshot = matches!(stored, Some(Value::Ext(c, _)) if *c == EXT_DELTA_SNAPSHOT);
        let rebuilt = stored.is_none() && counters.is_some_and(|c| c.contains_key(k));
        match new.key(k) {
            None => note(
                "key",
                true,
                format!("holds a value for state key {k:?}, which the new graph does not have: LangGraph drops it on load"),
            ),
            Some(nk) if (snapshot || rebuilt) && !nk.is_delta() => note(
                "channel",
                true,
                format!(
                    "{k:?} was a DeltaChannel and is a {} in the new graph: its value here is {} and comes back differently",
                    kind_name(&nk.kind),
                    if snapshot { "a _DeltaSnapshot" } else { "rebuilt from the ancestors' writes" }
                ),
            ),
            Some(nk) if nk.is_delta() && !snapshot && !rebuilt && stored.is_some() => note(
                "channel",
                false,
                format!("{k:?} becomes a DeltaChannel: the plain value stored here is read as its seed"),
            ),
            _ => {}
        }
    }
    // classes in the values and pending writes
    let mut found = Vec::new();
    for (k, v) in &cp.channel_values {
        let before = found.len();
        classes_in(v, seen, classes, &mut found);
        for &c in &found[before..] {
            at.push(ClassAt {
                thread: index,
                ns: ns.to_string(),
                key: k.clone(),
                class: c,
            });
        }
    }
    for w in store.writes(thread, ns, &row.checkpoint_id)? {
        if let Some(v) = w.value.as_value() {
            let mut f = Vec::new();
            classes_in(v, seen, classes, &mut f);
            for c in f {
                at.push(ClassAt {
                    thread: index,
                    ns: ns.to_string(),
                    key: format!("pending write to {}", w.channel),
                    class: c,
                });
            }
        }
    }
    // a thread parked inside a subgraph call: the call's namespace, against the new subgraph
    for task in &snap.tasks {
        let Some(sub_ns) = &task.state_ns else {
            continue;
        };
        if task.finished || !store.namespaces(thread)?.contains(sub_ns) {
            continue;
        }
        match new.node(&task.name) {
            Some(n) if n.subgraph => {
                check_ns(store, src, thread, sub_ns, index, findings, seen, classes, at)?;
            }
            Some(_) => findings.push(Finding {
                ns: ns.to_string(),
                what: "subgraph",
                breaks: true,
                reason: format!(
                    "parked inside subgraph {:?}, which is a plain node in the new graph: the subgraph's checkpoints are never read again",
                    task.name
                ),
            }),
            // the node itself is gone: said above
            None => {}
        }
    }
    Ok((parked, snap.next.clone(), row.checkpoint_id.clone()))
}

/// Check every thread (whose id matches `pattern`; only parked ones with `parked_only`).
pub fn check(
    store: &Store,
    src: &mut dyn GraphSource,
    graph: &str,
    pattern: Option<&str>,
    parked_only: bool,
) -> Result<Report, CheckError> {
    let mut report = Report {
        store: store.label().to_string(),
        graph: graph.to_string(),
        ..Default::default()
    };
    let mut seen = HashMap::new();
    let mut classes: Vec<(i8, Vec<u8>)> = Vec::new();
    let mut at: Vec<ClassAt> = Vec::new();
    let mut threads: Vec<ThreadCheck> = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let page = store.threads(after.as_deref(), 500)?;
        let Some(last) = page.last() else { break };
        after = Some(last.thread_id.clone());
        for t in page {
            if pattern.is_some_and(|p| !super::glob(p, &t.thread_id)) {
                continue;
            }
            let mut findings = Vec::new();
            let (parked, next, id) = check_ns(
                store,
                src,
                &t.thread_id,
                "",
                threads.len(),
                &mut findings,
                &mut seen,
                &mut classes,
                &mut at,
            )?;
            threads.push(ThreadCheck {
                thread_id: t.thread_id,
                checkpoint_id: id,
                parked,
                next,
                broken: false,
                findings,
            });
        }
    }
    if !classes.is_empty() {
        let problems = src
            .revive_classes(&classes)
            .map_err(|e| CheckError::Source(e.to_string()))?;
        let mut said: std::collections::HashSet<(usize, usize)> = Default::default();
        for a in &at {
            let Some(why) = &problems[a.class] else {
                continue;
            };
            if !said.insert((a.thread, a.class)) {
                continue;
            }
            threads[a.thread].findings.push(Finding {
                ns: a.ns.clone(),
                what: "class",
                breaks: true,
                reason: format!("{}: {why}", a.key),
            });
        }
    }
    for t in threads {
        if parked_only && !t.parked {
            continue;
        }
        report.checked += 1;
        report.parked += u64::from(t.parked);
        let broken = t.findings.iter().any(|f| f.breaks);
        report.broken += u64::from(broken);
        report.parked_broken += u64::from(broken && t.parked);
        if !t.findings.is_empty() {
            report.threads.push(ThreadCheck { broken, ..t });
        }
    }
    Ok(report)
}
