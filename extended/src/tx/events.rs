//! `GET /extended/v1/tx/events`: the canonical events of one transaction or one principal,
//! filtered by event type, newest first. The list is under `events`, without a `total`.

use std::str::FromStr;
use std::sync::Arc;

use serde_json::json;
use stacks_codec::address::Principal;
use warp::reply::Response;

use super::entity::event_json;
use super::params::parse_tx_id_in;
use super::reader::{EventFilter, EventOwner, TxStatsReader};
use crate::error::{ApiError, In, Rule};
use crate::params::{LimitRule, Query};
use crate::reply::{deprecated, json_with_etag};

/// The incumbent reads the limit as a transaction limit (default 20) capped at 100.
pub const TX_EVENTS_LIMIT: LimitRule = LimitRule::new(20, 100);

/// The `type` values and the stored event kinds each one covers.
pub const EVENT_TYPES: [(&str, &[&str]); 5] = [
    ("smart_contract_log", &["contract_log"]),
    ("stx_lock", &["stx_lock"]),
    ("stx_asset", &["stx_transfer", "stx_mint", "stx_burn"]),
    ("fungible_token_asset", &["ft_transfer", "ft_mint", "ft_burn"]),
    ("non_fungible_token_asset", &["nft_transfer", "nft_mint", "nft_burn"]),
];

fn invalid(param: &'static str, message: impl Into<String>) -> ApiError {
    ApiError::invalid(param, message)
}

pub(super) fn event_filter(q: &Query) -> Result<EventFilter, ApiError> {
    let owner = match (q.get("address"), q.get("tx_id")) {
        (None, None) => return Err(invalid("address", "can not find 'address' or 'tx_id' in the request")),
        (Some(_), Some(_)) => {
            return Err(invalid("address", "can't handle both 'address' and 'tx_id' in the same request"))
        }
        (Some(a), None) => {
            Principal::from_str(a).map_err(|_| ApiError::schema(In::Query, "address", Rule::Principal))?;
            EventOwner::Address(a.to_string())
        }
        (None, Some(t)) => {
            let id = if t.starts_with("0x") { t.to_string() } else { format!("0x{t}") };
            EventOwner::TxId(parse_tx_id_in(In::Query, "tx_id", &id)?.unwrap_or(id))
        }
    };
    let types = q.all("type");
    let mut kinds = Vec::new();
    for (i, t) in types.iter().enumerate() {
        let Some((_, k)) = EVENT_TYPES.iter().find(|(name, _)| name == t) else {
            let rule = Rule::Constants { n: EVENT_TYPES.len(), item: Some(i) };
            return Err(ApiError::schema(In::Query, "type", rule));
        };
        kinds.extend(k.iter().map(|s| s.to_string()));
    }
    if kinds.is_empty() {
        kinds = EVENT_TYPES.iter().flat_map(|(_, k)| k.iter().map(|s| s.to_string())).collect();
    }
    kinds.sort();
    kinds.dedup();
    Ok(EventFilter { owner, kinds })
}

pub(super) async fn tx_events<R: TxStatsReader>(
    reader: Arc<R>,
    q: Query,
    etag: Option<String>,
) -> Result<Response, ApiError> {
    let paging = q.paging(TX_EVENTS_LIMIT)?;
    let filter = event_filter(&q)?;
    let events = reader.events_filtered(&filter, paging).await?;
    let body = json!({
        "limit": paging.limit,
        "offset": paging.offset,
        "events": events.iter().map(event_json).collect::<Vec<_>>(),
    });
    Ok(deprecated(json_with_etag(&body, etag.as_deref())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exactly_one_owner_and_known_types() {
        assert!(event_filter(&Query::parse("limit=20")).is_err());
        let both = format!("address=SP000000000000000000002Q6VF78&tx_id=0x{}", "a".repeat(64));
        assert!(event_filter(&Query::parse(&both)).is_err());
        assert!(event_filter(&Query::parse("address=nope")).is_err());
        assert!(event_filter(&Query::parse("address=SP000000000000000000002Q6VF78&type=bogus")).is_err());
        let f = event_filter(&Query::parse(
            "address=SP000000000000000000002Q6VF78&type=stx_asset&type=smart_contract_log",
        ))
        .unwrap();
        assert_eq!(f.kinds, ["contract_log", "stx_burn", "stx_mint", "stx_transfer"]);
        let f = event_filter(&Query::parse(&format!("tx_id={}", "A".repeat(64)))).unwrap();
        assert_eq!(f.owner, EventOwner::TxId(format!("0x{}", "a".repeat(64))));
        assert_eq!(f.kinds.len(), 11);
    }
}
