//! `superstep completions SHELL` and `superstep man`: shell completions and manual pages generated
//! from the clap definitions in cli.rs, so they describe exactly the binary that prints them.
//!
//! Generated at run time rather than at build time (no build.rs, no xtask, no generated file in the
//! repo to keep in step with cli.rs): every install — pip/pipx/uv wheel, `cargo install`, a checkout —
//! gets them from the one binary it has, and they cannot drift from its flags.

use super::CliError;
use crate::cli::{Cli, CompletionShell, ManArgs};
use clap::CommandFactory;
use std::io::Write;

/// The completion script for `shell` (registers completion for the command `superstep`).
pub fn completions(shell: CompletionShell, out: &mut dyn Write) -> Result<(), CliError> {
    let generator = match shell {
        CompletionShell::Bash => clap_complete::Shell::Bash,
        CompletionShell::Zsh => clap_complete::Shell::Zsh,
        CompletionShell::Fish => clap_complete::Shell::Fish,
    };
    let mut cmd = Cli::command();
    clap_complete::generate(generator, &mut cmd, "superstep", out);
    Ok(())
}

/// superstep(1) or superstep-COMMAND(1) on stdout, or every page written into `--dir` (created
/// when missing, like `mkdir -p`).
pub fn man(args: &ManArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let cmd = built_command();
    if let Some(dir) = &args.dir {
        return write_pages(&cmd, dir, out);
    }
    match &args.command {
        None => main_page(&cmd, out),
        Some(name) => {
            let sub = subcommand(&cmd, name)?;
            sub_page(sub).render(out)?;
            Ok(())
        }
    }
}

/// The CLI as clap completes it: subcommands named `superstep-X`, no `help` subcommand page.
fn built_command() -> clap::Command {
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    cmd
}

fn subcommand<'a>(cmd: &'a clap::Command, name: &str) -> Result<&'a clap::Command, CliError> {
    let visible = || cmd.get_subcommands().filter(|s| !s.is_hide_set());
    visible().find(|s| s.get_name() == name).ok_or_else(|| {
        let names: Vec<&str> = visible().map(|s| s.get_name()).collect();
        CliError(format!(
            "man: no subcommand {name:?} (commands: {})",
            names.join(", ")
        ))
    })
}

fn write_pages(
    cmd: &clap::Command,
    dir: &std::path::Path,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let at = |e: std::io::Error| CliError(format!("{}: {e}", dir.display()));
    std::fs::create_dir_all(dir).map_err(at)?;
    let main = dir.join("superstep.1");
    let mut text = Vec::new();
    main_page(cmd, &mut text)?;
    std::fs::write(&main, text).map_err(at)?;
    writeln!(out, "{}", main.display())?;
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let path = sub_page(sub).generate_to(dir).map_err(at)?;
        writeln!(out, "{}", path.display())?;
    }
    Ok(())
}

/// superstep-COMMAND(1), its footer naming superstep's version (subcommands have none of their own).
fn sub_page(sub: &clap::Command) -> clap_mangen::Man {
    clap_mangen::Man::new(sub.clone()).source(format!("superstep {}", crate::versions::SUPERSTEP))
}

/// superstep(1): clap's sections, then exit status, environment and the proved-against versions.
fn main_page(cmd: &clap::Command, out: &mut dyn Write) -> Result<(), CliError> {
    let man = clap_mangen::Man::new(cmd.clone());
    man.render_title(out)?;
    man.render_name_section(out)?;
    man.render_synopsis_section(out)?;
    man.render_description_section(out)?;
    man.render_options_section(out)?;
    man.render_subcommands_section(out)?;
    out.write_all(EXTRA_SECTIONS.as_bytes())?;
    writeln!(out, ".SH VERSION")?;
    writeln!(out, "superstep {}", crate::versions::SUPERSTEP)?;
    writeln!(out, ".PP")?;
    writeln!(
        out,
        "Proved against real LangGraph (the test suite's oracle, exact pins):"
    )?;
    for (name, version) in crate::versions::PROVED_AGAINST {
        writeln!(out, ".br\n{} {version}", roff_text(name))?;
    }
    Ok(())
}

/// Hyphens in names as roff's `\-` (a plain `-` may be typeset as a hyphen and break copy-paste).
fn roff_text(s: &str) -> String {
    s.replace('-', "\\-")
}

const EXTRA_SECTIONS: &str = r#".SH "EXIT STATUS"
.TP
\fB0\fR
Success.
.TP
\fB1\fR
\fBsuperstep lint\fR found problems (they are printed).
.TP
\fB2\fR
A user error: a missing or unreadable file, a database that is not a LangGraph checkpoint
database, an unknown thread, namespace or checkpoint, a corrupt row, a bad graph spec, invalid
JSON in an argument, bad arguments. The message is one line on standard error naming the file
and where; a rejected command leaves the database byte\-identical.
.TP
\fB3\fR
A run (\fBrun\fR, \fBresume\fR, \fBcontinue\fR, \fBreplay\fR) ended on an error of the graph:
a node raised after its retries, GraphRecursionError, InvalidUpdateError or another exception
while it ran. The supersteps committed before it are printed, then the traceback.
.TP
\fB128+N\fR
Ended by signal N: the terminal UI by SIGTERM, SIGINT or SIGHUP (the terminal is restored first);
a run from the command line by SIGINT (Ctrl\-C, 130) or SIGTERM (143), after cancelling it and
naming the checkpoint the thread keeps.
.SH ENVIRONMENT
.TP
\fBNO_COLOR\fR
When set and not empty, no colour is used. Colour is only ever used on a terminal.
.TP
\fBVIRTUAL_ENV\fR
The virtualenv whose Python runs a Python graph, unless \fB\-\-python\fR names one. Without
either, superstep tries \fI./.venv\fR (or one beside the langgraph.json), then the virtualenv it
is itself installed in (\fBpip install superstep\-debugger\fR there), then \fBpython3\fR.
.SH FILES
Inspection opens a database read\-only and leaves it and its directory byte\-identical. Without
\fB\-\-db\fR, the demo database embedded in the binary is written once to the temporary directory
(\fIsuperstep\-demo\-HASH.sqlite\fR); a graph spec without \fB\-\-db\fR gets a file of its own there.
.SH EXAMPLES
.TP
\fBsuperstep app.sqlite\fR
Inspect a SqliteSaver file in the terminal UI (read\-only, follows live writers).
.TP
\fBsuperstep threads \-\-db app.sqlite\fR
List its threads.
.TP
\fBsuperstep show \-\-db app.sqlite \-t THREAD \-\-json\fR
The thread's state as LangGraph's get_state returns it.
.TP
\fBsuperstep completions bash > ~/.local/share/bash\-completion/completions/superstep\fR
Install bash completion.
"#;
