//! The typed envelope + msgpack decoder on arbitrary bytes, as it meets them in a foreign DB:
//! the first byte picks the envelope type. Properties: no panic, no stack overflow; a decoded
//! msgpack value re-encodes to bytes that decode to the same value; its JSON view converts back
//! without panicking; a checkpoint blob decodes or is refused with a message.
#![no_main]
use libfuzzer_sys::fuzz_target;
use superstep::store::Checkpoint;
use superstep::value::{decode_msgpack, encode_msgpack, from_view, to_view, Typed, ViewOptions};

const TYPES: [&str; 7] = [
    "msgpack",
    "json",
    "null",
    "bytes",
    "bytearray",
    "pickle",
    "other",
];

fuzz_target!(|data: &[u8]| {
    let Some((&tag, bytes)) = data.split_first() else {
        return;
    };
    let ty = TYPES[tag as usize % TYPES.len()];
    if let Ok(t) = Typed::decode(ty, bytes) {
        let view = t.view(ViewOptions::default());
        let _ = from_view(&view);
        let _ = t.view(ViewOptions { max_bytes: 16 });
        let (ty2, bytes2) = t.encode();
        let back = Typed::decode(ty2, &bytes2).expect("re-encoded value decodes");
        // compared as bytes: NaN != NaN as a value
        if let (Typed::Value(a), Typed::Value(b)) = (&t, &back) {
            assert_eq!(
                encode_msgpack(a),
                encode_msgpack(b),
                "msgpack round trip changed the value"
            );
        }
    }
    if let Ok(v) = decode_msgpack(bytes) {
        let enc = encode_msgpack(&v);
        let again = decode_msgpack(&enc).expect("re-encoded msgpack decodes");
        assert_eq!(enc, encode_msgpack(&again));
        let _ = to_view(&v, ViewOptions::default());
    }
    let _ = Checkpoint::decode(ty, bytes);
});
