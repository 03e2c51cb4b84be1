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
    let (Some(tip), Some(genesis)) = (ctx.reader.tip().await?.map(|t| t.block), ctx.reader.genesis().await?)
    else {
        // Nothing ingested yet: retriable, the chain will arrive.
        return Err(RosettaError::with_message(ErrorKind::BlockNotFound, "no block ingested yet"));
    };
    let target = match &ctx.node_tip {
        Some(cache) => cache.node_tip().await.and_then(|t| i64::try_from(t.height).ok()),
        None => None,
    };
    Ok(NetworkStatusResponse {
        current_block_identifier: identifier(&tip),
        current_block_timestamp: tip.timestamp_ms,
        genesis_block_identifier: identifier(&genesis),
        oldest_block_identifier: None,
        sync_status: Some(sync_status(tip.block_height, target)),
        peers: Vec::<Peer>::new(),
    })
}

/// Where ingestion stands against the node's tip (`target`: `None` without a node, or when it
/// does not answer). As the incumbent: `target_index` is the node's `stacks_tip_height` (never
/// below what we have), `synced` whether we have it.
fn sync_status(current: i64, target: Option<i64>) -> SyncStatus {
    match target {
        Some(t) => SyncStatus {
            current_index: current,
            target_index: Some(t.max(current)),
            stage: Some(if t > current { "syncing" } else { "synced" }.to_owned()),
            synced: Some(t <= current),
        },
        // Without a node we know only what ingestion has seen.
        None => SyncStatus {
            current_index: current,
            target_index: None,
            stage: Some("ingested".to_owned()),
            synced: None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sync_statuses() {
        let behind = sync_status(10, Some(12));
        assert_eq!(
            (behind.target_index, behind.synced, behind.stage.as_deref()),
            (Some(12), Some(false), Some("syncing"))
        );
        let caught_up = sync_status(12, Some(12));
        assert_eq!((caught_up.target_index, caught_up.synced), (Some(12), Some(true)));
        let ahead = sync_status(13, Some(12));
        assert_eq!((ahead.target_index, ahead.synced), (Some(13), Some(true)));
        let alone = sync_status(13, None);
        assert_eq!(
            (alone.target_index, alone.synced, alone.stage.as_deref()),
            (None, None, Some("ingested"))
        );
    }
}
