//! Header rewriting for both directions: hop-by-hop headers describe one connection, so they stop
//! at the proxy (RFC 9110 §7.6.1); everything else is end-to-end and passes.

use std::net::SocketAddr;

use warp::http::header::{self, HeaderMap, HeaderName, HeaderValue};

/// Marks replies by where they came from; the root adds `ledger` for its own answers.
pub const SOURCE_HEADER: &str = "x-stacks-ledger-source";

const HOP_BY_HOP: [&str; 8] = [
    "connection",
    "keep-alive",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    // Not in the RFC list, but old clients send it meaning `Connection`.
    "proxy-connection",
    // `Expect: 100-continue` was answered by our own server when the body was first read; the
    // node has nothing to continue.
    "expect",
];

fn is_hop_by_hop(name: &HeaderName, listed: &[String]) -> bool {
    let name = name.as_str();
    HOP_BY_HOP.contains(&name)
        // Proxy-Authorization / Proxy-Authenticate are addressed to this hop.
        || name.starts_with("proxy-")
        || listed.iter().any(|l| l == name)
}

/// Header names a `Connection` header declares hop-by-hop, lowercased.
fn connection_listed(headers: &HeaderMap) -> Vec<String> {
    headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|token| token.trim().to_ascii_lowercase())
        .filter(|token| !token.is_empty())
        .collect()
}

/// A copy of `headers` without hop-by-hop headers.
pub fn end_to_end(headers: &HeaderMap) -> HeaderMap {
    let listed = connection_listed(headers);
    let mut out = HeaderMap::with_capacity(headers.len());
    for (name, value) in headers {
        if !is_hop_by_hop(name, &listed) {
            out.append(name.clone(), value.clone());
        }
    }
    out
}

/// Headers to send to the node for a client request.
///
/// `Host` and `Content-Length` are left out: the HTTP client sets `Host` to the node's authority
/// (as the incumbent's proxy does), and the body framing is decided by the caller. The client's
/// host and address travel in `X-Forwarded-Host` / `X-Forwarded-For`, appended to whatever an
/// earlier proxy already put there.
pub fn to_node(incoming: &HeaderMap, remote: Option<SocketAddr>) -> HeaderMap {
    let mut out = end_to_end(incoming);
    out.remove(header::HOST);
    out.remove(header::CONTENT_LENGTH);

    if let Some(addr) = remote {
        let previous: Vec<&str> =
            incoming.get_all("x-forwarded-for").iter().filter_map(|v| v.to_str().ok()).collect();
        let mut chain = previous.join(", ");
        if !chain.is_empty() {
            chain.push_str(", ");
        }
        chain.push_str(&addr.ip().to_string());
        if let Ok(value) = HeaderValue::from_str(&chain) {
            out.insert("x-forwarded-for", value);
        }
    }
    if !out.contains_key("x-forwarded-host") {
        if let Some(host) = incoming.get(header::HOST) {
            out.insert("x-forwarded-host", host.clone());
        }
    }
    if !out.contains_key("x-forwarded-proto") {
        // warp serves plain HTTP; a TLS terminator in front sets the header itself.
        out.insert("x-forwarded-proto", HeaderValue::from_static("http"));
    }
    out
}

/// Headers to send to the client for a node response, tagged with [`SOURCE_HEADER`].
pub fn from_node(node: &HeaderMap) -> HeaderMap {
    let mut out = end_to_end(node);
    out.insert(SOURCE_HEADER, HeaderValue::from_static("node"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut m = HeaderMap::new();
        for (k, v) in pairs {
            m.append(HeaderName::from_bytes(k.as_bytes()).unwrap(), HeaderValue::from_str(v).unwrap());
        }
        m
    }

    #[test]
    fn strips_standard_and_connection_listed_headers() {
        let h = map(&[
            ("connection", "keep-alive, X-Secret"),
            ("keep-alive", "timeout=5"),
            ("te", "trailers"),
            ("trailer", "x"),
            ("transfer-encoding", "chunked"),
            ("upgrade", "websocket"),
            ("proxy-authorization", "Basic x"),
            ("proxy-connection", "keep-alive"),
            ("expect", "100-continue"),
            ("x-secret", "1"),
            ("accept", "application/json"),
            ("x-custom", "a"),
            ("x-custom", "b"),
        ]);
        let out = end_to_end(&h);
        let names: Vec<&str> = out.keys().map(|k| k.as_str()).collect();
        assert_eq!(names, ["accept", "x-custom"]);
        assert_eq!(out.get_all("x-custom").iter().count(), 2);
    }

    #[test]
    fn forwarding_headers() {
        let h = map(&[("host", "api.example"), ("content-length", "3"), ("x-forwarded-for", "1.1.1.1")]);
        let out = to_node(&h, Some("10.1.2.3:5555".parse().unwrap()));
        assert!(out.get("host").is_none());
        assert!(out.get("content-length").is_none());
        assert_eq!(out["x-forwarded-for"], "1.1.1.1, 10.1.2.3");
        assert_eq!(out["x-forwarded-host"], "api.example");
        assert_eq!(out["x-forwarded-proto"], "http");

        let h = map(&[("x-forwarded-proto", "https")]);
        let out = to_node(&h, Some("[::1]:1".parse().unwrap()));
        assert_eq!(out["x-forwarded-for"], "::1");
        assert_eq!(out["x-forwarded-proto"], "https");
    }

    #[test]
    fn response_is_tagged() {
        let out = from_node(&map(&[(SOURCE_HEADER, "spoofed"), ("connection", "close")]));
        assert_eq!(out[SOURCE_HEADER], "node");
        assert!(out.get("connection").is_none());
    }
}
