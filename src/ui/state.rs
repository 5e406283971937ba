//! State pane: the values at the selected checkpoint with a diff against its parent
//! (`+` added, `~` changed with the old value, `-` removed).

use super::{draw_list, fit, pane_block, theme};
use crate::app::format::short_id;
use crate::app::state::{AppState, Diff, Pane};
use crate::conversation::wrap::{cut, width};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

pub fn render(s: &AppState, buf: &mut Buffer, area: Rect, focused: bool) {
    let Some(cur) = &s.current else {
        draw_list(
            buf,
            area,
            pane_block("State".into(), focused),
            None,
            0,
            0,
            focused,
            |_| false,
            |_| Line::raw(""),
            vec![],
        );
        return;
    };
    let snap = &cur.snapshot;
    let source = snap
        .metadata
        .get("source")
        .and_then(|v| v.as_str())
        .unwrap_or("?");
    let title = format!(
        "State · step {} ({}) {}{}",
        snap.step,
        super::escape(source),
        short_id(&snap.checkpoint_id),
        if cur.latest { " · newest" } else { "" }
    );
    let w = cur
        .values
        .iter()
        .map(|v| super::width(&v.key))
        .max()
        .unwrap_or(4)
        .clamp(4, 24);
    let row = |i: usize| -> Line {
        let v = &cur.values[i];
        let (mark, st) = match &v.diff {
            Diff::Added => ("+", theme::diff(&v.diff)),
            Diff::Changed { .. } => ("~", theme::diff(&v.diff)),
            Diff::Removed => ("-", theme::diff(&v.diff)),
            _ => (" ", Default::default()),
        };
        let mut spans = vec![
            Span::styled(format!("{mark} "), st),
            Span::styled(fit(&v.key, w), st),
            Span::raw("  "),
        ];
        match &v.diff {
            Diff::Removed => spans.push(Span::styled(
                format!(
                    "(removed; was {})",
                    v.was
                        .as_ref()
                        .map(|x| crate::app::format::preview(x, 80))
                        .unwrap_or_default()
                ),
                theme::dim(),
            )),
            Diff::Changed { delta: Some(d), .. } => {
                // the change first, then as much of the value as fits
                let room = (area.width as usize).saturating_sub(w + 8 + width(d) + 3);
                spans.push(Span::styled(d.clone(), theme::diff(&v.diff)));
                spans.push(Span::styled(" · ", theme::dim()));
                spans.push(Span::raw(cut(&v.preview, room.max(20))));
            }
            Diff::Changed { was, .. } => {
                spans.push(Span::raw(v.preview.clone()));
                spans.push(Span::styled(format!("   was {was}"), theme::dim()));
            }
            _ => match crate::present::typed_leaf(&v.view) {
                // a typed leaf: its type dim, its value in the typed colour
                Some((tag, text)) if !tag.is_empty() => {
                    spans.push(Span::styled(format!("{tag} "), theme::dim()));
                    spans.push(Span::styled(
                        super::escape(&text).into_owned(),
                        theme::ink(crate::app::viewer::Ink::Typed),
                    ));
                }
                _ => spans.push(Span::raw(v.preview.clone())),
            },
        }
        Line::from(spans)
    };
    // the snapshot's own warnings, then the DB-wide limitation: wrapped, not cut
    let inner = (area.width as usize).saturating_sub(6).max(20);
    let mut footer = Vec::new();
    let mut note = |mark: &str, text: String, style| {
        for (i, l) in crate::conversation::wrap::wrap(&text, inner)
            .into_iter()
            .enumerate()
        {
            let lead = if i == 0 { mark } else { " " };
            footer.push(Line::styled(format!("  {lead} {l}"), style));
        }
    };
    for w in &snap.warnings {
        note(
            "⚠",
            format!("{}: {}", super::escape(&w.field), super::escape(&w.message)),
            theme::warn(),
        );
    }
    for l in &snap.limitations {
        note(
            "ⓘ",
            format!("DB only: {}", super::escape(&l.message)),
            theme::dim(),
        );
    }
    draw_list(
        buf,
        area,
        pane_block(title, focused),
        None,
        cur.values.len(),
        s.selected(Pane::State),
        focused,
        |i| s.is_hit(Pane::State, i),
        row,
        footer,
    );
}
