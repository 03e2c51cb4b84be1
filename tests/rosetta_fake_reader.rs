//! The Rosetta Data API served from an in-memory ledger (`ledger_read::LedgerReader`), with no
//! store: the handlers translate the reader's rows and nothing else, so each answer below is
//! derived by hand from the rows and compared whole.
//!
//! The chain: block 1 (genesis, empty); block 2, a coinbase and an STX transfer with the
//! block's miner reward; block 3, a PoX call that locks STX and no coinbase (its block-level
//! reward gets a transaction of its own, named by the index block hash). Two of the sender's
//! transactions are pending in the mempool.
//!
//! The Construction API's online reads (`/construction/metadata`) come from the same reader.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use ledger_read::{
    AccountReader, AccountState, BlockContents, BlockEventRow, LedgerBlock, LedgerReader, LedgerTx,
    LocalSource, LocalTxOutcome, LocalTxSink, OpRow, ReadError, ReadFuture, RecordFuture, Tip, TipReader,
    TxRef,
};
use serde_json::{json, Value};
use stacks_ledger::ledger::Network;
use stacks_ledger::rosetta::{construction, routes, Rosetta};

const SENDER: &str = "ST1PQHQKV0RJXZFY1DGX8MNSNYVE3VGZJSRTPGZGM";
const RECIPIENT: &str = "ST1SJ3DTE5DN7X54YDH5D64R3BCB6A2AG2ZQ8YPD5";
const MINER: &str = "ST2CY5V39NHDPWSXMW9QDT3HC3GD6Q6XX4CFRK9AG";
const POX: &str = "ST000000000000000000002AMW42H.pox-4";

/// `0x` and 64 hex digits ending in `n`, prefixed by `tag` (one letter a–f).
fn hash(tag: char, n: u8) -> String {
    format!("0x{}{:02x}", tag.to_string().repeat(62), n)
}

fn block(height: i64) -> LedgerBlock {
    LedgerBlock {
        index_block_hash: hash('e', height as u8),
        block_hash: hash('b', height as u8),
        block_height: height,
        parent_block_hash: hash('b', height as u8 - 1),
        timestamp_ms: 1_700_000_000_000 + height * 5_000,
        burn_block_height: 100 + height,
        consensus_hash: None,
        tenure_height: None,
        canonical: true,
        materialized: true,
    }
}

fn tx(tx_id: &str, tx_index: i64, tx_type: &str) -> LedgerTx {
    LedgerTx {
        tx_id: tx_id.into(),
        tx_index,
        tx_type: tx_type.into(),
        status: "success".into(),
        contract_id: None,
        function_name: None,
        raw_tx: None,
        raw_result: None,
    }
}

fn op(tx_id: &str, tx_index: i64, op_index: i64, op_type: &str, account: &str, amount: Option<i64>) -> OpRow {
    OpRow {
        tx_id: tx_id.into(),
        tx_index,
        op_index,
        op_type: op_type.into(),
        status: "success".into(),
        account: account.into(),
        amount,
        ..OpRow::default()
    }
}

/// What every read answers: the chain above, or an error for every read.
enum Mode {
    Chain,
    Unavailable,
    Failed,
}

/// A ledger held in memory.
struct FakeLedger {
    mode: Mode,
    blocks: Vec<LedgerBlock>,
    contents: HashMap<String, BlockContents>,
    /// `(account, height, state after that block)`, ascending heights.
    accounts: Vec<(&'static str, i64, AccountState)>,
    mempool: Vec<(String, String)>,
    /// `(account, next nonce counting the mempool)`.
    pending_nonces: Vec<(&'static str, i64)>,
}

impl FakeLedger {
    fn chain() -> Self {
        let (transfer, coinbase, call) = (hash('a', 2), hash('c', 2), hash('d', 3));
        let mut contents = HashMap::new();
        contents.insert(
            hash('e', 2),
            BlockContents {
                txs: vec![tx(&coinbase, 0, "coinbase"), tx(&transfer, 1, "token_transfer")],
                // Ledger order: block-level rows (tx_index -1) first, then by transaction.
                ops: vec![
                    op("", -1, 0, "miner_reward", MINER, Some(1_000)),
                    op(&coinbase, 0, 0, "coinbase", MINER, None),
                    op(&transfer, 1, 0, "fee", SENDER, Some(-180)),
                    OpRow {
                        metadata: Some(r#"{"memo":"0x68656c6c6f"}"#.into()),
                        ..op(&transfer, 1, 1, "token_transfer", SENDER, Some(-500))
                    },
                    OpRow {
                        related_op_index: Some(1),
                        ..op(&transfer, 1, 2, "token_transfer", RECIPIENT, Some(500))
                    },
                ],
            },
        );
        contents.insert(
            hash('e', 3),
            BlockContents {
                txs: vec![LedgerTx {
                    contract_id: Some(POX.into()),
                    function_name: Some("delegate-stack-stx".into()),
                    ..tx(&call, 0, "contract_call")
                }],
                ops: vec![
                    op("", -1, 0, "miner_reward", MINER, Some(1_000)),
                    op(&call, 0, 0, "fee", SENDER, Some(-200)),
                    op(&call, 0, 1, "contract_call", SENDER, None),
                    OpRow {
                        locked_delta: 3_000,
                        metadata: Some(r#"{"unlock_height":2100}"#.into()),
                        ..op(&call, 0, 2, "stx_lock", SENDER, Some(-3_000))
                    },
                ],
            },
        );
        contents.insert(hash('e', 1), BlockContents::default());
        let at = |liquid, locked, next_nonce| AccountState { liquid, locked, unlock_height: 0, next_nonce };
        Self {
            mode: Mode::Chain,
            blocks: vec![block(1), block(2), block(3)],
            contents,
            accounts: vec![
                (SENDER, 1, at(10_000, 0, 0)),
                (SENDER, 2, at(9_320, 0, 1)),
                (SENDER, 3, at(6_120, 3_000, 2)),
                (RECIPIENT, 2, at(500, 0, 0)),
            ],
            mempool: vec![(hash('f', 1), "0x00".into()), (hash('f', 2), "0x00".into())],
            pending_nonces: vec![(SENDER, 4)],
        }
    }

    fn failing(mode: Mode) -> Self {
        Self { mode, ..Self::chain() }
    }

    fn read<T: Send + 'static>(&self, answer: impl FnOnce() -> T) -> ReadFuture<'_, T> {
        let out = match self.mode {
            Mode::Chain => Ok(answer()),
            Mode::Unavailable => Err(ReadError::Unavailable("pool timed out".into())),
            Mode::Failed => Err(ReadError::Failed("no such column".into())),
        };
        Box::pin(std::future::ready(out))
    }
}

impl TipReader for FakeLedger {
    fn tip(&self) -> ReadFuture<'_, Option<Tip>> {
        self.read(|| {
            self.blocks.last().map(|b| Tip {
                block: b.clone(),
                microblock: None,
                burn_height: b.burn_block_height,
            })
        })
    }
}

impl AccountReader for FakeLedger {
    fn account<'a>(&'a self, account: &'a str, height: Option<i64>) -> ReadFuture<'a, AccountState> {
        let height = height.unwrap_or(i64::MAX);
        self.read(|| {
            self.accounts
                .iter()
                .rfind(|(a, h, _)| *a == account && *h <= height)
                .map_or_else(AccountState::default, |(_, _, at)| *at)
        })
    }
}

impl LedgerReader for FakeLedger {
    fn genesis(&self) -> ReadFuture<'_, Option<LedgerBlock>> {
        self.read(|| self.blocks.first().cloned())
    }

    fn block_at(&self, height: i64) -> ReadFuture<'_, Option<LedgerBlock>> {
        self.read(|| self.blocks.iter().find(|b| b.block_height == height).cloned())
    }

    fn block_by_hash<'a>(&'a self, block_hash: &'a str) -> ReadFuture<'a, Option<LedgerBlock>> {
        self.read(|| self.blocks.iter().find(|b| b.block_hash == block_hash).cloned())
    }

    fn block_by_index_hash<'a>(&'a self, index_block_hash: &'a str) -> ReadFuture<'a, Option<LedgerBlock>> {
        self.read(|| self.blocks.iter().find(|b| b.index_block_hash == index_block_hash).cloned())
    }

    fn block_contents<'a>(&'a self, index_block_hash: &'a str) -> ReadFuture<'a, BlockContents> {
        self.read(|| self.contents.get(index_block_hash).cloned().unwrap_or_default())
    }

    fn next_nonce_with_mempool<'a>(&'a self, account: &'a str) -> ReadFuture<'a, i64> {
        self.read(|| match self.pending_nonces.iter().find(|(a, _)| *a == account) {
            Some((_, n)) => *n,
            None => {
                self.accounts.iter().rfind(|(a, _, _)| *a == account).map_or(0, |(_, _, at)| at.next_nonce)
            }
        })
    }

    fn tx_block<'a>(&'a self, tx_id: &'a str) -> ReadFuture<'a, Option<String>> {
        self.read(|| {
            self.contents
                .iter()
                .find(|(_, c)| c.txs.iter().any(|t| t.tx_id == tx_id))
                .map(|(ibh, _)| ibh.clone())
        })
    }

    fn account_txs<'a>(&'a self, principal: &'a str, max_height: i64) -> ReadFuture<'a, Vec<TxRef>> {
        self.read(|| {
            let mut out = Vec::new();
            for b in self.blocks.iter().rev().filter(|b| b.block_height <= max_height) {
                let c = &self.contents[&b.index_block_hash];
                for t in c.txs.iter().rev() {
                    if c.ops.iter().any(|o| o.tx_id == t.tx_id && o.account == principal) {
                        out.push(TxRef {
                            index_block_hash: b.index_block_hash.clone(),
                            tx_id: t.tx_id.clone(),
                        });
                    }
                }
            }
            out
        })
    }

    fn mempool_ids(&self) -> ReadFuture<'_, Vec<String>> {
        self.read(|| self.mempool.iter().map(|(id, _)| id.clone()).collect())
    }

    fn mempool_raw<'a>(&'a self, tx_id: &'a str) -> ReadFuture<'a, Option<String>> {
        self.read(|| self.mempool.iter().find(|(id, _)| id == tx_id).map(|(_, raw)| raw.clone()))
    }

    fn block_events(&self, from: i64, limit: i64) -> ReadFuture<'_, Vec<BlockEventRow>> {
        self.read(|| {
            self.blocks
                .iter()
                .map(|b| BlockEventRow {
                    sequence: b.block_height,
                    added: true,
                    block_height: b.block_height,
                    block_hash: b.block_hash.clone(),
                })
                .filter(|e| e.sequence >= from)
                .take(limit as usize)
                .collect()
        })
    }

    fn max_sequence(&self) -> ReadFuture<'_, i64> {
        self.read(|| self.blocks.len() as i64)
    }
}

/// POSTs `body` (with the network identifier added) to `/rosetta/v1/{path}`: status and JSON.
async fn post(ledger: FakeLedger, path: &str, mut body: Value) -> (u16, Value) {
    body["network_identifier"] = json!({"blockchain": "stacks", "network": "testnet"});
    let api = routes(Arc::new(Rosetta::new(Arc::new(ledger), Network::Testnet)));
    let res = warp::test::request()
        .method("POST")
        .path(&format!("/rosetta/v1/{path}"))
        .body(body.to_string())
        .reply(&api)
        .await;
    (res.status().as_u16(), serde_json::from_slice(res.body()).expect("a JSON body"))
}

fn stx(value: i64) -> Value {
    json!({"value": value.to_string(), "currency": {"symbol": "STX", "decimals": 6}})
}

fn id(height: u8) -> Value {
    json!({"index": height, "hash": hash('b', height)})
}

#[tokio::test]
async fn block_with_a_transfer_and_the_miner_reward() {
    let (status, body) = post(FakeLedger::chain(), "block", json!({"block_identifier": {"index": 2}})).await;
    let (coinbase, transfer) = (hash('c', 2), hash('a', 2));
    let expected = json!({"block": {
        "block_identifier": id(2),
        "parent_block_identifier": id(1),
        "timestamp": 1_700_000_010_000i64,
        "transactions": [
            {"transaction_identifier": {"hash": coinbase}, "operations": [
                {"operation_identifier": {"index": 0}, "type": "coinbase", "status": "success",
                 "account": {"address": MINER}},
                // The block-level reward rides on the coinbase transaction, numbered after it.
                {"operation_identifier": {"index": 1}, "type": "miner_reward", "status": "success",
                 "account": {"address": MINER}, "amount": stx(1_000)},
            ]},
            {"transaction_identifier": {"hash": transfer}, "operations": [
                {"operation_identifier": {"index": 0}, "type": "fee", "status": "success",
                 "account": {"address": SENDER}, "amount": stx(-180)},
                {"operation_identifier": {"index": 1}, "type": "token_transfer", "status": "success",
                 "account": {"address": SENDER}, "amount": stx(-500), "metadata": {"memo": "0x68656c6c6f"}},
                {"operation_identifier": {"index": 2}, "related_operations": [{"index": 1}],
                 "type": "token_transfer", "status": "success",
                 "account": {"address": RECIPIENT}, "amount": stx(500)},
            ]},
        ],
        "metadata": {"burn_block_height": 102},
    }});
    assert_eq!((status, body), (200, expected));
}

#[tokio::test]
async fn block_by_hash_with_a_lock_and_no_coinbase() {
    let (status, body) =
        post(FakeLedger::chain(), "block", json!({"block_identifier": {"hash": hash('b', 3)}})).await;
    let call = hash('d', 3);
    let call_meta = json!({"contract_id": POX, "function_name": "delegate-stack-stx"});
    let expected = json!({"block": {
        "block_identifier": id(3),
        "parent_block_identifier": id(2),
        "timestamp": 1_700_000_015_000i64,
        "transactions": [
            {"transaction_identifier": {"hash": call}, "operations": [
                {"operation_identifier": {"index": 0}, "type": "fee", "status": "success",
                 "account": {"address": SENDER}, "amount": stx(-200)},
                {"operation_identifier": {"index": 1}, "type": "contract_call", "status": "success",
                 "account": {"address": SENDER}, "metadata": call_meta},
                // A lock is two operations: off the liquid balance, onto the locked sub-account.
                {"operation_identifier": {"index": 2}, "type": "stx_lock", "status": "success",
                 "account": {"address": SENDER}, "amount": stx(-3_000), "metadata": {"unlock_height": 2100}},
                {"operation_identifier": {"index": 3}, "related_operations": [{"index": 2}],
                 "type": "stx_lock", "status": "success",
                 "account": {"address": SENDER, "sub_account": {"address": "locked"}},
                 "amount": stx(3_000), "metadata": {"unlock_height": 2100}},
            ]},
            // No coinbase: the block-level reward is a transaction named by the index block hash.
            {"transaction_identifier": {"hash": hash('e', 3)}, "operations": [
                {"operation_identifier": {"index": 0}, "type": "miner_reward", "status": "success",
                 "account": {"address": MINER}, "amount": stx(1_000)},
            ]},
        ],
        "metadata": {"burn_block_height": 103},
    }});
    assert_eq!((status, body), (200, expected));
}

#[tokio::test]
async fn block_transaction() {
    let transfer = hash('a', 2);
    let req = json!({"block_identifier": id(2), "transaction_identifier": {"hash": transfer}});
    let (status, body) = post(FakeLedger::chain(), "block/transaction", req).await;
    let expected = json!({"transaction": {"transaction_identifier": {"hash": transfer}, "operations": [
        {"operation_identifier": {"index": 0}, "type": "fee", "status": "success",
         "account": {"address": SENDER}, "amount": stx(-180)},
        {"operation_identifier": {"index": 1}, "type": "token_transfer", "status": "success",
         "account": {"address": SENDER}, "amount": stx(-500), "metadata": {"memo": "0x68656c6c6f"}},
        {"operation_identifier": {"index": 2}, "related_operations": [{"index": 1}],
         "type": "token_transfer", "status": "success",
         "account": {"address": RECIPIENT}, "amount": stx(500)},
    ]}});
    assert_eq!((status, body), (200, expected));

    // A transaction of another block is not in this one.
    let req = json!({"block_identifier": id(3), "transaction_identifier": {"hash": transfer}});
    let (status, body) = post(FakeLedger::chain(), "block/transaction", req).await;
    let expected = json!({"code": 607, "message": "Transaction not found.", "retriable": true,
        "details": {"transaction": transfer, "block": id(3)}});
    assert_eq!((status, body), (500, expected));
}

#[tokio::test]
async fn account_balance_at_a_height_and_locked() {
    let req = |sub: Option<&str>, block: Value| {
        let mut account = json!({"address": SENDER});
        if let Some(s) = sub {
            account["sub_account"] = json!({"address": s});
        }
        json!({"account_identifier": account, "block_identifier": block})
    };
    let balance = |block: Value, value: i64, nonce: i64| json!({"block_identifier": block, "balances": [stx(value)], "metadata": {"sequence_number": nonce}});
    // The tip (no block named): liquid after the lock.
    let (status, body) = post(FakeLedger::chain(), "account/balance", req(None, json!({}))).await;
    assert_eq!((status, body), (200, balance(id(3), 6_120, 2)));
    // The locked sub-account at the tip.
    let (status, body) = post(FakeLedger::chain(), "account/balance", req(Some("locked"), json!({}))).await;
    assert_eq!((status, body), (200, balance(id(3), 3_000, 2)));
    // At height 2, before the lock: liquid, then nothing locked.
    let (status, body) = post(FakeLedger::chain(), "account/balance", req(None, json!({"index": 2}))).await;
    assert_eq!((status, body), (200, balance(id(2), 9_320, 1)));
    let at2 = json!({"hash": hash('b', 2)});
    let (status, body) = post(FakeLedger::chain(), "account/balance", req(Some("locked"), at2)).await;
    assert_eq!((status, body), (200, balance(id(2), 0, 1)));
    // An account the chain has not seen yet at height 1.
    let body = json!({"account_identifier": {"address": RECIPIENT}, "block_identifier": {"index": 1}});
    let (status, body) = post(FakeLedger::chain(), "account/balance", body).await;
    assert_eq!((status, body), (200, balance(id(1), 0, 0)));
    // A sub-account that does not exist.
    let (status, body) = post(FakeLedger::chain(), "account/balance", req(Some("vesting"), json!({}))).await;
    let expected = json!({"code": 641, "message": "Invalid sub-account", "retriable": false,
        "details": {"sub_account": "vesting", "expected": ["locked"]}});
    assert_eq!((status, body), (500, expected));
}

#[tokio::test]
async fn mempool_lists_pending_ids_in_order() {
    let (status, body) = post(FakeLedger::chain(), "mempool", json!({})).await;
    let expected = json!({"transaction_identifiers": [{"hash": hash('f', 1)}, {"hash": hash('f', 2)}]});
    assert_eq!((status, body), (200, expected));
    // Not pending: 607.
    let missing = hash('f', 9);
    let req = json!({"transaction_identifier": {"hash": missing}});
    let (status, body) = post(FakeLedger::chain(), "mempool/transaction", req).await;
    let expected = json!({"code": 607, "message": "Transaction not found.", "retriable": true,
        "details": {"transaction": missing}});
    assert_eq!((status, body), (500, expected));
}

#[tokio::test]
async fn network_status_from_tip_and_genesis() {
    let (status, body) = post(FakeLedger::chain(), "network/status", json!({})).await;
    let expected = json!({
        "current_block_identifier": id(3),
        "current_block_timestamp": 1_700_000_015_000i64,
        "genesis_block_identifier": id(1),
        "sync_status": {"current_index": 3, "stage": "ingested"},
        "peers": [],
    });
    assert_eq!((status, body), (200, expected));
}

#[tokio::test]
async fn search_by_account() {
    // The recipient's one transaction, as `/block/transaction` serves it (asserted whole above).
    let transfer = hash('a', 2);
    let req = json!({"block_identifier": id(2), "transaction_identifier": {"hash": transfer}});
    let (_, tx) = post(FakeLedger::chain(), "block/transaction", req).await;
    let req = json!({"operator": "and", "account_identifier": {"address": RECIPIENT}});
    let (status, body) = post(FakeLedger::chain(), "search/transactions", req).await;
    let expected = json!({"transactions": [{"block_identifier": id(2), "transaction": tx["transaction"]}]});
    assert_eq!((status, body), (200, expected));

    // The sender's two, newest first, one per page.
    let req = json!({"operator": "and", "account_identifier": {"address": SENDER}, "limit": 1});
    let (status, body) = post(FakeLedger::chain(), "search/transactions", req).await;
    assert_eq!(status, 200);
    assert_eq!(body["next_offset"], 1);
    assert_eq!(body["transactions"][0]["block_identifier"], id(3));
    assert_eq!(body["transactions"][0]["transaction"]["transaction_identifier"]["hash"], hash('d', 3));
    let req = json!({"operator": "and", "account_identifier": {"address": SENDER}, "limit": 1, "offset": 1});
    let (_, body) = post(FakeLedger::chain(), "search/transactions", req).await;
    let expected = json!({"transactions": [{"block_identifier": id(2), "transaction": tx["transaction"]}]});
    assert_eq!(body, expected);
}

#[tokio::test]
async fn block_not_found() {
    let (status, body) = post(FakeLedger::chain(), "block", json!({"block_identifier": {"index": 9}})).await;
    let expected = json!({"code": 605, "message": "Block not found.", "retriable": true,
        "details": {"block_identifier": {"index": 9}}});
    assert_eq!((status, body), (500, expected));

    // A block the chain has but that was never final is not served either.
    let mut ledger = FakeLedger::chain();
    ledger.blocks[2].materialized = false;
    let (status, body) = post(ledger, "block", json!({"block_identifier": {"hash": hash('b', 3)}})).await;
    let expected = json!({"code": 605, "message": "Block not found.", "retriable": true,
        "details": {"message": "block not final yet (never on the canonical chain)", "hash": hash('b', 3)}});
    assert_eq!((status, body), (500, expected));
}

#[tokio::test]
async fn store_unavailable_is_649_and_a_failed_read_612() {
    for path in ["block", "account/balance", "mempool", "network/status"] {
        let req = json!({"block_identifier": {"index": 2}, "account_identifier": {"address": SENDER}});
        let (status, body) = post(FakeLedger::failing(Mode::Unavailable), path, req.clone()).await;
        let expected = json!({"code": 649, "message": "Ledger store unavailable.", "retriable": true});
        assert_eq!((status, body), (500, expected), "{path}");
        // The cause stays in the log.
        let (status, body) = post(FakeLedger::failing(Mode::Failed), path, req).await;
        let expected = json!({"code": 612, "message": "Unknown error.", "retriable": false});
        assert_eq!((status, body), (500, expected), "{path}");
    }
}

/// A mempool held in memory: what the construction routes recorded.
#[derive(Default)]
struct FakeMempool {
    recorded: Mutex<Vec<(Vec<u8>, LocalSource)>>,
}

impl LocalTxSink for FakeMempool {
    fn record<'a>(&'a self, raw_tx: &'a [u8], source: LocalSource) -> RecordFuture<'a> {
        self.recorded.lock().unwrap().push((raw_tx.to_vec(), source));
        Box::pin(std::future::ready(Ok(LocalTxOutcome::Added { tx_id: hex::encode(raw_tx) })))
    }
}

/// POSTs `body` to `/rosetta/v1/construction/{path}`, online over `ledger` without a node.
async fn construction_post(
    ledger: FakeLedger,
    mempool: &Arc<FakeMempool>,
    path: &str,
    mut body: Value,
) -> (u16, Value) {
    body["network_identifier"] = json!({"blockchain": "stacks", "network": "testnet"});
    let ctx =
        construction::Context::online(Network::Testnet, Arc::new(ledger), Arc::clone(mempool) as _, None);
    let api = construction::routes(ctx);
    let res = warp::test::request()
        .method("POST")
        .path(&format!("/rosetta/v1/construction/{path}"))
        .body(body.to_string())
        .reply(&api)
        .await;
    (res.status().as_u16(), serde_json::from_slice(res.body()).expect("a JSON body"))
}

#[tokio::test]
async fn construction_metadata_reads_nonces_and_the_tip() {
    let mempool = Arc::new(FakeMempool::default());
    // The sender's nonce counts its pending transactions; a stacking call takes the tip's burn
    // height (no node to ask for the PoX info). Fee: the default 1 µSTX per byte.
    let options = json!({"sender_address": SENDER, "size": 180, "type": "stack_stx"});
    let (status, body) =
        construction_post(FakeLedger::chain(), &mempool, "metadata", json!({"options": options})).await;
    let expected = json!({
        "metadata": {"account_sequence": 4, "fee": "180", "start_burn_height": 103},
        "suggested_fee": [stx(180)],
    });
    assert_eq!((status, body), (200, expected));

    // Nothing pending: the chain's next nonce; a sponsored transfer gets the sponsor's too.
    let options = json!({"sender_address": RECIPIENT, "size": 100, "type": "token_transfer",
        "sponsored": true, "sponsor_address": SENDER, "suggested_fee_multiplier": 1.5});
    let (status, body) =
        construction_post(FakeLedger::chain(), &mempool, "metadata", json!({"options": options})).await;
    let expected = json!({
        "metadata": {"account_sequence": 0, "fee": "150", "sponsor_account_sequence": 4,
            "sponsored": true, "sponsor_address": SENDER},
        "suggested_fee": [stx(150)],
    });
    assert_eq!((status, body), (200, expected));
    assert!(mempool.recorded.lock().unwrap().is_empty(), "metadata records nothing");

    let options = json!({"sender_address": SENDER, "size": 180});
    let (status, body) = construction_post(
        FakeLedger::failing(Mode::Unavailable),
        &mempool,
        "metadata",
        json!({"options": options}),
    )
    .await;
    let expected = json!({"code": 649, "message": "Ledger store unavailable.", "retriable": true});
    assert_eq!((status, body), (500, expected));
}
