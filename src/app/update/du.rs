//! `:du`: the store doctor's size report (the same model and text as `superstep du`) in the
//! value viewer.

use super::say;
use crate::app::action::Effect;
use crate::app::state::*;
use crate::app::viewer::{Section, Viewer};
use crate::doctor::{du_text, sizes::Du};

/// Threads and channels listed (the viewer scrolls).
const TOP: usize = 50;

pub(super) fn measure(s: &mut AppState) -> Vec<Effect> {
    say(s, Level::Info, "measuring the store…");
    vec![Effect::MeasureStore]
}

pub(super) fn measured(s: &mut AppState, du: &Du) -> Vec<Effect> {
    s.message = None;
    let (w, h) = s.viewer_area();
    let v = Viewer::new(
        "Store sizes (superstep du)".to_string(),
        vec![Section::Text(du_text::lines(du, TOP))],
        w,
        h,
    );
    s.modal = Some(Modal::Viewer(Box::new(v)));
    vec![]
}
