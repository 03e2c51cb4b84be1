//! Turns "what changed" into notifications, once per change, through the `/extended` readers
//! and renderers (the payloads are the extended entities), and publishes them on the hub.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{json, Map, Value};
use stacks_extended::tx::{any_tx_json, mempool_tx_json, mined_tx_json, AnyTx, MinedTx, RenderOptions};
use stacks_extended::{
    block_v1, microblock_json, stx_balance_json, AddressReader, BlockRecord, BlockRef, ChainReader,
    MicroblockReader, Paging, ReadError, TxReader,
};

use crate::hub::{Hub, Topic};

/// What an ingested event changed: the core's announcement (`ledger-read`).
pub use ledger_read::Change;

/// Everything the notifier reads.
pub trait LiveReader: ChainReader + TxReader + AddressReader + MicroblockReader {}
impl<R: ChainReader + TxReader + AddressReader + MicroblockReader> LiveReader for R {}

/// Page size for reading a block's transactions.
const PAGE: u32 = 200;
/// The longest reorg walked back to find the fork point; deeper means a resync.
const MAX_REORG_DEPTH: usize = 1_000;

pub struct Notifier<R> {
    reader: Arc<R>,
    hub: Arc<Hub>,
    /// The canonical tip as last announced.
    tip: Option<BlockRecord>,
    /// Mempool transactions announced, so that each entry into the mempool is announced once.
    mempool_seen: MempoolSeen,
}

/// How many announced mempool entries [`MempoolSeen`] remembers. A transaction is announced
/// twice only when the same entry is reported again after this many newer ones (the node
/// repeats a transaction, or confirms one we recorded, within moments).
const MEMPOOL_SEEN: usize = 20_000;

/// The mempool entries announced lately, as (receipt time, status) per txid. The incumbent
/// notifies a mempool transaction when its insert created the row (or revived a dropped one):
/// a transaction reported again (a local submission, then the node's `/new_mempool_tx`; or the
/// node repeating itself) is the same entry and is not announced again; one that re-entered
/// the mempool is a new entry (new receipt time or status).
#[derive(Default)]
struct MempoolSeen {
    entries: std::collections::HashMap<String, (u64, String)>,
    order: std::collections::VecDeque<String>,
}

impl MempoolSeen {
    /// Whether `tx` is a mempool entry not announced yet; remembers it.
    fn first_time(&mut self, tx_id: &str, receipt_time: u64, status: &str) -> bool {
        let entry = (receipt_time, status.to_owned());
        match self.entries.get_mut(tx_id) {
            Some(seen) if *seen == entry => false,
            Some(seen) => {
                *seen = entry;
                true
            }
            None => {
                if self.order.len() >= MEMPOOL_SEEN {
                    if let Some(old) = self.order.pop_front() {
                        self.entries.remove(&old);
                    }
                }
                self.order.push_back(tx_id.to_owned());
                self.entries.insert(tx_id.to_owned(), entry);
                true
            }
        }
    }
}

impl<R: LiveReader> Notifier<R> {
    /// Starts from the current tip: history is not announced.
    pub async fn new(reader: Arc<R>, hub: Arc<Hub>) -> Result<Notifier<R>, ReadError> {
        let tip = reader.block(BlockRef::Latest).await?;
        Ok(Notifier { reader, hub, tip, mempool_seen: MempoolSeen::default() })
    }

    pub fn hub(&self) -> &Arc<Hub> {
        &self.hub
    }

    /// Publishes what `change` made visible. On a read error the announced tip stays at the last
    /// block fully published, so the next change picks up from there.
    pub async fn apply(&mut self, change: &Change) -> Result<(), ReadError> {
        // A chain change reads the tip before asking whether anyone listens: a tip read after
        // a skip was decided could include a block committed after a client subscribed, which
        // the next change would then take as announced.
        let latest = match change {
            Change::Chain => Some(self.reader.block(BlockRef::Latest).await?),
            _ => None,
        };
        if self.hub.skip_if_idle() {
            // Nobody to tell (`Hub::skip_if_idle`). Only the announced tip follows the chain, so
            // that the first change computed once a client connects announces what comes after
            // it, not everything skipped before.
            if let Some(Some(tip)) = latest {
                self.tip = Some(tip);
            }
            return Ok(());
        }
        match change {
            Change::Chain => self.chain(latest.flatten()).await,
            Change::MempoolAdded { tx_ids } => {
                for id in tx_ids {
                    if let Some(AnyTx::Mempool(t)) = self.reader.tx(id, false).await? {
                        if !self.mempool_seen.first_time(&t.tx_id, t.receipt_time, &t.status) {
                            continue;
                        }
                        let Ok(v) = mempool_tx_json(&t, RenderOptions::default()) else { continue };
                        self.hub.publish(Topic::Mempool, v.clone());
                        self.hub.publish(Topic::Tx(t.tx_id.clone()), v);
                    }
                }
                Ok(())
            }
            Change::MempoolDropped { tx_ids } | Change::Microblocks { tx_ids, .. } => {
                let unanchored = matches!(change, Change::Microblocks { .. });
                if let Change::Microblocks { microblock_hashes, .. } = change {
                    self.microblocks(microblock_hashes).await?;
                }
                for id in tx_ids {
                    if let Some(tx) = self.reader.tx(id, unanchored).await? {
                        let events = match &tx {
                            AnyTx::Mined(m) => Some(self.events(m).await?),
                            AnyTx::Mempool(_) => None,
                        };
                        let Ok(v) = any_tx_json(&tx, events.as_deref(), RenderOptions::default()) else {
                            continue;
                        };
                        self.hub.publish(Topic::Tx(id.clone()), v);
                    }
                }
                Ok(())
            }
        }
    }

    /// The incumbent's `microblock` notification, one per microblock the store accepted (a
    /// stream it rejected, e.g. on a parent that is not the tip, has no canonical row).
    async fn microblocks(&self, hashes: &[String]) -> Result<(), ReadError> {
        for hash in hashes {
            match self.reader.microblock(hash).await? {
                Some(m) if m.canonical && m.microblock_canonical => {
                    self.hub.publish(Topic::Microblock, microblock_json(&m));
                }
                _ => tracing::debug!(%hash, "live: microblock not accepted, not announced"),
            }
        }
        Ok(())
    }

    /// Announces the chain up to `new_tip` (the canonical tip, read when the change came).
    async fn chain(&mut self, new_tip: Option<BlockRecord>) -> Result<(), ReadError> {
        let Some(new_tip) = new_tip else { return Ok(()) };
        let Some(old) = self.tip.clone() else {
            // The store was empty at start: the whole chain is new.
            return self.publish_heights(0, new_tip.block_height).await;
        };
        if old.index_block_hash == new_tip.index_block_hash {
            return Ok(());
        }
        // Walk back from the announced tip to the first block still canonical.
        let mut orphaned = Vec::new();
        // By block hash: that lookup also finds non-canonical blocks (canonical first).
        let mut cur = self.reader.block(BlockRef::Hash(old.block_hash.clone())).await?;
        let fork_height = loop {
            match cur {
                Some(b) if b.canonical => {
                    // Announced (an ancestor of an announced block): the tip if nothing follows.
                    let height = b.block_height;
                    self.tip = Some(b);
                    break height;
                }
                Some(b) if orphaned.len() < MAX_REORG_DEPTH => {
                    let parent = b.parent_block_hash.clone();
                    orphaned.push(b);
                    cur = self.reader.block(BlockRef::Hash(parent)).await?;
                }
                // Unknown ancestry or too deep: announce from the oldest orphan we saw, the
                // first block without a parent to extend (a resync).
                _ => {
                    self.tip = None;
                    break orphaned.last().map_or(old.block_height, |b| b.block_height.saturating_sub(1));
                }
            }
        };
        if !orphaned.is_empty() {
            let blocks: Vec<Value> = orphaned
                .iter()
                .map(|b| {
                    json!({"block_height": b.block_height, "block_hash": b.block_hash,
                           "index_block_hash": b.index_block_hash})
                })
                .collect();
            self.hub.publish(
                Topic::Reorg,
                json!({
                    "orphaned_blocks": blocks,
                    "fork_height": fork_height,
                    "new_tip": {"block_height": new_tip.block_height, "block_hash": new_tip.block_hash,
                                "index_block_hash": new_tip.index_block_hash},
                }),
            );
        }
        let published = self.publish_heights(fork_height + 1, new_tip.block_height).await;
        // A resync that announced nothing (or failed first): the tip read stands for the
        // announced one, rather than none, which would announce the whole chain again.
        self.tip.get_or_insert(new_tip);
        published
    }

    /// Announces the canonical blocks at heights `from..=to`, as they are now, each a child of
    /// the one announced before it. The announced tip becomes the last one announced, not the
    /// tip read before: if the chain moved in between, that tip may never have been announced,
    /// and a later reorg must name only blocks a subscriber was told about. A block that does
    /// not extend the announced tip (the chain forked during the walk) ends it: the change
    /// that forked it comes next, and walks back from the announced tip.
    async fn publish_heights(&mut self, from: u64, to: u64) -> Result<(), ReadError> {
        for height in from..=to {
            let Some(b) = self.reader.block(BlockRef::Height(height)).await? else { continue };
            if self.tip.as_ref().is_some_and(|tip| tip.block_hash != b.parent_block_hash) {
                break;
            }
            self.publish_block(&b).await?;
            self.tip = Some(b);
        }
        Ok(())
    }

    async fn events(&self, tx: &MinedTx) -> Result<Vec<stacks_extended::tx::TxEvent>, ReadError> {
        let limit = u32::try_from(tx.event_count).unwrap_or(u32::MAX);
        if limit == 0 {
            return Ok(Vec::new());
        }
        self.reader.tx_events(tx, Paging { limit, offset: 0 }).await
    }

    /// A new canonical block: the block, then per transaction its update, its address updates
    /// and NFT events, then one balance update per address touched.
    async fn publish_block(&self, b: &BlockRecord) -> Result<(), ReadError> {
        let contents = self.reader.block_contents(b).await?;
        self.hub.publish(Topic::Block, block_v1(b, &contents));
        let at = stacks_extended::tx::BlockRef::Hash(b.block_hash.clone());
        let mut txs = Vec::new();
        loop {
            let (total, page) =
                self.reader.block_txs(&at, Paging { limit: PAGE, offset: txs.len() as u64 }).await?;
            let n = page.len();
            txs.extend(page);
            if n == 0 || txs.len() as u64 >= total {
                break;
            }
        }
        // Oldest first, as they executed.
        txs.sort_by_key(|t| (t.microblock_sequence.map_or(i64::MAX, i64::from), t.tx_index));
        let mut touched = BTreeSet::new();
        for tx in &txs {
            let events = self.events(tx).await?;
            let Ok(v) = mined_tx_json(tx, Some(&events), RenderOptions::default()) else {
                tracing::warn!(tx_id = %tx.tx_id, "live: stored transaction does not render");
                continue;
            };
            self.hub.publish(Topic::Tx(tx.tx_id.clone()), v.clone());
            let addresses = principals(&v);
            for address in &addresses {
                self.hub.publish(Topic::AddressTx(address.clone()), address_tx(address, &v));
            }
            for e in v["events"].as_array().into_iter().flatten() {
                if e["event_type"] == "non_fungible_token_asset" {
                    let ev = nft_event(e, &v);
                    let asset = e["asset"]["asset_id"].as_str().unwrap_or_default().to_owned();
                    let hex = e["asset"]["value"]["hex"].as_str().unwrap_or_default().to_owned();
                    self.hub.publish(Topic::NftEvent, ev.clone());
                    self.hub.publish(Topic::NftAsset(asset.clone(), hex), ev.clone());
                    self.hub.publish(Topic::NftCollection(asset), ev);
                }
            }
            touched.extend(addresses);
        }
        for address in touched {
            let totals = self.reader.stx_totals(&address, None).await?;
            let mut v = stx_balance_json(&totals);
            if let Value::Object(m) = &mut v {
                let mut with_address = Map::new();
                with_address.insert("address".into(), address.clone().into());
                with_address.extend(std::mem::take(m));
                *m = with_address;
            }
            self.hub.publish(Topic::AddressBalance(address), v);
        }
        Ok(())
    }
}

/// Every principal a rendered transaction involves: sender, sponsor, recipient, contract, and
/// the parties of its asset and lock events.
pub fn principals(tx: &Value) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut add = |v: &Value| {
        if let Some(s) = v.as_str().filter(|s| !s.is_empty()) {
            out.insert(s.to_owned());
        }
    };
    add(&tx["sender_address"]);
    if tx["sponsored"] == true {
        add(&tx["sponsor_address"]);
    }
    add(&tx["token_transfer"]["recipient_address"]);
    add(&tx["contract_call"]["contract_id"]);
    add(&tx["smart_contract"]["contract_id"]);
    for e in tx["events"].as_array().into_iter().flatten() {
        add(&e["asset"]["sender"]);
        add(&e["asset"]["recipient"]);
        add(&e["stx_lock_event"]["locked_address"]);
    }
    out
}

/// The incumbent's `AddressTransactionWithTransfers` notification for one principal.
pub fn address_tx(address: &str, tx: &Value) -> Value {
    let mut sent: i128 = 0;
    let mut received: i128 = 0;
    let mut transfers = Vec::new();
    if tx["sender_address"] == address {
        sent += tx["fee_rate"].as_str().and_then(|f| f.parse::<i128>().ok()).unwrap_or(0);
    }
    for e in tx["events"].as_array().into_iter().flatten() {
        if e["event_type"] != "stx_asset" {
            continue;
        }
        let a = &e["asset"];
        let amount = a["amount"].as_str().and_then(|x| x.parse::<i128>().ok()).unwrap_or(0);
        let (from_us, to_us) = (a["sender"] == address, a["recipient"] == address);
        if from_us {
            sent += amount;
        }
        if to_us {
            received += amount;
        }
        if (from_us || to_us) && a["asset_event_type"] == "transfer" {
            transfers
                .push(json!({"amount": a["amount"], "sender": a["sender"], "recipient": a["recipient"]}));
        }
    }
    json!({
        "address": address,
        "tx_id": tx["tx_id"],
        "tx_status": tx["tx_status"],
        "tx_type": tx["tx_type"],
        "tx": tx,
        "stx_sent": sent.to_string(),
        "stx_received": received.to_string(),
        "stx_transfers": transfers,
    })
}

/// The incumbent's `NftEvent` entity from a rendered event and its transaction.
pub fn nft_event(e: &Value, tx: &Value) -> Value {
    let a = &e["asset"];
    let opt = |v: &Value| if v.as_str().is_some_and(|s| !s.is_empty()) { v.clone() } else { Value::Null };
    json!({
        "sender": opt(&a["sender"]),
        "recipient": opt(&a["recipient"]),
        "asset_identifier": a["asset_id"],
        "asset_event_type": a["asset_event_type"],
        "value": a["value"],
        "tx_id": tx["tx_id"],
        "tx_index": tx["tx_index"],
        "block_height": tx["block_height"],
        "event_index": e["event_index"],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tx() -> Value {
        json!({
            "tx_id": "0x01", "tx_status": "success", "tx_type": "token_transfer", "tx_index": 2,
            "block_height": 7, "sender_address": "SA", "fee_rate": "180", "sponsored": false,
            "token_transfer": {"recipient_address": "SB"},
            "events": [
                {"event_index": 0, "event_type": "stx_asset",
                 "asset": {"asset_event_type": "transfer", "sender": "SA", "recipient": "SB", "amount": "1000"}},
                {"event_index": 1, "event_type": "non_fungible_token_asset",
                 "asset": {"asset_event_type": "mint", "asset_id": "SC.nft::n", "sender": "", "recipient": "SD",
                           "value": {"hex": "0x01", "repr": "u1"}}},
            ],
        })
    }

    #[test]
    fn principals_cover_parties_and_events() {
        let p: Vec<String> = principals(&tx()).into_iter().collect();
        assert_eq!(p, ["SA", "SB", "SD"]);
    }

    #[test]
    fn address_tx_counts_fees_and_transfers() {
        let a = address_tx("SA", &tx());
        assert_eq!(a["stx_sent"], "1180");
        assert_eq!(a["stx_received"], "0");
        assert_eq!(a["stx_transfers"][0]["amount"], "1000");
        let b = address_tx("SB", &tx());
        assert_eq!((b["stx_sent"].as_str(), b["stx_received"].as_str()), (Some("0"), Some("1000")));
        assert_eq!(address_tx("SD", &tx())["stx_transfers"], json!([]));
    }

    #[test]
    fn nft_events_follow_the_entity() {
        let t = tx();
        let e = nft_event(&t["events"][1], &t);
        assert_eq!(e["sender"], Value::Null);
        assert_eq!(e["recipient"], "SD");
        assert_eq!(e["asset_identifier"], "SC.nft::n");
        assert_eq!((e["block_height"].as_u64(), e["event_index"].as_u64()), (Some(7), Some(1)));
    }

    #[test]
    fn a_mempool_entry_is_announced_once() {
        let mut seen = MempoolSeen::default();
        assert!(seen.first_time("0x01", 10, "pending"));
        // Reported again (the node after our own record): the same entry.
        assert!(!seen.first_time("0x01", 10, "pending"));
        // Back in the mempool later: a new entry.
        assert!(seen.first_time("0x01", 20, "pending"));
        assert!(seen.first_time("0x02", 10, "pending"));
        // The oldest are forgotten past the bound.
        for i in 0..MEMPOOL_SEEN {
            seen.first_time(&format!("0x{i:x}ff"), 1, "pending");
        }
        assert!(seen.first_time("0x02", 10, "pending"));
        assert!(seen.entries.len() <= MEMPOOL_SEEN);
    }

    #[test]
    fn changes_round_trip_as_notify_payloads() {
        let c = Change::MempoolAdded { tx_ids: vec!["0xab".into()] };
        let s = serde_json::to_string(&c).unwrap();
        assert_eq!(s, r#"{"kind":"mempool_added","tx_ids":["0xab"]}"#);
        assert_eq!(serde_json::from_str::<Change>(&s).unwrap(), c);
    }
}
