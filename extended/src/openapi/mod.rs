//! The OpenAPI 3 document of `/extended`, generated from one route registry ([`registry`]) so it
//! cannot drift: paging limits are the constants the handlers use, and tests/extended_openapi.rs
//! checks that every route we answer is declared (and answered) and that every answer validates
//! against the schema declared here. Served at `/extended/openapi.json` and `.yaml`, and as a
//! browsable page at `/extended/docs` ([`DOCS_PAGE`]).

mod registry;
mod schemas;
mod yaml;

pub use registry::{registry, ParamType, Response, Route};

use serde_json::{json, Map, Value};
use warp::http::header::{CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE};
use warp::http::HeaderValue;
use warp::{Filter, Rejection, Reply};

use crate::headers::{with_common_headers, API_VERSION};

const DESCRIPTION: &str = "The Stacks Blockchain API's `/extended` routes (v1, v2, v3 and the \
status routes) as stacks-ledger serves them, generated from the server's route registry. Not \
described here: the Rosetta API (`/rosetta/v1`, described by the Rosetta 1.4.6 specification), the \
node RPC (`/v2`, the Stacks node's own API), the faucets and the BNS routes. Invalid input \
values are answered with HTTP 500 and an `Error` body naming the parameter (`error`, `stack`, \
`errorTag`); unknown URLs with 404 and `reference`.";

/// The API reference page: one HTML file, its style and script inline, that renders
/// `/extended/openapi.json` in the browser. Nothing else is loaded (see [`DOCS_POLICY`]).
pub const DOCS_PAGE: &str = include_str!("docs.html");

/// The page may fetch from its own origin only, and run only its own inline script and style.
const DOCS_POLICY: &str = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; \
connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The page changes only with the binary: browsers may keep it an hour (the document it
/// renders is fetched afresh, `no-store`).
const DOCS_CACHE: &str = "public, max-age=3600";

/// The OpenAPI 3.0 document of every route of [`registry`].
pub fn document() -> Value {
    let mut paths = Map::new();
    for route in registry() {
        let item = paths.entry(route.path.to_string()).or_insert_with(|| json!({}));
        item[route.method] = route.operation();
    }
    json!({
        "openapi": "3.0.3",
        "info": {
            "title": "Stacks Blockchain API (stacks-ledger)",
            "version": API_VERSION,
            "description": DESCRIPTION,
        },
        "paths": paths,
        "components": {"schemas": schemas::components()},
    })
}

/// The document as YAML.
pub fn document_yaml() -> String {
    yaml::to_yaml(&document())
}

/// The route a request for `path` (no query string) with `method` is answered by: the declared
/// template that matches with the most literal segments (`/extended/v1/tx/events` before
/// `/extended/v1/{pox}/events`). A trailing slash is ignored, as the handlers ignore it.
pub fn route_for(method: &str, path: &str) -> Option<Route> {
    let path = match path.strip_suffix('/') {
        Some(p) if !p.is_empty() => p,
        _ => path,
    };
    let segs: Vec<&str> = path.split('/').collect();
    registry()
        .into_iter()
        .filter(|r| r.method.eq_ignore_ascii_case(method) && r.matches(&segs))
        .max_by_key(|r| r.path.split('/').filter(|s| !s.starts_with('{')).count())
}

/// `GET /extended/openapi.json`, `GET /extended/openapi.yaml` and `GET /extended/docs`.
pub fn routes() -> impl Filter<Extract = (impl Reply,), Error = Rejection> + Clone {
    let json =
        warp::path!("extended" / "openapi.json").map(|| with_common_headers(warp::reply::json(&document())));
    let yaml = warp::path!("extended" / "openapi.yaml").map(|| {
        let mut res = with_common_headers(document_yaml());
        res.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/yaml; charset=utf-8"));
        res
    });
    let docs = warp::path!("extended" / "docs").map(|| {
        let mut res = warp::reply::html(DOCS_PAGE).into_response();
        let h = res.headers_mut();
        h.insert(CACHE_CONTROL, HeaderValue::from_static(DOCS_CACHE));
        h.insert(CONTENT_SECURITY_POLICY, HeaderValue::from_static(DOCS_POLICY));
        with_common_headers(res)
    });
    warp::get().and(json.or(yaml).or(docs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_prefer_literal_segments() {
        let r = |p: &str| route_for("GET", p).map(|r| r.path);
        assert_eq!(r("/extended/v1/tx/events"), Some("/extended/v1/tx/events"));
        assert_eq!(r("/extended/v1/pox4/events"), Some("/extended/v1/{pox}/events"));
        assert_eq!(
            r("/extended/v1/pox9/events"),
            Some("/extended/v1/{pox}/events"),
            "its handler rejects pox9"
        );
        assert_eq!(r("/extended/v1/tx/block/0xab"), Some("/extended/v1/tx/block/{block_hash}"));
        assert_eq!(r("/extended/v1/tx/0xabc"), Some("/extended/v1/tx/{tx_id}"));
        assert_eq!(r("/extended/v1/tx/"), Some("/extended/v1/tx"));
        assert_eq!(r("/extended/v1/block/by_height/3"), Some("/extended/v1/block/by_height/{height}"));
        assert_eq!(route_for("POST", "/extended/v1/fee_rate").map(|r| r.path), Some("/extended/v1/fee_rate"));
        assert_eq!(r("/extended/v1/nope/nope/nope"), None);
    }

    #[test]
    fn operation_ids_and_paths_are_unique() {
        let routes = registry();
        let mut ids: Vec<_> = routes.iter().map(|r| r.operation_id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), routes.len());
        let mut keys: Vec<_> = routes.iter().map(|r| (r.method, r.path)).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), routes.len());
    }

    #[test]
    fn paging_limits_are_the_handlers() {
        let doc = document();
        let limit = |path: &str| {
            let params = doc["paths"][path]["get"]["parameters"].as_array().unwrap().clone();
            params.into_iter().find(|p| p["name"] == "limit").unwrap()["schema"].clone()
        };
        let tx = limit("/extended/v1/tx");
        assert_eq!(tx["default"], crate::tx::lists::TX_LIMIT.default);
        assert_eq!(tx["maximum"], crate::tx::lists::TX_LIMIT.max);
        assert_eq!(limit("/extended/v1/tx/block/{block_hash}")["maximum"], 200);
        assert_eq!(limit("/extended/v1/burnchain/rewards")["default"], 96);
    }
}
