//! Clarity values against `shared/vectors/clarity.json`, made by the native decoder the Hiro
//! API uses (`stacks-encoding-native-js` 1.2.0): every valid vector must decode, re-encode to
//! the same bytes and give the same `repr`, type name and decoded JSON; every raw case must
//! follow the decision listed for it in [`DECISIONS`].

use std::time::{Duration, Instant};

use serde_json::Value as Json;
use stacks_codec::clarity::{decode_clarity_hex, Value};
use stacks_codec::{decode_hex, CodecError};

const CLARITY_JSON: &str = "vectors/clarity.json";

fn cases<'a>(file: &'a Json, key: &str) -> &'a [Json] {
    file[key].as_array().unwrap_or_else(|| panic!("clarity.json has no `{key}` array"))
}

fn field<'a>(case: &'a Json, key: &str) -> &'a str {
    case[key].as_str().unwrap_or_else(|| panic!("case {} has no string `{key}`", case["name"]))
}

/// Decodes `hex` and checks everything the native decoder recorded for it. Returns the
/// mismatches, empty when the case passes.
fn check_against_native(case: &Json) -> Vec<String> {
    let hex = field(case, "hex");
    let bytes = match decode_hex(hex) {
        Ok(b) => b,
        Err(e) => return vec![format!("hex: {e}")],
    };
    let value = match Value::deserialize(&bytes) {
        Ok(v) => v,
        Err(e) => return vec![format!("decode: {e}")],
    };
    let mut problems = Vec::new();
    if value.serialize() != bytes {
        problems.push(format!("re-encoding gives {}", hex::encode(value.serialize())));
    }
    if value.repr() != field(case, "repr") {
        problems.push(format!("repr {:?} != {:?}", value.repr(), case["repr"]));
    }
    if value.type_name() != field(case, "type") {
        problems.push(format!("type {:?} != {:?}", value.type_name(), case["type"]));
    }
    let decoded = value.to_decoded_json();
    if decoded != case["decoded"] {
        problems.push(format!("decoded JSON differs:\n  ours   {decoded}\n  native {}", case["decoded"]));
    }
    match decode_clarity_hex(hex) {
        Ok(j) if j == decoded => {}
        other => problems.push(format!("decode_clarity_hex disagrees: {other:?}")),
    }
    problems
}

#[test]
fn vectors_match_the_native_decoder() {
    let Some(file) = test_support::load_json(CLARITY_JSON) else { return };
    let vectors = cases(&file, "vectors");
    assert_eq!(Some(vectors.len() as u64), file["meta"]["counts"]["vectors"].as_u64(), "vector count");
    assert!(!vectors.is_empty());

    let mut failures = Vec::new();
    for case in vectors {
        let problems = check_against_native(case);
        if !problems.is_empty() {
            failures.push(format!("{} ({}):\n  {}", case["name"], case["hex"], problems.join("\n  ")));
        }
    }
    let passed = vectors.len() - failures.len();
    println!("clarity.json vectors: {passed}/{} passed", vectors.len());
    assert!(failures.is_empty(), "{} vectors failed:\n{}", failures.len(), failures.join("\n"));
}

/// How we fail, coarsely, so a changed error shows up in [`DECISIONS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Failure {
    Eof,
    UnknownType,
    TooLong,
    AddressVersion,
    TooDeep,
    Trailing,
}

fn failure_of(e: &CodecError) -> Option<Failure> {
    Some(match e {
        CodecError::UnexpectedEof { .. } => Failure::Eof,
        CodecError::InvalidByte { what: "Clarity type", .. } => Failure::UnknownType,
        CodecError::InvalidByte { what: "address version", .. } => Failure::AddressVersion,
        CodecError::TooLong { .. } => Failure::TooLong,
        CodecError::TooDeep(_) => Failure::TooDeep,
        CodecError::TrailingBytes(_) => Failure::Trailing,
        _ => return None,
    })
}

#[derive(Debug, Clone, Copy)]
enum Decision {
    /// The native decoder accepts it, and so do we, with the same repr, type and JSON.
    Match,
    /// The native decoder rejects it or hangs (TIMEOUT); we fail fast.
    Reject(Failure),
    /// The native decoder accepts it; we deliberately reject it, for the reason given.
    Stricter(Failure, &'static str),
}

use Decision::*;
use Failure::*;

/// The intended outcome for every raw case, by name.
const DECISIONS: &[(&str, Decision)] = &[
    ("empty input", Reject(Eof)),
    ("truncated int", Reject(Eof)),
    ("truncated uint 15 bytes", Reject(Eof)),
    ("unknown type 0x0f", Reject(UnknownType)),
    ("unknown type 0xff", Reject(UnknownType)),
    (
        "trailing byte after true",
        Stricter(Trailing, "a value must fill its input; extra bytes mean a framing error upstream"),
    ),
    ("buffer length exceeds data", Reject(Eof)),
    ("ascii non-ascii byte 0x80", Match),
    ("utf8 invalid byte 0xff", Match),
    ("utf8 overlong", Match),
    ("utf8 lone surrogate", Match),
    ("list length too large", Reject(TooLong)),
    ("truncated some", Reject(Eof)),
    ("truncated ok", Reject(Eof)),
    ("tuple unsorted keys", Match),
    ("tuple duplicate keys", Match),
    ("tuple empty", Match),
    ("tuple key starts with digit", Match),
    ("list heterogeneous", Match),
    ("contract name empty", Match),
    ("contract name starts with digit", Match),
    ("contract name 128 chars", Match),
    ("principal version 32", Reject(AddressVersion)),
    ("deep nesting 70 x some", Reject(TooDeep)),
    ("bool false with prefix only", Match),
];

/// Decodes and checks the error kind, and that failing took no time (the native decoder spins).
fn check_rejected(case: &Json, want: Failure) -> Vec<String> {
    let bytes = match decode_hex(field(case, "hex")) {
        Ok(b) => b,
        Err(e) => return vec![format!("hex: {e}")],
    };
    let start = Instant::now();
    let result = Value::deserialize(&bytes);
    let elapsed = start.elapsed();
    let mut problems = Vec::new();
    match &result {
        Ok(v) => problems.push(format!("accepted as {}", v.repr())),
        Err(e) if failure_of(e) != Some(want) => problems.push(format!("failed with {e:?}, want {want:?}")),
        Err(_) => {}
    }
    if elapsed > Duration::from_secs(1) {
        problems.push(format!("took {elapsed:?} to fail"));
    }
    problems
}

#[test]
fn raw_cases_follow_the_decision_table() {
    let Some(file) = test_support::load_json(CLARITY_JSON) else { return };
    let raw = cases(&file, "raw_cases");
    assert_eq!(Some(raw.len() as u64), file["meta"]["counts"]["raw_cases"].as_u64(), "raw case count");

    let names: Vec<&str> = raw.iter().map(|c| field(c, "name")).collect();
    let unlisted: Vec<&&str> = names.iter().filter(|n| !DECISIONS.iter().any(|(d, _)| d == *n)).collect();
    let stale: Vec<&str> = DECISIONS.iter().map(|(d, _)| *d).filter(|d| !names.contains(d)).collect();
    assert!(
        unlisted.is_empty() && stale.is_empty(),
        "no decision for {unlisted:?}; decided but absent: {stale:?}"
    );

    let (mut matched, mut rejected, mut stricter) = (0, 0, 0);
    let mut failures = Vec::new();
    for case in raw {
        let name = field(case, "name");
        let native_ok = case["native_ok"].as_bool().unwrap_or_else(|| panic!("{name}: no native_ok"));
        let Some((_, decision)) = DECISIONS.iter().find(|(d, _)| *d == name) else { continue };
        let problems = match *decision {
            Match if !native_ok => vec!["decided Match but the native decoder rejects it".to_string()],
            Match => {
                matched += 1;
                check_against_native(case)
            }
            Reject(_) if native_ok => vec!["decided Reject but the native decoder accepts it".to_string()],
            Reject(want) => {
                rejected += 1;
                check_rejected(case, want)
            }
            Stricter(..) if !native_ok => vec!["decided Stricter but the native decoder rejects it".into()],
            Stricter(want, reason) => {
                stricter += 1;
                println!("stricter than native: {name}: {reason}");
                check_rejected(case, want)
            }
        };
        if !problems.is_empty() {
            failures.push(format!("{name} ({decision:?}): {}", problems.join("; ")));
        }
    }
    println!(
        "clarity.json raw_cases: {}/{} passed ({matched} match native, {rejected} rejected like native, \
         {stricter} deliberately stricter)",
        raw.len() - failures.len(),
        raw.len()
    );
    assert!(failures.is_empty(), "{} raw cases failed:\n{}", failures.len(), failures.join("\n"));
}
