//! Parameter validation and not-found answers of the chain routes, over a fake chain.

use std::sync::Arc;

use serde_json::Value;

use super::*;
use crate::reader::{ReadError, Tip};

/// Blocks 1..=3, one per burn block, no rewards.
struct Fake;

fn block(h: u64) -> BlockRecord {
    BlockRecord {
        canonical: true,
        block_height: h,
        block_hash: format!("0x{:064x}", h),
        index_block_hash: format!("0x{:064x}", h + 100),
        burn_block_hash: format!("0x{:064x}", h + 200),
        burn_block_height: h + 10,
        block_time: 1_700_000_000 + h as i64,
        burn_block_time: 1_700_000_000 + h as i64,
        tx_count: 1,
        ..Default::default()
    }
}

impl TipReader for Fake {
    fn tip(&self) -> ledger_read::ReadFuture<'_, Option<Tip>> {
        let b = block(3);
        let block = ledger_read::LedgerBlock {
            block_height: 3,
            block_hash: b.block_hash,
            index_block_hash: b.index_block_hash,
            burn_block_height: 13,
            canonical: true,
            ..Default::default()
        };
        Box::pin(async move { Ok(Some(Tip { block, microblock: None, burn_height: 13 })) })
    }
}

impl ChainReader for Fake {
    async fn block(&self, by: BlockRef) -> Result<Option<BlockRecord>, ReadError> {
        Ok((1..=3).map(block).find(|b| match &by {
            BlockRef::Hash(h) => &b.block_hash == h,
            BlockRef::AnyHash(h) => &b.block_hash == h || &b.index_block_hash == h,
            BlockRef::Height(h) => b.block_height == *h,
            BlockRef::Latest => b.block_height == 3,
            BlockRef::BurnHash(h) => &b.burn_block_hash == h,
            BlockRef::BurnHeight(h) => b.burn_block_height == *h,
        }))
    }
    async fn block_contents(&self, b: &BlockRecord) -> Result<BlockContents, ReadError> {
        Ok(BlockContents {
            tx_ids: vec![format!("0x{:064x}", b.block_height + 300)].into(),
            ..Default::default()
        })
    }
    async fn block_signer_signatures(&self, _: &BlockRecord) -> Result<Vec<String>, ReadError> {
        Ok(vec!["0xaa".into(), "0xbb".into(), "0xcc".into()])
    }
    async fn blocks(&self, limit: u32, offset: u64) -> Result<(u64, Vec<BlockRecord>), ReadError> {
        Ok((3, (1..=3).rev().map(block).skip(offset as usize).take(limit as usize).collect()))
    }
    async fn blocks_below(&self, height: u64, limit: u32) -> Result<Vec<BlockRecord>, ReadError> {
        Ok((1..=height.min(3)).rev().map(block).take(limit as usize).collect())
    }
    async fn block_by_time(&self, time: i64) -> Result<Option<BlockRecord>, ReadError> {
        Ok((1..=3).rev().map(block).find(|b| b.block_time <= time))
    }
    async fn burn_block_blocks(&self, _: &str, _: u32, _: u64) -> Result<(u64, Vec<BlockRecord>), ReadError> {
        Ok((0, vec![]))
    }
    async fn tenure_blocks(
        &self,
        _: u64,
        _: Option<u64>,
        _: u32,
    ) -> Result<(u64, Vec<BlockRecord>), ReadError> {
        Ok((0, vec![]))
    }
    async fn average_block_times(&self, _: i64, _: [i64; 4]) -> Result<[(i64, u64); 4], ReadError> {
        // 1.234 s, 0.125 s (toFixed rounds the exact tie up: 0.13), none, none.
        Ok([(1234, 1000), (1, 8), (0, 0), (0, 0)])
    }
    async fn burn_block(&self, _: BurnRef) -> Result<Option<BurnBlockRecord>, ReadError> {
        Ok(None)
    }
    async fn burn_blocks(&self, _: u32, _: u64) -> Result<(u64, Vec<BurnBlockRecord>), ReadError> {
        Ok((0, vec![]))
    }
    async fn supply(&self, height: Option<u64>) -> Result<Option<SupplyRecord>, ReadError> {
        Ok(match height {
            Some(h) if h > 3 => None,
            h => Some(SupplyRecord { total_ustx: 4_000_000, block_height: h.unwrap_or(3) }),
        })
    }
    async fn burnchain_rewards(
        &self,
        _: Option<&str>,
        _: u32,
        _: u64,
    ) -> Result<Vec<BurnchainReward>, ReadError> {
        Ok(vec![])
    }
    async fn burnchain_reward_total(&self, _: &str) -> Result<i128, ReadError> {
        Ok(7)
    }
    async fn reward_slot_holders(
        &self,
        _: Option<&str>,
        _: u32,
        _: u64,
    ) -> Result<(u64, Vec<RewardSlotHolder>), ReadError> {
        Ok((0, vec![]))
    }
    async fn block_list(
        &self,
        height: u64,
        limit: u32,
    ) -> Result<Vec<(BlockRecord, BlockContents)>, ReadError> {
        let mut out = Vec::new();
        for b in self.blocks_below(height, limit).await? {
            let c = self.block_contents(&b).await?;
            out.push((b, c));
        }
        Ok(out)
    }
    /// Burn block 13 paid two outputs of one transaction to `mkpay`.
    async fn pox_txs(
        &self,
        of: PoxTxsOf,
        limit: u32,
        offset: u64,
    ) -> Result<(u64, Vec<BurnPoxTx>), ReadError> {
        let all: Vec<BurnPoxTx> = (1..=2)
            .map(|utxo_idx| BurnPoxTx {
                burn_block_hash: block(3).burn_block_hash,
                burn_block_height: 13,
                tx_id: "0xbeef".into(),
                recipient: "mkpay".into(),
                utxo_idx,
                amount: 500 * utxo_idx,
            })
            .filter(|t| match &of {
                PoxTxsOf::Burn(BurnRef::Height(h)) => t.burn_block_height == *h,
                PoxTxsOf::Burn(BurnRef::Hash(h)) => &t.burn_block_hash == h,
                PoxTxsOf::Burn(BurnRef::Latest) => true,
                PoxTxsOf::Recipient(r) => &t.recipient == r,
            })
            .collect();
        Ok((all.len() as u64, all.into_iter().skip(offset as usize).take(limit as usize).collect()))
    }
}

async fn get(path: &str) -> (u16, Value, warp::http::HeaderMap) {
    let api = crate::chain::routes(Arc::new(Fake)).recover(crate::recover);
    let res = warp::test::request().path(path).reply(&api).await;
    let body = serde_json::from_slice(res.body()).unwrap_or(Value::Null);
    (res.status().as_u16(), body, res.headers().clone())
}

#[tokio::test]
async fn bad_params_are_the_specs_500_naming_the_parameter() {
    for (path, param) in [
        ("/extended/v1/block?limit=31", "limit"),
        ("/extended/v1/block/by_height/-1", "height"),
        ("/extended/v1/block/by_height/abc", "height"),
        ("/extended/v2/blocks/abc", "height_or_hash"),
        ("/extended/v2/blocks?offset=301", "offset"),
        ("/extended/v2/block-tenures//blocks", "tenure_height"),
        ("/extended/v2/burn-blocks/xyz", "height_or_hash"),
        ("/extended/v1/info/network_block_time/foo", "network"),
        ("/extended/v1/burnchain/rewards/notanaddress", "address"),
        ("/extended/v1/stx_supply?height=x", "height"),
    ] {
        let (status, body, _) = get(path).await;
        assert_eq!(status, 500, "{path}");
        assert!(body["error"].as_str().unwrap().contains(param), "{path}: {body}");
        assert!(body["errorTag"].is_string() && body["stack"].is_string(), "{path}");
    }
}

#[tokio::test]
async fn unknown_entities_are_404_as_the_incumbent() {
    for (path, message) in [
        ("/extended/v1/block/0x1234", "cannot find block by hash"),
        ("/extended/v1/block/by_height/9", "cannot find block by height"),
        ("/extended/v2/blocks/9", "Block not found"),
        // A known block whose page has no transaction (this fake's blocks have none): the
        // incumbent's v2 transactions query finds no row and answers "Block not found".
        ("/extended/v2/blocks/2/transactions", "Block not found"),
        ("/extended/v2/blocks/by-block-time/1", "No block found at or before the given timestamp"),
        ("/extended/v2/burn-blocks/99", "Not found"),
    ] {
        let (status, body, _) = get(path).await;
        assert_eq!(status, 404, "{path}");
        assert_eq!(body["message"], message, "{path}");
    }
}

#[tokio::test]
async fn hashes_without_0x_redirect_keeping_the_query() {
    let api = crate::chain::routes(Arc::new(Fake));
    let res = warp::test::request().path("/extended/v1/block/abcd?x=1").reply(&api).await;
    assert_eq!(res.status(), 302);
    assert_eq!(res.headers()["location"], "/extended/v1/block/0xabcd?x=1");
}

#[tokio::test]
async fn v2_cursor_envelope_and_block_etag() {
    let (status, body, headers) = get("/extended/v2/blocks?limit=1&offset=1").await;
    assert_eq!(status, 200);
    assert_eq!(body["total"], 3);
    assert_eq!(body["results"][0]["height"], 2);
    assert_eq!(body["cursor"], block(2).index_block_hash);
    assert_eq!(body["next_cursor"], block(3).index_block_hash);
    assert_eq!(body["prev_cursor"], block(1).index_block_hash);
    assert_eq!(headers["etag"], format!("\"{}\"", block(3).index_block_hash));

    let (_, body, headers) = get("/extended/v2/blocks/latest").await;
    assert_eq!(body["height"], 3);
    let etag = format!("\"{}:true\"", block(3).index_block_hash);
    assert_eq!(headers["etag"], etag.as_str());
    let api = crate::chain::routes(Arc::new(Fake));
    let res =
        warp::test::request().path("/extended/v2/blocks/3").header("if-none-match", etag).reply(&api).await;
    assert_eq!(res.status(), 304);

    let (_, body, _) = get("/extended/v2/blocks/2/signer-signatures?limit=1&offset=1").await;
    assert_eq!(body["total"], 3);
    assert_eq!(body["results"], serde_json::json!(["0xbb"]));
    let (_, body, _) = get("/extended/v2/blocks/average-times").await;
    assert_eq!(body["last_1h"], 1.23);
    assert_eq!(body["last_24h"], 0.13);
    assert_eq!(body["last_7d"], 0);
}

#[tokio::test]
async fn supply_forms() {
    let (_, body, _) = get("/extended/v1/stx_supply").await;
    assert_eq!(body["total_stx"], "4.000000");
    // The incumbent subtracts no locked STX: the unlocked supply is the total.
    assert_eq!(body["unlocked_stx"], "4.000000");
    assert_eq!(body["unlocked_percent"], "100.00");
    let api = crate::chain::routes(Arc::new(Fake));
    let res = warp::test::request().path("/extended/v1/stx_supply/circulating/plain").reply(&api).await;
    assert_eq!(res.body().as_ref(), b"4.000000");
    assert!(res.headers()["content-type"].to_str().unwrap().starts_with("text/plain"));
    let (_, body, _) = get("/extended/v1/stx_supply/legacy_format").await;
    assert_eq!(body["blockHeight"], "3");
    let (status, _, _) = get("/extended/v1/stx_supply?height=9").await;
    assert_eq!(status, 404);
}

/// No transactions: the chain routes only read them for `/v2/blocks/{id}/transactions`.
impl crate::tx::TxReader for Fake {
    async fn tx(&self, _: &str, _: bool) -> Result<Option<crate::tx::AnyTx>, ReadError> {
        Ok(None)
    }
    async fn tx_any_row(&self, _: &str) -> Result<Option<crate::tx::AnyTx>, ReadError> {
        Ok(None)
    }
    async fn tx_events(
        &self,
        _: &crate::tx::MinedTx,
        _: crate::params::Paging,
    ) -> Result<Vec<crate::tx::TxEvent>, ReadError> {
        Ok(vec![])
    }
    async fn tx_list(
        &self,
        _: &crate::tx::TxListFilter,
        _: crate::params::Paging,
    ) -> Result<(u64, Vec<crate::tx::PageTx>), ReadError> {
        Ok((0, vec![]))
    }
    async fn block_txs(
        &self,
        _: &crate::tx::BlockRef,
        _: crate::params::Paging,
    ) -> Result<(u64, Vec<crate::tx::MinedTx>), ReadError> {
        Ok((0, vec![]))
    }
    async fn block_known(&self, _: &crate::tx::BlockRef) -> Result<bool, ReadError> {
        Ok(false)
    }
    async fn mempool_list(
        &self,
        _: &crate::tx::MempoolFilter,
        _: crate::params::Paging,
    ) -> Result<(u64, Vec<crate::tx::MempoolTx>), ReadError> {
        Ok((0, vec![]))
    }
    async fn mempool_fees(&self) -> Result<Vec<(String, u64)>, ReadError> {
        Ok(vec![])
    }
}

#[tokio::test]
async fn pox_transactions_are_pages_of_payout_outputs() {
    let (status, body, _) = get("/extended/v2/burn-blocks/13/pox-transactions?offset=1").await;
    assert_eq!(status, 200);
    assert_eq!(
        body,
        serde_json::json!({"limit": 20, "offset": 1, "total": 2, "results": [{
            "burn_block_hash": block(3).burn_block_hash, "burn_block_height": 13, "tx_id": "0xbeef",
            "recipient": "mkpay", "utxo_idx": 2, "amount": "1000"}]})
    );
    let (status, body, _) = get("/extended/v2/addresses/mkpay/pox-transactions?limit=1").await;
    assert_eq!(
        (status, body["total"].as_u64(), body["results"][0]["utxo_idx"].as_u64()),
        (200, Some(2), Some(1))
    );
    // An unknown burn block or address is an empty page, not a 404 (as the incumbent).
    for path in
        ["/extended/v2/burn-blocks/99/pox-transactions", "/extended/v2/addresses/mknone/pox-transactions"]
    {
        let (status, body, _) = get(path).await;
        assert_eq!(
            (status, body["total"].as_u64(), body["results"].as_array().map(Vec::len)),
            (200, Some(0), Some(0))
        );
    }
    let (status, body, _) = get("/extended/v2/burn-blocks/xyz/pox-transactions").await;
    assert_eq!(status, 500);
    assert!(body["error"].as_str().unwrap().contains("height_or_hash"));
}
