//! One span per request (method, route template, status, latency, and the `errorTag` an error
//! answer carries, recorded into the span by the error mapping) and the HTTP metrics.

use std::convert::Infallible;
use std::time::Instant;

use tracing::field::Empty;
use warp::filters::path::FullPath;
use warp::http::Method;
use warp::reply::Response;
use warp::{Filter, Reply};

/// `inner` with its requests observed.
pub fn observed<F, R>(inner: F) -> impl Filter<Extract = (impl Reply,), Error = Infallible> + Clone
where
    F: Filter<Extract = (R,), Error = Infallible> + Clone + Send + Sync + 'static,
    R: Reply,
{
    warp::any()
        .map(Instant::now)
        .and(warp::method())
        .and(warp::path::full())
        .and(inner)
        .map(|start: Instant, method: Method, path: FullPath, reply: R| {
            finish(start, &method, path.as_str(), reply.into_response())
        })
        .with(warp::trace(|info| {
            tracing::info_span!(
                "request",
                method = %info.method(),
                route = %route_template(info.path()),
                status = Empty,
                latency_ms = Empty,
                errorTag = Empty,
            )
        }))
}

/// What [`observed`] records of a request, for one answered outside the route table (a kept
/// answer the server's event loop answers itself, `super::server`): the same span, metrics
/// and log line.
pub(crate) fn observed_outside(start: Instant, method: &Method, path: &str, res: Response) -> Response {
    let span = tracing::info_span!(
        "request",
        method = %method,
        route = %route_template(path),
        status = Empty,
        latency_ms = Empty,
        errorTag = Empty,
    );
    span.in_scope(|| finish(start, method, path, res))
}

fn finish(start: Instant, method: &Method, path: &str, res: Response) -> Response {
    let took = start.elapsed();
    let status = res.status().as_u16();
    let surface = surface(path);
    // Paths outside the APIs (scanners, typos) share one label value.
    let route = if surface == "other" { "(other)".to_owned() } else { route_template(path) };
    crate::metrics::http_request(surface, &route, status, took);
    let span = tracing::Span::current();
    span.record("status", status);
    span.record("latency_ms", took.as_secs_f64() * 1000.0);
    tracing::info!(target: "stacks_ledger::http", %method, "request");
    res
}

/// Which API a path belongs to.
pub fn surface(path: &str) -> &'static str {
    match path.trim_start_matches('/').split('/').next().unwrap_or("") {
        "extended" | "" => "extended",
        "rosetta" => "rosetta",
        "v2" => "v2",
        "health" | "ready" => "health",
        _ => "other",
    }
}

/// The path with its parameters replaced by `{}`, so that label values stay few: a segment
/// made only of lowercase letters, `-` and `_` (or a version such as `v1`) is a route word;
/// anything else (hashes, heights, addresses, contract ids, names with digits) a parameter.
pub fn route_template(path: &str) -> String {
    let mut template = String::with_capacity(path.len().min(96) + 1);
    for s in path.split('/').filter(|s| !s.is_empty()) {
        template.push('/');
        template.push_str(if is_route_word(s) { s } else { "{}" });
    }
    if template.is_empty() {
        template.push('/');
    }
    template
}

fn is_route_word(s: &str) -> bool {
    let version = s.len() <= 3 && s.starts_with('v') && s[1..].bytes().all(|b| b.is_ascii_digit());
    version || (s.len() <= 40 && s.bytes().all(|b| b.is_ascii_lowercase() || b == b'-' || b == b'_'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_keep_route_words_and_hide_parameters() {
        assert_eq!(route_template("/extended/v1/tx/0xabc123"), "/extended/v1/tx/{}");
        assert_eq!(route_template("/extended/v1/block/by_height/42"), "/extended/v1/block/by_height/{}");
        assert_eq!(
            route_template("/extended/v1/address/ST1PQHQKV0RJXZFY1DGX8MNSNYVE3VGZJSRTPGZGM/balances"),
            "/extended/v1/address/{}/balances"
        );
        assert_eq!(route_template("/v2/info"), "/v2/info");
        assert_eq!(route_template("/rosetta/v1/network/list"), "/rosetta/v1/network/list");
        assert_eq!(route_template("/"), "/");
        assert_eq!(surface("/v2/info"), "v2");
        assert_eq!(surface("/extended"), "extended");
        assert_eq!(surface("/rosetta/v1/block"), "rosetta");
    }
}
