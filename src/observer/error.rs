//! Everything that can go wrong with an event request, and the one mapping to HTTP replies.

use std::str::Utf8Error;

use thiserror::Error;
use warp::http::StatusCode;
use warp::reply::{Reply, Response};

use crate::ingest::{error_chain, IngestError};

#[derive(Debug, Error)]
pub enum ObserverError {
    #[error("no route handler for {url}")]
    NotFound { url: String },
    #[error("request body is larger than the limit of {limit} bytes")]
    PayloadTooLarge { limit: u64 },
    #[error("cannot read the request body")]
    BodyRead(#[source] warp::Error),
    /// Keeps only the position, not the (possibly huge) body.
    #[error("request body is not valid UTF-8")]
    InvalidUtf8(#[source] Utf8Error),
    #[error("request body is not valid JSON")]
    InvalidJson(#[source] serde_json::Error),
    #[error(transparent)]
    Ingest(#[from] IngestError),
    #[error("the event sink stopped before finishing: {0}")]
    SinkAborted(String),
    /// A warp rejection no route should produce (e.g. a body taken twice).
    #[error("unhandled request: {0}")]
    Unhandled(String),
}

impl ObserverError {
    pub fn status(&self) -> StatusCode {
        match self {
            ObserverError::NotFound { .. } => StatusCode::NOT_FOUND,
            ObserverError::PayloadTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            ObserverError::BodyRead(_) | ObserverError::InvalidUtf8(_) | ObserverError::InvalidJson(_) => {
                StatusCode::BAD_REQUEST
            }
            // Like the incumbent, every failure to record an event is a 500: the node keeps the
            // event and retries it.
            ObserverError::Ingest(_) | ObserverError::SinkAborted(_) | ObserverError::Unhandled(_) => {
                StatusCode::INTERNAL_SERVER_ERROR
            }
        }
    }

    /// `{"error": "<message: cause: …>"}` with the status above; logged here so every error
    /// reply is logged once.
    pub fn into_response(self) -> Response {
        let status = self.status();
        let message = error_chain(&self);
        if status.is_server_error() {
            tracing::error!(status = status.as_u16(), "event request failed: {message}");
        } else {
            tracing::warn!(status = status.as_u16(), "event request refused: {message}");
        }
        json_reply(status, &serde_json::json!({ "error": message }))
    }
}

pub(crate) fn json_reply(status: StatusCode, body: &serde_json::Value) -> Response {
    warp::reply::with_status(warp::reply::json(body), status).into_response()
}
