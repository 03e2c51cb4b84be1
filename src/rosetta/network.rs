//! `/network/list`, `/network/options`, `/network/status`.

use bytes::Bytes;
use rosetta_spec::{
    Allow, ErrorCatalog, MetadataRequest, NetworkListResponse, NetworkOptionsResponse, NetworkRequest,
    NetworkStatusResponse, OperationStatus, Peer, SyncStatus, Version, ROSETTA_VERSION,
};

use super::block::identifier;
use super::error::RosettaError;
use super::request::{body_object, network_identifier, parse};
use super::{Rosetta, RosettaResult};
use crate::ledger::Network;
use crate::rosetta::ErrorKind;

/// Operation statuses, as the incumbent had them: `pending` (mempool) counts as successful.
pub const OPERATION_STATUSES: &[(&str, bool)] =
    &[("success", true), ("pending", true), ("abort_by_response", false), ("abort_by_post_condition", false)];

/// Operation types, in the incumbent's order.
pub const OPERATION_TYPES: &[&str] = &[
    "token_transfer",
    "contract_call",
    "smart_contract",
    "coinbase",
    "poison_microblock",
    "fee",
    "mint",
    "burn",
    "miner_reward",
    "stx_lock",
    "stx_unlock",
    "stack_stx",
    "delegate_stx",
    "revoke_delegate_stx",
    "tenure_change",
];

/// Methods `/call` answers (see `call.rs`).
pub const CALL_METHODS: &[&str] = &[];

pub fn list(ctx: &Rosetta, body: &Bytes) -> RosettaResult<NetworkListResponse> {
    list_for(ctx.network, body)
}

/// `/network/list` for a network alone (offline mode has no store).
pub fn list_for(network: Network, body: &Bytes) -> RosettaResult<NetworkListResponse> {
    let value = body_object(body)?;
    let _: MetadataRequest = serde_json::from_value(value)
        .map_err(|e| RosettaError::with_message(ErrorKind::InvalidParams, e.to_string()))?;
    Ok(NetworkListResponse { network_identifiers: vec![network_identifier(network)] })
}

pub fn options(ctx: &Rosetta, body: &Bytes) -> RosettaResult<NetworkOptionsResponse> {
    options_for(ctx.network, body)
}

/// `/network/options` for a network alone (offline mode has no store).
pub fn options_for(network: Network, body: &Bytes) -> RosettaResult<NetworkOptionsResponse> {
    let _: NetworkRequest = parse(body, network, &[])?;
    Ok(NetworkOptionsResponse {
        version: Version {
            rosetta_version: ROSETTA_VERSION.to_owned(),
            node_version: stacks_extended::SERVER_VERSION.to_owned(),
            middleware_version: Some(env!("CARGO_PKG_VERSION").to_owned()),
            metadata: None,
        },
        allow: Allow {
            operation_statuses: OPERATION_STATUSES
                .iter()
                .map(|(s, ok)| OperationStatus { status: (*s).to_owned(), successful: *ok })
                .collect(),
            operation_types: OPERATION_TYPES.iter().map(|t| (*t).to_owned()).collect(),
            errors: RosettaError::catalog(),
            historical_balance_lookup: true,
            timestamp_start_index: None,
            call_methods: CALL_METHODS.iter().map(|m| (*m).to_owned()).collect(),
            balance_exemptions: Vec::new(),
        },
    })
}

/// `/network/status`: tip, genesis and, when a node is configured, how far behind it we are.
pub async fn status(ctx: &Rosetta, body: &Bytes) -> RosettaResult<NetworkStatusResponse> {
    let _: NetworkRequest = parse(body, ctx.network, &[])?;
    let (Some(tip), Some(genesis)) = (ctx.store.rosetta_tip().await?, ctx.store.rosetta_genesis().await?)
    else {
        // Nothing ingested yet: retriable, the chain will arrive.
        return Err(RosettaError::with_message(ErrorKind::BlockNotFound, "no block ingested yet"));
    };
    let target = match &ctx.node_rpc {
        Some(url) => node_tip_height(url).await,
        None => None,
    };
    let sync_status = Some(SyncStatus {
        current_index: tip.block_height,
        target_index: target.map(|t| t.max(tip.block_height)),
        stage: Some(match target {
            Some(t) if t > tip.block_height => "syncing".to_owned(),
            Some(_) => "synced".to_owned(),
            // Without a node we know only what ingestion has seen.
            None => "ingested".to_owned(),
        }),
    });
    Ok(NetworkStatusResponse {
        current_block_identifier: identifier(&tip),
        current_block_timestamp: tip.timestamp_ms,
        genesis_block_identifier: identifier(&genesis),
        oldest_block_identifier: None,
        sync_status,
        peers: Vec::<Peer>::new(),
    })
}

/// The node's `stacks_tip_height` from `/v2/info`; `None` (logged) when it does not answer.
async fn node_tip_height(url: &str) -> Option<i64> {
    let client = reqwest::Client::builder().timeout(std::time::Duration::from_secs(2)).build().ok()?;
    let url = format!("{}/v2/info", url.trim_end_matches('/'));
    let res = async { client.get(&url).send().await?.error_for_status()?.json::<serde_json::Value>().await };
    match res.await {
        Ok(info) => info.get("stacks_tip_height").and_then(serde_json::Value::as_i64),
        Err(e) => {
            tracing::warn!(%url, error = %e, "rosetta: node /v2/info did not answer");
            None
        }
    }
}
