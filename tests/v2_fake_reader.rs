//! The `/v2` answers served from an in-memory ledger (`ledger_read::V2Reader`), with no store
//! and no node: the handlers translate the reader's rows and nothing else, so each answer below
//! is derived by hand from the rows and compared whole. The broadcast hook records through an
//! in-memory `ledger_read::LocalTxSink`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use ledger_read::{
    AccountReader, AccountState, LedgerBlock, LocalSource, LocalTxError, LocalTxOutcome, LocalTxSink,
    MicroblockTip, ReadError, ReadFuture, RecordFuture, Tip, TipReader, V2BurnBlock, V2Contract, V2InfoState,
    V2Reader,
};
use serde_json::{json, Value};
use stacks_ledger::ledger::Network;
use stacks_ledger::v2::{routes, LedgerHook, V2Settings};
use stacks_node_proxy::{BroadcastHook, BroadcastedTx};

const ALICE: &str = "ST1PQHQKV0RJXZFY1DGX8MNSNYVE3VGZJSRTPGZGM";
const BOB: &str = "ST1SJ3DTE5DN7X54YDH5D64R3BCB6A2AG2ZQ8YPD5";
const BOOT: &str = "ST000000000000000000002AMW42H";
const CONTRACT: &str = "ST1PQHQKV0RJXZFY1DGX8MNSNYVE3VGZJSRTPGZGM.counter";
const NO_ABI: &str = "ST1PQHQKV0RJXZFY1DGX8MNSNYVE3VGZJSRTPGZGM.old";
const SOURCE: &str =
    "(define-data-var n uint u0)\n(define-public (bump) (ok (var-set n (+ (var-get n) u1))))";
const ABI: &str = r#"{"functions":[{"name":"bump","access":"public","args":[],"outputs":{"type":{"response":{"ok":"bool","error":"none"}}}}],"variables":[{"name":"n","type":"uint128","access":"variable"}],"maps":[],"fungible_tokens":[],"non_fungible_tokens":[],"epoch":"Epoch30","clarity_version":"Clarity3"}"#;

/// `0x` and 64 hex digits ending in `n`, prefixed by `tag` (one letter a–f).
fn hash(tag: char, n: u8) -> String {
    format!("0x{}{:02x}", tag.to_string().repeat(62), n)
}

/// What every read answers: the chain below, no chain at all, or an error for every read.
#[derive(Clone, Copy)]
enum Mode {
    Chain,
    Empty,
    Unavailable,
    Failed,
}

/// A ledger held in memory: tip at height 40 (burn height 140), the burn chain announced up to
/// 145, a microblock stream on the tip.
struct FakeLedger {
    mode: Mode,
    info: V2InfoState,
    accounts: HashMap<&'static str, AccountState>,
    contracts: HashMap<&'static str, V2Contract>,
}

impl FakeLedger {
    fn new(mode: Mode) -> Self {
        let tip = LedgerBlock {
            index_block_hash: hash('e', 40),
            block_hash: hash('b', 40),
            block_height: 40,
            parent_block_hash: hash('b', 39),
            timestamp_ms: 1_700_000_000_000,
            burn_block_height: 140,
            consensus_hash: Some("0xcccccccccccccccccccccccccccccccccccccc28".into()),
            tenure_height: Some(38),
            canonical: true,
            materialized: true,
        };
        let info = V2InfoState {
            tip: Tip {
                block: tip,
                microblock: Some(MicroblockTip { hash: hash('f', 3), sequence: 3 }),
                burn_height: 145,
            },
            burn_tip: Some(V2BurnBlock {
                height: 145,
                consensus_hash: Some("0xdddddddddddddddddddddddddddddddddddddd91".into()),
            }),
            stable_burn: Some(V2BurnBlock {
                height: 138,
                consensus_hash: Some("0xdddddddddddddddddddddddddddddddddddddd8a".into()),
            }),
        };
        let accounts = HashMap::from([
            (ALICE, AccountState { liquid: 9_320, locked: 3_000, unlock_height: 2_100, next_nonce: 7 }),
            (BOB, AccountState { liquid: 500, locked: 0, unlock_height: 0, next_nonce: 0 }),
            // The ledger counts the boot address's genesis deploys.
            (BOOT, AccountState { liquid: 0, locked: 0, unlock_height: 0, next_nonce: 12 }),
        ]);
        let contracts = HashMap::from([
            (
                CONTRACT,
                V2Contract {
                    source: SOURCE.into(),
                    abi: Some(ABI.into()),
                    clarity_version: Some(3),
                    publish_height: 31,
                },
            ),
            (
                NO_ABI,
                V2Contract { source: "(ok 1)".into(), abi: None, clarity_version: None, publish_height: 2 },
            ),
        ]);
        FakeLedger { mode, info, accounts, contracts }
    }

    fn read<T: Send + 'static>(&self, answer: impl FnOnce() -> T) -> ReadFuture<'_, T> {
        let out = match self.mode {
            Mode::Chain | Mode::Empty => Ok(answer()),
            Mode::Unavailable => Err(ReadError::Unavailable("pool timed out".into())),
            Mode::Failed => Err(ReadError::Failed("no such column".into())),
        };
        Box::pin(std::future::ready(out))
    }

    fn chain(&self) -> bool {
        !matches!(self.mode, Mode::Empty)
    }
}

impl TipReader for FakeLedger {
    fn tip(&self) -> ReadFuture<'_, Option<Tip>> {
        self.read(|| self.chain().then(|| self.info.tip.clone()))
    }
}

/// Every account's state at the tip (`/v2` reads no other height).
impl AccountReader for FakeLedger {
    fn account<'a>(&'a self, principal: &'a str, height: Option<i64>) -> ReadFuture<'a, AccountState> {
        assert_eq!(height, None, "/v2 reads accounts at the tip");
        self.read(|| self.accounts.get(principal).copied().unwrap_or_default())
    }
}

impl V2Reader for FakeLedger {
    fn v2_info_state(&self) -> ReadFuture<'_, Option<V2InfoState>> {
        self.read(|| self.chain().then(|| self.info.clone()))
    }

    fn v2_contract<'a>(&'a self, contract_id: &'a str) -> ReadFuture<'a, Option<V2Contract>> {
        self.read(|| self.contracts.get(contract_id).cloned())
    }
}

/// A mempool held in memory: what was recorded, and by whom.
#[derive(Default)]
struct FakeMempool {
    recorded: Mutex<Vec<(Vec<u8>, LocalSource)>>,
}

impl LocalTxSink for FakeMempool {
    fn record<'a>(&'a self, raw_tx: &'a [u8], source: LocalSource) -> RecordFuture<'a> {
        let mut recorded = self.recorded.lock().unwrap();
        let out = if raw_tx.is_empty() {
            Err(LocalTxError::Invalid("empty".into()))
        } else if recorded.iter().any(|(raw, _)| raw == raw_tx) {
            Ok(LocalTxOutcome::Known { tx_id: hex::encode(raw_tx) })
        } else {
            recorded.push((raw_tx.to_vec(), source));
            Ok(LocalTxOutcome::Added { tx_id: hex::encode(raw_tx) })
        };
        Box::pin(std::future::ready(out))
    }
}

/// GETs `path` from the `/v2` routes over `ledger` (no node): status, headers and JSON.
async fn get(ledger: FakeLedger, path: &str) -> (u16, warp::http::HeaderMap, Value) {
    let api = routes(
        Arc::new(ledger),
        Arc::new(FakeMempool::default()),
        Network::Testnet,
        V2Settings::ledger_only(),
    );
    let res = warp::test::request().method("GET").path(path).reply(&api).await;
    let body = serde_json::from_slice(res.body()).expect("a JSON body");
    (res.status().as_u16(), res.headers().clone(), body)
}

#[tokio::test]
async fn info_from_the_tip_the_burn_tip_and_the_microblock_stream() {
    let (status, headers, body) = get(FakeLedger::new(Mode::Chain), "/v2/info").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(headers["x-stacks-ledger-source"], "ledger");
    assert!(headers.get("x-stacks-ledger-proof").is_none(), "/v2/info has no proofs");
    // The unconfirmed tip is the index hash of (microblock tail, tip consensus hash).
    let mut preimage = hex::decode("f".repeat(62) + "03").unwrap();
    preimage.extend(hex::decode("cccccccccccccccccccccccccccccccccccccc28").unwrap());
    let unanchored = hex::encode(stacks_codec::hash::sha512_256(&preimage));
    let burn_consensus = "dddddddddddddddddddddddddddddddddddddd91";
    let stable_consensus = "dddddddddddddddddddddddddddddddddddddd8a";
    let tip_consensus = "cccccccccccccccccccccccccccccccccccccc28";
    let expected = json!({
        "peer_version": 0xfaca_de0c_u32,
        // The burn tip is above the Stacks tip's burn block: its height and consensus hash.
        "pox_consensus": burn_consensus,
        "burn_block_height": 145,
        "stable_pox_consensus": stable_consensus,
        "stable_burn_block_height": 138,
        "server_version": format!("{} (answered from the ledger)", stacks_extended::SERVER_VERSION),
        "network_id": 0x8000_0000_u32,
        "parent_network_id": 0x0709_110b_u32,
        "stacks_tip_height": 40,
        // Hashes bare, as the node writes them.
        "stacks_tip": "b".repeat(62) + "28",
        "stacks_tip_consensus_hash": tip_consensus,
        "genesis_chainstate_hash": "74237aa39aa50a83de11a4f53e9d3bb7d43461d1de9873f402e5453ae60bc59b",
        "unanchored_tip": unanchored,
        "unanchored_seq": 3,
        "tenure_height": 38,
        "exit_at_block_height": null,
        "burn_consensus": burn_consensus,
        "stable_burn_consensus": stable_consensus,
        "stacks_tip_burn_block": tip_consensus,
    });
    assert_eq!(body, expected);
    // The keys in the node's order, not only the values.
    let keys: Vec<&str> = body.as_object().unwrap().keys().map(String::as_str).collect();
    let expected_keys: Vec<&str> = expected.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, expected_keys);
}

#[tokio::test]
async fn info_with_the_burn_tip_below_the_stacks_tip_and_no_stream() {
    let mut ledger = FakeLedger::new(Mode::Chain);
    ledger.info.burn_tip = Some(V2BurnBlock { height: 139, consensus_hash: Some("0xaa".into()) });
    ledger.info.stable_burn = None;
    ledger.info.tip.microblock = None;
    ledger.info.tip.block.tenure_height = None;
    let (status, _, body) = get(ledger, "/v2/info").await;
    assert_eq!(status, 200, "{body}");
    // The Stacks tip's own burn block and consensus hash win over a stale burn tip.
    assert_eq!(body["burn_block_height"], 140);
    assert_eq!(body["pox_consensus"], "cccccccccccccccccccccccccccccccccccccc28");
    assert_eq!(body["stable_burn_block_height"], Value::Null);
    assert_eq!(body["stable_pox_consensus"], Value::Null);
    assert_eq!(body["unanchored_tip"], Value::Null);
    assert_eq!(body["unanchored_seq"], Value::Null);
    assert!(body.get("tenure_height").is_none(), "{body}");
}

#[tokio::test]
async fn info_before_the_first_block() {
    let (status, _, body) = get(FakeLedger::new(Mode::Empty), "/v2/info").await;
    assert_eq!(
        (status, body),
        (503, json!({"error": "Service Unavailable", "message": "the ledger has no canonical block yet"}))
    );
}

#[tokio::test]
async fn account_amounts_as_u128_hex() {
    let (status, headers, body) =
        get(FakeLedger::new(Mode::Chain), &format!("/v2/accounts/{ALICE}?proof=0")).await;
    let expected = json!({
        "balance": format!("0x{:032x}", 9_320),
        "locked": format!("0x{:032x}", 3_000),
        "unlock_height": 2_100,
        "nonce": 7,
    });
    assert_eq!((status, body), (200, expected));
    assert_eq!(headers["x-stacks-ledger-source"], "ledger");
    assert!(headers.get("x-stacks-ledger-proof").is_none(), "proof=0 asked for none");

    // Proofs asked for by default: left out, and said so. An unknown account is all zeros.
    let (status, headers, body) = get(FakeLedger::new(Mode::Chain), &format!("/v2/accounts/{BOB}")).await;
    let zero = format!("0x{:032x}", 0);
    let expected =
        json!({"balance": format!("0x{:032x}", 500), "locked": zero, "unlock_height": 0, "nonce": 0});
    assert_eq!((status, body), (200, expected));
    assert_eq!(headers["x-stacks-ledger-proof"], "omitted; no Stacks node to prove against");
    let stranger = "ST2CY5V39NHDPWSXMW9QDT3HC3GD6Q6XX4CFRK9AG";
    let (_, _, body) = get(FakeLedger::new(Mode::Chain), &format!("/v2/accounts/{stranger}?proof=0")).await;
    assert_eq!(body, json!({"balance": zero, "locked": zero, "unlock_height": 0, "nonce": 0}));
}

#[tokio::test]
async fn the_boot_address_nonce_is_the_nodes_zero() {
    // The node runs boot code outside the transaction path: its deploys never bump the nonce.
    let (status, _, body) = get(FakeLedger::new(Mode::Chain), &format!("/v2/accounts/{BOOT}?proof=0")).await;
    assert_eq!((status, body["nonce"].clone()), (200, json!(0)));
}

#[tokio::test]
async fn account_at_another_tip_needs_the_node() {
    // The tip's own index hash (bare or 0x, any case) is the tip; another is not.
    let ours = "E".repeat(62) + "28";
    let (status, _, body) =
        get(FakeLedger::new(Mode::Chain), &format!("/v2/accounts/{ALICE}?proof=0&tip={ours}")).await;
    assert_eq!((status, body["nonce"].clone()), (200, json!(7)));
    let other = "e".repeat(62) + "27";
    let (status, _, body) =
        get(FakeLedger::new(Mode::Chain), &format!("/v2/accounts/{ALICE}?proof=0&tip={other}")).await;
    let message = "tip: the ledger answers only at its canonical tip, and no Stacks node is configured";
    assert_eq!((status, body), (503, json!({"error": "Service Unavailable", "message": message})));
}

#[tokio::test]
async fn contract_source_and_interface() {
    let path = "/v2/contracts/source/ST1PQHQKV0RJXZFY1DGX8MNSNYVE3VGZJSRTPGZGM/counter?proof=0";
    let (status, _, body) = get(FakeLedger::new(Mode::Chain), path).await;
    assert_eq!((status, body), (200, json!({"source": SOURCE, "publish_height": 31})));

    let path = "/v2/contracts/interface/ST1PQHQKV0RJXZFY1DGX8MNSNYVE3VGZJSRTPGZGM/counter";
    let (status, _, body) = get(FakeLedger::new(Mode::Chain), path).await;
    assert_eq!(status, 200);
    // The node's ABI text itself, its key order kept.
    assert_eq!(body.to_string(), ABI);

    let path = "/v2/contracts/interface/ST1PQHQKV0RJXZFY1DGX8MNSNYVE3VGZJSRTPGZGM/old";
    let (status, _, body) = get(FakeLedger::new(Mode::Chain), path).await;
    let message = format!("the node recorded no interface for {NO_ABI}");
    assert_eq!((status, body), (404, json!({"error": "Not Found", "message": message})));

    let path = "/v2/contracts/source/ST1PQHQKV0RJXZFY1DGX8MNSNYVE3VGZJSRTPGZGM/absent?proof=0";
    let (status, _, body) = get(FakeLedger::new(Mode::Chain), path).await;
    let message = "no contract ST1PQHQKV0RJXZFY1DGX8MNSNYVE3VGZJSRTPGZGM.absent on the canonical chain";
    assert_eq!((status, body), (404, json!({"error": "Not Found", "message": message})));
}

#[tokio::test]
async fn store_unavailable_is_503_and_a_failed_read_500() {
    for path in ["/v2/info", &format!("/v2/accounts/{ALICE}?proof=0")] {
        let (status, _, body) = get(FakeLedger::new(Mode::Unavailable), path).await;
        assert_eq!((status, body), (503, json!({"error": "The database service is unavailable"})), "{path}");
        let (status, _, body) = get(FakeLedger::new(Mode::Failed), path).await;
        assert_eq!(status, 500, "{path}");
        // The cause stays in the log.
        assert_eq!(body["message"], "internal error", "{path}");
        assert!(!body.to_string().contains("no such column"), "{body}");
    }
}

#[tokio::test]
async fn broadcast_hook_records_through_the_sink() {
    let mempool = Arc::new(FakeMempool::default());
    let hook = LedgerHook::new(Arc::clone(&mempool) as _);
    let raw = Bytes::from_static(&[0x80, 0x80, 0x00, 0x00, 0x00, 0x00, 0x01]);
    hook.on_broadcast(BroadcastedTx { raw_tx: raw.clone(), txid: Some(hash('a', 1)) }).await;
    // Known the second time: recorded once.
    hook.on_broadcast(BroadcastedTx { raw_tx: raw.clone(), txid: Some(hash('a', 1)) }).await;
    // Refused input is logged, not recorded.
    hook.on_broadcast(BroadcastedTx { raw_tx: Bytes::new(), txid: None }).await;
    assert_eq!(*mempool.recorded.lock().unwrap(), vec![(raw.to_vec(), LocalSource::V2Broadcast)]);
}
