use std::sync::Arc;

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::*;
use crate::ingest::memory::{FailKind, MemorySink};

const LIMIT: u64 = 64 * 1024 * 1024;

fn setup() -> (Arc<MemorySink>, impl Filter<Extract = (impl Reply,), Error = Infallible> + Clone + 'static) {
    let sink = Arc::new(MemorySink::new());
    let filter = routes(sink.clone(), LIMIT);
    (sink, filter)
}

async fn send<F, R>(filter: &F, method: &str, path: &str, body: impl AsRef<[u8]>) -> (StatusCode, Value)
where
    F: Filter<Extract = (R,), Error = Infallible> + 'static,
    R: Reply + Send,
{
    let res = warp::test::request().method(method).path(path).body(body).reply(filter).await;
    let json = serde_json::from_slice(res.body()).unwrap_or_else(|e| panic!("{e}: {:?}", res.body()));
    (res.status(), json)
}

async fn post<F, R>(filter: &F, path: &str, body: impl AsRef<[u8]>) -> (StatusCode, Value)
where
    F: Filter<Extract = (R,), Error = Infallible> + 'static,
    R: Reply + Send,
{
    send(filter, "POST", path, body).await
}

#[tokio::test]
async fn every_event_path_is_stored_and_acknowledged() {
    let (sink, filter) = setup();
    for (i, path) in EventPath::ALL.iter().enumerate() {
        let body = format!("{{\"n\": {i}}}");
        assert_eq!(
            post(&filter, path.as_str(), &body).await,
            (StatusCode::OK, json!({"result": "ok"})),
            "{path}"
        );
        // A trailing slash is the same route.
        assert_eq!(post(&filter, &format!("{path}/"), "[]").await.0, StatusCode::OK, "{path}/");
    }
    let events = sink.events();
    assert_eq!(events.len(), 2 * EventPath::ALL.len());
    for (i, path) in EventPath::ALL.iter().enumerate() {
        assert_eq!(events[2 * i].path, path.as_str());
        assert_eq!(events[2 * i].payload, format!("{{\"n\": {i}}}"), "the body is kept byte for byte");
        assert_eq!(events[2 * i + 1].path, path.as_str(), "stored under the canonical path");
    }
}

#[tokio::test]
async fn status_probe() {
    let (sink, filter) = setup();
    let expected =
        json!({"status": "ready", "msg": "API event server listening for core-node POST messages"});
    assert_eq!(send(&filter, "GET", "/", "").await, (StatusCode::OK, expected));
    let res = warp::test::request().method("HEAD").path("/").reply(&filter).await;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(sink.event_count(), 0);
}

#[tokio::test]
async fn unknown_paths_and_methods_are_404_with_the_url() {
    let (sink, filter) = setup();
    let cases = [
        ("POST", "/new_blocks", "/new_blocks"),
        ("POST", "/nope?x=1&y=2", "/nope?x=1&y=2"),
        ("GET", "/new_block", "/new_block"),
        ("PUT", "/new_burn_block", "/new_burn_block"),
        ("POST", "/", "/"),
        ("POST", "/new_block//", "/new_block//"),
    ];
    for (method, path, url) in cases {
        let (status, body) = send(&filter, method, path, "{}").await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{method} {path}");
        assert_eq!(body, json!({"error": format!("no route handler for {url}")}));
    }
    assert_eq!(sink.event_count(), 0);
}

#[tokio::test]
async fn malformed_bodies_are_400_and_store_nothing() {
    let (sink, filter) = setup();
    let (status, body) = post(&filter, "/new_block", "{\"a\": ").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["error"], "request body is not valid JSON: EOF while parsing a value at line 1 column 6");
    let (status, body) = post(&filter, "/new_block", "").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body["error"].as_str().unwrap().starts_with("request body is not valid JSON: EOF"), "{body}");
    let (status, body) = post(&filter, "/new_mempool_tx", b"[\"\xff\"]").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        body["error"],
        "request body is not valid UTF-8: invalid utf-8 sequence of 1 bytes from index 2"
    );
    assert_eq!(sink.event_count(), 0);
}

#[tokio::test]
async fn sink_failures_are_500_with_the_error_chain_and_store_nothing() {
    let (sink, filter) = setup();
    post(&filter, "/new_burn_block", "{}").await;
    let before = sink.events();
    let cases = [
        (FailKind::Invalid, "invalid /new_block payload: simulated invalid payload"),
        (FailKind::Rejected, "cannot apply /new_block: simulated unknown parent block"),
        (FailKind::Store, "store error: simulated store failure"),
    ];
    for (kind, message) in cases {
        sink.fail_with(kind);
        let (status, body) = post(&filter, "/new_block", "{}").await;
        assert_eq!((status, body), (StatusCode::INTERNAL_SERVER_ERROR, json!({ "error": message })));
        assert_eq!(sink.events(), before, "{kind:?}");
    }
    sink.heal();
    assert_eq!(post(&filter, "/new_block", "{}").await.0, StatusCode::OK);
    assert_eq!(sink.event_count(), 2);
}

#[tokio::test]
async fn bodies_over_the_limit_are_413() {
    let sink = Arc::new(MemorySink::new());
    let filter = routes(sink.clone(), 10);
    assert_eq!(post(&filter, "/new_block", "[1,2,3,4]").await.0, StatusCode::OK, "9 bytes fit");
    let (status, body) = post(&filter, "/new_block", "[1,2,3,4,5]").await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(body, json!({"error": "request body is larger than the limit of 10 bytes"}));
    // A Content-Length that understates the body does not get it past the limit.
    let res = warp::test::request()
        .method("POST")
        .path("/new_block")
        .body("[1,2,3,4,5,6,7]")
        .header("content-length", "3")
        .reply(&filter)
        .await;
    assert_eq!(res.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(sink.event_count(), 1);
}

#[tokio::test]
async fn a_50_mb_body_is_stored_intact() {
    let (sink, filter) = setup();
    let filler = "x".repeat(50 * 1024 * 1024);
    let body = format!("{{\"filler\":\"{filler}\"}}");
    drop(filler);
    assert_eq!(post(&filter, "/new_block", &body).await.0, StatusCode::OK);
    let events = sink.events();
    assert_eq!(events.len(), 1);
    assert!(events[0].payload == body, "payload differs");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_posts_are_all_recorded() {
    let (sink, filter) = setup();
    let posts = (0..64).map(|i| {
        let filter = filter.clone();
        tokio::spawn(async move { post(&filter, "/new_mempool_tx", format!("[\"0x{i:02x}\"]")).await })
    });
    for p in posts.collect::<Vec<_>>() {
        assert_eq!(p.await.unwrap().0, StatusCode::OK);
    }
    let events = sink.events();
    assert_eq!(events.len(), 64);
    let mut payloads: Vec<_> = events.iter().map(|e| e.payload.clone()).collect();
    payloads.sort();
    assert_eq!(payloads, (0..64).map(|i| format!("[\"0x{i:02x}\"]")).collect::<Vec<_>>());
    let ids: Vec<_> = events.iter().map(|e| e.id).collect();
    assert_eq!(ids, (1..=64).collect::<Vec<_>>());
}

/// The real server on a loopback port: a POST over TCP, then a graceful shutdown.
#[tokio::test]
async fn serves_over_tcp_and_shuts_down_gracefully() {
    let sink = Arc::new(MemorySink::new());
    let listener = bind(&BindAddr { host: "127.0.0.1".into(), port: 0 }).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(run(listener, sink.clone(), LIMIT, async {
        let _ = stopped.await;
    }));

    let body = r#"{"burn_block_hash":"0x01"}"#;
    let request = format!(
        "POST /new_burn_block HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    assert!(response.starts_with("HTTP/1.1 200 OK\r\n"), "{response}");
    assert!(response.ends_with(r#"{"result":"ok"}"#), "{response}");
    assert_eq!(sink.events()[0].payload, body);

    stop.send(()).unwrap();
    tokio::time::timeout(std::time::Duration::from_secs(10), server).await.unwrap().unwrap();
    assert!(tokio::net::TcpStream::connect(addr).await.is_err(), "the listener is closed");
}
