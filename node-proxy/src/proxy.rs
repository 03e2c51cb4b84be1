//! The warp filter: one `/v2/*` request in, dispatched by route to the broadcast relay, the fee
//! rewrite or the node ([`Upstream`]), one response out.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use bytes::Buf;
use futures_util::{Stream, TryStreamExt};
use warp::http::{HeaderMap, Method};
use warp::path::FullPath;
use warp::reply::{Reply, Response};
use warp::{Filter, Rejection};

use crate::config::ProxyConfig;
use crate::error::ProxyError;
use crate::fees::BlockLimitsCache;
use crate::hook::BroadcastHook;
use crate::upstream::{BodyStream, Incoming, Upstream};
use crate::{broadcast, fees};

/// Shared state behind the filter.
struct Proxy {
    upstream: Upstream,
    block_limits: BlockLimitsCache,
}

/// The `/v2/*` proxy as a warp filter: matches `/v2` and everything below it, any method.
///
/// Mount it after the root's own `/v2` answers and after no filter that consumes the request body
/// (it takes the body as a stream).
///
/// # Panics
///
/// If the HTTP client cannot be built, which only happens when the TLS backend fails to
/// initialise; [`try_routes`] reports that as an error instead.
pub fn routes(
    config: Arc<ProxyConfig>,
    hooks: Arc<dyn BroadcastHook>,
) -> impl Filter<Extract = (impl Reply,), Error = Rejection> + Clone {
    match try_routes(config, hooks) {
        Ok(filter) => filter,
        Err(err) => panic!("cannot start the /v2 node proxy: {err}"),
    }
}

/// [`routes`], reporting an HTTP client that cannot be built instead of panicking.
pub fn try_routes(
    config: Arc<ProxyConfig>,
    hooks: Arc<dyn BroadcastHook>,
) -> Result<impl Filter<Extract = (impl Reply,), Error = Rejection> + Clone, ProxyError> {
    let proxy = Arc::new(Proxy {
        upstream: Upstream::new(config, hooks)?,
        block_limits: BlockLimitsCache::default(),
    });
    tracing::info!(node = %proxy.upstream.config.node, extra_broadcast = proxy.upstream.config.extra_broadcast.len(), "proxying /v2 to the Stacks node");

    let query = warp::query::raw().map(Some).or(warp::any().map(|| None)).unify();
    let body = warp::body::stream().map(boxed_body);
    let filter = warp::path("v2")
        .and(warp::path::full())
        .and(warp::method())
        .and(query)
        .and(warp::header::headers_cloned())
        .and(warp::addr::remote())
        .and(body)
        .and(warp::any().map(move || proxy.clone()))
        .then(
            |path: FullPath,
             method: Method,
             query: Option<String>,
             headers: HeaderMap,
             remote: Option<SocketAddr>,
             body: BodyStream,
             proxy: Arc<Proxy>| async move {
                let incoming =
                    Incoming { method, path: path.as_str().to_string(), query, headers, remote, body };
                proxy.handle(incoming).await
            },
        );
    Ok(filter)
}

impl Proxy {
    async fn handle(&self, req: Incoming) -> Response {
        let started = Instant::now();
        let method = req.method.clone();
        let path = req.path.clone();
        let result = if method == Method::POST && path == "/v2/transactions" {
            broadcast::handle(&self.upstream, req).await
        } else if method == Method::POST && path == "/v2/fees/transaction" {
            match &self.upstream.config.min_fee_rewrite {
                Some(fee_config) => fees::handle(&self.upstream, &self.block_limits, fee_config, req).await,
                None => self.upstream.forward_streaming(req).await,
            }
        } else if method == Method::POST && path.starts_with("/v2/contracts/call-read/") {
            self.upstream.forward_checked(req).await
        } else {
            self.upstream.forward_streaming(req).await
        };
        match result {
            Ok(response) => {
                tracing::debug!(%method, %path, status = response.status().as_u16(), elapsed_ms = started.elapsed().as_millis() as u64, "proxied");
                response
            }
            Err(err) => {
                tracing::warn!(%method, %path, status = err.status().as_u16(), error = %err, "proxy failure");
                err.into_response()
            }
        }
    }
}

/// Erases warp's unnameable body stream type (and its `Buf` chunks) into [`BodyStream`].
fn boxed_body<S, B>(stream: S) -> BodyStream
where
    S: Stream<Item = Result<B, warp::Error>> + Send + 'static,
    B: Buf,
{
    Box::pin(stream.map_ok(|mut buf| buf.copy_to_bytes(buf.remaining())))
}
