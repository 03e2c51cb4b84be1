//! The event-observer HTTP server a Stacks node POSTs its events to.
//!
//! Each event is handed to an [`EventSink`], and the node gets `200 {"result":"ok"}` only once
//! the sink has committed it (applied it, or with `STACKS_LEDGER_EVENT_ACK=logged` logged it
//! durably: `ingest::inbox`); any failure is a 500 and the node retries. Replies and status
//! codes follow the incumbent's event server: `GET /` is a status probe, unknown paths are 404
//! `{"error":"no route handler for <url>"}`, and a trailing slash on a path is ignored.

mod body;
mod error;

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::sync::Arc;

use serde::de::IgnoredAny;
use tokio::net::TcpListener;
use tokio_stream::Stream;
use tracing::Instrument;
use warp::filters::path::FullPath;
use warp::http::{header, HeaderMap, Method, StatusCode};
use warp::reply::{Reply, Response};
use warp::{Filter, Rejection};

pub use error::ObserverError;

use crate::config::BindAddr;
use crate::events::EventPath;
use crate::ingest::{EventSink, IncomingEvent, IngestOutcome};
use error::json_reply;

/// `GET /`'s message, as the incumbent words it.
pub const STATUS_MESSAGE: &str = "API event server listening for core-node POST messages";

/// Every request gets an answer from this filter: the routes, 404s and errors alike.
pub fn routes<S: EventSink>(
    sink: Arc<S>,
    body_limit: u64,
) -> impl Filter<Extract = (impl Reply,), Error = Infallible> + Clone {
    let raw_query = warp::query::raw().map(Some).or(warp::any().map(|| None)).unify();
    warp::method()
        .and(warp::path::full())
        .and(raw_query)
        .and(warp::header::headers_cloned())
        .and(warp::body::stream())
        .then(move |method: Method, path: FullPath, query: Option<String>, headers: HeaderMap, body| {
            let sink = sink.clone();
            async move {
                let url = match query {
                    Some(q) => format!("{}?{q}", path.as_str()),
                    None => path.as_str().to_owned(),
                };
                handle(sink, body_limit, &method, path.as_str(), url, &headers, body)
                    .await
                    .unwrap_or_else(ObserverError::into_response)
            }
        })
        .recover(|rejection: Rejection| async move {
            Ok::<_, Infallible>(ObserverError::Unhandled(format!("{rejection:?}")).into_response())
        })
}

async fn handle<S, St, B>(
    sink: Arc<S>,
    body_limit: u64,
    method: &Method,
    path: &str,
    url: String,
    headers: &HeaderMap,
    body: St,
) -> Result<Response, ObserverError>
where
    S: EventSink,
    St: Stream<Item = Result<B, warp::Error>>,
    B: bytes::Buf,
{
    if path == "/" && (method == Method::GET || method == Method::HEAD) {
        return Ok(json_reply(
            StatusCode::OK,
            &serde_json::json!({ "status": "ready", "msg": STATUS_MESSAGE }),
        ));
    }
    let event_path = match EventPath::from_path(path) {
        Some(p) if method == Method::POST => p,
        _ => return Err(ObserverError::NotFound { url }),
    };
    let content_length = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let payload = body::read_body(body, content_length, body_limit).await?;
    // A syntax check only: nothing is built, however large the body.
    serde_json::from_str::<IgnoredAny>(&payload).map_err(ObserverError::InvalidJson)?;

    let size = payload.len();
    let event = IncomingEvent { id: None, receive_timestamp: None, path: event_path, payload };
    // On its own task: a node that hangs up mid-request must not cancel a store transaction
    // halfway; once started, the ingest runs to its end.
    // One span per event: the store's logs for it carry its path and size.
    let span = tracing::info_span!("event", path = %event_path, bytes = size);
    let started = std::time::Instant::now();
    let outcome = tokio::spawn(async move { sink.ingest(event).await }.instrument(span))
        .await
        .map_err(|e| ObserverError::SinkAborted(e.to_string()))
        .and_then(|r| r.map_err(ObserverError::from));
    let label = match &outcome {
        Ok(IngestOutcome::Applied { .. }) => "applied",
        Ok(IngestOutcome::AlreadyStored { .. }) => "duplicate",
        Ok(IngestOutcome::Logged { .. }) => "logged",
        Err(_) => "failed",
    };
    crate::metrics::event(event_path.as_str(), label, started.elapsed());
    match outcome? {
        IngestOutcome::Applied { id }
        | IngestOutcome::AlreadyStored { id }
        | IngestOutcome::Logged { id } => {
            tracing::debug!(id, path = %event_path, bytes = size, "event stored");
        }
    }
    Ok(json_reply(StatusCode::OK, &serde_json::json!({ "result": "ok" })))
}

/// The listen queue every server socket asks of the kernel (which caps it at
/// `net.core.somaxconn`). Tokio's default, 1,024, overflowed when a thousand clients connected
/// at once while the API's threads were busy: the kernel dropped their handshakes and the
/// clients' first requests waited for its one-second SYN retransmission (the mixed-load
/// benchmark's p99 of over a second, with 2,281 listen-queue overflows counted by `nstat`).
pub const LISTEN_BACKLOG: u32 = 4096;

/// Opens a listening socket (the observer's, the API's, the metrics'; the host may be a
/// name), with [`LISTEN_BACKLOG`].
pub async fn bind(addr: &BindAddr) -> io::Result<TcpListener> {
    let mut last = None;
    for a in tokio::net::lookup_host((addr.host.as_str(), addr.port)).await? {
        match listen(a) {
            Ok(listener) => return Ok(listener),
            Err(e) => last = Some(e),
        }
    }
    Err(last
        .unwrap_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the host resolves to no address")))
}

/// A listening socket on `addr` with [`LISTEN_BACKLOG`].
pub fn listen(addr: std::net::SocketAddr) -> io::Result<TcpListener> {
    let socket =
        if addr.is_ipv4() { tokio::net::TcpSocket::new_v4()? } else { tokio::net::TcpSocket::new_v6()? };
    // As std's and tokio's `bind` do on Unix: a restarted server rebinds at once.
    #[cfg(unix)]
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(LISTEN_BACKLOG)
}

/// Serves the observer on `listener` until `shutdown` completes, then lets requests in flight
/// finish.
pub async fn run<S: EventSink>(
    listener: TcpListener,
    sink: Arc<S>,
    body_limit: u64,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    warp::serve(routes(sink, body_limit)).incoming(listener).graceful(shutdown).run().await;
}

#[cfg(test)]
mod tests;
