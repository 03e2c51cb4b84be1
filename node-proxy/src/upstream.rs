//! The stacks-node as the proxy talks to it: the HTTP client and its bounds, the request as
//! received, and the two ways a request travels: streamed (the default: bodies flow through
//! chunk by chunk, whatever their size) and buffered (the few routes whose bodies the proxy
//! must read: broadcasts and the fee rewrite, sent through the [`NodeClient`]). A leaf: the
//! routes (`proxy`, `broadcast`, `fees`) build on it and not on each other.

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::Stream;
use reqwest::Url;
use warp::http::{header, HeaderMap, Method};
use warp::reply::{Reply, Response};

use crate::client::{collect_limited, Answer, CollectError, NodeClient};
use crate::config::ProxyConfig;
use crate::error::ProxyError;
use crate::headers;
use crate::hook::BroadcastHook;

/// A client request body as warp delivers it, chunk by chunk.
pub(crate) type BodyStream = Pin<Box<dyn Stream<Item = Result<Bytes, warp::Error>> + Send>>;

/// One `/v2/*` request as received.
pub(crate) struct Incoming {
    pub method: Method,
    pub path: String,
    pub query: Option<String>,
    pub headers: HeaderMap,
    pub remote: Option<SocketAddr>,
    pub body: BodyStream,
}

/// A node answer read in full (buffered routes only), as the client gives it back.
pub(crate) fn into_response(answer: Answer) -> Response {
    let mut response = Response::new(answer.body.into());
    *response.status_mut() = answer.status;
    *response.headers_mut() = headers::from_node(&answer.headers);
    response
}

/// The node client and what every route needs to reach the node.
pub(crate) struct Upstream {
    pub config: Arc<ProxyConfig>,
    pub hooks: Arc<dyn BroadcastHook>,
    /// The streamed routes' client (and the connections the node client shares).
    pub client: reqwest::Client,
    /// The buffered routes' client: the whole exchange bounded by the request timeout, the
    /// answer by `body_limit`.
    pub node: NodeClient,
}

impl Upstream {
    pub fn new(config: Arc<ProxyConfig>, hooks: Arc<dyn BroadcastHook>) -> Result<Self, ProxyError> {
        let client = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            // Per-read bound: catches a node that stalls mid-stream without capping how long a
            // healthy stream may run.
            .read_timeout(config.request_timeout)
            // Redirects are the client's business: relay them, never follow them.
            .redirect(reqwest::redirect::Policy::none())
            // The node is addressed directly, whatever HTTP(S)_PROXY the process inherited.
            // (Bodies are never decompressed: reqwest is built without its gzip features, so a
            // node's Content-Encoding reaches the client untouched.)
            .no_proxy()
            .build()
            .map_err(|e| ProxyError::Internal(format!("HTTP client: {e}")))?;
        let node = NodeClient::with_http(config.node.clone(), client.clone())
            .timeout(config.request_timeout)
            .answer_limit(config.body_limit);
        Ok(Upstream { config, hooks, client, node })
    }

    /// The node URL for a request path: the node's base path, then the request path and query
    /// as received. Dot segments are resolved by URL parsing, so a path that would climb out of
    /// `/v2` (`/v2/../v3/...`) is refused rather than sent to another part of the node.
    pub fn target(&self, path: &str, query: Option<&str>) -> Result<Url, ProxyError> {
        let base = self.config.node.path().trim_end_matches('/');
        let url = self.node.url(path, query);
        let rest = url.path().strip_prefix(base).unwrap_or("");
        if rest == "/v2" || rest.starts_with("/v2/") {
            Ok(url)
        } else {
            Err(ProxyError::BadRequest(format!("path {path:?} leaves /v2 after normalisation")))
        }
    }

    /// Maps a client error from talking to the node.
    pub fn node_error(&self, err: reqwest::Error) -> ProxyError {
        ProxyError::from_node(err, self.config.connect_timeout, self.config.request_timeout)
    }

    /// Sends `request` and waits for the response head, within the request timeout.
    async fn send(&self, request: reqwest::RequestBuilder) -> Result<reqwest::Response, ProxyError> {
        let timeout = self.config.request_timeout;
        match tokio::time::timeout(timeout, request.send()).await {
            Ok(result) => result.map_err(|e| self.node_error(e)),
            Err(_) => Err(ProxyError::NodeTimeout(timeout)),
        }
    }

    /// Sends a request to `url` and reads the whole answer (at most `body_limit` bytes), all
    /// within the request timeout.
    pub async fn exchange(
        &self,
        method: Method,
        url: Url,
        headers: HeaderMap,
        body: Bytes,
    ) -> Result<Answer, ProxyError> {
        self.node.exchange(method, url, headers, Some(body)).await.map_err(|e| self.client_error(e))
    }

    /// Maps a node client's error (the buffered routes').
    pub fn client_error(&self, err: crate::client::NodeError) -> ProxyError {
        use crate::client::NodeError;
        match err {
            NodeError::Unreachable { source, .. } => self.node_error(source),
            NodeError::Timeout { after, .. } => ProxyError::NodeTimeout(after),
            NodeError::TooLarge { limit, .. } => {
                ProxyError::BadNodeResponse(format!("answer larger than {limit} bytes"))
            }
            other => ProxyError::BadNodeResponse(other.to_string()),
        }
    }

    /// Reads a client body that the proxy must see in full, refusing more than `body_limit`.
    pub async fn buffer_request_body(
        &self,
        headers: &HeaderMap,
        body: BodyStream,
    ) -> Result<Bytes, ProxyError> {
        let limit = self.config.body_limit;
        if declared_length(headers).is_some_and(|n| n > limit as u64) {
            return Err(ProxyError::PayloadTooLarge { limit });
        }
        collect_limited(body, limit).await.map_err(|e| match e {
            CollectError::TooLarge => ProxyError::PayloadTooLarge { limit },
            CollectError::Stream(e) => ProxyError::BadRequest(format!("request body: {e}")),
        })
    }

    /// `call-read`: the (small) body is buffered so the hook can check it, then sent; the answer
    /// is streamed back like any other.
    pub async fn forward_checked(&self, req: Incoming) -> Result<Response, ProxyError> {
        let url = self.target(&req.path, req.query.as_deref())?;
        let body = self.buffer_request_body(&req.headers, req.body).await?;
        if let Some(refusal) = self.hooks.check_call_read(&req.path, &body) {
            return Ok(refusal);
        }
        let headers = headers::to_node(&req.headers, req.remote);
        let response = self.send(self.client.request(req.method, url).headers(headers).body(body)).await?;
        Ok(relay_stream(response))
    }

    /// The default path: request body streamed up, response body streamed down.
    pub async fn forward_streaming(&self, req: Incoming) -> Result<Response, ProxyError> {
        let url = self.target(&req.path, req.query.as_deref())?;
        let mut headers = headers::to_node(&req.headers, req.remote);
        let body = match declared_length(&req.headers) {
            Some(0) => None,
            Some(length) => {
                // Keep the client's framing: with Content-Length set, the HTTP client sends the
                // stream as a sized body instead of chunking it.
                headers.insert(header::CONTENT_LENGTH, length.into());
                Some(reqwest::Body::wrap_stream(req.body))
            }
            None if req.headers.contains_key(header::TRANSFER_ENCODING) => {
                // A chunked upload is buffered (bounded) so the node gets a Content-Length:
                // stacks-node sizes request bodies from it, and the incumbent (which parses
                // bodies before proxying) always sent one.
                Some(reqwest::Body::from(self.buffer_request_body(&req.headers, req.body).await?))
            }
            None => None,
        };
        let mut request = self.client.request(req.method, url).headers(headers);
        if let Some(body) = body {
            request = request.body(body);
        }
        let response = self.send(request).await?;
        Ok(relay_stream(response))
    }
}

/// Turns a node response into a reply whose body is pulled from the node only as fast as the
/// client reads it: hyper polls the stream when it can write, so at most a chunk or two is held.
fn relay_stream(response: reqwest::Response) -> Response {
    let status = response.status();
    let headers = headers::from_node(response.headers());
    let mut reply = warp::reply::stream(response.bytes_stream()).into_response();
    *reply.status_mut() = status;
    *reply.headers_mut() = headers;
    reply
}

fn declared_length(headers: &HeaderMap) -> Option<u64> {
    headers.get(header::CONTENT_LENGTH)?.to_str().ok()?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hook::NoopHook;

    fn upstream(node: &str) -> Upstream {
        let config = ProxyConfig::new(Url::parse(node).unwrap());
        Upstream::new(Arc::new(config), Arc::new(NoopHook)).unwrap()
    }

    #[test]
    fn target_urls() {
        let p = upstream("http://127.0.0.1:20443");
        assert_eq!(p.target("/v2/info", None).unwrap().as_str(), "http://127.0.0.1:20443/v2/info");
        assert_eq!(
            p.target("/v2/accounts/SP1", Some("proof=0&tip=latest")).unwrap().as_str(),
            "http://127.0.0.1:20443/v2/accounts/SP1?proof=0&tip=latest"
        );
        assert!(p.target("/v2/../v3/blocks", None).is_err());
        assert!(p.target("/v2/%2e%2e/v3", None).is_err());
        assert!(p.target("/v2", None).is_ok());

        let mut config = ProxyConfig::new(Url::parse("https://node.example/rpc").unwrap());
        config.node.set_path("/rpc");
        let p = Upstream::new(Arc::new(config), Arc::new(NoopHook)).unwrap();
        assert_eq!(p.target("/v2/pox", None).unwrap().as_str(), "https://node.example/rpc/v2/pox");
        assert!(p.target("/v2/..", None).is_err());
    }
}
