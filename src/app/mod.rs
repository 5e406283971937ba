//! The TUI model and its loop, Elm-shaped: keys resolve to Actions through one keymap
//! (`keymap`), `update` changes the state and asks for Effects, `effects::Runtime` runs them and
//! answers with more Actions. Rendering (`crate::ui`) only reads the state.

pub mod action;
pub mod effects;
pub mod keymap;
pub mod keys;
pub mod state;
pub mod update;

use action::{Action, Effect};
use crossterm::event::{Event, KeyEvent, KeyEventKind};
use effects::Runtime;
use state::{AppState, BreakSet, GraphInfo, Mode, NodeInfo};
use std::collections::VecDeque;

use crate::engine::graph::Writer;
use crate::spec::LoadedGraph;
use crate::value::{to_view, ViewOptions};

/// State + runtime: everything one TUI session holds.
pub struct App<'g> {
    pub state: AppState,
    pub rt: Runtime<'g>,
}

impl<'g> App<'g> {
    /// Read-only inspection of any SqliteSaver file.
    pub fn inspect(rt: Runtime<'g>) -> App<'g> {
        let db = rt.db().display().to_string();
        App {
            state: AppState::new(Mode::Inspect, &db, None, GraphInfo::default()),
            rt,
        }
    }

    /// Debugging a graph spec (breakpoints start as the spec's `interrupt_before/after`).
    pub fn debug(rt: Runtime<'g>, lg: &LoadedGraph) -> App<'g> {
        let db = rt.db().display().to_string();
        let mut state = AppState::new(
            Mode::Debug,
            &db,
            Some(lg.path.display().to_string()),
            graph_info(lg),
        );
        state.breaks_before = BreakSet::from_spec(&lg.graph.interrupt_before);
        state.breaks_after = BreakSet::from_spec(&lg.graph.interrupt_after);
        state.sel[state::Pane::Graph.index()] = 1;
        App { state, rt }
    }

    /// Pick (or create) the thread to show.
    pub fn start(&mut self, thread: Option<String>) {
        self.run_effects(vec![Effect::Startup { thread }]);
    }

    /// Apply an action and every action its effects produce, in order.
    pub fn dispatch(&mut self, a: Action) {
        let mut queue = VecDeque::from([a]);
        while let Some(a) = queue.pop_front() {
            for e in update::update(&mut self.state, a) {
                queue.extend(self.rt.run(e));
            }
        }
        self.rt.mark_seen();
    }

    fn run_effects(&mut self, effects: Vec<Effect>) {
        for e in effects {
            for a in self.rt.run(e) {
                self.dispatch(a);
            }
        }
        self.rt.mark_seen();
    }

    /// Between key presses: if another process wrote to the DB, reload what is shown (live
    /// refresh). Returns whether it did.
    pub fn tick(&mut self) -> bool {
        if self.rt.external_change() {
            self.dispatch(Action::ExternalChange);
            return true;
        }
        false
    }

    /// Resolve a key through the keymap and apply it. Returns whether it meant anything.
    pub fn key(&mut self, k: KeyEvent) -> bool {
        match keymap::resolve(&self.state, &k) {
            Some(a) => {
                self.dispatch(a);
                true
            }
            None => false,
        }
    }

    /// A terminal event.
    pub fn event(&mut self, ev: Event) {
        match ev {
            Event::Key(k) if k.kind != KeyEventKind::Release => {
                self.key(k);
            }
            Event::Resize(w, h) => self.dispatch(Action::Resize(w, h)),
            _ => {}
        }
    }
}

/// The graph pane's view of a spec: nodes in registration order and where their edges lead.
pub fn graph_info(lg: &LoadedGraph) -> GraphInfo {
    let spec = &lg.spec;
    let nodes = lg
        .graph
        .nodes
        .iter()
        .filter(|n| !n.hidden())
        .map(|n| {
            let mut successors: Vec<String> = Vec::new();
            for w in &n.writers {
                match w {
                    Writer::Edge(c) => {
                        successors.push(c.trim_start_matches("branch:to:").to_string())
                    }
                    Writer::Join(c) => {
                        successors.push(c.rsplit(':').next().unwrap_or(c).to_string())
                    }
                    Writer::Branch { path_map, .. } => match path_map {
                        Some(m) => {
                            for (_, d) in m {
                                if !successors.contains(d) {
                                    successors.push(d.clone());
                                }
                            }
                        }
                        None => successors.push("?".into()),
                    },
                }
            }
            if spec
                .edges
                .iter()
                .any(|e| e.target == "__end__" && e.sources.iter().any(|x| x == &n.name))
            {
                successors.push("__end__".into());
            }
            NodeInfo {
                name: n.name.clone(),
                successors,
            }
        })
        .collect();
    GraphInfo {
        name: spec.name.clone(),
        nodes,
        state_keys: lg.graph.state_keys.clone(),
        input: lg
            .graph
            .input
            .as_ref()
            .map(|v| to_view(v, ViewOptions::default())),
    }
}
