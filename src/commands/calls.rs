//! `superstep calls -t T`: the model and tool calls recorded for a thread (Python graphs), and
//! the `calls` of a run's report — human lines and `--json`.

use super::{human, CliError};
use crate::cli::CallsArgs;
use crate::replay::store::{Location, Recordings};
use crate::replay::{divergence, Call, Counts};
use crate::text::escape;
use serde_json::{json, Value as Json};
use std::io::Write;
use std::path::Path;

pub fn calls(db: &Path, a: &CallsArgs, color: bool, out: &mut dyn Write) -> Result<(), CliError> {
    let thread = a.thread.as_deref();
    if a.drop {
        let n = match Recordings::open_for_drop(db)? {
            Some(r) => r.drop_thread(thread)?,
            None => 0,
        };
        let whose = thread.map_or("every thread".to_string(), |t| format!("thread {t}"));
        writeln!(
            out,
            "{}",
            escape(&format!("dropped {n} recorded calls of {whose}"))
        )?;
        return Ok(());
    }
    let Some(rec) = Recordings::open(db)? else {
        return Err(CliError(format!(
            "{}: no calls recorded for this checkpoint file yet (runs of a Python graph through superstep record them)",
            Location::of(db).label()
        )));
    };
    if let Some(to) = &a.export {
        let n = rec.export(thread, to)?;
        writeln!(
            out,
            "{}",
            escape(&format!("exported {n} recorded calls to {}", to.display()))
        )?;
        return Ok(());
    }
    let Some(thread) = thread else {
        return Err(CliError(
            "--all goes with --drop or --export; name a thread (-t THREAD) to list its calls"
                .into(),
        ));
    };
    let list = match &a.task {
        Some(t) => rec.task_calls(thread, t)?,
        None => rec.calls(thread)?,
    };
    if a.out.json {
        let j = json!({"thread": thread, "calls": calls_json(&list, Some(&rec))});
        serde_json::to_writer_pretty(&mut *out, &j)?;
        writeln!(out)?;
        return Ok(());
    }
    if list.is_empty() {
        writeln!(
            out,
            "{}",
            escape(&format!("thread {thread}: no recorded calls"))
        )?;
        return Ok(());
    }
    let runs = {
        let mut r: Vec<i64> = list.iter().filter_map(|c| c.run).collect();
        r.dedup();
        r.len()
    };
    writeln!(
        out,
        "{}",
        human::bold(
            &escape(&format!(
                "thread {thread}: {} calls in {runs} run{} ({})",
                list.len(),
                if runs == 1 { "" } else { "s" },
                Counts::of(&list).words(", ")
            )),
            color
        )
    )?;
    let mut run = None;
    for c in &list {
        if c.run != run {
            run = c.run;
            let how = Counts::of(list.iter().filter(|x| x.run == run)).words(", ");
            writeln!(
                out,
                "{}",
                human::dim(
                    &format!("run {}: {how}", run.map_or("?".into(), |r| r.to_string())),
                    color
                )
            )?;
        }
        write_call(out, c, Some(&rec))?;
    }
    Ok(())
}

/// A run's calls in its human output: how many were answered from the recording and how many
/// made live, and where each divergence's request differs (`superstep calls -t T` lists them all).
/// The recordings a run's calls are in, to show their request diffs (none: no call was made).
pub fn recordings_of(db: &Path, calls: &[Call]) -> Option<Recordings> {
    if calls.is_empty() {
        return None;
    }
    Recordings::open(db).ok().flatten()
}

pub fn write_summary(
    out: &mut dyn Write,
    calls: &[Call],
    rec: Option<&Recordings>,
) -> std::io::Result<()> {
    let counts = Counts::of(calls);
    if counts.total() == 0 {
        return Ok(());
    }
    writeln!(out, "{}", escape(&counts.line()))?;
    for c in calls
        .iter()
        .filter(|c| c.status == crate::replay::CallStatus::Diverged)
    {
        let step = c.step.map_or(String::new(), |s| format!("step {s} "));
        writeln!(
            out,
            "{}",
            escape(&format!(
                "  first divergence: {step}{} #{} {} {}",
                c.node,
                c.seq + 1,
                c.kind,
                c.name
            ))
        )?;
        if let Some(rec) = rec {
            for d in divergence(rec, c) {
                writeln!(
                    out,
                    "    {}",
                    escape(&format!(
                        "request differs: {}",
                        crate::replay::diff::line(&d)
                    ))
                )?;
            }
        }
    }
    Ok(())
}

/// One call as a human line (and, for a divergence, where its request differs).
pub fn write_call(out: &mut dyn Write, c: &Call, rec: Option<&Recordings>) -> std::io::Result<()> {
    let step = c.step.map_or(String::new(), |s| format!("step {s:>2}  "));
    let attempt = if c.attempt > 1 {
        format!(" attempt {}", c.attempt)
    } else {
        String::new()
    };
    writeln!(
        out,
        "  {}",
        escape(&format!(
            "{step}{}{attempt} #{}  {}",
            c.node,
            c.seq + 1,
            c.line()
        ))
    )?;
    if let Some(rec) = rec {
        for d in divergence(rec, c) {
            writeln!(
                out,
                "      {}",
                escape(&format!(
                    "request differs: {}",
                    crate::replay::diff::line(&d)
                ))
            )?;
        }
    }
    Ok(())
}

/// Put each task's calls into the `steps` of a run's JSON (`steps[i].tasks[k].calls`).
pub fn attach(steps: &mut Json, calls: &[Call], rec: Option<&Recordings>) {
    for step in steps.as_array_mut().into_iter().flatten() {
        for task in step["tasks"].as_array_mut().into_iter().flatten() {
            let id = task["id"].as_str().unwrap_or_default().to_string();
            let mine: Vec<Call> = calls
                .iter()
                .filter(|c| c.root_task_id.as_deref() == Some(id.as_str()))
                .cloned()
                .collect();
            task["calls"] = calls_json(&mine, rec);
        }
    }
}

/// Calls as JSON: each `Call` (and, for a divergence, `diff`: path, recorded, now).
pub fn calls_json(calls: &[Call], rec: Option<&Recordings>) -> Json {
    Json::Array(
        calls
            .iter()
            .map(|c| {
                let mut j = serde_json::to_value(c).unwrap_or(Json::Null);
                if let Some(rec) = rec {
                    let d = divergence(rec, c);
                    if !d.is_empty() {
                        j["diff"] = Json::Array(
                            d.iter()
                                .map(|d| json!({"path": d.path, "recorded": d.recorded, "now": d.now}))
                                .collect(),
                        );
                    }
                }
                j
            })
            .collect(),
    )
}
