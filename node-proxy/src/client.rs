//! The one client of the Stacks node's RPC: `/v2/info`, `/v2/pox`, the transfer fee rate, an
//! account's nonce, broadcasting a transaction, and a bounded exchange of any request (the
//! proxy's buffered routes). Every call is bounded in time and in answer size, and fails with a
//! [`NodeError`] that says what happened; what that means to a caller (a Rosetta error code, a
//! faucet's 503, a proxy's 502) is the caller's to decide.
//!
//! Hand-written over reqwest: no maintained crate serves the Stacks node's RPC short of
//! stacks-core itself, whose client comes with the whole node.

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use futures_util::{Stream, StreamExt};
use reqwest::Url;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;
use warp::http::{header, HeaderMap, HeaderValue, Method, StatusCode};

use crate::config::{DEFAULT_BODY_LIMIT, DEFAULT_CONNECT_TIMEOUT, DEFAULT_REQUEST_TIMEOUT};

/// A client of one Stacks node (cheap to clone: the connection pool is shared).
#[derive(Debug, Clone)]
pub struct NodeClient {
    base: Url,
    http: reqwest::Client,
    timeout: Duration,
    answer_limit: usize,
}

/// Why a node call gave no usable answer.
#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    /// No answer: the connection failed, or the node closed it, or its body broke off.
    #[error("the node at {url} cannot be reached: {source}")]
    Unreachable { url: String, source: reqwest::Error },
    /// The call took longer than the client's bound.
    #[error("the node did not answer {url} within {after:?}")]
    Timeout { url: String, after: Duration },
    /// The answer was longer than the client's bound.
    #[error("the node's answer to {url} is larger than {limit} bytes")]
    TooLarge { url: String, limit: usize },
    /// The node answered with an error status.
    #[error("the node answered {url} with HTTP {status}: {body}")]
    Status { url: String, status: u16, body: String },
    /// A success status with a body that is not what the call returns.
    #[error("the node's answer to {url} is not what was asked for ({reason}): {body}")]
    BadAnswer { url: String, reason: String, body: String },
    /// `POST /v2/transactions` refused the transaction (a 4xx, with the node's reason when its
    /// body says one).
    #[error("the node rejected the transaction: {}", .0.reason().unwrap_or("no reason given"))]
    Rejected(Rejection),
}

impl NodeError {
    /// Whether the node gave no answer at all (unreachable or too slow).
    pub fn is_unanswered(&self) -> bool {
        matches!(self, NodeError::Unreachable { .. } | NodeError::Timeout { .. })
    }
}

/// A refused broadcast: the node's status and body.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejection {
    pub status: u16,
    pub body: String,
    /// The body parsed, when it is JSON.
    pub json: Option<Value>,
}

impl Rejection {
    /// The node's `reason` (`BadNonce`, `NotEnoughFunds`, `ConflictingNonceInMempool`, ...).
    pub fn reason(&self) -> Option<&str> {
        self.json.as_ref()?.get("reason")?.as_str()
    }

    /// The node's `reason_data`, when it gave one.
    pub fn reason_data(&self) -> Option<&Value> {
        self.json.as_ref()?.get("reason_data")
    }
}

/// `GET /v2/info`: the fields callers read (absent ones `None`).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct NodeInfo {
    /// The chain id transactions are signed for.
    pub network_id: Option<u32>,
    pub stacks_tip_height: Option<u64>,
    /// The tip's block hash, hex (with or without `0x`).
    pub stacks_tip: Option<String>,
}

/// `GET /v2/pox`: the fields callers read (absent ones `None` or empty).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct PoxInfo {
    /// The PoX contract (`SP000….pox-4`).
    pub contract_id: Option<String>,
    pub current_burnchain_block_height: Option<u64>,
    /// The minimum µSTX that can stack this cycle.
    pub min_amount_ustx: Option<u128>,
    #[serde(default)]
    pub epochs: Vec<PoxEpoch>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct PoxEpoch {
    pub block_limit: Option<BlockLimit>,
}

/// An epoch's per-block execution-cost limits.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub struct BlockLimit {
    pub read_count: f64,
    pub read_length: f64,
    pub write_count: f64,
    pub write_length: f64,
    pub runtime: f64,
}

/// A node answer read in full.
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Answer {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

impl NodeClient {
    /// A client of the node at `base` (`http://host:port`, a path kept as a prefix) with its own
    /// connections, bounded by the default connect and request timeouts.
    pub fn new(base: Url) -> NodeClient {
        NodeClient::with_timeouts(base, DEFAULT_CONNECT_TIMEOUT, DEFAULT_REQUEST_TIMEOUT)
    }

    /// [`NodeClient::new`] with the given bounds: on connecting, and on a whole call.
    pub fn with_timeouts(base: Url, connect: Duration, request: Duration) -> NodeClient {
        let http = reqwest::Client::builder()
            .connect_timeout(connect)
            // The node is addressed directly, whatever HTTP(S)_PROXY the process inherited.
            .no_proxy()
            .build()
            // Building fails only when the TLS backend cannot start; the default client then
            // fails each call the same way, as `Unreachable`.
            .unwrap_or_default();
        NodeClient::with_http(base, http).timeout(request)
    }

    /// A client over `http`'s connections (and its settings), bounded by the default request
    /// timeout.
    pub fn with_http(base: Url, http: reqwest::Client) -> NodeClient {
        NodeClient { base, http, timeout: DEFAULT_REQUEST_TIMEOUT, answer_limit: DEFAULT_BODY_LIMIT }
    }

    /// The bound on a whole call: sending, and reading the answer.
    pub fn timeout(mut self, timeout: Duration) -> NodeClient {
        self.timeout = timeout;
        self
    }

    /// The largest answer body read, in bytes.
    pub fn answer_limit(mut self, limit: usize) -> NodeClient {
        self.answer_limit = limit;
        self
    }

    pub fn base(&self) -> &Url {
        &self.base
    }

    /// The node URL of `path` (and `query`) under the base URL's path.
    pub fn url(&self, path: &str, query: Option<&str>) -> Url {
        let mut url = self.base.clone();
        let prefix = self.base.path().trim_end_matches('/');
        url.set_path(&format!("{prefix}{path}"));
        url.set_query(query);
        url
    }

    /// Sends one request to `url` and reads the whole answer, whatever its status.
    pub async fn exchange(
        &self,
        method: Method,
        url: Url,
        headers: HeaderMap,
        body: Option<Bytes>,
    ) -> Result<Answer, NodeError> {
        let label = url.to_string();
        let mut request = self.http.request(method, url).headers(headers);
        if let Some(body) = body {
            request = request.body(body);
        }
        let limit = self.answer_limit;
        let work = async {
            let unreachable = |source| NodeError::Unreachable { url: label.clone(), source };
            let response = request.send().await.map_err(unreachable)?;
            let (status, headers) = (response.status(), response.headers().clone());
            let body = collect_limited(response.bytes_stream(), limit).await.map_err(|e| match e {
                CollectError::TooLarge => NodeError::TooLarge { url: label.clone(), limit },
                CollectError::Stream(source) => unreachable(source),
            })?;
            Ok(Answer { status, headers, body })
        };
        match tokio::time::timeout(self.timeout, work).await {
            Ok(result) => result,
            Err(_) => Err(NodeError::Timeout { url: label.clone(), after: self.timeout }),
        }
    }

    /// `GET path`, a success status required, its body as `T`.
    async fn get_json<T: DeserializeOwned>(&self, path: &str, query: Option<&str>) -> Result<T, NodeError> {
        let url = self.url(path, query);
        let answer = self.exchange(Method::GET, url.clone(), HeaderMap::new(), None).await?;
        if !answer.status.is_success() {
            return Err(NodeError::Status {
                url: url.into(),
                status: answer.status.as_u16(),
                body: answer.text(),
            });
        }
        serde_json::from_slice(&answer.body).map_err(|e| NodeError::BadAnswer {
            url: url.into(),
            reason: e.to_string(),
            body: answer.text(),
        })
    }

    /// `GET /v2/info`.
    pub async fn info(&self) -> Result<NodeInfo, NodeError> {
        self.get_json("/v2/info", None).await
    }

    /// `GET /v2/pox`.
    pub async fn pox(&self) -> Result<PoxInfo, NodeError> {
        self.get_json("/v2/pox", None).await
    }

    /// `GET /v2/fees/transfer`: µSTX per byte of a transfer (a bare number).
    pub async fn transfer_fee_rate(&self) -> Result<u64, NodeError> {
        self.get_json("/v2/fees/transfer", None).await
    }

    /// The account's next nonce as the node sees it (`/v2/accounts/{principal}?proof=0`).
    pub async fn account_nonce(&self, principal: &str) -> Result<u64, NodeError> {
        #[derive(Deserialize)]
        struct Account {
            nonce: u64,
        }
        let path = format!("/v2/accounts/{principal}");
        Ok(self.get_json::<Account>(&path, Some("proof=0")).await?.nonce)
    }

    /// `POST /v2/transactions` of a serialized transaction: the txid the node answers with (a
    /// JSON string), or its refusal.
    pub async fn broadcast(&self, raw: Vec<u8>) -> Result<String, NodeError> {
        let url = self.url("/v2/transactions", None);
        let mut headers = HeaderMap::new();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/octet-stream"));
        let answer = self.exchange(Method::POST, url.clone(), headers, Some(raw.into())).await?;
        let json: Option<Value> = serde_json::from_slice(&answer.body).ok();
        if answer.status.is_success() {
            return match json {
                Some(Value::String(txid)) => Ok(txid),
                _ => Err(NodeError::BadAnswer {
                    url: url.into(),
                    reason: "not a txid".into(),
                    body: answer.text(),
                }),
            };
        }
        if answer.status.is_client_error() {
            return Err(NodeError::Rejected(Rejection {
                status: answer.status.as_u16(),
                body: answer.text(),
                json,
            }));
        }
        Err(NodeError::Status { url: url.into(), status: answer.status.as_u16(), body: answer.text() })
    }
}

pub(crate) enum CollectError<E> {
    TooLarge,
    Stream(E),
}

/// Concatenates a body stream, giving up as soon as it passes `limit` bytes.
pub(crate) async fn collect_limited<S, E>(stream: S, limit: usize) -> Result<Bytes, CollectError<E>>
where
    S: Stream<Item = Result<Bytes, E>>,
{
    let mut stream = std::pin::pin!(stream);
    let mut out = BytesMut::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(CollectError::Stream)?;
        if out.len() + chunk.len() > limit {
            return Err(CollectError::TooLarge);
        }
        out.extend_from_slice(&chunk);
    }
    Ok(out.freeze())
}

#[cfg(test)]
mod tests {
    use std::net::SocketAddr;

    use serde_json::json;
    use warp::Filter;

    use super::*;

    /// A node on a local port: `/v2/info`, `/v2/pox`, `/v2/fees/transfer` and an account
    /// answer; a broadcast of `[1]` is accepted, `[2]` refused (400), anything else a 500;
    /// `/v2/slow` never answers in time.
    async fn node() -> Url {
        let info = warp::path!("v2" / "info").map(|| {
            warp::reply::json(
                &json!({"network_id": 0x8000_0000u32, "stacks_tip_height": 7, "stacks_tip": "0xab"}),
            )
        });
        let pox = warp::path!("v2" / "pox").map(|| {
            warp::reply::json(&json!({
                "contract_id": "ST000000000000000000002AMW42H.pox-4",
                "current_burnchain_block_height": 120,
                "min_amount_ustx": 125_000_000_000u64,
                "epochs": [{"block_limit": null}, {"block_limit": {"read_count": 1.0, "read_length": 2.0, "write_count": 3.0, "write_length": 4.0, "runtime": 5.0}}],
            }))
        });
        let fee = warp::path!("v2" / "fees" / "transfer").map(|| warp::reply::json(&json!(3)));
        let account =
            warp::path!("v2" / "accounts" / String).and(warp::query::raw()).map(|_: String, q: String| {
                warp::reply::json(&json!({"nonce": if q == "proof=0" { 5 } else { 0 }}))
            });
        let broadcast = warp::path!("v2" / "transactions").and(warp::body::bytes()).map(|body: Bytes| {
            use warp::reply::with_status;
            match body.as_ref() {
                [1] => with_status(warp::reply::json(&json!("0x01ab")), StatusCode::OK),
                [2] => with_status(
                    warp::reply::json(&json!({"error": "transaction rejected", "reason": "BadNonce", "reason_data": {"expected": 3}})),
                    StatusCode::BAD_REQUEST,
                ),
                _ => with_status(warp::reply::json(&json!("boom")), StatusCode::INTERNAL_SERVER_ERROR),
            }
        });
        let slow = warp::path!("v2" / "slow").then(|| async {
            tokio::time::sleep(Duration::from_secs(5)).await;
            "late"
        });
        let missing = warp::any().map(|| warp::reply::with_status("no such route", StatusCode::NOT_FOUND));
        let routes = info.or(pox).or(fee).or(account).or(broadcast).or(slow).or(missing);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(warp::serve(routes).incoming(listener).run());
        Url::parse(&format!("http://{addr}/")).unwrap()
    }

    /// A port nothing listens on.
    fn closed_port() -> Url {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr: SocketAddr = listener.local_addr().unwrap();
        drop(listener);
        Url::parse(&format!("http://{addr}")).unwrap()
    }

    #[tokio::test]
    async fn reads_the_nodes_answers() {
        let client = NodeClient::new(node().await);
        let info = client.info().await.unwrap();
        assert_eq!((info.network_id, info.stacks_tip_height), (Some(0x8000_0000), Some(7)));
        assert_eq!(info.stacks_tip.as_deref(), Some("0xab"));
        let pox = client.pox().await.unwrap();
        assert_eq!(pox.contract_id.as_deref(), Some("ST000000000000000000002AMW42H.pox-4"));
        assert_eq!(
            (pox.current_burnchain_block_height, pox.min_amount_ustx),
            (Some(120), Some(125_000_000_000))
        );
        assert_eq!(pox.epochs.last().and_then(|e| e.block_limit).map(|l| l.runtime), Some(5.0));
        assert_eq!(client.transfer_fee_rate().await.unwrap(), 3);
        assert_eq!(client.account_nonce("ST1").await.unwrap(), 5);
        assert_eq!(client.broadcast(vec![1]).await.unwrap(), "0x01ab");
    }

    #[tokio::test]
    async fn a_node_error_status_is_typed() {
        let base = node().await;
        let client = NodeClient::new(base.clone());
        match client.broadcast(vec![2]).await {
            Err(NodeError::Rejected(r)) => {
                assert_eq!((r.status, r.reason()), (400, Some("BadNonce")));
                assert_eq!(r.reason_data(), Some(&json!({"expected": 3})));
            }
            other => panic!("{other:?}"),
        }
        match client.broadcast(vec![9]).await {
            Err(NodeError::Status { status: 500, body, .. }) => assert_eq!(body, "\"boom\""),
            other => panic!("{other:?}"),
        }
        // A base path is kept as a prefix: nothing answers under it here.
        let prefixed = NodeClient::new(base.join("rpc/").unwrap());
        match prefixed.info().await {
            Err(NodeError::Status { status: 404, url, body }) => {
                assert!(url.ends_with("/rpc/v2/info"), "{url}");
                assert_eq!(body, "no such route");
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn an_unanswered_call_is_typed() {
        let client = NodeClient::new(closed_port());
        let err = client.info().await.unwrap_err();
        assert!(matches!(err, NodeError::Unreachable { .. }) && err.is_unanswered(), "{err:?}");
        assert!(matches!(client.broadcast(vec![1]).await, Err(NodeError::Unreachable { .. })));

        let slow = NodeClient::new(node().await).timeout(Duration::from_millis(200));
        let url = slow.url("/v2/slow", None);
        match slow.exchange(Method::GET, url, HeaderMap::new(), None).await {
            Err(e @ NodeError::Timeout { .. }) => assert!(e.is_unanswered()),
            other => panic!("{other:?}"),
        }
        let small = NodeClient::new(node().await).answer_limit(4);
        assert!(matches!(small.info().await, Err(NodeError::TooLarge { limit: 4, .. })));
    }

    #[tokio::test]
    async fn collect_limited_stops_at_the_limit() {
        let chunks = || {
            futures_util::stream::iter(vec![
                Ok::<_, std::io::Error>(Bytes::from_static(b"abc")),
                Ok(Bytes::from_static(b"def")),
            ])
        };
        assert_eq!(collect_limited(chunks(), 6).await.ok().unwrap(), Bytes::from_static(b"abcdef"));
        assert!(matches!(collect_limited(chunks(), 5).await, Err(CollectError::TooLarge)));
    }
}
