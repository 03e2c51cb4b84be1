//! `/new_microblocks`: a streamed, not yet anchored microblock batch. Its transactions are kept
//! as a preview (`index_block_hash == ""`, never canonical, no operations or balance effect):
//! the anchor block that confirms them carries their receipts again and is what counts.

use std::collections::HashMap;

use ledger_read::TxRender;

use super::block::{derive_tx, group_events};
use super::rows::{EventRow, MicroblockRow, TxRow};
use super::tx::ChainCheck;
use super::{int, normalize_hex, LedgerError, Network};
use crate::events::payload::NewMicroblocks;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DerivedStream {
    pub parent_index_block_hash: String,
    pub microblocks: Vec<MicroblockRow>,
    pub txs: Vec<TxRow>,
    pub events: Vec<EventRow>,
}

/// `render` writes each transaction's stored text ([`super::derive_block`]).
pub fn derive_stream(
    m: &NewMicroblocks,
    network: Network,
    render: &dyn TxRender,
) -> Result<DerivedStream, LedgerError> {
    let by_tx = group_events(&m.transactions, &m.events)?;
    let parent = normalize_hex(&m.parent_index_block_hash);
    let mut out = DerivedStream { parent_index_block_hash: parent.clone(), ..DerivedStream::default() };
    let mut per_mb: HashMap<String, usize> = HashMap::new();
    for r in &m.transactions {
        let txid = normalize_hex(&r.txid);
        let evs = by_tx.get(&txid).map(Vec::as_slice).unwrap_or(&[]);
        let t =
            derive_tx(r, evs, i64::from(r.tx_index), m.burn_block_height, network, ChainCheck::Skip, render)?;
        let Some(seq) = t.row.microblock_sequence else {
            return Err(LedgerError::BadReceipt {
                txid,
                reason: "microblock transaction without microblock fields".into(),
            });
        };
        match per_mb.get(&t.row.microblock_hash) {
            Some(&i) => out.microblocks[i].tx_count += 1,
            None => {
                per_mb.insert(t.row.microblock_hash.clone(), out.microblocks.len());
                out.microblocks.push(MicroblockRow {
                    microblock_hash: t.row.microblock_hash.clone(),
                    microblock_sequence: seq,
                    microblock_parent_hash: t.row.microblock_parent_hash.clone().unwrap_or_default(),
                    parent_index_block_hash: parent.clone(),
                    tx_count: 1,
                    stream_burn_block: Some((
                        normalize_hex(&m.burn_block_hash),
                        int(m.burn_block_timestamp),
                        int(m.burn_block_height),
                    )),
                    // Set by the writer, which knows when the event arrived.
                    stream_receipt_time: None,
                });
            }
        }
        out.txs.push(t.row);
        out.events.extend(t.events);
    }
    out.microblocks.sort_by_key(|m| m.microblock_sequence);
    Ok(out)
}
