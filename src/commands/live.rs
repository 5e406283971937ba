//! A run on the command line, as it happens: each superstep is printed when it commits (a slow
//! or hung node no longer leaves the terminal blank), Ctrl-C / SIGTERM cancel it and say what the
//! thread kept, and the exit code says how it ended (see [`RUN_FAILED`] and the man page):
//!
//! * 0 — it stopped where it should: done, a breakpoint, an interrupt, `--steps`;
//! * 2 — refused before anything ran (bad arguments, input, reference; one line on stderr);
//! * 3 — the run ended on an error: a node raised (after its retries), GraphRecursionError,
//!   InvalidUpdateError or another exception while it ran; the supersteps before it are printed
//!   and committed, the traceback (the app's own frame first) follows;
//! * 130 / 143 — interrupted by SIGINT (Ctrl-C) / SIGTERM: the thread keeps its last committed
//!   checkpoint, which is named.

use super::CliError;
use crate::inspect::Thread;
use crate::source::{GraphSource, RunOutcome, RunRequest, SourceError, TaskOutput};
use crate::source::{Pause, StepReport, TaskOutcome};
use crate::store::{Mode, Store};
use crate::text::escape;
use crate::value::{to_view, ViewOptions};
use serde_json::{json, Value as Json};
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The run ended on an error of the graph (exit code 3); everything is printed already.
pub const RUN_FAILED: &str = "\u{0}run failed";
/// The run was interrupted by a signal (exit code 128 + N): `\0signal N`.
const SIGNALLED: &str = "\u{0}signal ";

/// The exit code a [`CliError`] message stands for, when it is one of this module's.
pub fn exit_code(msg: &str) -> Option<i32> {
    if msg == RUN_FAILED {
        return Some(3);
    }
    msg.strip_prefix(SIGNALLED)?
        .parse::<i32>()
        .ok()
        .map(|n| 128 + n)
}

/// What a run did: its supersteps, why it stopped (`None`: the step limit), what the nodes
/// printed (Python graphs), the error it ended on and the signal that cut it short.
pub(super) struct Driven {
    pub reports: Vec<StepReport>,
    pub pause: Option<Pause>,
    pub output: Vec<TaskOutput>,
    pub error: Option<SourceError>,
    pub signal: Option<i32>,
    /// `--break-when` held here.
    pub hit: Option<crate::compare::breaker::Hit>,
    /// The model and tool calls its tasks made (recorded replay).
    pub calls: Vec<crate::replay::Call>,
}

/// SIGINT and SIGTERM, noted (not acted on) while a run goes on in the background.
struct Signals {
    got: Arc<AtomicUsize>,
    ids: Vec<signal_hook::SigId>,
}

impl Signals {
    fn catch() -> Signals {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let got = Arc::new(AtomicUsize::new(0));
        let mut ids = Vec::new();
        for sig in [SIGINT, SIGTERM] {
            let g = got.clone();
            // SAFETY: the handler only stores to an atomic (async-signal-safe)
            if let Ok(id) = unsafe {
                signal_hook::low_level::register(sig, move || {
                    g.store(sig as usize, Ordering::SeqCst);
                })
            } {
                ids.push(id);
            }
        }
        Signals { got, ids }
    }

    fn got(&self) -> Option<i32> {
        match self.got.load(Ordering::SeqCst) {
            0 => None,
            n => Some(n as i32),
        }
    }
}

impl Drop for Signals {
    fn drop(&mut self) {
        for id in self.ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}

/// Run `req` (from namespace `ns`'s checkpoint): human output (`Some`) prints each superstep as
/// it commits. A signal cancels the run; the bridge's answer (or its kill after the grace
/// period) ends it.
pub(super) fn drive(
    src: &mut dyn GraphSource,
    req: RunRequest,
    ns: &str,
    mut human: Option<(&mut dyn Write, bool)>,
) -> Result<Driven, CliError> {
    let mut printed = Printed::default();
    let mut signal = None;
    let out = match src.begin_in(req, ns) {
        // finished in-process (a spec), or refused before it started
        Some(out) => out,
        None => {
            let signals = Signals::catch();
            loop {
                if let Some(out) = src.poll_wait(Duration::from_millis(100)) {
                    // a terminal's Ctrl-C reaches the bridge too, which may answer first
                    signal = signal.or_else(|| signals.got());
                    break out;
                }
                if let (Some(p), Some((w, color))) = (src.progress(), human.as_mut()) {
                    printed.loose = print_loose(*w, &p.output, printed.loose)?;
                    printed.reports +=
                        print_steps(*w, &p.reports[printed.reports..], &p.output, *color)?;
                }
                if signal.is_none() {
                    if let Some(sig) = signals.got() {
                        signal = Some(sig);
                        src.cancel();
                    }
                }
            }
        }
    };
    settled(out, None, signal, human, printed)
}

/// A run's outcome as a [`Driven`]; human output gets the supersteps not printed yet (after the
/// first `printed`) and, after a `signal`, what the node cut short printed.
pub(super) fn settled(
    out: RunOutcome,
    hit: Option<crate::compare::breaker::Hit>,
    signal: Option<i32>,
    mut human: Option<(&mut dyn Write, bool)>,
    printed: Printed,
) -> Result<Driven, CliError> {
    let RunOutcome {
        reports,
        error,
        output,
        calls,
        ..
    } = out;
    if let Some((w, color)) = human.as_mut() {
        print_loose(*w, &output, printed.loose)?;
        print_steps(
            *w,
            &reports[printed.reports.min(reports.len())..],
            &output,
            *color,
        )?;
        if signal.is_some() {
            // what the nodes of the step that did not commit printed before it was cut short
            let orphans: Vec<&TaskOutput> = output
                .iter()
                .filter(|o| !o.task_id.is_empty())
                .filter(|o| {
                    !reports
                        .iter()
                        .any(|r| r.tasks.iter().any(|t| t.id == o.task_id))
                })
                .collect();
            if !orphans.is_empty() {
                writeln!(w, "step   ?  (cut short, not committed)")?;
                for o in orphans {
                    output_lines(*w, o, &o.node)?;
                }
            }
        }
        w.flush()?;
    }
    Ok(Driven {
        pause: reports.last().and_then(|r| r.pause.clone()),
        reports,
        output,
        error,
        signal,
        hit,
        calls,
    })
}

/// What human output has printed of a run in progress.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Printed {
    /// Step reports.
    pub reports: usize,
    /// Chunks of output written outside any task (the module's import, a thread of its own).
    pub loose: usize,
}

/// The output written outside any task that is not printed yet (after the first `done` such
/// chunks), under an `outside a task` line; returns how many such chunks there are now.
fn print_loose(out: &mut dyn Write, output: &[TaskOutput], done: usize) -> Result<usize, CliError> {
    let loose: Vec<&TaskOutput> = output.iter().filter(|o| o.task_id.is_empty()).collect();
    if loose.len() > done {
        writeln!(out, "outside a task")?;
        for o in &loose[done..] {
            output_lines(out, o, "")?;
        }
    }
    Ok(loose.len())
}

/// The step lines of `reports`, each task's captured output and a failed task's traceback
/// under it. Returns how many reports it printed.
fn print_steps(
    out: &mut dyn Write,
    reports: &[StepReport],
    output: &[TaskOutput],
    _color: bool,
) -> Result<usize, CliError> {
    for r in reports {
        for t in &r.tasks {
            let effects = if t.effects.is_empty() {
                String::new()
            } else {
                format!(
                    "  effects: {}",
                    t.effects
                        .iter()
                        .map(|e| e.name.clone())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            let outcome = match &t.outcome {
                TaskOutcome::Done => "done".to_string(),
                TaskOutcome::Reused => "reused stored writes".to_string(),
                TaskOutcome::Interrupted(i) => format!("interrupted ({})", i.id),
                TaskOutcome::Error(e) => format!("error {e}"),
            };
            writeln!(
                out,
                "{}",
                escape(&format!(
                    "step {:>3}  {}  {outcome}{effects}",
                    r.step, t.name
                ))
            )?;
            for o in output.iter().filter(|o| o.task_id == t.id) {
                output_lines(out, o, "")?;
            }
            if let Some(tb) = &t.traceback {
                for line in tb.lines() {
                    writeln!(out, "           ! {}", escape(line))?;
                }
            }
        }
    }
    out.flush()?;
    Ok(reports.len())
}

/// One chunk of captured output, `| ` (stderr: `| ! `) before each line.
fn output_lines(out: &mut dyn Write, o: &TaskOutput, node: &str) -> Result<(), CliError> {
    let tag = if o.attempt > 1 {
        format!("attempt {} ", o.attempt)
    } else {
        String::new()
    };
    let node = if node.is_empty() {
        String::new()
    } else {
        format!("{node}: ")
    };
    for line in o.text.lines() {
        writeln!(
            out,
            "           | {tag}{node}{}{}",
            if o.stream == "stderr" { "! " } else { "" },
            escape(line)
        )?;
    }
    Ok(())
}

fn pause_json(p: &Option<Pause>, steps: Option<usize>) -> Json {
    let o = ViewOptions::default();
    match p {
        None => json!({"kind": "steps", "steps": steps}),
        Some(Pause::Done) => json!({"kind": "done"}),
        Some(Pause::Before(n)) => json!({"kind": "before", "nodes": n}),
        Some(Pause::After(n)) => json!({"kind": "after", "nodes": n}),
        Some(Pause::Interrupt(list)) => {
            json!({"kind": "interrupt", "interrupts": list.iter().map(|(node, i)| json!({"node": node, "id": i.id, "value": to_view(&i.value, o)})).collect::<Vec<_>>()})
        }
        Some(Pause::Error(node, repr)) => json!({"kind": "error", "node": node, "error": repr}),
        Some(Pause::RecursionLimit(n)) => {
            json!({"kind": "recursion_limit", "limit": n, "error": format!("GraphRecursionError: Recursion limit of {n} reached without hitting a stop condition. You can increase the limit by setting the `recursion_limit` config key.")})
        }
    }
}

/// Captured node output as JSON: one object per chunk, by task and attempt.
fn output_json(output: &[TaskOutput]) -> Json {
    Json::Array(
        output
            .iter()
            .map(|o| {
                json!({"task_id": o.task_id, "node": o.node, "ns": o.ns, "attempt": o.attempt,
                       "stream": o.stream, "text": o.text})
            })
            .collect(),
    )
}

/// Why the run stopped, one line (escaped: node names, ids and values come from the graph).
pub fn pause_line(p: &Option<Pause>) -> String {
    let line = match p {
        None => "paused: step limit reached (--steps)".into(),
        Some(Pause::Done) => "done: no task is triggered".into(),
        Some(Pause::Before(n)) => format!("paused: before {}", n.join(", ")),
        Some(Pause::After(n)) => format!("paused: after {}", n.join(", ")),
        Some(Pause::Interrupt(list)) => format!(
            "paused: interrupt in {}",
            list.iter()
                .map(|(node, i)| format!(
                    "{node} (id {}): {}",
                    i.id,
                    to_view(&i.value, ViewOptions::default())
                ))
                .collect::<Vec<_>>()
                .join("; ")
        ),
        Some(Pause::Error(node, repr)) => format!("paused: error in {node}: {repr}"),
        Some(Pause::RecursionLimit(n)) => {
            format!("stopped: GraphRecursionError: Recursion limit of {n} reached")
        }
    };
    escape(&line).into_owned()
}

fn step_json(r: &StepReport) -> Json {
    let o = ViewOptions::default();
    json!({
        "step": r.step,
        "checkpoint": r.checkpoint,
        "tasks": r.tasks.iter().map(|t| {
            let mut j = json!({
                "id": t.id, "name": t.name, "path": t.path,
                "outcome": match &t.outcome { TaskOutcome::Done => json!("done"), TaskOutcome::Reused => json!("reused"), TaskOutcome::Interrupted(i) => json!({"interrupt": i.id}), TaskOutcome::Error(e) => json!({"error": e}) },
                "attempts": t.attempts,
                "effects": t.effects.iter().map(|e| json!({"name": e.name, "data": to_view(&e.data, o), "attempt": e.attempt})).collect::<Vec<_>>(),
            });
            if let Some(tb) = &t.traceback {
                j["traceback"] = json!(tb);
            }
            j
        }).collect::<Vec<_>>(),
    })
}

/// Print where the run left the thread (the snapshot, as `show`), why it stopped, and the error
/// or signal it ended on; the `Err` carries the exit code (see the module's doc).
pub(super) fn finish(
    src: &mut dyn GraphSource,
    db: &Path,
    sel: &crate::cli::EngineSel,
    run: Driven,
    color: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let Driven {
        reports,
        pause,
        output,
        error,
        signal,
        hit,
        calls,
    } = run;
    let (thread, json_out, steps) = (sel.thread.as_str(), sel.out.json, sel.steps);
    // refused before anything ran, or an error of the store or the bridge (not the graph's): one
    // line, exit 2, as before (human output has printed the supersteps that committed)
    if let Some(e) = &error {
        if signal.is_none() && !e.ends_run() {
            return Err(CliError(e.to_string()));
        }
    }
    let recordings = super::calls::recordings_of(db, &calls);
    let store = Store::open(db, Mode::ReadOnly);
    let shown = store
        .as_ref()
        .ok()
        .map(|s| Thread::open(s, thread, "", src.topology("")).and_then(|th| th.show(None)));
    let pickled = matches!(
        shown,
        Some(Err(crate::inspect::InspectError::Store(
            crate::store::StoreError::Pickled { .. }
        )))
    );
    let snap = shown.and_then(Result::ok);
    // a pickled checkpoint: LangGraph's own get_state of it, when the source has one
    let live = if pickled {
        src.live_state(thread, None).and_then(Result::ok)
    } else {
        None
    };
    // what the thread keeps: its last committed checkpoint
    let kept = snap.as_ref().map(|s| (s.checkpoint_id.clone(), s.step));
    if json_out {
        let mut j = match &snap {
            Some(s) => s.to_json(ViewOptions::default()),
            None => json!({}),
        };
        j["pause"] = match (&hit, &error) {
            (Some(h), _) => super::break_when::pause_json(h),
            // an error that ended the run outside any node (an update the graph refuses, the
            // bridge's own): a pause of kind "error" too, so --json readers need not parse stderr
            (None, Some(e)) if pause.is_none() && signal.is_none() => {
                json!({"kind": "error", "node": Json::Null, "error": e.to_string()})
            }
            (None, _) => pause_json(&pause, steps),
        };
        if let Some((values, next)) = &live {
            j["values"] = values.clone();
            j["next"] = json!(next);
            j["read_by"] = json!("langgraph get_state (the checkpoint is pickled)");
        }
        j["steps"] = Json::Array(reports.iter().map(step_json).collect());
        super::calls::attach(&mut j["steps"], &calls, recordings.as_ref());
        if !output.is_empty() {
            j["output"] = output_json(&output);
        }
        if let Some(e) = &error {
            j["error"] =
                json!({"message": e.to_string(), "hint": e.hint(), "traceback": e.traceback()});
        }
        if let Some(sig) = signal {
            j["interrupted"] = json!({"signal": sig, "kept": kept.as_ref().map(|k| &k.0)});
        }
        serde_json::to_writer_pretty(&mut *out, &j)?;
        writeln!(out)?;
    } else {
        super::calls::write_summary(out, &calls, recordings.as_ref())?;
        if let Some(s) = &snap {
            super::human::snapshot(s, color, out)?;
        }
        if let Some((values, next)) = &live {
            super::human::live_state(values, next, color, out)?;
        }
        if error.is_none() && signal.is_none() {
            let line = match &hit {
                Some(h) => super::break_when::pause_line(h),
                None => pause_line(&pause),
            };
            writeln!(out, "{}", super::human::bold(&line, color))?;
        }
    }
    out.flush()?;
    if let Some(sig) = signal {
        let name = if sig == signal_hook::consts::SIGTERM {
            "SIGTERM"
        } else {
            "SIGINT (Ctrl-C)"
        };
        let what = match &kept {
            Some((id, step)) => {
                format!("the thread keeps its last committed checkpoint {id} (step {step})")
            }
            None => "nothing was committed on this thread".to_string(),
        };
        eprintln!(
            "superstep: interrupted by {name}: the run was cancelled; {}",
            escape(&what)
        );
        return Err(CliError(format!("{SIGNALLED}{sig}")));
    }
    if let Some(e) = error {
        eprintln!(
            "superstep: the run ended on an error: {}",
            escape(&e.to_string().replace('\n', " "))
        );
        if let Some(tb) = e.traceback() {
            for line in tb.lines() {
                eprintln!("  {}", escape(line));
            }
        }
        let hint = e.hint();
        if !hint.is_empty() {
            eprintln!("  hint: {}", escape(&hint));
        }
        return Err(CliError(RUN_FAILED.into()));
    }
    if matches!(
        pause,
        Some(Pause::Error(..)) | Some(Pause::RecursionLimit(_))
    ) {
        return Err(CliError(RUN_FAILED.into()));
    }
    Ok(())
}
