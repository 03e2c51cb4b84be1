//! The OpenAPI document of `/extended` (extended/src/openapi) against what we serve:
//! - it is structurally valid OpenAPI 3 (unique operationIds, path params declared, every `$ref`
//!   resolves), and `/extended/openapi.json` / `.yaml` serve exactly it;
//! - every path template, instantiated with real ids (from the oracle's recorded requests, else
//!   from the fixture's own answers), is answered by something other than the unknown-URL
//!   fallback, on both engines;
//! - docs/extended-api.md lists exactly the document's routes (`UPDATE_DOCS=1` rewrites its
//!   table).
//!
//! The other direction (every request we answer is declared, every 2xx answer validates) is
//! checked in the full replay of tests/extended_parity.rs.

mod common;

use std::sync::Arc;

use common::{replay, shared_file, Db, TestStore};
use serde_json::Value;
use stacks_extended::openapi::{self, ParamType, Response, Route};
use stacks_ledger::ledger::Network;
use test_support::oracle::manifest;

fn refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                match (k.as_str(), x) {
                    ("$ref", Value::String(r)) => out.push(r.clone()),
                    _ => refs(x, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| refs(x, out)),
        _ => {}
    }
}

#[test]
fn the_document_is_structurally_valid_openapi_3() {
    let doc = openapi::document();
    assert_eq!(doc["openapi"], "3.0.3");
    assert!(doc["info"]["title"].is_string() && doc["info"]["version"].is_string());
    let paths = doc["paths"].as_object().expect("paths");
    assert!(paths.len() >= 70, "{} paths", paths.len());
    let mut ids = Vec::new();
    for (path, item) in paths {
        assert!(path.starts_with('/'), "{path}");
        let in_template: Vec<&str> =
            path.split('/').filter_map(|s| s.strip_prefix('{')?.strip_suffix('}')).collect();
        for (method, op) in item.as_object().unwrap() {
            assert!(["get", "post", "put", "delete", "head", "options", "patch"].contains(&method.as_str()));
            ids.push(op["operationId"].as_str().expect("operationId").to_string());
            let responses = op["responses"].as_object().expect("responses");
            assert!(!responses.is_empty(), "{method} {path}");
            let params = op["parameters"].as_array().unwrap();
            let declared: Vec<&str> =
                params.iter().filter(|p| p["in"] == "path").map(|p| p["name"].as_str().unwrap()).collect();
            assert_eq!(declared, in_template, "{method} {path}: path params");
            for p in params {
                assert!(p["in"] == "path" || p["in"] == "query", "{p}");
                assert!(p["in"] != "path" || p["required"] == true, "{method} {path}: {p}");
                assert!(p["schema"]["type"].is_string(), "{p}");
            }
        }
    }
    let n = ids.len();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), n, "operationIds are unique");
    let mut all = Vec::new();
    refs(&doc, &mut all);
    assert!(all.len() > 100);
    for r in &all {
        assert!(rosetta_spec::schema::resolve(&doc, r).is_some(), "unresolved $ref {r}");
    }
    // Every component is used by some route or other component.
    for name in doc["components"]["schemas"].as_object().unwrap().keys() {
        let target = format!("#/components/schemas/{name}");
        assert!(all.contains(&target), "unused schema {name}");
    }
}

#[tokio::test]
async fn the_document_is_served_as_json_and_yaml() {
    let Some(ts) = TestStore::new(Db::Sqlite, "extended_openapi_served", Network::Testnet).await else {
        return;
    };
    let api = common::routes(Arc::clone(&ts.store));
    let res = warp::test::request().path("/extended/openapi.json").reply(&api).await;
    assert_eq!(res.status(), 200);
    let served: Value = serde_json::from_slice(res.body()).unwrap();
    assert_eq!(served, openapi::document());
    let res = warp::test::request().path("/extended/openapi.yaml").reply(&api).await;
    assert_eq!(res.status(), 200);
    assert!(res.headers()["content-type"].to_str().unwrap().starts_with("application/yaml"));
    let yaml = String::from_utf8(res.body().to_vec()).unwrap();
    assert_eq!(yaml, openapi::document_yaml());
    assert!(yaml.starts_with("\"openapi\": \"3.0.3\"\n"), "{}", &yaml[..80]);
    assert!(yaml.contains("\n  \"/extended/v1/tx/{tx_id}\":\n    \"get\":\n"));
    ts.finish().await;
}

/// A value for each path parameter name, from the fixture's own answers, for templates no
/// recorded request instantiates.
async fn fixture_ids<F, R>(api: &F) -> Vec<(&'static str, String)>
where
    F: warp::Filter<Extract = (R,), Error = std::convert::Infallible> + Clone + Send + Sync + 'static,
    R: warp::Reply + Send,
{
    let get = |path: &'static str| async move {
        let res = warp::test::request().path(path).reply(api).await;
        serde_json::from_slice::<Value>(res.body()).unwrap_or_default()
    };
    let txs = get("/extended/v1/tx?limit=50").await;
    let tx = &txs["results"][0];
    let contract = txs["results"]
        .as_array()
        .and_then(|a| a.iter().find(|t| t["tx_type"] == "smart_contract"))
        .map(|t| t["smart_contract"]["contract_id"].as_str().unwrap_or_default().to_string())
        .unwrap_or_default();
    let block = get("/extended/v2/blocks/latest").await;
    let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
    vec![
        ("tx_id", s(&tx["tx_id"])),
        ("principal", s(&tx["sender_address"])),
        ("address", s(&tx["sender_address"])),
        ("pool_principal", s(&tx["sender_address"])),
        ("block_hash", s(&tx["block_hash"])),
        ("hash", s(&block["hash"])),
        ("burn_block_hash", s(&block["burn_block_hash"])),
        ("height", block["height"].to_string()),
        ("burn_block_height", block["burn_block_height"].to_string()),
        ("height_or_hash", block["height"].to_string()),
        ("tenure_height", block["tenure_height"].to_string()),
        ("timestamp", block["block_time"].to_string()),
        ("contract_id", contract),
        ("token", "stx".into()),
        ("id", s(&tx["tx_id"])),
        ("network", "testnet".into()),
        ("pox", "pox4".into()),
        ("cycle_number", "1".into()),
        ("signer_key", "0x02".into()),
    ]
}

fn instantiate(route: &Route, ids: &[(&str, String)]) -> String {
    route
        .path
        .split('/')
        .map(|seg| match seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
            Some(name) => ids.iter().find(|(n, _)| *n == name).map(|(_, v)| v.clone()).unwrap_or_default(),
            None => seg.to_string(),
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// The query a route needs to be answered at all (its required query params), with real values.
fn required_query(route: &Route, ids: &[(&str, String)]) -> String {
    let id = |n: &str| ids.iter().find(|(k, _)| *k == n).map(|(_, v)| v.clone()).unwrap_or_default();
    let q: Vec<String> = route
        .params
        .iter()
        .filter(|p| !p.in_path && p.required)
        .map(|p| {
            let v = match (p.name, p.ty) {
                ("tx_id", _) => id("tx_id"),
                ("contract_id", _) => id("contract_id"),
                ("principal", _) => id("principal"),
                ("trait_abi", _) => r#"{"functions":[]}"#.to_string(),
                (_, ParamType::Integer) => "1".into(),
                _ => "0x00".into(),
            };
            format!("{}={}", p.name, urlencode(&v))
        })
        .collect();
    if q.is_empty() {
        String::new()
    } else {
        format!("?{}", q.join("&"))
    }
}

fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b':' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

async fn every_template_is_answered(db: Db) {
    let fixture = "mocknet";
    let Some(tsv) = shared_file(&format!("fixtures/{fixture}.tsv")) else { return };
    let Some(ts) = TestStore::new(db, "extended_openapi", Network::Testnet).await else { return };
    replay(&ts.store, &tsv, &[]).await;
    let api = common::routes(Arc::clone(&ts.store));
    let recorded = manifest(fixture).unwrap_or_default();
    let ids = fixture_ids(&api).await;
    let mut failures = Vec::new();
    for route in openapi::registry() {
        let method = route.method.to_ascii_uppercase();
        // A recorded request of this template gives real ids (and the query it was asked with).
        let url = recorded
            .iter()
            .find(|e| {
                e.method == method
                    && openapi::route_for(&method, &e.path).is_some_and(|r| r.path == route.path)
            })
            .map(|e| e.url.clone())
            .unwrap_or_else(|| format!("{}{}", instantiate(&route, &ids), required_query(&route, &ids)));
        let res = warp::test::request().method(&method).path(&url).reply(&api).await;
        let body: Option<Value> = serde_json::from_slice(res.body()).ok();
        let fallback = res.status() == 404 && body.as_ref().is_some_and(|b| b.get("reference").is_some());
        println!("{db:?} {method} {url} -> {}", res.status());
        if fallback {
            failures.push(format!("{method} {url} ({}) is answered by the fallback", route.path));
        }
        if res.status().is_success() {
            if let (Response::Json(schema), Some(body)) = (route.response, &body) {
                if let Err(errs) = rosetta_spec::schema::validate(&openapi::document(), schema, body) {
                    failures.push(format!("{method} {url}: {:?}", &errs[..errs.len().min(3)]));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{db:?}:\n{}", failures.join("\n"));
    ts.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_every_declared_route_is_served() {
    every_template_is_answered(Db::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_every_declared_route_is_served() {
    every_template_is_answered(Db::Postgres).await;
}

const DOCS: &str = "docs/extended-api.md";
const BEGIN: &str = "<!-- routes: generated from extended/src/openapi (tests/extended_openapi.rs) -->";
const END: &str = "<!-- end routes -->";

fn routes_table() -> String {
    let mut t = String::from(
        "| Method | Path | Summary | Query parameters (default / max) | Response |\n|---|---|---|---|---|\n",
    );
    for r in openapi::registry() {
        let query: Vec<String> = r
            .params
            .iter()
            .filter(|p| !p.in_path)
            .map(|p| {
                let mut s = format!("`{}`", p.name);
                if p.required {
                    s.push_str(" (required)");
                }
                match (&p.default, p.maximum) {
                    (Some(d), Some(m)) => s.push_str(&format!(" {d}/{m}")),
                    (Some(d), None) => s.push_str(&format!(" {d}")),
                    _ => {}
                }
                s
            })
            .collect();
        let response = match r.response {
            Response::Json(s) => format!("`{s}`"),
            Response::Text => "text".into(),
            Response::Html => "HTML".into(),
            Response::Redirect => "301".into(),
        };
        let summary =
            if r.deprecated { format!("{} (deprecated)", r.summary) } else { r.summary.to_string() };
        t.push_str(&format!(
            "| {} | `{}` | {} | {} | {} |\n",
            r.method.to_ascii_uppercase(),
            r.path,
            summary,
            query.join(", "),
            response
        ));
    }
    t
}

#[test]
fn the_docs_page_lists_the_documents_routes() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(DOCS);
    let text = std::fs::read_to_string(&path).expect("docs/extended-api.md");
    let (Some(b), Some(e)) = (text.find(BEGIN), text.find(END)) else {
        panic!("{DOCS} lacks the route markers")
    };
    let current = &text[b + BEGIN.len()..e];
    let expected = format!("\n{}", routes_table());
    if current != expected {
        if std::env::var("UPDATE_DOCS").is_ok() {
            let updated = format!("{}{BEGIN}{expected}{}", &text[..b], &text[e..]);
            std::fs::write(&path, updated).unwrap();
        } else {
            panic!("{DOCS} is out of date with extended/src/openapi; rerun with UPDATE_DOCS=1");
        }
    }
}
