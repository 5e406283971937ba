//! The `--keys` notation parser. Properties: no panic; each parsed key written back in the
//! notation parses to the same key; labels (help/footer) never panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use superstep::app::keys::{label, notation, parse_keys, same_key};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(keys) = parse_keys(text) {
        for k in keys {
            let _ = label(&k);
            let l = notation(&k);
            let back =
                parse_keys(&l).unwrap_or_else(|e| panic!("notation {l:?} does not parse: {e:?}"));
            assert_eq!(back.len(), 1, "notation {l:?}");
            assert!(
                same_key(&back[0], &k),
                "notation {l:?} parses to another key"
            );
        }
    }
});
