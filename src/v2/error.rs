//! The `/v2` answers' own errors and their one mapping to HTTP. The node's answers, relayed by
//! the proxy, are not errors here.

use serde_json::json;
use stacks_extended::{with_common_headers, ApiError, ReadError};
use thiserror::Error;
use warp::http::{header, HeaderValue, StatusCode};
use warp::reply::Response;
use warp::Reply;

#[derive(Debug, Error)]
pub enum V2Error {
    /// A path, query or body value is invalid: the seed's invalid-input error (HTTP 500).
    #[error("invalid value for parameter `{param}`: {reason}")]
    Invalid { param: &'static str, reason: String },
    /// The request needs a Stacks node (a Clarity VM, a broadcast, another route) and none may
    /// be asked.
    #[error("{0} needs a Stacks node, and none is configured (or the /v2 policy is `ledger`)")]
    NeedsNode(String),
    /// Proofs were asked for explicitly; only a node has the MARF to prove against.
    #[error("proof=1 needs a Stacks node, and none is configured; ask with proof=0 for the ledger's answer")]
    ProofNeedsNode,
    /// A state the ledger does not serve (another `tip`).
    #[error("{0}: the ledger answers only at its canonical tip, and no Stacks node is configured")]
    TipNeedsNode(String),
    /// The ledger has no canonical block yet.
    #[error("the ledger has no canonical block yet")]
    NoChain,
    /// The entity does not exist (the node answers 404 too).
    #[error("{0}")]
    NotFound(String),
    /// The ledger read failed (503 when the store cannot be reached, else 500).
    #[error(transparent)]
    Read(#[from] ReadError),
}

impl V2Error {
    pub fn into_response(self) -> Response {
        let (status, message) = match self {
            V2Error::Invalid { param, reason } => {
                return ApiError::invalid(param, reason).into_response();
            }
            V2Error::Read(e) => return ApiError::from(e).into_response(),
            e @ V2Error::NotFound(_) => (StatusCode::NOT_FOUND, e.to_string()),
            e => (StatusCode::SERVICE_UNAVAILABLE, e.to_string()),
        };
        let body = json!({ "error": status.canonical_reason().unwrap_or("Error"), "message": message });
        let mut response =
            with_common_headers(warp::reply::with_status(warp::reply::json(&body), status)).into_response();
        if status == StatusCode::SERVICE_UNAVAILABLE {
            // Not worth retrying soon: a node has to be configured first.
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("60"));
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses() {
        let cases = [
            (V2Error::Invalid { param: "principal", reason: "x".into() }, 500),
            (V2Error::NeedsNode("POST /v2/transactions".into()), 503),
            (V2Error::ProofNeedsNode, 503),
            (V2Error::TipNeedsNode("tip=ab".into()), 503),
            (V2Error::NoChain, 503),
            (V2Error::NotFound("no contract".into()), 404),
        ];
        for (e, status) in cases {
            let text = e.to_string();
            let r = e.into_response();
            assert_eq!(r.status().as_u16(), status, "{text}");
            assert_eq!(r.headers()[header::CONTENT_TYPE], "application/json", "{text}");
        }
    }
}
