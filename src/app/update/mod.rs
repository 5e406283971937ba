//! `update(&mut AppState, Action) -> Vec<Effect>`: the whole behaviour of the TUI, without IO.
//!
//! This file is the dispatch: each Action goes to the module of its concern —
//! `movement` (cursor, paging the history in), `run` (step / continue and the engine's reports),
//! `breakpoints`, `modals` (the dialogs), `viewer` (Enter on a row), `load` (what the runtime
//! read), `search`, `subgraph` (namespaces), `du` (the store doctor's view) and `command` (the
//! `:` line). What the panes show is
//! built by `crate::app::views`.

pub mod apps;
mod breakpoints;
mod command;
mod compare;
mod du;
mod edit_value;
mod load;
mod modals;
mod movement;
mod run;
mod running;
mod search;
mod subgraph;
mod traceback;
mod turn;
mod viewer;

pub use command::{help_text, COMMANDS};
pub use compare::COMMANDS as COMPARE_COMMANDS;
pub use running::running_line;
pub use search::{hit_label, hits_in};
pub use traceback::TRACEBACK;

use super::action::{Action, Effect};
use super::state::*;

const READ_ONLY: &str = "read-only inspect mode: stepping runs the graph's code, which the DB \
does not hold — open the spec with `superstep GRAPH.json --db FILE`";

fn say(s: &mut AppState, level: Level, text: impl Into<String>) {
    s.message = Some(Message {
        level,
        text: text.into(),
    });
}

pub fn update(s: &mut AppState, a: Action) -> Vec<Effect> {
    if s.running.is_some() {
        if let Some(effects) = running::while_running(s, &a) {
            return effects;
        }
    }
    match a {
        Action::StoreLoaded { prefix, items } => apps::store_loaded(s, prefix, items),
        Action::ContextSet(c) => apps::context_set(s, c),
        Action::RunStarted(what) => running::started(s, what),
        Action::RunTick { ms, nodes } => running::tick(s, ms, nodes),
        Action::NodeOutput(out) => {
            run::keep_output(s, &[], &out);
            vec![]
        }
        Action::OpenOutput => running::open_output(s),
        Action::StoreMeasured(du) => du::measured(s, &du),
        Action::CycleReplay => {
            s.replay = crate::app::calls::next_mode(s.replay);
            say(s, Level::Info, crate::app::calls::mode_message(s.replay));
            vec![Effect::SetReplay(s.replay)]
        }
        Action::Quit => {
            s.quit = true;
            vec![]
        }
        Action::Help => {
            s.modal = Some(Modal::Help {
                scroll: 0,
                commands: false,
            });
            vec![]
        }
        Action::Cancel => {
            compare::stop(s);
            if viewer::cancel_find(s) {
                return vec![];
            }
            if s.modal.is_some() {
                s.modal = None;
            } else {
                s.count = None;
                s.search = None;
                s.message = None;
            }
            vec![]
        }
        Action::Digit(d) => {
            let c = s
                .count
                .unwrap_or(0)
                .saturating_mul(10)
                .saturating_add(d as u32);
            s.count = Some(c.min(9999));
            vec![]
        }
        Action::FocusNext => {
            s.count = None;
            s.focus = s.focus.next();
            vec![]
        }
        Action::FocusPrev => {
            s.count = None;
            s.focus = s.focus.prev();
            vec![]
        }
        Action::Focus(p) => {
            s.focus = p;
            vec![]
        }
        Action::Up => movement::move_by(s, -1, false),
        Action::Down => movement::move_by(s, 1, false),
        Action::PageUp => movement::move_by(s, -1, true),
        Action::PageDown => movement::move_by(s, 1, true),
        Action::Top => movement::move_to(s, 0),
        Action::Bottom => movement::move_to(s, usize::MAX),
        Action::Open => {
            viewer::open_selected(s);
            vec![]
        }
        Action::Step => run::step(s),
        Action::StepInto => run::step_into(s),
        Action::Continue => compare::continue_until(s).unwrap_or_else(|| run::continue_run(s)),
        Action::Compare(a) => compare::act(s, a),
        Action::CompareLoaded(l) => compare::loaded(s, l),
        Action::ToggleBreakBefore => {
            breakpoints::toggle_break(s, true);
            vec![]
        }
        Action::ToggleBreakAfter => {
            breakpoints::toggle_break(s, false);
            vec![]
        }
        Action::OpenResume => {
            modals::open_resume(s);
            vec![]
        }
        Action::OpenTimeTravel => {
            modals::open_time_travel(s);
            vec![]
        }
        Action::OpenUpdate => {
            modals::open_update(s);
            vec![]
        }
        Action::OpenNewThread => {
            modals::open_new_thread(s);
            vec![]
        }
        Action::OpenThreadPicker => modals::open_thread_picker(s),
        Action::OpenTurn => turn::open_turn(s),
        Action::Reload => turn::reload(s),
        Action::Reloaded { graph, text } => {
            turn::reloaded(s, *graph, text);
            vec![]
        }
        Action::OpenSearch => {
            s.modal = Some(Modal::Search {
                input: TextInput::default(),
            });
            vec![]
        }
        Action::OpenCommand => {
            s.modal = Some(Modal::Command {
                input: TextInput::default(),
            });
            vec![]
        }
        Action::Input(k) => {
            modals::input(s, k);
            vec![]
        }
        Action::NextField => {
            modals::next_field(s, true);
            vec![]
        }
        Action::PrevField => {
            modals::next_field(s, false);
            vec![]
        }
        Action::Submit => modals::submit(s),
        Action::Confirm => modals::confirm(s),
        Action::Command(text) => command::command(s, &text),
        Action::Search(q) => search::search(s, &q),
        Action::SearchNext => search::search_step(s, 1),
        Action::SearchPrev => search::search_step(s, -1),
        Action::EnterSubgraph => subgraph::enter_subgraph(s),
        Action::LeaveSubgraph => subgraph::leave_subgraph(s),
        Action::HistoryPage {
            thread,
            ns,
            entries,
            more,
            select,
        } => load::history_page(s, thread, ns, entries, more, select),
        Action::SearchResults {
            query,
            hits,
            searched,
        } => search::search_results(s, query, hits, searched),
        Action::Resize(w, h) => {
            s.size = (w, h);
            viewer::resize(s);
            vec![]
        }
        Action::ViewerToggle => {
            viewer::toggle(s);
            vec![]
        }
        Action::ViewerFoldAll(fold) => {
            viewer::fold_all(s, fold);
            vec![]
        }
        Action::ViewerRaw => {
            viewer::raw(s);
            vec![]
        }
        Action::ViewerDetails => {
            viewer::details(s);
            vec![]
        }
        Action::ViewerFind => {
            viewer::find(s);
            vec![]
        }
        Action::ViewerFindStep(fwd) => {
            viewer::find_step(s, fwd);
            vec![]
        }
        Action::Copy { path } => {
            viewer::copy(s, path);
            vec![]
        }
        Action::ExternalChange => load::external_change(s),
        Action::ThreadsLoaded(rows, more) => {
            load::threads_loaded(s, rows, more);
            vec![]
        }
        Action::ThreadsAppended { rows, more, select } => {
            load::threads_appended(s, rows, more, select);
            vec![]
        }
        Action::ThreadLoaded(d) => {
            load::thread_loaded(s, *d);
            compare::shown(s)
        }
        Action::CheckpointLoaded(d) => {
            load::checkpoint_loaded(s, *d);
            compare::shown(s)
        }
        Action::Ran(r) => {
            compare::ran(s, &r);
            run::ran(s, *r);
            vec![]
        }
        Action::Failed { error, hint } => {
            compare::stop(s);
            run::failed(s, error, hint);
            vec![]
        }
        Action::StateUpdated {
            checkpoint,
            as_node,
        } => {
            run::state_updated(s, checkpoint, as_node);
            vec![]
        }
        Action::Info(t) => {
            say(s, Level::Info, t);
            vec![]
        }
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_loop;
#[cfg(test)]
mod tests_replay;
#[cfg(test)]
mod tests_saves;
