//! The JSON a user types: `--input/--value/--values/--id ID=JSON` on the CLI and the TUI's editors
//! (checked as you type, then converted to a stored value). Property: accepted values convert to
//! msgpack and back to the same JSON view; everything else is a message, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use superstep::value::{decode_msgpack, encode_msgpack, from_view, to_view, ViewOptions};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = superstep::app::state::check_json(text);
    let _ = superstep::commands::parse_id_answer(text);
    match superstep::commands::parse_json_arg("--value", text) {
        Ok(v) => {
            let bytes = encode_msgpack(&v);
            let back = decode_msgpack(&bytes).expect("an accepted value round-trips");
            assert_eq!(
                to_view(&v, ViewOptions::default()),
                to_view(&back, ViewOptions::default())
            );
            let _ = from_view(&to_view(&back, ViewOptions::default()));
        }
        Err(e) => assert!(e.starts_with("--value")),
    }
});
