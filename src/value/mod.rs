//! The value model: LangGraph's typed envelope (`serde.dumps_typed`) and msgpack extension types,
//! decoded structurally (nothing is imported or instantiated) into [`rmpv::Value`], and a JSON
//! *view* of those values for display and for the StateSnapshot-shaped JSON output.
//!
//! Pure: no IO. See spec §12.

pub mod capped;
pub mod capped_json;
mod envelope;
pub mod ext;
pub mod shape;
mod view;

pub use envelope::{decode_msgpack, encode_msgpack, is_encrypted_type, Typed, MAX_DEPTH};
pub use ext::{Interrupt, Send};
pub use view::{encrypted_ciphers, from_plain_json, from_view, to_view, ViewOptions};

/// Errors from decoding stored values.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ValueError {
    #[error("unknown serialization type {0:?} (expected msgpack, json, null, bytes, bytearray or pickle)")]
    UnknownType(String),
    #[error("corrupt msgpack: {0}")]
    Msgpack(String),
    #[error("{0} trailing byte(s) after the msgpack value")]
    Trailing(usize),
    #[error("corrupt json: {0}")]
    Json(String),
    #[error("value cannot be encoded as msgpack: {0}")]
    Encode(String),
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmpv::Value;

    #[test]
    fn the_reserved_marker_is_corrupt_not_nil() {
        // ormsgpack: ValueError('invalid type Reserved'), at the top and nested
        for bytes in [&[0xc1][..], &[0x92, 0x01, 0xc1], &[0x81, 0xa1, b'k', 0xc1]] {
            let err = decode_msgpack(bytes).unwrap_err();
            assert!(err.to_string().contains("reserved marker 0xc1"), "{err}");
        }
        // 0xc1 as data (in a string, a binary, an ext payload, an int) is fine
        for bytes in [
            &[0xa1, 0xc1][..],
            &[0xc4, 0x01, 0xc1],
            &[0xd4, 0x05, 0xc1],
            &[0xcc, 0xc1],
            &[0x92, 0xcd, 0x00, 0xc1, 0xc0],
        ] {
            assert!(decode_msgpack(bytes).is_ok(), "{bytes:02x?}");
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let mut bytes = vec![0x91u8; 100_000]; // [[[[...]]]]
        bytes.push(0xc0);
        let err = decode_msgpack(&bytes).unwrap_err();
        assert!(matches!(err, ValueError::Msgpack(_)), "{err:?}");
        // rmpv counts two depth units per container level
        let ok = [vec![0x91u8; MAX_DEPTH / 2 - 2], vec![0xc0]].concat();
        assert!(decode_msgpack(&ok).is_ok());
    }

    #[test]
    fn trailing_bytes_and_unknown_envelopes_are_reported() {
        assert_eq!(decode_msgpack(&[0x01, 0x02]), Err(ValueError::Trailing(1)));
        assert_eq!(
            Typed::decode("yaml", b"x: 1"),
            Err(ValueError::UnknownType("yaml".into()))
        );
        assert!(matches!(
            Typed::decode("json", b"{"),
            Err(ValueError::Json(_))
        ));
    }

    #[test]
    fn a_tagged_datetime_round_trips_to_langgraphs_ext_3() {
        // JsonPlusSerializer's bytes for datetime(2024, 5, 4, 6, 32, 42, tzinfo=utc)
        // (tests/fixtures/serde_vectors.json, "datetime utc")
        let hex = "c73b0394a86461746574696d65a86461746574696d65b9323032342d30352d30345430363a33323a34322b30303a3030ad66726f6d69736f666f726d6174";
        let bytes: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect();
        let v = decode_msgpack(&bytes).unwrap();
        let view = to_view(&v, ViewOptions::default());
        assert_eq!(
            view,
            serde_json::json!({"__type__": "datetime.datetime", "value": "2024-05-04T06:32:42+00:00"})
        );
        assert_eq!(encode_msgpack(&from_view(&view).unwrap()), bytes);
    }

    #[test]
    fn invalid_utf8_is_shown_escaped() {
        // fixstr of 3 bytes: 'a', 0xff, 'b'
        let v = decode_msgpack(&[0xa3, b'a', 0xff, b'b']).unwrap();
        assert_eq!(
            to_view(&v, ViewOptions::default()),
            serde_json::json!({"__type__": "str", "escaped": "a\\xffb"})
        );
    }

    #[test]
    fn previews_are_bounded() {
        let v = Value::from("x".repeat(10_000));
        let opts = ViewOptions { max_bytes: 16 };
        let s = to_view(&v, opts).as_str().unwrap().to_string();
        assert!(
            s.starts_with(&"x".repeat(16)) && s.ends_with("(+9984 bytes)"),
            "{s}"
        );
        let b = Value::Binary(vec![0xab; 1000]);
        assert_eq!(
            to_view(&b, opts)["hex"].as_str().unwrap().len(),
            32 + "…(+984 bytes)".len()
        );
    }

    /// Found by the `value_decode` fuzz target (crash input: msgpack float64 NaN): a NaN value
    /// re-encodes to the same bytes although NaN != NaN as a value.
    #[test]
    fn nan_round_trips_byte_identical() {
        let bytes = [0xcb, 0x7f, 0xf8, 0, 0, 0, 0, 0, 0];
        let v = decode_msgpack(&bytes).unwrap();
        assert_eq!(encode_msgpack(&v), bytes);
        let t = Typed::decode("msgpack", &bytes).unwrap();
        assert_eq!(t.encode().1, bytes);
    }

    #[test]
    fn encrypted_envelopes_are_opaque() {
        // EncryptedSerializer: "<serializer>+<cipher>" over the ciphertext
        let t = Typed::decode("msgpack+aes", &[1, 2, 3, 4]).unwrap();
        assert_eq!(
            t.view(ViewOptions::default()),
            serde_json::json!({"__type__": "encrypted", "serializer": "msgpack", "cipher": "aes", "bytes": 4})
        );
        let mut c = Vec::new();
        super::encrypted_ciphers(&t.into_value(), &mut c);
        assert_eq!(c, vec!["msgpack+aes".to_string()]);
        assert_eq!(Typed::decode("null+aes", b"").unwrap(), Typed::Null);
        // still unknown: no "+", or an empty side
        for ty in ["yaml", "+aes", "msgpack+"] {
            assert!(Typed::decode(ty, b"").is_err(), "{ty}");
        }
    }

    #[test]
    fn pickle_is_opaque() {
        let t = Typed::decode("pickle", b"\x80\x04K\x01.").unwrap();
        assert_eq!(
            t.view(ViewOptions::default()),
            serde_json::json!({"__type__": "pickle", "hex": "80044b012e"})
        );
    }
}
