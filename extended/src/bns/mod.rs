//! The incumbent's BNS routes (`/v1/names`, `/v1/namespaces`, `/v1/addresses`): names,
//! namespaces, subdomains and zonefiles. Its pages are zero-based offsets of 100 rows; an
//! explicit page past the end is rejected (`Invalid page`). Answers carry the chain tip's ETag.

use ledger_read::bns as reader;

use std::sync::Arc;

use serde_json::{json, Map, Value};
use warp::http::{header, HeaderValue, StatusCode};
use warp::{Filter, Rejection, Reply};

pub use reader::{BnsName, BnsReader, BnsSubdomain};

use crate::address::cached_json;
use crate::error::{ApiError, In};
use crate::handler::{get, if_none_match, reject, with_reader, Get};
use crate::headers::with_common_headers;
use crate::params::{non_negative, Query};
use crate::status::chain_tip_etag;

/// Rows per page of the name lists.
pub const PAGE_ROWS: u64 = 100;

pub fn routes<R: BnsReader>(
    reader: Arc<R>,
) -> impl Filter<Extract = (impl Reply,), Error = Rejection> + Clone {
    let r = with_reader(reader.clone());
    let inm = if_none_match();
    let full = warp::path::full().and(warp::query::raw().or(warp::any().map(String::new)).unify()).map(
        |p: warp::path::FullPath, q: String| {
            if q.is_empty() {
                p.as_str().to_string()
            } else {
                format!("{}?{q}", p.as_str())
            }
        },
    );
    let name_list = warp::get().and(warp::path!("v1" / "names")).and(get(reader.clone())).and_then(
        |Get { reader: r, query: q, inm }: Get<R>| async move { names(&*r, &q, inm).await.map_err(reject) },
    );
    let name_info =
        warp::get().and(warp::path!("v1" / "names" / String)).and(inm).and(full).and(r.clone()).and_then(
            |n: String, inm: Option<String>, url: String, r: Arc<R>| async move {
                name(&*r, &decode(&n), &url, inm).await.map_err(reject)
            },
        );
    let subdomains = warp::get()
        .and(warp::path!("v1" / "names" / String / "subdomains"))
        .and(inm)
        .and(r.clone())
        .and_then(|n: String, inm: Option<String>, r: Arc<R>| async move {
            let list = r.bns_subdomains_of(&decode(&n)).await.map_err(|e| reject(ApiError::from(e)))?;
            tip_json(&*r, json!(list), inm).await.map_err(reject)
        });
    let latest_zonefile =
        warp::get().and(warp::path!("v1" / "names" / String / "zonefile")).and(inm).and(r.clone()).and_then(
            |n: String, inm: Option<String>, r: Arc<R>| async move {
                zonefile(&*r, &decode(&n), None, inm).await.map_err(reject)
            },
        );
    let historical = warp::get()
        .and(warp::path!("v1" / "names" / String / "zonefile" / String))
        .and(inm)
        .and(r.clone())
        .and_then(|n: String, hash: String, inm: Option<String>, r: Arc<R>| async move {
            zonefile(&*r, &decode(&n), Some(&decode(&hash)), inm).await.map_err(reject)
        });
    let namespaces = warp::get().and(warp::path!("v1" / "namespaces")).and(inm).and(r.clone()).and_then(
        |inm: Option<String>, r: Arc<R>| async move {
            let list = r.bns_namespaces().await.map_err(|e| reject(ApiError::from(e)))?;
            tip_json(&*r, json!({ "namespaces": list }), inm).await.map_err(reject)
        },
    );
    let namespace_names = warp::get()
        .and(warp::path!("v1" / "namespaces" / String / "names"))
        .and(get(reader.clone()))
        .and_then(|tld: String, Get { reader: r, query: q, inm }: Get<R>| async move {
            namespace_names(&*r, &decode(&tld), &q, inm).await.map_err(reject)
        });
    let by_address =
        warp::get().and(warp::path!("v1" / "addresses" / String / String)).and(inm).and(r).and_then(
            |chain: String, address: String, inm: Option<String>, r: Arc<R>| async move {
                names_of(&*r, &chain, &decode(&address), inm).await.map_err(reject)
            },
        );
    name_list
        .or(name_info)
        .or(subdomains)
        .or(latest_zonefile)
        .or(historical)
        .or(namespaces)
        .or(namespace_names)
        .or(by_address)
}

fn decode(segment: &str) -> String {
    percent_encoding::percent_decode_str(segment).decode_utf8_lossy().into_owned()
}

async fn tip_json<R: BnsReader>(
    r: &R,
    body: Value,
    inm: Option<String>,
) -> Result<warp::reply::Response, ApiError> {
    let tip = r.tip().await?;
    let etag = chain_tip_etag(tip.as_ref()).map(|e| e.trim_matches('"').to_string());
    Ok(cached_json(&body, etag, inm.as_deref()))
}

/// `page`: the offset of the first row (in pages of [`PAGE_ROWS`]), and whether it was given
/// as more than 0 (then an empty page is rejected, as the incumbent does).
fn page(q: &Query) -> Result<(u64, bool), ApiError> {
    let page = q.get("page").map(|v| non_negative(In::Query, "page", v)).transpose()?.unwrap_or(0);
    Ok((page.saturating_mul(PAGE_ROWS), page > 0))
}

fn invalid_page() -> ApiError {
    ApiError::InvalidBare { param: "page", error: "Invalid page".into() }
}

async fn names<R: BnsReader>(
    r: &R,
    q: &Query,
    inm: Option<String>,
) -> Result<warp::reply::Response, ApiError> {
    let (offset, explicit) = page(q)?;
    let list = r.bns_names(offset).await?;
    if list.is_empty() && explicit {
        return Err(invalid_page());
    }
    tip_json(r, json!(list), inm).await
}

async fn namespace_names<R: BnsReader>(
    r: &R,
    tld: &str,
    q: &Query,
    inm: Option<String>,
) -> Result<warp::reply::Response, ApiError> {
    let (offset, explicit) = page(q)?;
    if !r.bns_namespace_exists(tld).await? {
        return Err(ApiError::InvalidBare { param: "tld", error: "No such namespace".into() });
    }
    let list = r.bns_namespace_names(tld, offset).await?;
    if list.is_empty() && explicit {
        return Err(invalid_page());
    }
    tip_json(r, json!(list), inm).await
}

/// Only the fields that have a value, as the incumbent drops null ones.
fn present(fields: Vec<(&str, Option<Value>)>) -> Value {
    Value::Object(fields.into_iter().filter_map(|(k, v)| Some((k.to_string(), v?))).collect::<Map<_, _>>())
}

/// A name, or a subdomain (three labels). A subdomain we do not know is redirected to the
/// resolver of its parent's subdomains when there is one.
async fn name<R: BnsReader>(
    r: &R,
    name: &str,
    url: &str,
    inm: Option<String>,
) -> Result<warp::reply::Response, ApiError> {
    if name.split('.').count() == 3 {
        let Some(s) = r.bns_subdomain(name).await? else {
            let parent = name.split('.').skip(1).collect::<Vec<_>>().join(".");
            return match r.bns_resolver(&parent).await? {
                Some(resolver) if resolver.is_empty() => {
                    Err(ApiError::NotFoundBare("missing resolver from a malformed zonefile".into()))
                }
                Some(resolver) => Ok(redirect(&format!("{resolver}{url}"))),
                None => Err(ApiError::NotFoundBare(format!("cannot find subdomain {name}"))),
            };
        };
        let body = present(vec![
            ("address", Some(json!(s.owner))),
            ("blockchain", Some(json!("stacks"))),
            ("last_txid", Some(json!(s.tx_id))),
            ("resolver", Some(json!(s.resolver))),
            ("status", Some(json!("registered_subdomain"))),
            ("zonefile", s.zonefile.map(Value::from)),
            ("zonefile_hash", Some(json!(s.zonefile_hash))),
        ]);
        return tip_json(r, body, inm).await;
    }
    let Some(n) = r.bns_name(name).await? else {
        return Err(ApiError::NotFoundBare(format!("cannot find name {name}")));
    };
    let body = present(vec![
        ("address", Some(json!(n.address))),
        ("blockchain", Some(json!("stacks"))),
        ("expire_block", Some(json!(n.expire_block))),
        ("last_txid", Some(json!(n.tx_id))),
        ("status", Some(json!(n.status))),
        ("zonefile", n.zonefile.map(Value::from)),
        ("zonefile_hash", Some(json!(n.zonefile_hash))),
    ]);
    tip_json(r, body, inm).await
}

fn redirect(location: &str) -> warp::reply::Response {
    let mut res = warp::reply::with_status(warp::reply(), StatusCode::FOUND).into_response();
    if let Ok(v) = HeaderValue::from_str(location) {
        res.headers_mut().insert(header::LOCATION, v);
    }
    with_common_headers(res)
}

async fn zonefile<R: BnsReader>(
    r: &R,
    name: &str,
    hash: Option<&str>,
    inm: Option<String>,
) -> Result<warp::reply::Response, ApiError> {
    match r.bns_zonefile(name, hash).await? {
        Some(z) => tip_json(r, json!({ "zonefile": z }), inm).await,
        None if hash.is_some() => Err(ApiError::NotFoundBare("No such name or zonefile".into())),
        None => Err(ApiError::NotFoundBare("No such name or zonefile does not exist".into())),
    }
}

async fn names_of<R: BnsReader>(
    r: &R,
    blockchain: &str,
    address: &str,
    inm: Option<String>,
) -> Result<warp::reply::Response, ApiError> {
    if blockchain != "stacks" {
        return Err(ApiError::invalid("blockchain", "Unsupported blockchain"));
    }
    let names = r.bns_names_of(address).await?;
    tip_json(r, json!({ "names": names }), inm).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_offsets_of_100_and_only_an_explicit_one_is_checked() {
        assert_eq!(page(&Query::parse("")).unwrap(), (0, false));
        assert_eq!(page(&Query::parse("page=0")).unwrap(), (0, false));
        assert_eq!(page(&Query::parse("page=2")).unwrap(), (200, true));
        assert!(page(&Query::parse("page=x")).is_err());
    }

    #[test]
    fn null_fields_are_left_out() {
        let v = present(vec![("a", Some(json!(1))), ("b", None)]);
        assert_eq!(v, json!({ "a": 1 }));
    }
}
