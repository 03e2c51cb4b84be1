//! API errors and the one place they become HTTP responses.
//!
//! The user's spec wins over the incumbent in two places, and both bodies also keep the
//! incumbent's fields (`message`, `error`, `statusCode`) so existing clients still parse them:
//! * an unknown URL is 404 with `reference` (the URL requested);
//! * an invalid input value is 500 with `error` (what was wrong, naming the parameter), `stack`
//!   (a short trace without file paths or internals) and `errorTag` (a fresh UUID, also logged
//!   so an operator can find the request).

use serde::Serialize;
use thiserror::Error;
use warp::http::StatusCode;
use warp::reply::Response;
use warp::Reply;

use crate::headers::with_common_headers;
use crate::reader::ReadError;

#[derive(Debug, Error)]
pub enum ApiError {
    /// No route matches the URL.
    #[error("Route {method}:{path} not found")]
    RouteNotFound { method: String, path: String, url: String },
    /// The route exists but the entity does not (`could not find transaction by ID`).
    #[error("{0}")]
    NotFound(String),
    /// A URL or body parameter has an invalid value.
    #[error("invalid value for parameter `{param}`: {reason}")]
    InvalidParam { param: &'static str, reason: String },
    #[error("The database service is unavailable")]
    Unavailable,
    #[error("internal error")]
    Internal(#[source] Box<dyn std::error::Error + Send + Sync>),
}

impl warp::reject::Reject for ApiError {}

/// Every error body: the incumbent's fields plus the spec's additions where they apply.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorBody {
    pub error: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_code: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stack: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_tag: Option<String>,
}

impl From<ReadError> for ApiError {
    fn from(e: ReadError) -> Self {
        match e {
            ReadError::Unavailable(_) => ApiError::Unavailable,
            ReadError::Other(source) => ApiError::Internal(source),
        }
    }
}

impl ApiError {
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::RouteNotFound { .. } | ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::InvalidParam { .. } | ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            ApiError::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    pub fn body(&self) -> ErrorBody {
        let status = self.status();
        let base = |error: String, message: Option<String>| ErrorBody {
            error,
            message,
            status_code: Some(status.as_u16()),
            reference: None,
            stack: None,
            error_tag: None,
        };
        match self {
            ApiError::RouteNotFound { url, .. } => {
                ErrorBody { reference: Some(url.clone()), ..base("Not Found".into(), Some(self.to_string())) }
            }
            ApiError::NotFound(message) => base("Not Found".into(), Some(message.clone())),
            ApiError::InvalidParam { param, .. } => {
                let tag = uuid::Uuid::new_v4().to_string();
                tracing::warn!(error_tag = %tag, %param, "{self}");
                record_tag(&tag);
                ErrorBody {
                    stack: Some(format!("InvalidParameterError: {self}\n    at parameter `{param}`")),
                    error_tag: Some(tag),
                    ..base(self.to_string(), Some(self.to_string()))
                }
            }
            ApiError::Unavailable => ErrorBody { status_code: None, ..base(self.to_string(), None) },
            ApiError::Internal(source) => {
                let tag = uuid::Uuid::new_v4().to_string();
                tracing::error!(error_tag = %tag, error = %source, "internal error");
                record_tag(&tag);
                ErrorBody {
                    stack: Some("InternalServerError: internal error".into()),
                    error_tag: Some(tag),
                    ..base("Internal Server Error".into(), Some("internal error".into()))
                }
            }
        }
    }

    pub fn into_response(self) -> Response {
        let reply = warp::reply::with_status(warp::reply::json(&self.body()), self.status());
        with_common_headers(reply).into_response()
    }
}

/// Puts the tag on the request's span (the server's `errorTag` field), so the request's log
/// line carries it.
fn record_tag(tag: &str) {
    tracing::Span::current().record("errorTag", tag);
}

/// The last route of the whole API: anything unmatched is an unknown URL.
pub fn not_found_fallback(
) -> impl warp::Filter<Extract = (Response,), Error = std::convert::Infallible> + Clone {
    use warp::Filter;
    warp::method()
        .and(warp::path::full())
        .and(warp::query::raw().or(warp::any().map(String::new)).unify())
        .map(|method: warp::http::Method, path: warp::path::FullPath, query: String| {
            let path = path.as_str().to_string();
            let url = if query.is_empty() { path.clone() } else { format!("{path}?{query}") };
            ApiError::RouteNotFound { method: method.to_string(), path, url }.into_response()
        })
}

/// Turns an [`ApiError`] rejection into its response; other rejections pass on.
pub async fn recover(rejection: warp::Rejection) -> Result<Response, warp::Rejection> {
    match rejection.find::<ApiError>() {
        // Rejections are shared, so the error is rebuilt from its parts rather than moved.
        Some(e) => Ok(rebuild(e).into_response()),
        None => Err(rejection),
    }
}

fn rebuild(e: &ApiError) -> ApiError {
    match e {
        ApiError::RouteNotFound { method, path, url } => {
            ApiError::RouteNotFound { method: method.clone(), path: path.clone(), url: url.clone() }
        }
        ApiError::NotFound(m) => ApiError::NotFound(m.clone()),
        ApiError::InvalidParam { param, reason } => ApiError::InvalidParam { param, reason: reason.clone() },
        ApiError::Unavailable => ApiError::Unavailable,
        ApiError::Internal(source) => ApiError::Internal(source.to_string().into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_param_body_has_the_spec_fields_and_the_incumbents() {
        let e = ApiError::InvalidParam { param: "limit", reason: "must be <= 50".into() };
        let body = serde_json::to_value(e.body()).unwrap();
        assert_eq!(e.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(body["error"], "invalid value for parameter `limit`: must be <= 50");
        assert_eq!(body["statusCode"], 500);
        assert!(body["message"].is_string());
        let stack = body["stack"].as_str().unwrap();
        assert!(stack.contains("limit") && !stack.contains(".rs"), "{stack}");
        let tag = body["errorTag"].as_str().unwrap();
        assert!(uuid::Uuid::parse_str(tag).is_ok(), "{tag}");
        let again = serde_json::to_value(e.body()).unwrap();
        assert_ne!(again["errorTag"], body["errorTag"], "a fresh tag per response");
    }

    #[test]
    fn internal_errors_hide_their_source() {
        let e = ApiError::Internal("relation \"txs\" does not exist at db.rs:42".into());
        let body = serde_json::to_string(&e.body()).unwrap();
        assert!(!body.contains("txs") && !body.contains("db.rs"), "{body}");
    }

    #[tokio::test]
    async fn unknown_urls_are_404_with_reference() {
        let res = warp::test::request().path("/extended/v9/nope?x=1").reply(&not_found_fallback()).await;
        assert_eq!(res.status(), 404);
        let body: serde_json::Value = serde_json::from_slice(res.body()).unwrap();
        assert_eq!(body["reference"], "/extended/v9/nope?x=1");
        assert_eq!(body["message"], "Route GET:/extended/v9/nope not found");
        assert_eq!(body["error"], "Not Found");
        assert_eq!(body["statusCode"], 404);
    }
}
