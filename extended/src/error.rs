//! API errors and the one place they become HTTP responses.
//!
//! The user's spec wins over the incumbent in two places, and both bodies also keep the
//! incumbent's fields (`message`, `error`, `statusCode`) so existing clients still parse them:
//! * an unknown URL is 404 with `reference` (the URL requested);
//! * an invalid input value is 500 with `error` (what was wrong, naming the parameter), `stack`
//!   (a short trace without file paths or internals) and `errorTag` (a fresh UUID, also logged
//!   so an operator can find the request); `message` is the incumbent's own text for the same
//!   rejection (its schema validator's wording, [`Rule`]), with its `code` where that validator
//!   rejected the value.

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
    /// A URL or body parameter has an invalid value. `message` is the incumbent's text for it;
    /// `validation` whether its schema validator (not its handler) rejected it.
    #[error("invalid value for parameter `{param}`: {message}")]
    InvalidParam { param: &'static str, message: String, validation: bool },
    /// A missing entity on the routes whose incumbent 404 body is only `{error}` (BNS).
    #[error("{0}")]
    NotFoundBare(String),
    /// A handler's rejection whose incumbent body is only `{error}` (BNS: `Invalid page`,
    /// `No such namespace`): the invalid-input 500 keeps that text as `error`.
    #[error("{error}")]
    InvalidBare { param: &'static str, error: String },
    #[error("The database service is unavailable")]
    Unavailable,
    #[error("internal error")]
    Internal(#[source] Box<dyn std::error::Error + Send + Sync>),
}

impl warp::reject::Reject for ApiError {}

/// Where a parameter is read, as the incumbent's validator names it in its messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum In {
    Path,
    Query,
}

/// The schema rule a value breaks, worded as the incumbent's validator (AJV) words it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    Integer,
    Boolean,
    Max(u64),
    Min(i64),
    Pattern(&'static str),
    /// The parameter is missing.
    Required,
    /// A list with more items than allowed.
    MaxItems(u64),
    /// None of `n` allowed constants (`anyOf` of `const`s), at the list item `item` if any.
    Constants {
        n: usize,
        item: Option<usize>,
    },
    /// A single allowed constant (`Type.Literal`).
    Constant,
    /// A principal: neither a standard nor a contract address.
    Principal,
    /// `latest`, a 64-hex-digit hash or an integer.
    HeightOrHash,
    /// None of these patterns (`anyOf` of `pattern`s: v3's principal, address or contract).
    Patterns(&'static [&'static str]),
}

/// The pattern of a transaction id or block hash in the incumbent's schemas.
pub const HASH_PATTERN: &str = "^(0x)?[a-fA-F0-9]{64}$";
const ADDRESS_PATTERN: &str = "^[0123456789ABCDEFGHJKMNPQRSTVWXYZ]{28,41}";
const CONTRACT_PATTERN: &str = "^[0123456789ABCDEFGHJKMNPQRSTVWXYZ]{28,41}.[a-zA-Z]([a-zA-Z0-9]|[-_]){0,39}$";

impl Rule {
    /// The validator's message for `param` read from `place`: each failed keyword as
    /// `querystring/limit must be <= 50`, joined by `, `.
    fn message(self, place: In, param: &str) -> String {
        let root = match place {
            In::Path => "params",
            In::Query => "querystring",
        };
        let at = format!("{root}/{param}");
        let any_of = |parts: Vec<String>, at: &str| {
            let mut v: Vec<String> = parts.into_iter().map(|p| format!("{at} {p}")).collect();
            v.push(format!("{at} must match a schema in anyOf"));
            v.join(", ")
        };
        match self {
            Rule::Integer => format!("{at} must be integer"),
            Rule::Boolean => format!("{at} must be boolean"),
            Rule::Max(m) => format!("{at} must be <= {m}"),
            Rule::Min(m) => format!("{at} must be >= {m}"),
            Rule::Pattern(p) => format!("{at} must match pattern \"{p}\""),
            Rule::Required => format!("{root} must have required property '{param}'"),
            Rule::MaxItems(n) => format!("{at} must NOT have more than {n} items"),
            Rule::Constants { n, item } => {
                let at = item.map_or(at.clone(), |i| format!("{at}/{i}"));
                any_of(vec!["must be equal to constant".to_string(); n], &at)
            }
            Rule::Constant => format!("{at} must be equal to constant"),
            Rule::Principal => any_of(
                vec![
                    format!("must match pattern \"{ADDRESS_PATTERN}\""),
                    format!("must match pattern \"{CONTRACT_PATTERN}\""),
                ],
                &at,
            ),
            Rule::HeightOrHash => any_of(
                vec![
                    "must be equal to constant".into(),
                    format!("must match pattern \"{HASH_PATTERN}\""),
                    "must be integer".into(),
                ],
                &at,
            ),
            Rule::Patterns(patterns) => {
                any_of(patterns.iter().map(|p| format!("must match pattern \"{p}\"")).collect(), &at)
            }
        }
    }
}

/// Every error body: the incumbent's fields plus the spec's additions where they apply.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorBody {
    pub error: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_code: Option<u16>,
    /// The incumbent's validation code, kept on invalid input its schema rejects.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<&'static str>,
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
            ReadError::Failed(source) => ApiError::Internal(source),
        }
    }
}

impl ApiError {
    /// `param` (read from `place`) breaks the schema `rule`, as the incumbent's validator words it.
    pub fn schema(place: In, param: &'static str, rule: Rule) -> Self {
        ApiError::InvalidParam { param, message: rule.message(place, param), validation: true }
    }

    /// A handler's own rejection of `param`, with the incumbent's message.
    pub fn invalid(param: &'static str, message: impl Into<String>) -> Self {
        ApiError::InvalidParam { param, message: message.into(), validation: false }
    }

    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::RouteNotFound { .. } | ApiError::NotFound(_) | ApiError::NotFoundBare(_) => {
                StatusCode::NOT_FOUND
            }
            ApiError::InvalidParam { .. } | ApiError::InvalidBare { .. } | ApiError::Internal(_) => {
                StatusCode::INTERNAL_SERVER_ERROR
            }
            ApiError::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    pub fn body(&self) -> ErrorBody {
        let status = self.status();
        let base = |error: String, message: Option<String>| ErrorBody {
            error,
            message,
            status_code: Some(status.as_u16()),
            code: None,
            reference: None,
            stack: None,
            error_tag: None,
        };
        match self {
            ApiError::RouteNotFound { url, .. } => {
                ErrorBody { reference: Some(url.clone()), ..base("Not Found".into(), Some(self.to_string())) }
            }
            ApiError::NotFound(message) => base("Not Found".into(), Some(message.clone())),
            ApiError::NotFoundBare(message) => ErrorBody { status_code: None, ..base(message.clone(), None) },
            ApiError::InvalidBare { param, error } => {
                let tag = uuid::Uuid::new_v4().to_string();
                tracing::warn!(error_tag = %tag, %param, "{self}");
                record_tag(&tag);
                ErrorBody {
                    stack: Some(format!("InvalidParameterError: {error}\n    at parameter `{param}`")),
                    error_tag: Some(tag),
                    ..base(error.clone(), None)
                }
            }
            ApiError::InvalidParam { param, message, validation } => {
                let tag = uuid::Uuid::new_v4().to_string();
                tracing::warn!(error_tag = %tag, %param, "{self}");
                record_tag(&tag);
                ErrorBody {
                    stack: Some(format!("InvalidParameterError: {self}\n    at parameter `{param}`")),
                    error_tag: Some(tag),
                    code: validation.then_some("FST_ERR_VALIDATION"),
                    ..base(self.to_string(), Some(message.clone()))
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
        ApiError::NotFoundBare(m) => ApiError::NotFoundBare(m.clone()),
        ApiError::InvalidBare { param, error } => ApiError::InvalidBare { param, error: error.clone() },
        ApiError::InvalidParam { param, message, validation } => {
            ApiError::InvalidParam { param, message: message.clone(), validation: *validation }
        }
        ApiError::Unavailable => ApiError::Unavailable,
        ApiError::Internal(source) => ApiError::Internal(source.to_string().into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_param_body_has_the_spec_fields_and_the_incumbents() {
        let e = ApiError::schema(In::Query, "limit", Rule::Max(50));
        let body = serde_json::to_value(e.body()).unwrap();
        assert_eq!(e.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(body["error"], "invalid value for parameter `limit`: querystring/limit must be <= 50");
        assert_eq!(body["statusCode"], 500);
        assert_eq!(body["message"], "querystring/limit must be <= 50");
        assert_eq!(body["code"], "FST_ERR_VALIDATION");
        let stack = body["stack"].as_str().unwrap();
        assert!(stack.contains("limit") && !stack.contains(".rs"), "{stack}");
        let tag = body["errorTag"].as_str().unwrap();
        assert!(uuid::Uuid::parse_str(tag).is_ok(), "{tag}");
        let again = serde_json::to_value(e.body()).unwrap();
        assert_ne!(again["errorTag"], body["errorTag"], "a fresh tag per response");
    }

    #[test]
    fn rules_are_worded_as_the_incumbents_validator_words_them() {
        let m = |place, param, rule: Rule| rule.message(place, param);
        assert_eq!(m(In::Path, "height", Rule::Min(0)), "params/height must be >= 0");
        assert_eq!(m(In::Query, "tx_id", Rule::Required), "querystring must have required property 'tx_id'");
        assert_eq!(
            m(In::Query, "sort_by", Rule::Constants { n: 2, item: None }),
            "querystring/sort_by must be equal to constant, querystring/sort_by must be equal to constant, \
             querystring/sort_by must match a schema in anyOf"
        );
        assert_eq!(
            m(In::Query, "type", Rule::Constants { n: 1, item: Some(0) }),
            "querystring/type/0 must be equal to constant, querystring/type/0 must match a schema in anyOf"
        );
        assert_eq!(
            m(In::Path, "height_or_hash", Rule::HeightOrHash),
            "params/height_or_hash must be equal to constant, params/height_or_hash must match pattern \
             \"^(0x)?[a-fA-F0-9]{64}$\", params/height_or_hash must be integer, params/height_or_hash must \
             match a schema in anyOf"
        );
        let handler =
            serde_json::to_value(ApiError::invalid("address", "Address is not valid.").body()).unwrap();
        assert_eq!(handler["message"], "Address is not valid.");
        assert!(handler.get("code").is_none());
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
