//! Test scaffolding: a fake stacks-node and a proxy, both on 127.0.0.1 with ephemeral ports.

#![allow(dead_code)] // each test binary uses a different subset

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::future::BoxFuture;
use stacks_node_proxy::{routes, BroadcastHook, BroadcastedTx, FeeMarketCosts, ProxyConfig, Url};
use tokio::net::TcpListener;
use warp::http::{HeaderMap, StatusCode};
use warp::reply::{Reply, Response};
use warp::Filter;

/// One request as the fake node saw it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path_and_query: String,
    pub headers: HeaderMap,
    pub body: Bytes,
}

pub type Log = Arc<Mutex<Vec<Recorded>>>;
pub type Handler = Arc<dyn Fn(&Recorded) -> Response + Send + Sync>;

/// Serves `filter` on an ephemeral loopback port for the rest of the test.
pub async fn serve<F>(filter: F) -> SocketAddr
where
    F: Filter + Clone + Send + Sync + 'static,
    F::Extract: Reply,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(warp::serve(filter).incoming(listener).run());
    addr
}

/// A node that records every request (body read in full) and answers with `handler`.
pub async fn fake_node(handler: Handler) -> (SocketAddr, Log) {
    let log: Log = Arc::default();
    let log2 = log.clone();
    let query = warp::query::raw().or(warp::any().map(String::new)).unify();
    let filter = warp::path::full()
        .and(warp::method())
        .and(query)
        .and(warp::header::headers_cloned())
        .and(warp::body::bytes())
        .map(move |path: warp::path::FullPath, method: warp::http::Method, query: String, headers, body| {
            let path_and_query = if query.is_empty() {
                path.as_str().to_string()
            } else {
                format!("{}?{}", path.as_str(), query)
            };
            let recorded = Recorded { method: method.to_string(), path_and_query, headers, body };
            let response = handler(&recorded);
            log2.lock().unwrap().push(recorded);
            response
        });
    (serve(filter).await, log)
}

/// A loopback port with nothing listening on it.
pub async fn dead_port() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    listener.local_addr().unwrap()
}

pub fn node_url(addr: SocketAddr) -> Url {
    Url::parse(&format!("http://{addr}")).unwrap()
}

/// Proxy config for `node` with short timeouts, so failure tests finish quickly.
pub fn config(node: SocketAddr) -> ProxyConfig {
    let mut config = ProxyConfig::new(node_url(node));
    config.connect_timeout = Duration::from_secs(2);
    config.request_timeout = Duration::from_secs(5);
    config
}

pub async fn spawn_proxy(config: ProxyConfig, hook: Arc<dyn BroadcastHook>) -> SocketAddr {
    serve(routes(Arc::new(config), hook)).await
}

/// The test's HTTP client; ignores any proxy the environment names.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

pub fn response(status: StatusCode, headers: &[(&str, &str)], body: impl Into<Bytes>) -> Response {
    let body: Bytes = body.into();
    let mut response = Response::new(body.into());
    *response.status_mut() = status;
    for (name, value) in headers {
        response
            .headers_mut()
            .append(warp::http::HeaderName::from_bytes(name.as_bytes()).unwrap(), value.parse().unwrap());
    }
    response
}

/// Polls `check` until it holds or `within` passes.
pub async fn eventually(within: Duration, mut check: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + within;
    loop {
        if check() {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A hook that records broadcasts and serves canned tenure costs.
#[derive(Default)]
pub struct RecordingHook {
    pub broadcasts: Mutex<Vec<BroadcastedTx>>,
    pub costs: Mutex<Option<FeeMarketCosts>>,
    pub cost_queries: Mutex<Vec<u32>>,
}

impl BroadcastHook for RecordingHook {
    fn on_broadcast(&self, tx: BroadcastedTx) -> BoxFuture<'_, ()> {
        self.broadcasts.lock().unwrap().push(tx);
        Box::pin(async {})
    }

    fn fee_market_costs(&self, window: u32) -> BoxFuture<'_, Option<FeeMarketCosts>> {
        self.cost_queries.lock().unwrap().push(window);
        let costs = *self.costs.lock().unwrap();
        Box::pin(async move { costs })
    }
}
