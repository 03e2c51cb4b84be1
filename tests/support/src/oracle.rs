//! The incumbent's recorded answers (`shared/oracle/<fixture>/manifest.jsonl` and the response
//! files beside it), and a JSON diff that names where two answers differ.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;
use serde_json::Value;

use crate::shared_path;

/// One recorded request and what the incumbent answered.
#[derive(Debug, Clone, Deserialize)]
pub struct OracleEntry {
    pub method: String,
    pub path: String,
    #[serde(default)]
    pub query: String,
    /// Path and query, as requested.
    pub url: String,
    #[serde(default)]
    pub body: Option<Value>,
    #[serde(default)]
    pub req_headers: BTreeMap<String, String>,
    pub status: u16,
    /// The response body's file name, relative to the fixture's oracle folder.
    pub file: String,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    #[serde(skip)]
    pub dir: PathBuf,
}

impl OracleEntry {
    /// The recorded response body as text.
    pub fn text(&self) -> String {
        let path = self.dir.join(&self.file);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
    }

    /// The recorded response body as JSON, when it is JSON.
    pub fn json(&self) -> Option<Value> {
        serde_json::from_str(&self.text()).ok()
    }
}

/// Every recorded request for `fixture` (an oracle folder name), in recording order; `None`
/// (after saying so) when the folder is missing outside CI.
///
/// # Panics
/// When the folder is missing under `CI=true`, or a manifest line is not an entry.
pub fn manifest(fixture: &str) -> Option<Vec<OracleEntry>> {
    let dir = shared_path(&format!("oracle/{fixture}"))?;
    let path = dir.join("manifest.jsonl");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let entries = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, line)| {
            let mut e: OracleEntry = serde_json::from_str(line)
                .unwrap_or_else(|err| panic!("{} line {}: {err}", path.display(), i + 1));
            e.dir = dir.clone();
            e
        })
        .collect();
    Some(entries)
}

/// Where `actual` differs from `expected`, one line per difference (`$.results[3].fee_rate:
/// expected "180", got "200"`). Object keys listed in `ignore` are skipped at any depth.
pub fn json_diff(expected: &Value, actual: &Value, ignore: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    diff_at("$", expected, actual, ignore, &mut out);
    out
}

fn diff_at(at: &str, expected: &Value, actual: &Value, ignore: &[&str], out: &mut Vec<String>) {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for (k, ev) in e {
                if ignore.contains(&k.as_str()) {
                    continue;
                }
                match a.get(k) {
                    Some(av) => diff_at(&format!("{at}.{k}"), ev, av, ignore, out),
                    None => out.push(format!("{at}.{k}: missing (expected {})", short(ev))),
                }
            }
            for (k, av) in a {
                if !e.contains_key(k) && !ignore.contains(&k.as_str()) {
                    out.push(format!("{at}.{k}: unexpected {}", short(av)));
                }
            }
        }
        (Value::Array(e), Value::Array(a)) => {
            if e.len() != a.len() {
                out.push(format!("{at}: expected {} items, got {}", e.len(), a.len()));
            }
            for (i, (ev, av)) in e.iter().zip(a).enumerate() {
                diff_at(&format!("{at}[{i}]"), ev, av, ignore, out);
            }
        }
        (e, a) if e == a => {}
        (e, a) => out.push(format!("{at}: expected {}, got {}", short(e), short(a))),
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 120 {
        format!("{}…", s.chars().take(117).collect::<String>())
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn names_each_difference_by_path() {
        let e = json!({"a": 1, "b": [1, {"c": "x"}], "gone": true, "server_version": "v9"});
        let a = json!({"a": 2, "b": [1, {"c": "y"}], "extra": null, "server_version": "ours"});
        let d = json_diff(&e, &a, &["server_version"]);
        assert_eq!(
            d,
            [
                "$.a: expected 1, got 2",
                "$.b[1].c: expected \"x\", got \"y\"",
                "$.gone: missing (expected true)",
                "$.extra: unexpected null",
            ]
        );
        assert!(json_diff(&e, &e, &[]).is_empty());
        assert_eq!(json_diff(&json!([1, 2]), &json!([1]), &[]), ["$: expected 2 items, got 1"]);
    }
}
