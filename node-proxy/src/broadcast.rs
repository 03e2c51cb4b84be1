//! `POST /v2/transactions`: relayed to the primary node with its body buffered (a transaction is
//! small and the proxy needs it); on acceptance, handed to the ledger hook and multicast to the
//! extra endpoints. Only the primary node's answer goes back to the client.

use std::time::Instant;

use bytes::Bytes;
use serde::Deserialize;
use warp::http::{header, HeaderMap, Method};
use warp::reply::Response;

use crate::error::ProxyError;
use crate::headers;
use crate::hook::BroadcastedTx;
use crate::upstream::{self, Incoming, Upstream};

pub(crate) async fn handle(upstream: &Upstream, req: Incoming) -> Result<Response, ProxyError> {
    let url = upstream.target(&req.path, req.query.as_deref())?;
    let upstream_headers = headers::to_node(&req.headers, req.remote);
    let body = upstream.buffer_request_body(&req.headers, req.body).await?;

    let answer = upstream.exchange(Method::POST, url, upstream_headers.clone(), body.clone()).await?;

    if answer.status.is_success() {
        let txid = parse_txid(&answer.body);
        tracing::info!(txid = txid.as_deref().unwrap_or("?"), "transaction broadcast accepted by the node");
        // Started before the hook so that a slow ledger does not delay propagation.
        multicast(upstream, &upstream_headers, &body);
        match raw_tx(&req.headers, &body) {
            Some(raw_tx) => {
                let timeout = upstream.config.request_timeout;
                let hook = upstream.hooks.on_broadcast(BroadcastedTx { raw_tx, txid });
                if tokio::time::timeout(timeout, hook).await.is_err() {
                    tracing::warn!(
                        ?timeout,
                        "broadcast hook did not finish in time; answering the client anyway"
                    );
                }
            }
            None => tracing::warn!(
                "the node accepted a transaction body the proxy cannot decode; ledger hook skipped"
            ),
        }
    } else {
        tracing::info!(status = answer.status.as_u16(), "transaction broadcast rejected by the node");
    }
    Ok(upstream::into_response(answer))
}

/// Sends the accepted body to every extra endpoint in the background, with the client's body
/// and end-to-end headers (so the content type is kept). Their answers are only logged.
fn multicast(upstream: &Upstream, headers: &HeaderMap, body: &Bytes) {
    for endpoint in &upstream.config.extra_broadcast {
        let request = upstream.client.post(endpoint.clone()).headers(headers.clone()).body(body.clone());
        let endpoint = endpoint.clone();
        let timeout = upstream.config.request_timeout;
        tokio::spawn(async move {
            let started = Instant::now();
            match tokio::time::timeout(timeout, request.send()).await {
                Ok(Ok(response)) if response.status().is_success() => {
                    tracing::debug!(%endpoint, elapsed_ms = started.elapsed().as_millis() as u64, "extra broadcast accepted");
                }
                Ok(Ok(response)) => {
                    let status = response.status().as_u16();
                    let text = response.text().await.unwrap_or_default();
                    tracing::warn!(%endpoint, status, body = %truncate(&text, 300), "extra broadcast rejected");
                }
                Ok(Err(err)) => tracing::error!(%endpoint, error = %err, "extra broadcast failed"),
                Err(_) => tracing::error!(%endpoint, ?timeout, "extra broadcast timed out"),
            }
        });
    }
}

fn truncate(text: &str, max: usize) -> &str {
    match text.char_indices().nth(max) {
        Some((at, _)) => &text[..at],
        None => text,
    }
}

/// The node answers an accepted broadcast with the txid as a JSON string (hex, no `0x`).
/// Normalised to `0x` + lowercase hex; anything else gives `None`.
pub(crate) fn parse_txid(answer: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(answer).ok()?.trim();
    let text = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')).unwrap_or(text);
    let hex = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")).unwrap_or(text);
    (hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| format!("0x{}", hex.to_ascii_lowercase()))
}

/// The node's JSON body form: the transaction as hex, optionally with an Atlas attachment.
#[derive(Deserialize)]
struct JsonBroadcast {
    tx: String,
}

/// The serialised transaction in a broadcast body. stacks-node takes either the raw bytes
/// (`application/octet-stream`) or `{"tx": "<hex>", "attachment": ...}` (`application/json`).
pub(crate) fn raw_tx(headers: &HeaderMap, body: &Bytes) -> Option<Bytes> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase());
    if content_type.as_deref() == Some("application/json") {
        let parsed: JsonBroadcast = serde_json::from_slice(body).ok()?;
        let hex_text = parsed.tx.strip_prefix("0x").unwrap_or(&parsed.tx);
        hex::decode(hex_text).ok().map(Bytes::from)
    } else {
        Some(body.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use warp::http::HeaderValue;

    #[test]
    fn txid_forms() {
        let hex = "AB".repeat(32);
        let want = format!("0x{}", "ab".repeat(32));
        assert_eq!(parse_txid(format!("\"{hex}\"").as_bytes()), Some(want.clone()));
        assert_eq!(parse_txid(format!("\"0x{hex}\"\n").as_bytes()), Some(want.clone()));
        assert_eq!(parse_txid(hex.as_bytes()), Some(want));
        assert_eq!(parse_txid(b"\"abc\""), None);
        assert_eq!(parse_txid(b"{\"error\":\"x\"}"), None);
    }

    #[test]
    fn raw_tx_forms() {
        let mut headers = HeaderMap::new();
        let raw = Bytes::from_static(&[0x80, 0x00, 0x01]);
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/octet-stream"));
        assert_eq!(raw_tx(&headers, &raw), Some(raw.clone()));

        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("Application/JSON; charset=utf-8"));
        let json = Bytes::from_static(br#"{"tx":"800001","attachment":null}"#);
        assert_eq!(raw_tx(&headers, &json), Some(raw.clone()));
        let json = Bytes::from_static(br#"{"tx":"0x800001"}"#);
        assert_eq!(raw_tx(&headers, &json), Some(raw));
        assert_eq!(raw_tx(&headers, &Bytes::from_static(b"{}")), None);
    }
}
