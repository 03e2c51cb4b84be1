//! Checks the hand-written models against the spec documents in `shared/rosetta-spec` (read in
//! place, never copied): every component schema has a model with the same name, the minimal
//! sample carries exactly the required fields and validates, the maximal sample fills exactly
//! the declared properties and validates, samples round-trip, and dropping any required field
//! makes decoding fail.

mod samples;

use std::collections::BTreeSet;

use rosetta_spec::schema;
use samples::{Entry, Shape};
use serde_json::{json, Value};

const API_JSON: &str = "rosetta-spec/api.json";
const API_JSON_V1_4_7: &str = "rosetta-spec/api-v1.4.7.json";

/// Required fields that the models deliberately decode when absent (see the field's doc comment).
const LENIENT_REQUIRED: &[(&str, &str)] = &[("Operation", "status")];

/// Optional fields the models carry beyond these spec documents (the schemas allow additional
/// properties): `SyncStatus.synced` is in later Rosetta specs and the incumbent serves it.
const EXTENSIONS: &[(&str, &str)] = &[("SyncStatus", "synced")];

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object().map(|m| m.keys().cloned().collect()).unwrap_or_default()
}

fn spec_names(doc: &Value) -> BTreeSet<String> {
    schema::component_schemas(doc).into_iter().map(|s| s.name).collect()
}

/// Checks one model against its schema, appending every disagreement to `problems`.
fn check_entry(doc: &Value, entry: &Entry, problems: &mut Vec<String>) {
    let name = entry.name;
    let Some(info) = schema::schema_info(doc, name) else {
        return problems.push(format!("model {name} has no schema"));
    };
    let mut validate = |label: &str, sample: &Value| {
        if let Err(errors) = schema::validate(doc, name, sample) {
            problems.extend(errors.into_iter().map(|e| format!("{name} ({label} sample) invalid: {e}")));
        }
        match (entry.decode)(sample) {
            Ok(back) if back == *sample => {}
            Ok(back) => problems.push(format!("{name} ({label} sample) round-trips to {back}, not {sample}")),
            Err(e) => problems.push(format!("{name} ({label} sample) does not decode: {e}")),
        }
    };
    match &entry.shape {
        Shape::Primitive(sample) => validate("primitive", sample),
        Shape::Enum(variants) => {
            for variant in variants {
                validate(&variant.to_string(), variant);
            }
            let wire: Vec<&str> = variants.iter().filter_map(Value::as_str).collect();
            if wire != info.enum_values {
                problems.push(format!("{name}: model values {wire:?}, spec enum {:?}", info.enum_values));
            }
            if (entry.decode)(&json!("not-a-variant")).is_ok() {
                problems.push(format!("{name}: decodes an undeclared value"));
            }
        }
        Shape::Object { min, max } => {
            validate("minimal", min);
            validate("maximal", max);
            let required: BTreeSet<String> = info.required.iter().cloned().collect();
            let declared: BTreeSet<String> = info.properties.iter().map(|p| p.name.clone()).collect();
            if keys(min) != required {
                problems.push(format!("{name}: required fields {:?}, spec requires {required:?}", keys(min)));
            }
            let extensions: BTreeSet<String> =
                EXTENSIONS.iter().filter(|(n, _)| *n == name).map(|(_, f)| (*f).to_owned()).collect();
            let filled: BTreeSet<String> = keys(max).difference(&extensions).cloned().collect();
            let undeclared = filled.difference(&declared).cloned().collect::<Vec<_>>();
            let unmodelled: Vec<_> = declared.difference(&filled).collect();
            if !undeclared.is_empty() || !unmodelled.is_empty() {
                problems.push(format!(
                    "{name}: fields not in the spec {undeclared:?}, spec properties without a field {unmodelled:?}"
                ));
            }
            for field in &required {
                let mut without = min.clone();
                without.as_object_mut().expect("objects serialize to objects").remove(field);
                let lenient = LENIENT_REQUIRED.contains(&(name, field.as_str()));
                match ((entry.decode)(&without), lenient) {
                    (Ok(_), false) => problems.push(format!("{name}: decodes without required `{field}`")),
                    (Err(e), true) => {
                        problems.push(format!("{name}: lenient `{field}` fails when absent: {e}"))
                    }
                    _ => {}
                }
            }
        }
    }
}

/// Checks `table` against the schemas `expected` of `doc`; panics listing every problem.
fn check_table(label: &str, doc: &Value, expected: &BTreeSet<String>, table: &[Entry]) -> usize {
    let mut problems = Vec::new();
    let modelled: BTreeSet<String> = table.iter().map(|e| e.name.to_owned()).collect();
    if modelled.len() != table.len() {
        problems.push("the sample table lists a model twice".to_owned());
    }
    problems.extend(expected.difference(&modelled).map(|n| format!("schema {n} has no model")));
    problems.extend(modelled.difference(expected).map(|n| format!("model {n} is not a {label} schema")));
    for entry in table {
        check_entry(doc, entry, &mut problems);
    }
    assert!(problems.is_empty(), "{label}: {} problems:\n{}", problems.len(), problems.join("\n"));
    expected.intersection(&modelled).count()
}

#[test]
fn api_json_schemas_have_models_that_agree() {
    let Some(doc) = test_support::load_json(API_JSON) else { return };
    let expected = spec_names(&doc);
    let covered = check_table("api.json", &doc, &expected, &samples::v1_4_6());
    println!("api.json: {covered}/{} schemas have models, all required sets agree", expected.len());
}

#[test]
fn indexer_schemas_agree_with_v1_4_7() {
    let (Some(v146), Some(v147)) =
        (test_support::load_json(API_JSON), test_support::load_json(API_JSON_V1_4_7))
    else {
        return;
    };
    let expected: BTreeSet<String> = spec_names(&v147).difference(&spec_names(&v146)).cloned().collect();
    let covered = check_table("api-v1.4.7.json", &v147, &expected, &samples::v1_4_7_indexer());
    println!(
        "api-v1.4.7.json: {covered}/{} indexer schemas have models, all required sets agree",
        expected.len()
    );
}

#[test]
fn every_endpoint_body_has_a_model() {
    let (Some(v146), Some(v147)) =
        (test_support::load_json(API_JSON), test_support::load_json(API_JSON_V1_4_7))
    else {
        return;
    };
    let modelled: BTreeSet<&str> =
        samples::v1_4_6().iter().chain(&samples::v1_4_7_indexer()).map(|e| e.name).collect();
    let v146_paths: BTreeSet<String> = schema::endpoints(&v146).into_iter().map(|e| e.path).collect();
    let indexer = schema::endpoints(&v147).into_iter().filter(|e| !v146_paths.contains(&e.path));
    let all: Vec<_> = schema::endpoints(&v146).into_iter().chain(indexer).collect();
    for endpoint in &all {
        for body in [&endpoint.request, &endpoint.response, &endpoint.error] {
            let body =
                body.as_deref().unwrap_or_else(|| panic!("{}: body without a schema ref", endpoint.path));
            assert!(modelled.contains(body), "{}: {body} has no model", endpoint.path);
        }
    }
    assert_eq!(all.len(), 20, "17 endpoints of 1.4.6 and the 3 indexer endpoints of 1.4.7");
    println!("{} endpoints: every request, response and error body has a model", all.len());
}

#[test]
fn validator_rejects_broken_responses_against_the_real_spec() {
    use samples::Sample;
    let Some(doc) = test_support::load_json(API_JSON) else { return };
    let mut block = serde_json::to_value(rosetta_spec::BlockResponse::maximal()).unwrap();
    block["block"]["transactions"][0]["operations"][1]["amount"]["value"] = json!(5);
    block["block"]["transactions"][0]["operations"][0].as_object_mut().unwrap().remove("status");
    block["block"]["timestamp"] = json!(-1);
    let errors = schema::validate(&doc, "BlockResponse", &block).unwrap_err();
    assert_eq!(
        errors,
        [
            "$.block.timestamp: -1 is below minimum 0",
            "$.block.transactions[0].operations[0]: missing required field `status`",
            "$.block.transactions[0].operations[1].amount.value: expected string, got integer",
        ]
    );
    let mut key = serde_json::to_value(rosetta_spec::ConstructionDeriveRequest::minimal()).unwrap();
    key["public_key"]["curve_type"] = json!("pallas");
    let errors = schema::validate(&doc, "ConstructionDeriveRequest", &key).unwrap_err();
    assert_eq!(errors.len(), 1);
    assert!(errors[0].starts_with("$.public_key.curve_type: \"pallas\" is not one of ["), "{errors:?}");
}
