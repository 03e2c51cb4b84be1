//! The one adapter between warp and an `/extended` handler, as aptos-rosetta has one
//! `handle_request`: every route family takes the request's parts from here (the shared reader,
//! the parsed query, `If-None-Match`) and hands its handler's result back through [`reply`], so
//! that every [`ApiError`] reaches the one recovery that renders it (`error::recover`).
//! Handlers themselves only read parameters (`params`, `address::principal`, block heights),
//! call the reader and render; ETag and deprecation headers come from `reply`.

use std::convert::Infallible;
use std::sync::Arc;

use warp::reply::Response;
use warp::{Filter, Rejection};

use crate::error::ApiError;
use crate::params::{query, Query};

/// The reader every request of a family shares.
pub fn with_reader<R: Send + Sync + 'static>(
    reader: Arc<R>,
) -> impl Filter<Extract = (Arc<R>,), Error = Infallible> + Clone {
    warp::any().map(move || reader.clone())
}

/// The request's `If-None-Match`, as sent.
pub fn if_none_match() -> impl Filter<Extract = (Option<String>,), Error = Rejection> + Copy {
    warp::header::optional::<String>("if-none-match")
}

/// What a GET handler reads besides its path parameters.
pub struct Get<R> {
    pub reader: Arc<R>,
    pub query: Query,
    pub inm: Option<String>,
}

/// [`Get`] of a request: its query, its `If-None-Match` and the family's reader.
pub fn get<R: Send + Sync + 'static>(
    reader: Arc<R>,
) -> impl Filter<Extract = (Get<R>,), Error = Rejection> + Clone {
    query().and(if_none_match()).and(with_reader(reader)).map(|query, inm, reader| Get { reader, query, inm })
}

/// A handler's result as warp wants it: an error becomes the rejection the recovery renders.
pub fn reply(r: Result<Response, ApiError>) -> Result<Response, Rejection> {
    r.map_err(reject)
}

/// An error as the rejection the recovery renders.
pub fn reject(e: impl Into<ApiError>) -> Rejection {
    warp::reject::custom(e.into())
}
