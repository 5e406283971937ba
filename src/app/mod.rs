//! The TUI model and its loop, Elm-shaped: keys resolve to Actions through one keymap
//! (`keymap`), `update` changes the state and asks for Effects, `effects::Runtime` runs them and
//! answers with more Actions. Rendering (`crate::ui`) only reads the state.

pub mod action;
pub mod calls;
pub mod compare;
pub mod effects;
pub mod format;
pub mod keymap;
pub mod keys;
pub mod state;
pub mod update;
pub mod viewer;
pub mod views;

use action::{Action, Effect};
use crossterm::event::{Event, KeyEvent, KeyEventKind};
use effects::Runtime;
use state::{AppState, BreakSet, GraphInfo, Mode, NodeInfo};
use std::collections::VecDeque;

use crate::source::Shape;

/// State + runtime: everything one TUI session holds.
pub struct App<'g> {
    pub state: AppState,
    pub rt: Runtime<'g>,
    /// `--watch`: reload the graph's code when one of its files changes.
    pub watch: bool,
}

impl<'g> App<'g> {
    /// Read-only inspection of any SqliteSaver file.
    pub fn inspect(rt: Runtime<'g>) -> App<'g> {
        let db = rt.store_label();
        // `--graph REF`: the graph pane shows the real graph, still read-only
        let (label, info) = match rt.source() {
            Some(s) => (Some(s.shape().label.clone()), graph_info(s.shape())),
            None => (None, GraphInfo::default()),
        };
        App {
            state: AppState::new(Mode::Inspect, &db, label, info),
            rt,
            watch: false,
        }
    }

    /// Debugging a graph (breakpoints start as the graph's own `interrupt_before/after`).
    pub fn debug(rt: Runtime<'g>) -> App<'g> {
        let db = rt.store_label();
        let shape = rt.source().map(|s| s.shape().clone()).unwrap_or_default();
        let mut state = AppState::new(
            Mode::Debug,
            &db,
            Some(shape.label.clone()),
            graph_info(&shape),
        );
        state.breaks_before = BreakSet::from_spec(&shape.interrupt_before);
        state.breaks_after = BreakSet::from_spec(&shape.interrupt_after);
        state.sel[state::Pane::Graph.index()] = 1;
        state.context = rt.source().and_then(|s| s.context_in_use());
        App {
            state,
            rt,
            watch: false,
        }
    }

    /// Pick (or create) the thread to show.
    pub fn start(&mut self, thread: Option<String>) {
        self.state.wanted_thread = thread.clone();
        self.run_effects(vec![Effect::Startup {
            thread,
            create: true,
        }]);
    }

    /// Show the thread to show without writing anything (`--print` with no keys): no thread is
    /// created when none can move.
    pub fn start_without_writing(&mut self, thread: Option<String>) {
        self.run_effects(vec![Effect::Startup {
            thread,
            create: false,
        }]);
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
        if self.rt.running() {
            match self.rt.poll_run() {
                Some(actions) => {
                    for a in actions {
                        self.dispatch(a);
                    }
                }
                None => {
                    let ms = self.rt.running_for().map_or(0, |d| d.as_millis() as u64);
                    let nodes = self.rt.running_nodes();
                    self.dispatch(Action::RunTick { ms, nodes });
                }
            }
            // redraw: the spinner and the elapsed time move
            return true;
        }
        if self.watch && self.rt.code_changed() {
            self.dispatch(Action::Reload);
            return true;
        }
        let changed = self.rt.external_change();
        if changed {
            self.dispatch(Action::ExternalChange);
        }
        if let Some(notice) = self.rt.take_notice() {
            self.dispatch(notice);
            return true;
        }
        changed
    }

    /// Block until the run in progress (a Python graph's step) has finished and its results are
    /// applied: scripted keys (`--keys`) act on the state the run left, as a person would wait.
    pub fn settle(&mut self) {
        while self.rt.running() {
            if !self.tick() {
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
        }
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

/// The graph pane's view of a graph: nodes in registration order and where their edges lead.
/// A subgraph's nodes (`inner|ask`, from `Shape::inner_nodes`) follow its node, after a row
/// `inner|*` that stands for all of them.
pub fn graph_info(shape: &Shape) -> GraphInfo {
    let info = |n: &crate::source::ShapeNode| NodeInfo {
        name: n.name.clone(),
        successors: n.successors.clone(),
    };
    let mut nodes = Vec::new();
    for n in &shape.nodes {
        nodes.push(info(n));
        let mut paths: Vec<&str> = Vec::new();
        for i in &shape.inner_nodes {
            let Some((path, _)) = i.name.rsplit_once('|') else {
                continue;
            };
            if path.split('|').next() != Some(n.name.as_str()) {
                continue;
            }
            if !paths.contains(&path) {
                paths.push(path);
                nodes.push(NodeInfo {
                    name: crate::source::inner_name(path, "*"),
                    successors: Vec::new(),
                });
            }
            nodes.push(info(i));
        }
    }
    GraphInfo {
        name: shape.name.clone(),
        nodes,
        state_keys: shape.state_keys.clone(),
        input: shape.input.clone(),
        input_form: shape.input_form.clone(),
        fixed_before: BreakSet::from_spec(&shape.fixed_before),
        fixed_after: BreakSet::from_spec(&shape.fixed_after),
        reloadable: shape.reloadable,
        reducer_keys: shape.reducer_keys.clone(),
    }
}
