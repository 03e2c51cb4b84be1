//! The proxy end to end: a real client, the proxy and a fake stacks-node, all on loopback.

mod support;

use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::StreamExt;
use serde_json::{json, Value};
use stacks_node_proxy::{CostDimensions, FeeMarketCosts, FeeRewriteConfig, NoopHook};
use support::*;
use tokio::io::AsyncReadExt;
use tokio::net::TcpListener;
use warp::http::StatusCode;
use warp::Filter;

const HOP_BY_HOP_RESPONSE: [(&str, &str); 4] = [
    ("connection", "x-node-secret"),
    ("x-node-secret", "1"),
    ("keep-alive", "timeout=5"),
    ("proxy-authenticate", "Basic"),
];

fn echo_handler() -> Handler {
    Arc::new(|req: &Recorded| {
        let mut headers = vec![("content-type", "application/json"), ("x-node", "yes")];
        headers.extend(HOP_BY_HOP_RESPONSE);
        let body = json!({"method": req.method, "path": req.path_and_query, "len": req.body.len()});
        response(StatusCode::ACCEPTED, &headers, body.to_string())
    })
}

#[tokio::test]
async fn get_passes_status_headers_body_and_query() {
    let (node, log) = fake_node(echo_handler()).await;
    let proxy = spawn_proxy(config(node), Arc::new(NoopHook)).await;

    let resp = client()
        .get(format!("http://{proxy}/v2/accounts/SP000000000000000000002Q6VF78?proof=0&tip=ab%20cd"))
        .header("x-custom", "1")
        .header("accept", "application/json")
        .header("connection", "keep-alive, x-client-secret")
        .header("x-client-secret", "s3cret")
        .header("keep-alive", "timeout=9")
        .header("proxy-authorization", "Basic Zm9v")
        .header("te", "trailers")
        .header("x-forwarded-for", "203.0.113.7")
        .send()
        .await
        .unwrap();

    // Client side: the node's status, end-to-end headers and body, tagged as the node's.
    assert_eq!(resp.status(), StatusCode::ACCEPTED);
    let h = resp.headers().clone();
    assert_eq!(h["x-node"], "yes");
    assert_eq!(h["x-stacks-ledger-source"], "node");
    assert_eq!(h["content-type"], "application/json");
    for (name, _) in HOP_BY_HOP_RESPONSE {
        assert!(h.get(name).is_none(), "{name} reached the client");
    }
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["method"], "GET");

    // Node side: path and query verbatim, end-to-end headers only, forwarding headers set.
    let seen = log.lock().unwrap()[0].clone();
    assert_eq!(seen.path_and_query, "/v2/accounts/SP000000000000000000002Q6VF78?proof=0&tip=ab%20cd");
    assert_eq!(seen.headers["x-custom"], "1");
    assert_eq!(seen.headers["accept"], "application/json");
    for name in ["x-client-secret", "keep-alive", "proxy-authorization", "te"] {
        assert!(seen.headers.get(name).is_none(), "{name} reached the node");
    }
    assert_eq!(seen.headers["host"], node.to_string().as_str());
    assert_eq!(seen.headers["x-forwarded-for"], "203.0.113.7, 127.0.0.1");
    assert_eq!(seen.headers["x-forwarded-host"], proxy.to_string().as_str());
    assert_eq!(seen.headers["x-forwarded-proto"], "http");
}

#[tokio::test]
async fn post_body_is_relayed_with_its_length() {
    let (node, log) = fake_node(echo_handler()).await;
    let proxy = spawn_proxy(config(node), Arc::new(NoopHook)).await;
    let payload = json!({"sender": "SP000000000000000000002Q6VF78", "arguments": ["0x0100"]});

    let resp = client()
        .post(format!(
            "http://{proxy}/v2/contracts/call-read/SP000000000000000000002Q6VF78/pox-4/get-info?tip=latest"
        ))
        .json(&payload)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::ACCEPTED);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["method"], "POST");

    let seen = log.lock().unwrap()[0].clone();
    assert_eq!(
        seen.path_and_query,
        "/v2/contracts/call-read/SP000000000000000000002Q6VF78/pox-4/get-info?tip=latest"
    );
    assert_eq!(serde_json::from_slice::<Value>(&seen.body).unwrap(), payload);
    assert_eq!(seen.headers["content-length"], seen.body.len().to_string().as_str());
    assert!(seen.headers.get("transfer-encoding").is_none());
    assert_eq!(seen.headers["content-type"], "application/json");
}

#[tokio::test]
async fn chunked_upload_reaches_the_node_with_a_content_length() {
    let (node, log) = fake_node(echo_handler()).await;
    let proxy = spawn_proxy(config(node), Arc::new(NoopHook)).await;
    let chunks = futures_util::stream::iter(vec![
        Ok::<_, Infallible>(Bytes::from_static(b"\"0x0100")),
        Ok(Bytes::from_static(b"0000\"")),
    ]);
    let resp = client()
        .post(format!("http://{proxy}/v2/map_entry/SP1/c/m"))
        .header("content-type", "application/json")
        .body(reqwest::Body::wrap_stream(chunks))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::ACCEPTED);
    let seen = log.lock().unwrap()[0].clone();
    assert_eq!(&seen.body[..], b"\"0x01000000\"");
    assert_eq!(seen.headers["content-length"], "12");
    assert!(seen.headers.get("transfer-encoding").is_none());
}

#[tokio::test]
async fn node_errors_and_bare_values_pass_through() {
    let (node, _log) = fake_node(Arc::new(|req: &Recorded| {
        if req.path_and_query == "/v2/fees/transfer" {
            response(StatusCode::OK, &[("content-type", "application/json")], "1")
        } else {
            response(StatusCode::NOT_FOUND, &[("content-type", "text/plain")], "No such file or directory")
        }
    }))
    .await;
    let proxy = spawn_proxy(config(node), Arc::new(NoopHook)).await;

    let resp = client().get(format!("http://{proxy}/v2/fees/transfer")).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(resp.text().await.unwrap(), "1");

    let resp = client().delete(format!("http://{proxy}/v2/nothing/here")).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::NOT_FOUND);
    assert_eq!(resp.headers()["x-stacks-ledger-source"], "node");
    assert_eq!(resp.text().await.unwrap(), "No such file or directory");
}

#[tokio::test]
async fn only_v2_paths_are_matched() {
    let (node, log) = fake_node(echo_handler()).await;
    let proxy = spawn_proxy(config(node), Arc::new(NoopHook)).await;
    for path in ["/v3/blocks", "/v2x", "/extended/v1/tx"] {
        let resp = client().get(format!("http://{proxy}{path}")).send().await.unwrap();
        // warp's own "no route" answer, not the node's.
        assert_eq!(resp.status(), StatusCode::NOT_FOUND, "{path}");
        assert!(resp.headers().get("x-stacks-ledger-source").is_none());
    }
    assert!(log.lock().unwrap().is_empty());
    let resp = client().get(format!("http://{proxy}/v2")).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::ACCEPTED);
}

const MB: usize = 1024 * 1024;

/// Drains a request body, publishing its progress in `counter`; answers the total.
async fn count_body<S, B>(body: S, counter: Arc<AtomicUsize>) -> String
where
    S: futures_util::Stream<Item = Result<B, warp::Error>>,
    B: warp::Buf,
{
    let mut body = std::pin::pin!(body);
    while let Some(Ok(chunk)) = body.next().await {
        counter.fetch_add(chunk.remaining(), Ordering::SeqCst);
    }
    counter.load(Ordering::SeqCst).to_string()
}

/// The request body goes up as the client sends it: the node sees the first megabyte while the
/// client is still holding back the second.
#[tokio::test]
async fn request_body_is_streamed_up() {
    let received = Arc::new(AtomicUsize::new(0));
    let counter = received.clone();
    let node_filter = warp::path!("v2" / "upload")
        .and(warp::body::stream())
        .then(move |body| count_body(body, counter.clone()));
    let node = serve(node_filter).await;
    let proxy = spawn_proxy(config(node), Arc::new(NoopHook)).await;

    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, Infallible>>(1);
    let body =
        futures_util::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|chunk| (chunk, rx)) });
    let upload = tokio::spawn(
        client()
            .post(format!("http://{proxy}/v2/upload"))
            .header("content-length", (2 * MB).to_string())
            .body(reqwest::Body::wrap_stream(body))
            .send(),
    );

    tx.send(Ok(Bytes::from(vec![1u8; MB]))).await.unwrap();
    assert!(
        eventually(Duration::from_secs(10), || received.load(Ordering::SeqCst) >= MB).await,
        "the node never saw the first half while the client held the second"
    );
    tx.send(Ok(Bytes::from(vec![2u8; MB]))).await.unwrap();
    drop(tx);

    let resp = upload.await.unwrap().unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(resp.text().await.unwrap(), (2 * MB).to_string());
}

/// A 64 MiB response is relayed as it is produced, never held back. The fake node runs in
/// lockstep with the client: it produces the next 64 KiB chunk only once the client has received
/// everything but the last 1 MiB. A proxy that withheld more than that (let alone buffered the
/// whole body) would stall the exchange and fail the deadline.
#[tokio::test]
async fn large_response_is_streamed_down() {
    const CHUNK: usize = 64 * 1024;
    const CHUNKS: usize = 1024; // 64 MiB
    const WINDOW: usize = MB;
    let received = Arc::new(AtomicUsize::new(0));

    let received2 = received.clone();
    let node_filter = warp::path!("v2" / "big").map(move || {
        let chunks = futures_util::stream::unfold((0usize, received2.clone()), |(i, received)| async move {
            if i == CHUNKS {
                return None;
            }
            while received.load(Ordering::SeqCst) + WINDOW < i * CHUNK {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            let chunk = Bytes::from(vec![(i % 251) as u8; CHUNK]);
            Some((Ok::<_, Infallible>(chunk), (i + 1, received)))
        });
        warp::reply::stream(chunks)
    });
    let node = serve(node_filter).await;
    let proxy = spawn_proxy(config(node), Arc::new(NoopHook)).await;

    let read_all = async {
        let resp = client().get(format!("http://{proxy}/v2/big")).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        assert_eq!(resp.headers()["x-stacks-ledger-source"], "node");
        let mut body = resp.bytes_stream();
        while let Some(chunk) = body.next().await {
            let chunk = chunk.unwrap();
            let offset = received.load(Ordering::SeqCst);
            for (k, byte) in chunk.iter().enumerate() {
                assert_eq!(*byte, (((offset + k) / CHUNK) % 251) as u8, "byte {}", offset + k);
            }
            received.fetch_add(chunk.len(), Ordering::SeqCst);
        }
    };
    tokio::time::timeout(Duration::from_secs(60), read_all)
        .await
        .expect("the proxy held back data it had from the node");
    assert_eq!(received.load(Ordering::SeqCst), CHUNK * CHUNKS);
}

#[tokio::test]
async fn unreachable_node_is_502_json() {
    let proxy = spawn_proxy(config(dead_port().await), Arc::new(NoopHook)).await;
    let resp = client().get(format!("http://{proxy}/v2/info")).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::BAD_GATEWAY);
    assert_eq!(resp.headers()["content-type"], "application/json");
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"], "Bad Gateway");
    assert!(body["message"].as_str().unwrap().contains("unreachable"));
}

#[tokio::test]
async fn silent_node_is_504_within_the_timeout() {
    // Accepts connections and never answers.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let node = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    let mut cfg = config(node);
    cfg.request_timeout = Duration::from_millis(500);
    let proxy = spawn_proxy(cfg, Arc::new(NoopHook)).await;

    for (method, path) in [("GET", "/v2/info"), ("POST", "/v2/transactions")] {
        let started = Instant::now();
        let resp = client()
            .request(method.parse().unwrap(), format!("http://{proxy}{path}"))
            .header("content-type", "application/octet-stream")
            .body(if method == "POST" { vec![0x80u8; 10] } else { vec![] })
            .send()
            .await
            .unwrap();
        let elapsed = started.elapsed();
        assert_eq!(resp.status(), StatusCode::GATEWAY_TIMEOUT, "{path}");
        assert!(elapsed >= Duration::from_millis(450), "{path}: {elapsed:?}");
        assert!(elapsed < Duration::from_secs(3), "{path}: {elapsed:?}");
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["error"], "Gateway Timeout");
    }
}

#[tokio::test]
async fn node_dropping_connections_is_503() {
    // Reads the request, then hangs up without answering (what a node at its client limit does).
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let node = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut buf = [0u8; 4096];
            let _ = socket.read(&mut buf).await;
        }
    });
    let proxy = spawn_proxy(config(node), Arc::new(NoopHook)).await;
    let resp = client().get(format!("http://{proxy}/v2/info")).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(resp.headers()["retry-after"], "1");
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"], "Service Unavailable");
}

#[tokio::test]
async fn stalled_response_stream_is_cut() {
    let node_filter = warp::path!("v2" / "stall").map(|| {
        let first = futures_util::stream::once(async { Ok::<_, Infallible>(Bytes::from_static(b"partial")) });
        warp::reply::stream(first.chain(futures_util::stream::pending()))
    });
    let node = serve(node_filter).await;
    let mut cfg = config(node);
    cfg.request_timeout = Duration::from_millis(500);
    let proxy = spawn_proxy(cfg, Arc::new(NoopHook)).await;

    let resp = client().get(format!("http://{proxy}/v2/stall")).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let outcome = tokio::time::timeout(Duration::from_secs(5), resp.bytes()).await;
    assert!(matches!(outcome, Ok(Err(_))), "a stalled stream must end in an error, not hang");
}

const TXID: &str = "5fa4b1ccd0e5e5a2ea6e3f6c1d2b7a44e1cb9d9d0f4f6e3a0c1b2a3948576a1b";

fn tx_node() -> Handler {
    Arc::new(|req: &Recorded| {
        if req.body.first() == Some(&0) {
            let body = json!({"error": "transaction rejected", "reason": "BadNonce", "txid": TXID});
            response(StatusCode::BAD_REQUEST, &[("content-type", "application/json")], body.to_string())
        } else {
            response(StatusCode::OK, &[("content-type", "application/json")], format!("\"{TXID}\""))
        }
    })
}

async fn broadcast_setup() -> (std::net::SocketAddr, Log, Log, Arc<RecordingHook>) {
    let (node, node_log) = fake_node(tx_node()).await;
    let (extra, extra_log) =
        fake_node(Arc::new(|_: &Recorded| response(StatusCode::OK, &[], "\"ok\""))).await;
    let mut cfg = config(node);
    cfg.extra_broadcast = vec![
        node_url(extra).join("/relay/v2/transactions").unwrap(),
        // A dead extra endpoint must not affect the client's answer.
        node_url(dead_port().await).join("/v2/transactions").unwrap(),
    ];
    cfg.body_limit = 1024;
    let hook = Arc::new(RecordingHook::default());
    let proxy = spawn_proxy(cfg, hook.clone()).await;
    (proxy, node_log, extra_log, hook)
}

#[tokio::test]
async fn accepted_broadcast_reaches_hook_and_extra_endpoints() {
    let (proxy, node_log, extra_log, hook) = broadcast_setup().await;
    let raw = vec![0x80, 0x80, 0x00, 0x00, 0x00, 0x01, 0x04];

    let resp = client()
        .post(format!("http://{proxy}/v2/transactions"))
        .header("content-type", "application/octet-stream")
        .body(raw.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(resp.headers()["x-stacks-ledger-source"], "node");
    assert_eq!(resp.text().await.unwrap(), format!("\"{TXID}\""));

    assert_eq!(&node_log.lock().unwrap()[0].body[..], &raw[..]);
    // The hook ran before the client got its answer.
    let broadcasts = hook.broadcasts.lock().unwrap().clone();
    assert_eq!(broadcasts.len(), 1);
    assert_eq!(&broadcasts[0].raw_tx[..], &raw[..]);
    assert_eq!(broadcasts[0].txid.as_deref(), Some(&*format!("0x{TXID}")));

    assert!(eventually(Duration::from_secs(5), || extra_log.lock().unwrap().len() == 1).await);
    let relayed = extra_log.lock().unwrap()[0].clone();
    assert_eq!(relayed.method, "POST");
    assert_eq!(relayed.path_and_query, "/relay/v2/transactions");
    assert_eq!(&relayed.body[..], &raw[..]);
    assert_eq!(relayed.headers["content-type"], "application/octet-stream");
}

#[tokio::test]
async fn json_broadcast_gives_the_hook_decoded_bytes() {
    let (proxy, node_log, _extra_log, hook) = broadcast_setup().await;
    let body = json!({"tx": "80800000000104", "attachment": null});
    let resp = client().post(format!("http://{proxy}/v2/transactions")).json(&body).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(serde_json::from_slice::<Value>(&node_log.lock().unwrap()[0].body).unwrap(), body);
    let broadcasts = hook.broadcasts.lock().unwrap().clone();
    assert_eq!(&broadcasts[0].raw_tx[..], &[0x80, 0x80, 0x00, 0x00, 0x00, 0x01, 0x04]);
}

#[tokio::test]
async fn rejected_broadcast_skips_hook_and_extras() {
    let (proxy, _node_log, extra_log, hook) = broadcast_setup().await;
    let resp = client()
        .post(format!("http://{proxy}/v2/transactions"))
        .header("content-type", "application/octet-stream")
        .body(vec![0x00, 0x01])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["reason"], "BadNonce");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(hook.broadcasts.lock().unwrap().is_empty());
    assert!(extra_log.lock().unwrap().is_empty());
}

#[tokio::test]
async fn oversized_broadcast_is_413_and_never_sent() {
    let (proxy, node_log, _extra_log, hook) = broadcast_setup().await;
    let resp = client()
        .post(format!("http://{proxy}/v2/transactions"))
        .header("content-type", "application/octet-stream")
        .body(vec![0x80u8; 1025])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert!(node_log.lock().unwrap().is_empty());
    assert!(hook.broadcasts.lock().unwrap().is_empty());
}

fn fee_node() -> Handler {
    Arc::new(|req: &Recorded| {
        let json_headers = [("content-type", "application/json")];
        match req.path_and_query.as_str() {
            "/v2/pox" => {
                let limit = |n: u64| {
                    json!({"block_limit": {"read_count": n, "read_length": n * 1000,
                        "write_count": n, "write_length": n * 1000, "runtime": n * 1_000_000}})
                };
                let body = json!({"epochs": [limit(15_000), limit(1_000)]});
                response(StatusCode::OK, &json_headers, body.to_string())
            }
            "/v2/fees/transaction" if req.body.starts_with(b"{") => {
                let body = json!({
                    "estimated_cost": {"read_count": 1, "read_length": 1, "runtime": 1,
                        "write_count": 0, "write_length": 0},
                    "estimated_cost_scalar": 14,
                    "cost_scalar_change_by_byte": 0.0,
                    "estimations": [
                        {"fee_rate": 1.2, "fee": 100},
                        {"fee_rate": 3.4, "fee": 1000},
                        {"fee_rate": 5.6, "fee": 10000}
                    ]
                });
                response(StatusCode::OK, &json_headers, body.to_string())
            }
            _ => response(StatusCode::BAD_REQUEST, &json_headers, r#"{"error":"bad body"}"#),
        }
    })
}

async fn estimate(proxy: std::net::SocketAddr) -> (Vec<u64>, Value) {
    let resp = client()
        .post(format!("http://{proxy}/v2/fees/transaction"))
        .json(&json!({"transaction_payload": "00".repeat(150), "estimated_len": 180}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let body: Value = resp.json().await.unwrap();
    let fees = body["estimations"].as_array().unwrap().iter().map(|e| e["fee"].as_u64().unwrap()).collect();
    (fees, body)
}

fn costs(current_blocks: u64, current_reads: f64, past_reads: f64) -> FeeMarketCosts {
    FeeMarketCosts {
        current_block_count: current_blocks,
        current: CostDimensions { read_count: current_reads, ..CostDimensions::default() },
        past_weighted_average: Some(CostDimensions { read_count: past_reads, ..CostDimensions::default() }),
    }
}

#[tokio::test]
async fn fee_rewrite_quotes_the_minimum_without_a_fee_market() {
    let (node, log) = fake_node(fee_node()).await;
    let mut cfg = config(node);
    cfg.min_fee_rewrite = Some(FeeRewriteConfig { estimation_modifier: 0.5, ..FeeRewriteConfig::default() });
    let hook = Arc::new(RecordingHook::default());
    let proxy = spawn_proxy(cfg, hook.clone()).await;

    // A quiet current tenure with enough blocks: everything at the minimum fee, max(180, 300/2).
    *hook.costs.lock().unwrap() = Some(costs(5, 10.0, 950.0));
    let (fees, body) = estimate(proxy).await;
    assert_eq!(fees, [180, 180, 180]);
    assert_eq!(body["estimations"][1]["fee_rate"], 3.4);
    assert_eq!(body["estimated_cost_scalar"], 14);

    // Busy now and busy before, measured against the node's latest epoch limit (read_count
    // 1000, so 950 is past the 0.9 threshold): a fee market, so scaled estimates, floored.
    *hook.costs.lock().unwrap() = Some(costs(5, 600.0, 950.0));
    let (fees, _) = estimate(proxy).await;
    assert_eq!(fees, [180, 500, 5000]);

    // The ledger cannot tell: keep the node's view (scaled), never guess "no market".
    *hook.costs.lock().unwrap() = None;
    let (fees, _) = estimate(proxy).await;
    assert_eq!(fees, [180, 500, 5000]);

    assert_eq!(*hook.cost_queries.lock().unwrap(), [5, 5, 5]);
    let pox_reads = log.lock().unwrap().iter().filter(|r| r.path_and_query == "/v2/pox").count();
    assert_eq!(pox_reads, 1, "block limits are read once");

    // Node errors are not rewritten.
    let resp = client()
        .post(format!("http://{proxy}/v2/fees/transaction"))
        .header("content-type", "application/json")
        .body("not json")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    assert_eq!(resp.text().await.unwrap(), r#"{"error":"bad body"}"#);
}

#[tokio::test]
async fn fee_estimates_pass_through_when_the_rewrite_is_off() {
    let (node, log) = fake_node(fee_node()).await;
    let hook = Arc::new(RecordingHook::default());
    *hook.costs.lock().unwrap() = Some(costs(5, 10.0, 10.0));
    let proxy = spawn_proxy(config(node), hook.clone()).await;
    let (fees, _) = estimate(proxy).await;
    assert_eq!(fees, [100, 1000, 10000]);
    assert!(hook.cost_queries.lock().unwrap().is_empty());
    assert_eq!(log.lock().unwrap().len(), 1, "no /v2/pox read");
}
