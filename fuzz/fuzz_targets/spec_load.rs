//! The graph spec loader (JSON model + Starlark module) on arbitrary text: the input is split at
//! the first NUL into the spec JSON and the Starlark source its `code` file would hold. Property:
//! it loads, or it is refused with a message naming file and place; never a panic or a hang
//! (module evaluation is tick-limited).
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (json, star) = text.split_once('\0').unwrap_or((text, ""));
    match superstep::engine::loaded::load_from_str(Path::new("/nonexistent/fuzz.json"), json, star)
    {
        Ok(lg) => {
            // a loaded graph also renders as Mermaid and ASCII without panicking
            let _ = superstep::commands::graph_text(&lg, true);
            let _ = superstep::commands::graph_text(&lg, false);
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
});
