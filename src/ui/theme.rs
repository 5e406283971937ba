//! Colours and styles. Colour carries meaning: write types (same colours as the CLI's
//! `kind_color`), task status, breakpoints, diffs.

use crate::app::state::{Diff, Level, TaskStatus};
use crate::snapshot::WriteKind;
use ratatui::style::{Color, Modifier, Style};

/// INTERRUPT magenta, RESUME green, ERROR red, SCHEDULED blue, WRITE default.
pub fn kind(k: WriteKind) -> Style {
    let c = match k {
        WriteKind::Interrupt => Color::Magenta,
        WriteKind::Resume => Color::Green,
        WriteKind::Error => Color::Red,
        WriteKind::Scheduled => Color::Blue,
        WriteKind::Write => Color::Reset,
    };
    Style::default().fg(c)
}

pub fn status(s: TaskStatus) -> Style {
    match s {
        TaskStatus::Pending => Style::default().fg(Color::Yellow),
        TaskStatus::Interrupted => Style::default().fg(Color::Magenta),
        TaskStatus::Error => Style::default().fg(Color::Red),
        TaskStatus::Done => Style::default().fg(Color::Green),
    }
}

pub fn diff(d: &Diff) -> Style {
    match d {
        Diff::Added => Style::default().fg(Color::Green),
        Diff::Changed { .. } => Style::default().fg(Color::Yellow),
        Diff::Removed => Style::default().fg(Color::Red),
        Diff::Same | Diff::NoParent => Style::default(),
    }
}

pub fn level(l: Level) -> Style {
    match l {
        Level::Info => Style::default().fg(Color::Cyan),
        Level::Warn => Style::default()
            .fg(Color::Yellow)
            .add_modifier(Modifier::BOLD),
        Level::Error => Style::default().fg(Color::Red).add_modifier(Modifier::BOLD),
    }
}

pub fn breakpoint() -> Style {
    Style::default().fg(Color::Red).add_modifier(Modifier::BOLD)
}

pub fn next() -> Style {
    Style::default()
        .fg(Color::Yellow)
        .add_modifier(Modifier::BOLD)
}

pub fn dim() -> Style {
    Style::default().fg(Color::DarkGray)
}

pub fn bold() -> Style {
    Style::default().add_modifier(Modifier::BOLD)
}

pub fn border(focused: bool) -> Style {
    if focused {
        Style::default()
            .fg(Color::Cyan)
            .add_modifier(Modifier::BOLD)
    } else {
        Style::default().fg(Color::DarkGray)
    }
}

pub fn selected(focused: bool) -> Style {
    if focused {
        Style::default().add_modifier(Modifier::REVERSED)
    } else {
        Style::default().add_modifier(Modifier::BOLD)
    }
}

pub fn hit() -> Style {
    Style::default().bg(Color::Yellow).fg(Color::Black)
}

pub fn status_bar() -> Style {
    Style::default().bg(Color::Blue).fg(Color::White)
}

pub fn warn() -> Style {
    Style::default()
        .fg(Color::Yellow)
        .add_modifier(Modifier::BOLD)
}

pub fn error() -> Style {
    Style::default().fg(Color::Red).add_modifier(Modifier::BOLD)
}

pub fn ok() -> Style {
    Style::default().fg(Color::Green)
}

/// The value viewer's inks: keys cyan, strings green, numbers and literals magenta, typed
/// values blue with a dim type tag; conversations by role.
pub fn ink(i: crate::app::viewer::Ink) -> Style {
    use crate::app::viewer::Ink;
    match i {
        Ink::Plain => Style::default(),
        Ink::Dim | Ink::Tag => dim(),
        Ink::Key => Style::default().fg(Color::Cyan),
        Ink::Str => Style::default().fg(Color::Green),
        Ink::Num | Ink::Lit => Style::default().fg(Color::Magenta),
        Ink::Typed => Style::default().fg(Color::Blue),
        Ink::Fold => Style::default().fg(Color::Yellow),
        Ink::Head => bold(),
        Ink::Conv(t) => tone(t),
    }
}

/// A conversation's tones: each role its colour, tool calls yellow, failures red.
pub fn tone(t: crate::conversation::Tone) -> Style {
    use crate::conversation::Tone;
    match t {
        Tone::Plain => Style::default(),
        Tone::Dim => dim(),
        Tone::Human => Style::default()
            .fg(Color::Green)
            .add_modifier(Modifier::BOLD),
        Tone::Ai => Style::default()
            .fg(Color::Cyan)
            .add_modifier(Modifier::BOLD),
        Tone::Tool => Style::default().fg(Color::Magenta),
        Tone::System => Style::default()
            .fg(Color::Blue)
            .add_modifier(Modifier::BOLD),
        Tone::OtherRole => Style::default().fg(Color::Blue),
        Tone::Call => Style::default().fg(Color::Yellow),
        Tone::Ok => ok(),
        Tone::Error => Style::default().fg(Color::Red),
    }
}
