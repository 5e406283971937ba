//! The protocol's shapes: input and breakpoints as the bridge takes them (breakpoints inside
//! subgraphs keyed by their path), the graph's shape from what `loaded` says.

use super::*;

pub(super) fn event_re(e: &Event) -> Option<u64> {
    match e {
        Event::Loaded { re, .. }
        | Event::Step { re, .. }
        | Event::Done { re, .. }
        | Event::Updated { re, .. }
        | Event::State { re, .. }
        | Event::Context { re, .. }
        | Event::States { re, .. }
        | Event::Ok { re }
        | Event::Revived { re, .. }
        | Event::Bye { re } => Some(*re),
        Event::Error { re, .. } => *re,
        Event::Running { re, .. } => Some(*re),
        Event::Hello(_) | Event::Output(_) => None,
    }
}

pub(super) fn wire_input(input: &Input) -> WireInput {
    match input {
        Input::Value(v) => WireInput::Value { value: v.clone() },
        Input::Continue => WireInput::Continue,
        Input::Command {
            update,
            goto,
            resume,
        } => WireInput::Command {
            update: update.clone(),
            goto: goto.clone(),
            resume: resume.as_ref().map(|r| match r {
                Resume::Plain(v) => WireResume::Value { value: v.clone() },
                Resume::Map(m) => WireResume::Map { map: m.clone() },
            }),
        },
    }
}

pub(super) fn breakpoints_of(j: &Json) -> Breakpoints {
    match j {
        Json::String(s) if s == "*" => Breakpoints::All,
        Json::Array(a) if !a.is_empty() => Breakpoints::Nodes(
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect(),
        ),
        _ => Breakpoints::None,
    }
}

/// The TUI's / CLI's view of a Python graph, from the topology the bridge read off it.
pub fn shape_of(info: &LoadInfo, label: &str) -> Shape {
    let t = &info.topology;
    let edges = t["edges"].as_array().cloned().unwrap_or_default();
    let nodes = t["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|n| n["name"].as_str())
        .filter(|n| *n != "__start__")
        .map(|name| {
            let mut successors: Vec<String> = Vec::new();
            for e in &edges {
                if e["source"].as_str() == Some(name) {
                    if let Some(tgt) = e["target"].as_str() {
                        if !successors.iter().any(|s| s == tgt) {
                            successors.push(tgt.to_string());
                        }
                    }
                }
            }
            ShapeNode {
                name: name.to_string(),
                successors,
            }
        })
        .collect();
    let state_keys = t["state_keys"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|k| k.as_str().map(str::to_string))
        .collect();
    let before = breakpoints_of(&t["interrupt_before"]);
    let after = breakpoints_of(&t["interrupt_after"]);
    let mut inner = Inner::default();
    inner.walk(t, "");
    Shape {
        name: info.name.clone(),
        label: label.to_string(),
        nodes,
        state_keys,
        input: None,
        input_form: crate::source::input_form::proposal(&t["input_fields"]),
        interrupt_before: before.clone(),
        interrupt_after: after.clone(),
        fixed_before: with_inner(before, inner.fixed_before),
        fixed_after: with_inner(after, inner.fixed_after),
        inner_nodes: inner.nodes,
        reloadable: true,
        reducer_keys: t["state_keys"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|k| k.as_str())
            .filter(|k| {
                t["channels"][k]["kind"]
                    .as_str()
                    .is_some_and(|kind| kind != "LastValue")
            })
            .map(str::to_string)
            .collect(),
    }
}

/// The nodes and compiled-in breakpoints of a graph's subgraphs, named by `inner_name`.
#[derive(Default)]
pub(super) struct Inner {
    nodes: Vec<ShapeNode>,
    fixed_before: Vec<String>,
    fixed_after: Vec<String>,
}

impl Inner {
    /// `t`'s subgraphs (the topology's `subgraph_topologies`, by node name), depth first;
    /// `prefix` is `t`'s own path (`""`: the root).
    pub(super) fn walk(&mut self, t: &Json, prefix: &str) {
        let Some(subs) = t["subgraph_topologies"].as_object() else {
            return;
        };
        for (node, sub) in subs {
            let path = if prefix.is_empty() {
                node.clone()
            } else {
                format!("{prefix}|{node}")
            };
            let edges = sub["edges"].as_array().cloned().unwrap_or_default();
            for n in sub["nodes"].as_array().into_iter().flatten() {
                let Some(name) = n["name"].as_str().filter(|n| *n != "__start__") else {
                    continue;
                };
                let successors = edges
                    .iter()
                    .filter(|e| e["source"].as_str() == Some(name))
                    .filter_map(|e| e["target"].as_str())
                    .fold(Vec::<String>::new(), |mut v, x| {
                        if !v.iter().any(|y| y == x) {
                            v.push(x.to_string());
                        }
                        v
                    });
                self.nodes.push(ShapeNode {
                    name: inner_name(&path, name),
                    successors,
                });
            }
            for (key, out) in [
                ("interrupt_before", &mut self.fixed_before),
                ("interrupt_after", &mut self.fixed_after),
            ] {
                match breakpoints_of(&sub[key]) {
                    Breakpoints::All => out.push(inner_name(&path, "*")),
                    Breakpoints::Nodes(v) => out.extend(v.iter().map(|n| inner_name(&path, n))),
                    Breakpoints::None => {}
                }
            }
            self.walk(sub, &path);
        }
    }
}

/// Root breakpoints plus those compiled into subgraphs (`inner|ask`).
pub(super) fn with_inner(root: Breakpoints, inner: Vec<String>) -> Breakpoints {
    if inner.is_empty() {
        return root;
    }
    match root {
        Breakpoints::All => Breakpoints::All,
        Breakpoints::None => Breakpoints::Nodes(inner),
        Breakpoints::Nodes(mut v) => {
            v.extend(inner);
            Breakpoints::Nodes(v)
        }
    }
}

/// What the bridge is told about breakpoints inside subgraphs (names from `split_inner`).
pub(super) fn wire_inner(
    before: BTreeMap<String, Breakpoints>,
    after: BTreeMap<String, Breakpoints>,
) -> BTreeMap<String, WireInnerBreaks> {
    let wire = |b: &Breakpoints| match b {
        Breakpoints::None => None,
        Breakpoints::All => Some(WireBreaks::All("*".into())),
        Breakpoints::Nodes(v) => Some(WireBreaks::Nodes(v.clone())),
    };
    let mut out: BTreeMap<String, WireInnerBreaks> = BTreeMap::new();
    for (p, b) in &before {
        out.entry(p.clone()).or_default().before = wire(b);
    }
    for (p, b) in &after {
        out.entry(p.clone()).or_default().after = wire(b);
    }
    out
}
