//! The value model against LangGraph's serializer: `tests/fixtures/serde_vectors.json` holds
//! `JsonPlusSerializer().dumps_typed(v)` for many Python values (made by tests/oracle/gen_serde.py)
//! and the JSON view of each.

use serde_json::Value as Json;
use std::path::Path;
use superstep::value::{encode_msgpack, from_view, Typed, ViewOptions};

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn vectors() -> Vec<Json> {
    let dir = std::env::var_os("SUPERSTEP_FIXTURES")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures"));
    let p = dir.join("serde_vectors.json");
    let v: Json = serde_json::from_str(
        &std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())),
    )
    .unwrap();
    let v = v.as_array().unwrap().clone();
    assert!(v.len() > 50, "too few serde vectors: {}", v.len());
    v
}

#[test]
fn every_vector_decodes_to_its_view() {
    let mut bad = Vec::new();
    for v in vectors() {
        let name = v["name"].as_str().unwrap();
        let typed = Typed::decode(
            v["type"].as_str().unwrap(),
            &unhex(v["hex"].as_str().unwrap()),
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        let view = typed.view(ViewOptions::default());
        if view != v["view"] {
            bad.push(format!("{name}:\n  ours   {view}\n  oracle {}", v["view"]));
        }
    }
    assert!(
        bad.is_empty(),
        "{} views differ:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn msgpack_vectors_reencode_byte_identically() {
    // decode -> encode must reproduce ormsgpack's bytes exactly (smallest encodings, float64,
    // fixext framing), for plain values and extension types alike.
    let mut n = 0;
    for v in vectors() {
        if v["type"] != "msgpack" {
            continue;
        }
        let bytes = unhex(v["hex"].as_str().unwrap());
        let typed = Typed::decode("msgpack", &bytes).unwrap();
        let again = encode_msgpack(typed.as_value().unwrap());
        assert_eq!(again, bytes, "{}: re-encoding differs", v["name"]);
        n += 1;
    }
    assert!(n > 40);
}

#[test]
fn plain_views_encode_like_langgraph() {
    // The engine builds values from JSON: for plain values the JSON view encoded again must be
    // exactly what LangGraph writes, envelope type included.
    let mut n = 0;
    for v in vectors().into_iter().filter(|v| v["plain"] == true) {
        let name = v["name"].as_str().unwrap();
        if v["type"] == "bytes" || v["type"] == "bytearray" {
            continue; // top-level bytes have no plain-JSON form
        }
        let value = from_view(&v["view"]).unwrap_or_else(|e| panic!("{name}: {e}"));
        let (ty, bytes) = Typed::Value(value).encode();
        assert_eq!(ty, v["type"].as_str().unwrap(), "{name}: envelope type");
        assert_eq!(bytes, unhex(v["hex"].as_str().unwrap()), "{name}: bytes");
        n += 1;
    }
    assert!(n > 30, "only {n} plain vectors");
}

#[test]
fn number_equality_is_by_value() {
    // starlark turns on serde_json's arbitrary_precision; views must still compare by value
    let a: Json = serde_json::from_str("1e+300").unwrap();
    let b = Typed::decode("msgpack", &unhex("cb7e37e43c8800759c"))
        .unwrap()
        .view(ViewOptions::default());
    assert_eq!(a, b, "{a} vs {b}");
}
