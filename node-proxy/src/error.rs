//! The proxy's own failures and their one mapping to HTTP. Answers the node gives (including its
//! 4xx/5xx) are not errors here: they are relayed as they are.

use std::error::Error as _;
use std::time::Duration;

use serde_json::json;
use warp::http::{header, HeaderValue, StatusCode};
use warp::reply::Response;

/// Why the proxy could not relay a request.
#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    /// No connection to the node (refused, DNS failure, TLS failure, ...).
    #[error("the Stacks node is unreachable: {0}")]
    NodeUnreachable(String),
    /// The node accepted the connection but closed it without answering; a stacks-node at its
    /// connection limit does this, so the client is told to retry later.
    #[error("the Stacks node closed the connection without answering: {0}")]
    NodeRefused(String),
    /// Connecting or answering took longer than the configured bound.
    #[error("the Stacks node did not answer within {0:?}")]
    NodeTimeout(Duration),
    /// The node answered something unusable (a broken or oversized body on a buffered route).
    #[error("the Stacks node's answer could not be relayed: {0}")]
    BadNodeResponse(String),
    /// A buffered request body went over `body_limit`.
    #[error("request body exceeds the {limit} byte limit")]
    PayloadTooLarge { limit: usize },
    /// The client's request could not be read or relayed as sent.
    #[error("bad request: {0}")]
    BadRequest(String),
    /// The proxy itself failed (e.g. its HTTP client could not be built).
    #[error("proxy failure: {0}")]
    Internal(String),
}

impl ProxyError {
    /// Sorts a client error from talking to the node into the statuses a gateway owes its
    /// caller: 504 for timeouts, 502 for no connection, 503 for a connection the node dropped
    /// unanswered.
    pub(crate) fn from_node(
        err: reqwest::Error,
        connect_timeout: Duration,
        request_timeout: Duration,
    ) -> Self {
        let detail = error_chain(&err);
        if err.is_timeout() {
            // reqwest flags a connect-phase timeout as both `connect` and `timeout`.
            let bound = if err.is_connect() { connect_timeout } else { request_timeout };
            ProxyError::NodeTimeout(bound)
        } else if err.is_connect() {
            ProxyError::NodeUnreachable(detail)
        } else if closed_without_answer(&err) {
            ProxyError::NodeRefused(detail)
        } else if err.is_body() || err.is_decode() {
            ProxyError::BadNodeResponse(detail)
        } else {
            ProxyError::NodeUnreachable(detail)
        }
    }

    pub fn status(&self) -> StatusCode {
        match self {
            ProxyError::NodeUnreachable(_) | ProxyError::BadNodeResponse(_) => StatusCode::BAD_GATEWAY,
            ProxyError::NodeRefused(_) => StatusCode::SERVICE_UNAVAILABLE,
            ProxyError::NodeTimeout(_) => StatusCode::GATEWAY_TIMEOUT,
            ProxyError::PayloadTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            ProxyError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ProxyError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The JSON reply: `{"error": "<status reason>", "message": "<what happened>"}`, the shape
    /// the incumbent's Fastify errors have (minus `statusCode`, which the status line carries).
    pub fn into_response(self) -> Response {
        let status = self.status();
        let body = json!({
            "error": status.canonical_reason().unwrap_or("Error"),
            "message": self.to_string(),
        });
        let mut response = Response::new(body.to_string().into());
        *response.status_mut() = status;
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        if status == StatusCode::SERVICE_UNAVAILABLE {
            headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        response
    }
}

/// reqwest's Display stops at its own layer; the cause that matters (refused, reset, ...) sits
/// further down the chain.
fn error_chain(err: &reqwest::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

fn closed_without_answer(err: &reqwest::Error) -> bool {
    let mut source = err.source();
    while let Some(cause) = source {
        if let Some(hyper_err) = cause.downcast_ref::<warp::hyper::Error>() {
            if hyper_err.is_incomplete_message() || hyper_err.is_closed() {
                return true;
            }
        }
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind::*;
            if matches!(io.kind(), ConnectionReset | ConnectionAborted | BrokenPipe | UnexpectedEof) {
                return true;
            }
        }
        source = cause.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses() {
        let cases = [
            (ProxyError::NodeUnreachable("x".into()), 502),
            (ProxyError::BadNodeResponse("x".into()), 502),
            (ProxyError::NodeRefused("x".into()), 503),
            (ProxyError::NodeTimeout(Duration::from_secs(1)), 504),
            (ProxyError::PayloadTooLarge { limit: 1 }, 413),
            (ProxyError::BadRequest("x".into()), 400),
            (ProxyError::Internal("x".into()), 500),
        ];
        for (err, status) in cases {
            assert_eq!(err.status().as_u16(), status, "{err}");
        }
    }

    #[test]
    fn json_body_and_retry_after() {
        let response = ProxyError::NodeRefused("reset".into()).into_response();
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(response.headers()[header::RETRY_AFTER], "1");
        assert_eq!(response.headers()[header::CONTENT_TYPE], "application/json");
    }
}
