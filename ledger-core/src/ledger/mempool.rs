//! `/new_mempool_tx` and `/drop_mempool_tx`.

use super::rows::MempoolTxRow;
use super::tx::mempool_row;
use super::{LedgerError, Network};
use crate::events::payload::{DropMempoolTx, DropReason, NewMempoolTx};

pub fn mempool_rows(m: &NewMempoolTx, network: Network) -> Result<Vec<MempoolTxRow>, LedgerError> {
    m.raw_txs.iter().map(|raw| mempool_row(raw, network)).collect()
}

/// The API's mempool status for a drop reason; an unknown reason falls back to the generic
/// garbage-collection status.
pub fn drop_status(reason: &DropReason) -> &'static str {
    match reason {
        DropReason::ReplaceByFee => "dropped_replace_by_fee",
        DropReason::ReplaceAcrossFork => "dropped_replace_across_fork",
        DropReason::TooExpensive => "dropped_too_expensive",
        DropReason::StaleGarbageCollect | DropReason::Other(_) => "dropped_stale_garbage_collect",
        DropReason::Problematic => "dropped_problematic",
    }
}

/// (dropped tx ids, status, replacing tx id).
pub fn drops(d: &DropMempoolTx) -> (Vec<String>, &'static str, Option<String>) {
    (
        d.dropped_txids.iter().map(|t| super::normalize_hex(t)).collect(),
        drop_status(&d.reason),
        d.new_txid.as_deref().map(super::normalize_hex),
    )
}
