//! `/extended/v1/faucets/...`: parameters in, the incumbent's JSON out.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use serde_json::json;
use stacks_extended::with_common_headers;
use warp::http::header::{HeaderValue, WARNING};
use warp::reply::Response;
use warp::{Filter, Rejection};

use super::btc::{AMOUNT_SATS, LARGE_SATS, XLARGE_SATS};
use super::error::STX_BODY_HELP;
use super::{FaucetError, Faucets, Requester};

/// Bodies are only looked at to refuse or read an address: small is plenty. (Checked after
/// reading rather than with `content_length_limit`, which refuses a POST without a length.)
const BODY_LIMIT: usize = 64 * 1024;
/// The incumbent marks the BTC balance route deprecated.
const DEPRECATED: &str = "299 - \"Deprecated: See https://docs.hiro.so/stacks/api for more information\"";

type Params = BTreeMap<String, String>;

/// The faucet routes. Requests for other paths are rejected, for the caller's fallback.
pub fn routes(faucets: Arc<Faucets>) -> impl Filter<Extract = (Response,), Error = Rejection> + Clone {
    let base = warp::path!("extended" / "v1" / "faucets" / ..);
    let with = move || {
        let f = Arc::clone(&faucets);
        warp::any().map(move || Arc::clone(&f))
    };
    let post_input = || {
        warp::query::raw().or(warp::any().map(String::new)).unify().and(warp::body::bytes()).and(requester())
    };
    let stx = base.and(warp::path!("stx")).and(warp::post()).and(with()).and(post_input()).then(
        |f: Arc<Faucets>, query: String, body: Bytes, who: Requester| async move {
            respond(stx(&f, &query, &body, &who).await)
        },
    );
    let btc = base.and(warp::path!("btc")).and(warp::post()).and(with()).and(post_input()).then(
        |f: Arc<Faucets>, query: String, body: Bytes, who: Requester| async move {
            respond(btc(&f, &query, &body, &who).await)
        },
    );
    let balance = base.and(warp::path!("btc" / String)).and(warp::get()).and(with()).then(
        |address: String, f: Arc<Faucets>| async move {
            let address = percent_encoding::percent_decode_str(&address).decode_utf8_lossy().into_owned();
            let mut res = respond(f.btc_balance(&address).await.map(|balance| json!({ "balance": balance })));
            res.headers_mut().insert(WARNING, HeaderValue::from_static(DEPRECATED));
            res
        },
    );
    stx.or(btc).unify().or(balance).unify()
}

fn respond(result: Result<serde_json::Value, FaucetError>) -> Response {
    match result {
        Ok(body) => with_common_headers(warp::reply::json(&body)),
        Err(e) => e.into_response(),
    }
}

async fn stx(
    f: &Faucets,
    query: &str,
    body: &[u8],
    who: &Requester,
) -> Result<serde_json::Value, FaucetError> {
    f.check_stx_available()?;
    let query = parse_query(query);
    let body = parse_body(body);
    // The incumbent takes query parameters only, and says so to a client that sends a body.
    if body.contains_key("address") || (!body.is_empty() && !query.contains_key("address")) {
        return Err(FaucetError::BadRequest(STX_BODY_HELP.into()));
    }
    let address = required(&query, "address")?;
    let stacking = flag(&query, "stacking")?;
    let sent = f.send_stx(who, address, stacking).await?;
    Ok(json!({ "success": true, "txId": sent.tx_id, "txRaw": sent.raw_hex }))
}

async fn btc(
    f: &Faucets,
    query: &str,
    body: &[u8],
    who: &Requester,
) -> Result<serde_json::Value, FaucetError> {
    body_size(body)?;
    // The BTC faucet takes the query, else the body.
    let mut params = parse_body(body);
    params.extend(parse_query(query));
    let address = required(&params, "address")?;
    let sats = match (flag(&params, "large")?, flag(&params, "xlarge")?) {
        (true, true) => {
            return Err(FaucetError::BadRequest("large and xlarge cannot both be requested".into()));
        }
        (true, false) => LARGE_SATS,
        (false, true) => XLARGE_SATS,
        (false, false) => AMOUNT_SATS,
    };
    let sent = f.send_btc(who, address, sats).await?;
    Ok(json!({ "success": true, "txid": sent.txid, "raw_tx": sent.raw_tx }))
}

fn body_size(body: &[u8]) -> Result<(), FaucetError> {
    if body.len() > BODY_LIMIT {
        return Err(FaucetError::BadRequest(format!("request body over {BODY_LIMIT} bytes")));
    }
    Ok(())
}

fn required<'a>(params: &'a Params, name: &'static str) -> Result<&'a str, FaucetError> {
    params
        .get(name)
        .map(String::as_str)
        .filter(|v| !v.is_empty())
        .ok_or(FaucetError::InvalidParam { param: name, reason: "required".into() })
}

/// A boolean parameter (absent: false).
fn flag(params: &Params, name: &'static str) -> Result<bool, FaucetError> {
    match params.get(name).map(|v| v.to_ascii_lowercase()) {
        None => Ok(false),
        Some(v) if v == "true" || v == "1" => Ok(true),
        Some(v) if v == "false" || v == "0" || v.is_empty() => Ok(false),
        Some(v) => Err(FaucetError::InvalidParam { param: name, reason: format!("`{v}` is not a boolean") }),
    }
}

fn parse_query(query: &str) -> Params {
    serde_urlencoded::from_str::<Vec<(String, String)>>(query).unwrap_or_default().into_iter().collect()
}

/// A JSON object's scalar fields or a form body's fields; anything else is no parameters.
fn parse_body(body: &[u8]) -> Params {
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if text.is_empty() {
        return Params::new();
    }
    if let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(text) {
        return map
            .into_iter()
            .map(|(k, v)| match v {
                serde_json::Value::String(s) => (k, s),
                other => (k, other.to_string()),
            })
            .collect();
    }
    let form: Params =
        serde_urlencoded::from_str::<Vec<(String, String)>>(text).unwrap_or_default().into_iter().collect();
    if form.is_empty() {
        // Some body that is neither: still a body.
        return Params::from([(String::new(), text.to_owned())]);
    }
    form
}

/// The client's address as a server other than `warp::serve` puts it in a request's extensions
/// (the API's own server; warp's own is private to it).
#[derive(Clone, Copy, Debug)]
pub struct ClientAddr(pub SocketAddr);

/// The client: the first `X-Forwarded-For` entry, else the socket's address.
fn requester() -> impl Filter<Extract = (Requester,), Error = Rejection> + Clone {
    let remote = warp::ext::optional::<ClientAddr>()
        .and(warp::addr::remote())
        .map(|ours: Option<ClientAddr>, warps: Option<SocketAddr>| ours.map(|c| c.0).or(warps));
    warp::header::optional::<String>("x-forwarded-for").and(remote).map(
        |forwarded: Option<String>, remote: Option<SocketAddr>| {
            let first = forwarded
                .as_deref()
                .and_then(|f| f.split(',').next())
                .map(str::trim)
                .filter(|s| !s.is_empty());
            let ip = match (first, remote) {
                (Some(ip), _) => ip.to_owned(),
                (None, Some(addr)) => addr.ip().to_string(),
                (None, None) => "unknown".to_owned(),
            };
            Requester { ip }
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_and_queries() {
        assert_eq!(
            parse_query("address=ST1&stacking=true").get("stacking").map(String::as_str),
            Some("true")
        );
        assert!(parse_body(b"").is_empty());
        assert!(parse_body(b"{}").is_empty());
        assert_eq!(
            parse_body(br#"{"address":"ST1","stacking":true}"#).get("stacking").map(String::as_str),
            Some("true")
        );
        assert_eq!(parse_body(b"address=ST1").get("address").map(String::as_str), Some("ST1"));
        assert!(!parse_body(b"[1]").is_empty());
    }

    #[tokio::test]
    async fn the_client_ip_is_the_first_forwarded_entry_else_the_socket() {
        let ip = requester().map(|r: Requester| r.ip);
        let socket = SocketAddr::from(([10, 0, 0, 7], 5555));
        let forwarded = warp::test::request()
            .header("x-forwarded-for", " 203.0.113.9 , 10.0.0.1")
            .remote_addr(socket)
            .filter(&ip)
            .await
            .unwrap();
        assert_eq!(forwarded, "203.0.113.9");
        assert_eq!(warp::test::request().remote_addr(socket).filter(&ip).await.unwrap(), "10.0.0.7");
    }

    #[test]
    fn flags() {
        let p = parse_query("a=true&b=0&c=&d=yes&e=1");
        assert!(flag(&p, "a").unwrap() && flag(&p, "e").unwrap());
        assert!(!flag(&p, "b").unwrap() && !flag(&p, "c").unwrap() && !flag(&p, "missing").unwrap());
        assert!(matches!(flag(&p, "d"), Err(FaucetError::InvalidParam { param: "d", .. })));
    }
}
