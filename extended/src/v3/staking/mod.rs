//! The PoX-5 staking routes of `/extended/v3`: bonds (with their allowlists and
//! registrations), staking signers and their stakers, the current cycle's signers, and a
//! principal's staking summary and bond positions. Every answer is read from one
//! [`StakingState`] (the canonical chain's, folded by the ledger) and carries the chain tip's
//! ETag, as the incumbent's `handleChainTipCache` does.

mod bonds;
mod principals;
mod signers;
mod window;

use std::sync::Arc;

use serde_json::Value;
use warp::{Filter, Rejection, Reply};

pub use ledger_read::staking::{model, StakingReader, StakingState};
pub use window::{to_page, window, Window};

use crate::address::cached_json;
use crate::error::{ApiError, In, Rule};
use crate::handler::{get, if_none_match, reject, with_reader, Get};
use crate::params::{query, Paging, Query};
use crate::status::chain_tip_etag;
use crate::v3::params;

/// A path integer (`bond_index`), as the incumbent's `Type.Integer` coerces it.
pub(crate) fn path_int(raw: &str, param: &'static str) -> Result<i64, ApiError> {
    raw.trim().parse().map_err(|_| ApiError::schema(In::Path, param, Rule::Integer))
}

/// A principal path segment, percent-decoded and checked against v3's `PrincipalSchema`.
pub(crate) fn principal(segment: &str) -> Result<String, ApiError> {
    params::principal(&percent_encoding::percent_decode_str(segment).decode_utf8_lossy())
}

/// The body with the chain tip's ETag (and `304` on a matching `If-None-Match`).
async fn tip_json<R: StakingReader>(
    r: &R,
    body: Value,
    inm: Option<String>,
) -> Result<warp::reply::Response, ApiError> {
    let tip = r.tip().await?;
    let etag = chain_tip_etag(tip.as_ref()).map(|e| e.trim_matches('"').to_string());
    Ok(cached_json(&body, etag, inm.as_deref()))
}

/// What a route computes from the state, the path segments and the query.
type Handler = fn(&StakingState, &[String], &Query) -> Result<Value, ApiError>;

/// One route: validate, read the state, translate.
async fn route<R: StakingReader>(
    reader: Arc<R>,
    segments: Vec<String>,
    q: Query,
    inm: Option<String>,
    handler: Handler,
) -> Result<warp::reply::Response, Rejection> {
    let run = async {
        let state = reader.staking_state().await?;
        let body = handler(&state, &segments, &q)?;
        tip_json(&*reader, body, inm).await
    };
    run.await.map_err(reject)
}

pub fn routes<R: StakingReader>(
    reader: Arc<R>,
) -> impl Filter<Extract = (impl Reply,), Error = Rejection> + Clone {
    let r = with_reader(reader.clone());
    let inm = if_none_match();
    let base = warp::get().and(warp::path!("extended" / "v3" / ..));
    macro_rules! get {
        ($path:expr, $handler:expr) => {
            base.and($path).and(query()).and(inm).and(r.clone()).and_then(
                move |segs, q: Query, inm: Option<String>, r: Arc<R>| route(r, segs, q, inm, $handler),
            )
        };
    }
    let bonds = get!(warp::path!("staking" / "bonds").map(Vec::new), bonds::list);
    let bond = get!(warp::path!("staking" / "bonds" / String).map(|a| vec![a]), bonds::one);
    let allowlist =
        get!(warp::path!("staking" / "bonds" / String / "allowlist").map(|a| vec![a]), bonds::allowlist);
    let allowlist_entry = get!(
        warp::path!("staking" / "bonds" / String / "allowlist" / String).map(|a, b| vec![a, b]),
        bonds::allowlist_entry
    );
    let registrations = get!(
        warp::path!("staking" / "bonds" / String / "registrations").map(|a| vec![a]),
        bonds::registrations
    );
    let registration = get!(
        warp::path!("staking" / "bonds" / String / "registrations" / String).map(|a, b| vec![a, b]),
        bonds::registration
    );
    let signer_list = get!(warp::path!("staking" / "signers").map(Vec::new), signers::list);
    let signer = get!(warp::path!("staking" / "signers" / String).map(|a| vec![a]), signers::one);
    let stakers =
        get!(warp::path!("staking" / "signers" / String / "stakers").map(|a| vec![a]), signers::stakers);
    let cycle_signers = base
        .and(warp::path!("staking" / "cycles" / String / "signers"))
        .and(get(reader.clone()))
        .and_then(|n: String, Get { reader: r, query: q, inm }: Get<R>| async move {
            let run = async {
                signers::check_cycle(&n)?;
                let state = r.staking_state().await?;
                let (_, latest) = r.pox_cycles(Paging { limit: 1, offset: 0 }).await?;
                let body = signers::cycle(&state, latest.first(), &q)?;
                tip_json(&*r, body, inm).await
            };
            run.await.map_err(reject)
        });
    let summary = get!(warp::path!("principals" / String / "staking").map(|a| vec![a]), principals::summary);
    let positions =
        get!(warp::path!("principals" / String / "staking" / "bonds").map(|a| vec![a]), principals::bonds);
    bonds
        .or(bond)
        .or(allowlist)
        .or(allowlist_entry)
        .or(registrations)
        .or(registration)
        .or(signer_list)
        .or(signer)
        .or(stakers)
        .or(cycle_signers)
        .or(summary)
        .or(positions)
}
