//! Replays the incumbent's recorded requests against our API and reports where the answers
//! differ: the parity check behind every `/extended` route family.
//!
//! Statuses must match, except where the user's spec overrides the incumbent: an invalid input
//! value (the incumbent's 400) must be our 500 with `error`, `stack` and `errorTag` that keeps
//! the incumbent's other fields (`message`, `code`) with their values. Bodies of every other
//! answer (2xx, 404 and other errors) must match but for the keys a family lists as legitimately
//! different; our unknown-URL 404 may add the spec's `reference`. Redirects must carry the same
//! `Location`.

use std::convert::Infallible;

use serde_json::Value;
use test_support::oracle::{json_diff, manifest, OracleEntry};
use warp::{Filter, Reply};

/// One answer that differs from the recording.
#[derive(Debug)]
pub struct Mismatch {
    pub method: String,
    pub url: String,
    pub diffs: Vec<String>,
}

#[derive(Debug, Default)]
pub struct ParityReport {
    pub label: String,
    pub compared: usize,
    pub mismatches: Vec<Mismatch>,
}

impl ParityReport {
    /// Answers that matched.
    pub fn matched(&self) -> usize {
        self.compared - self.mismatches.len()
    }

    /// Prints `matched/compared` under `heading` and each differing request with its first
    /// differences (for the per-fixture tables the parity tests print).
    pub fn print(&self, heading: &str) {
        println!("{heading}: {}/{} matched", self.matched(), self.compared);
        for m in &self.mismatches {
            println!(
                "    differs: {} {} ({:?})",
                m.method,
                m.url,
                m.diffs.iter().take(4).collect::<Vec<_>>()
            );
        }
    }

    /// Fails with the first differences when any answer differed, or when nothing was compared
    /// (a selection that matches no recording proves nothing).
    pub fn assert_all_match(&self) {
        assert!(self.compared > 0, "{}: no recorded request was selected", self.label);
        if self.mismatches.is_empty() {
            println!("{}: {} recorded answers matched", self.label, self.compared);
            return;
        }
        let mut msg =
            format!("{}: {} of {} answers differ\n", self.label, self.mismatches.len(), self.compared);
        for m in self.mismatches.iter().take(15) {
            msg.push_str(&format!("  {} {}\n", m.method, m.url));
            for d in m.diffs.iter().take(8) {
                msg.push_str(&format!("      {d}\n"));
            }
        }
        panic!("{msg}");
    }
}

/// Sends every request of `fixture`'s manifest that `select` keeps to `api`, comparing each
/// answer with the recording. `None` when the oracle is missing outside CI.
pub async fn check_parity<F, R>(
    api: &F,
    fixture: &str,
    select: impl Fn(&OracleEntry) -> bool,
    ignore_keys: &[&str],
) -> Option<ParityReport>
where
    F: Filter<Extract = (R,), Error = Infallible> + Clone + Send + Sync + 'static,
    R: Reply + Send,
{
    check_parity_normalized(api, fixture, select, ignore_keys, |_, _| {}).await
}

/// [`check_parity`], with `normalize` applied to both the recorded and our JSON body before they
/// are compared: for answers whose row order the incumbent leaves undefined, a family sorts both
/// by the documented key (each such case is listed in docs/extended-deviations.md).
pub async fn check_parity_normalized<F, R>(
    api: &F,
    fixture: &str,
    select: impl Fn(&OracleEntry) -> bool,
    ignore_keys: &[&str],
    normalize: impl Fn(&OracleEntry, &mut Value),
) -> Option<ParityReport>
where
    F: Filter<Extract = (R,), Error = Infallible> + Clone + Send + Sync + 'static,
    R: Reply + Send,
{
    let entries = manifest(fixture)?;
    let mut report = ParityReport { label: fixture.to_string(), ..Default::default() };
    for e in entries.iter().filter(|e| select(e)) {
        report.compared += 1;
        let res = send(api, e).await;
        let diffs = compare(e, res.status().as_u16(), res.headers(), res.body(), ignore_keys, &normalize);
        if !diffs.is_empty() {
            report.mismatches.push(Mismatch { method: e.method.clone(), url: e.url.clone(), diffs });
        }
    }
    Some(report)
}

/// Sends the recorded request `e` (method, URL, headers, JSON body) to `api`.
pub async fn send<F, R>(api: &F, e: &OracleEntry) -> warp::http::Response<warp::hyper::body::Bytes>
where
    F: Filter<Extract = (R,), Error = Infallible> + Clone + Send + Sync + 'static,
    R: Reply + Send,
{
    let mut req = warp::test::request().method(&e.method).path(&e.url);
    for (k, v) in &e.req_headers {
        req = req.header(k.as_str(), v.as_str());
    }
    if let Some(body) = &e.body {
        req = req.header("content-type", "application/json").body(body.to_string());
    }
    req.reply(api).await
}

/// Where our answer (`status`, `headers`, `body`) differs from the recording `e`, by the rules
/// above; empty when it matches.
pub fn compare(
    e: &OracleEntry,
    status: u16,
    headers: &warp::http::HeaderMap,
    body: &[u8],
    ignore_keys: &[&str],
    normalize: &impl Fn(&OracleEntry, &mut Value),
) -> Vec<String> {
    let mut ours: Option<Value> = serde_json::from_slice(body).ok();
    if let Some(v) = ours.as_mut() {
        normalize(e, v);
    }
    match e.status {
        400 => invalid_input_diffs(e, status, ours.as_ref()),
        s if s != status => vec![format!("status: expected {s}, got {status}")],
        301 | 302 | 307 | 308 => {
            let ours = headers.get("location").and_then(|v| v.to_str().ok());
            match e.headers.get("location") {
                Some(loc) if Some(loc.as_str()) != ours => {
                    vec![format!("location: expected {loc}, got {ours:?}")]
                }
                _ => vec![],
            }
        }
        s => match (e.json(), ours) {
            (Some(mut expected), Some(mut actual)) => {
                super::parity_allow::order_recorded(e, &mut expected);
                normalize(e, &mut expected);
                // The spec's unknown-URL answer adds `reference` to the incumbent's 404 fields
                // (its unknown-route message: `Route GET:/does-not-exist not found`).
                let unknown_url = expected["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with("Route ") && m.ends_with(" not found"));
                if s == 404 && unknown_url && expected.get("reference").is_none() {
                    if let Some(o) = actual.as_object_mut() {
                        o.remove("reference");
                    }
                }
                json_diff(&expected, &actual, ignore_keys)
            }
            (Some(_), None) => vec!["expected a JSON body, got something else".into()],
            (None, _) => {
                let expected = e.text();
                if expected.as_bytes() == body {
                    vec![]
                } else {
                    vec![format!("body: expected {expected:?}, got {:?}", String::from_utf8_lossy(body))]
                }
            }
        },
    }
}

/// The incumbent's 400 (invalid input) against our answer: the spec's 500 with `error`,
/// `stack` and `errorTag`, keeping the incumbent's fields: every field it sent is in our body
/// with the same value, but for the two that name its status (`statusCode`, and `error`, the
/// status's reason phrase where a `statusCode` is sent), which follow ours.
fn invalid_input_diffs(e: &OracleEntry, status: u16, ours: Option<&Value>) -> Vec<String> {
    if status != 500 {
        return vec![format!("expected the spec's invalid-input 500 (incumbent: 400), got {status}")];
    }
    let Some(ours) = ours else {
        return vec!["expected the spec's invalid-input 500, got no JSON body".into()];
    };
    let mut diffs: Vec<String> = ["error", "stack", "errorTag"]
        .iter()
        .filter(|k| !ours[**k].is_string())
        .map(|k| format!("$.{k}: missing (the spec's invalid-input 500)"))
        .collect();
    if let Some(Value::Object(recorded)) = e.json() {
        let named_status = recorded.contains_key("statusCode");
        for (k, v) in &recorded {
            if k == "statusCode" || (k == "error" && named_status) {
                continue;
            }
            if ours.get(k) != Some(v) {
                diffs.push(format!("$.{k}: expected {v}, got {}", ours.get(k).unwrap_or(&Value::Null)));
            }
        }
    }
    diffs
}
