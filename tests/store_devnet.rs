//! Generated chains with forks and microblocks, ingested event by event through
//! `EventSink::ingest` on SQLite and PostgreSQL: the store's invariants hold, its canonical
//! chain and every account's balance, lock, nonce and tokens equal the generator's own ledger,
//! orphaned transactions go back to the mempool until the node drops them, and re-ingesting
//! the log changes nothing.

mod common;

use ledger_read::TipReader;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use common::{
    check_invariants, check_reingest_adds_nothing, devnet_config, devnet_events, incoming, ingest_all, Db,
    TestStore,
};
use stacks_codec::clarity::Value;
use stacks_codec::to_hex_prefixed;
use stacks_devnet::Generator;
use stacks_ledger::events::payload::{DropReason, EventBody, EventPayload, TxStatus};
use stacks_ledger::events::{EventPath, RawEvent};
use stacks_ledger::ingest::{EventSink, IngestOutcome};
use stacks_ledger::ledger::mempool::drop_status;
use stacks_ledger::ledger::Network;

const BLOCKS: u64 = 100;
const TXS_PER_BLOCK: u32 = 6;

async fn check_devnet(db: Db, seed: u64) {
    let (events, generator) = devnet_events(devnet_config(seed, BLOCKS, TXS_PER_BLOCK));
    let stats = generator.stats();
    // The seeds are chosen so that the chain exercises what this test is about.
    assert!(stats.forks > 0 && stats.orphaned_blocks > 0, "seed {seed}: no fork: {stats:?}");
    assert!(stats.microblocks > 0 && stats.orphaned_microblock_txs > 0, "seed {seed}: {stats:?}");
    check_chain(db, &format!("{db:?} devnet seed {seed}"), events, generator).await;
}

/// Ingests a generated chain event by event and checks the store against the generator.
async fn check_chain(db: Db, label: &str, events: Vec<RawEvent>, generator: Generator) {
    let stats = generator.stats().clone();
    let label = label.to_string();
    let Some(ts) = TestStore::new(db, "devnet", Network::Testnet).await else { return };
    let store = &ts.store;
    let started = Instant::now();

    // Every txid a block or a microblock carried; the status each drop left a txid with.
    let mut carried = BTreeSet::new();
    let mut dropped: BTreeMap<String, (&'static str, Option<String>)> = BTreeMap::new();
    let mut back_in_mempool = 0;
    for ev in &events {
        let path = EventPath::from_path(&ev.path).unwrap();
        let payload = EventPayload::parse(path, &ev.payload).unwrap();
        match &payload {
            EventPayload::NewBlock(b) => carried.extend(b.transactions.iter().map(|t| t.txid.clone())),
            EventPayload::NewMicroblocks(m) => carried.extend(m.transactions.iter().map(|t| t.txid.clone())),
            EventPayload::DropMempoolTx(d)
                if matches!(d.reason, DropReason::ReplaceAcrossFork | DropReason::StaleGarbageCollect) =>
            {
                // The node drops what a reorg (or an anchor block's choice of microblocks)
                // orphaned for good. Until then, the store must have put it back in the mempool.
                for txid in &d.dropped_txids {
                    let rows = store.tx(txid).await.unwrap();
                    assert!(!rows.is_empty(), "{label}: dropped {txid} was never mined or streamed");
                    assert!(
                        rows.iter().all(|t| !t.canonical),
                        "{label}: dropped {txid} is canonical: {rows:?}"
                    );
                    assert_eq!(
                        store.mempool_status(txid).await.unwrap(),
                        Some(("pending".to_string(), None, false)),
                        "{label}: orphaned {txid} is not back in the mempool before event {}",
                        ev.id
                    );
                    back_in_mempool += 1;
                }
            }
            _ => {}
        }
        let outcome =
            store.ingest(incoming(ev)).await.unwrap_or_else(|e| panic!("{label}: event {}: {e}", ev.id));
        assert_eq!(outcome, IngestOutcome::Applied { id: ev.id }, "{label}");
        if let EventPayload::DropMempoolTx(d) = &payload {
            for txid in &d.dropped_txids {
                dropped.insert(txid.clone(), (drop_status(&d.reason), d.new_txid.clone()));
            }
        }
    }
    let ingest_secs = started.elapsed().as_secs_f64();
    assert!(back_in_mempool > 0 || stats.forks == 0, "{label}: no orphaned transaction was checked");

    check_invariants(store, &label, true).await;

    // The canonical tip is the generator's, at the requested height.
    let tip = store.tip().await.unwrap().map(|t| t.block).unwrap();
    let expected = generator.canonical_tip();
    assert_eq!(
        (tip.block_height, tip.block_hash.as_str(), tip.index_block_hash.as_str()),
        (BLOCKS as i64, expected.block_hash.as_str(), expected.index_block_hash.as_str()),
        "{label}: tip"
    );
    assert_eq!(expected.height, BLOCKS);

    // Every orphaned block the generator produced is stored, non-canonical; so is the boot block
    // (it is stored non-canonical by design, its transactions joining block 1).
    let counts = store.canonical_counts().await.unwrap();
    let orphaned = counts.get("blocks.orphaned").copied().unwrap_or(0);
    assert_eq!(orphaned, stats.orphaned_blocks as i64 + 1, "{label}: {counts:?}");
    assert!(orphaned > 1 || stats.forks == 0, "{label}: forks leave orphaned blocks");
    let boot = store.blocks_at_height(0).await.unwrap();
    assert_eq!((boot.len(), boot[0].canonical), (1, false), "{label}: boot block");
    assert_eq!(counts["blocks.canonical"], BLOCKS as i64, "{label}: one canonical block per height 1..tip");

    // Every account ends where the generator's own ledger says: liquid and locked STX, next
    // nonce, devcoin; every live NFT has the generator's owner.
    let (ft_asset, nft_asset) = generator.asset_identifiers();
    let mut known = BTreeSet::new();
    let mut locked_accounts = 0;
    for (address, account) in generator.accounts() {
        known.insert(address.to_string());
        let liquid = i64::try_from(account.balance - account.locked).unwrap();
        let locked = i64::try_from(account.locked).unwrap();
        locked_accounts += usize::from(locked > 0);
        assert_eq!(store.balance(address, None).await.unwrap(), (liquid, locked), "{label}: {address}");
        assert_eq!(
            store.next_nonce(address).await.unwrap(),
            account.nonce as i64,
            "{label}: nonce of {address}"
        );
        let ft: i128 = store
            .ft_balances(address)
            .await
            .unwrap()
            .into_iter()
            .filter(|(asset, _)| asset == ft_asset)
            .map(|(_, b)| b)
            .sum();
        assert_eq!(ft, account.ft as i128, "{label}: devcoin of {address}");
    }
    let mut nfts = 0;
    for (id, owner) in generator.nft_owners() {
        let value_hex = to_hex_prefixed(&Value::UInt(id).serialize());
        let stored = store.nft_owner(nft_asset, &value_hex).await.unwrap();
        assert_eq!(stored.as_deref(), Some(owner), "{label}: owner of devpunk {id}");
        nfts += 1;
    }
    // Nobody else holds STX.
    for (account, liquid, locked) in store.accounts().await.unwrap() {
        assert!(liquid + locked == 0 || known.contains(&account), "{label}: unknown holder {account}");
    }

    // The mempool: every drop is recorded with its reason; what is still pending is exactly what
    // was orphaned (carried by a block or microblock, canonical nowhere) and never dropped.
    for (txid, (status, replaced_by)) in &dropped {
        let got = store.mempool_status(txid).await.unwrap();
        assert_eq!(got, Some((status.to_string(), replaced_by.clone(), true)), "{label}: dropped {txid}");
    }
    let mut orphaned_pending = BTreeSet::new();
    for txid in &carried {
        let rows = store.tx(txid).await.unwrap();
        if !rows.iter().any(|t| t.canonical) && !dropped.contains_key(txid) {
            orphaned_pending.insert(txid.clone());
        }
    }
    let pending: BTreeSet<String> = store.mempool_tx_ids().await.unwrap().into_iter().collect();
    assert_eq!(pending, orphaned_pending, "{label}: pending mempool");
    // The generator drops every orphaned user transaction, so what stays pending is the orphaned
    // blocks' coinbases, which no node ever drops (the incumbent restores them too).
    for txid in &pending {
        let rows = store.tx(txid).await.unwrap();
        assert!(rows.iter().all(|t| t.tx_type == "coinbase"), "{label}: pending {txid}: {rows:?}");
    }

    check_reingest_adds_nothing(store, &events, &[], &label).await;
    println!(
        "{label}: {} events ({} blocks, {} orphaned, {} forks, {} microblocks) ingested in {ingest_secs:.2} s; \
         {back_in_mempool} orphaned txs back in the mempool before their drop, {} still pending; \
         {} accounts ({locked_accounts} locked), {nfts} NFTs checked; total {:.2} s",
        events.len(),
        stats.blocks,
        stats.orphaned_blocks,
        stats.forks,
        stats.microblocks,
        pending.len(),
        known.len(),
        started.elapsed().as_secs_f64()
    );
    ts.finish().await;
}

/// The same checks on a chain with the real-chain cases as well (sponsored calls, failed
/// deploys and re-deploys, replaced duplicate deploys, delegations and revocations, a current
/// node's fields), with its forks and microblocks.
async fn check_real_chain_cases(db: Db) {
    let cfg = devnet_config(4, BLOCKS, TXS_PER_BLOCK).with_real_chain_cases();
    let (events, generator) = devnet_events(cfg);
    let sponsored_calls = events
        .iter()
        .filter_map(|e| match EventPayload::parse(EventPath::from_path(&e.path)?, &e.payload) {
            Ok(EventPayload::NewBlock(b)) => Some(b),
            _ => None,
        })
        .flat_map(|b| b.transactions.into_iter())
        .filter(|t| {
            let tx =
                stacks_codec::tx::Transaction::deserialize(&stacks_codec::decode_hex(&t.raw_tx).unwrap())
                    .unwrap();
            tx.is_sponsored() && tx.tx_type_name() == "contract_call"
        })
        .count();
    assert!(sponsored_calls > 5, "{sponsored_calls} sponsored calls");
    check_chain(db, &format!("{db:?} devnet with the real-chain cases"), events, generator).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_real_chain_cases() {
    check_real_chain_cases(Db::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_real_chain_cases() {
    check_real_chain_cases(Db::Postgres).await;
}

/// `(anchored, event_index, recipient)` of one NFT event.
type NftMove = (bool, u64, String);

/// The first block (by event id) in which one NFT is moved both by a confirmed microblock
/// transaction and by one of the block's own: `(event id, index block hash, asset, value hex,
/// owner after the block)`. Microblock transactions executed before the block's own, although the block lists
/// them (and numbers their events) after its own, as 2021-era nodes did; the owner is the
/// recipient of the token's last event in execution order ('' when burnt).
fn nft_moved_by_stream_and_block(events: &[RawEvent]) -> Option<(i64, String, String, String, String)> {
    for ev in events {
        let Ok(EventPayload::NewBlock(b)) = EventPayload::parse(EventPath::from_path(&ev.path)?, &ev.payload)
        else {
            continue;
        };
        // token → [(anchored, event_index, recipient)]
        let mut moves: BTreeMap<(String, String), Vec<NftMove>> = BTreeMap::new();
        for e in &b.events {
            let Some(tx) = b.transactions.iter().find(|t| t.txid == e.txid) else { continue };
            if !e.committed || tx.status != TxStatus::Success {
                continue;
            }
            let (asset, value, owner) = match &e.body {
                EventBody::NftMint(m) => (&m.asset_identifier, &m.raw_value, m.recipient.clone()),
                EventBody::NftTransfer(t) => (&t.asset_identifier, &t.raw_value, t.recipient.clone()),
                EventBody::NftBurn(x) => (&x.asset_identifier, &x.raw_value, String::new()),
                _ => continue,
            };
            let anchored = tx.microblock_hash.is_none();
            moves.entry((asset.clone(), value.clone())).or_default().push((anchored, e.event_index, owner));
        }
        for ((asset, value), mut m) in moves {
            if m.iter().any(|x| x.0) && m.iter().any(|x| !x.0) {
                m.sort_by_key(|x| (x.0, x.1));
                return Some((ev.id, b.index_block_hash.clone(), asset, value, m.pop()?.2));
            }
        }
    }
    None
}

/// NFT custody follows execution order: a block lists the microblock transactions it confirms
/// after its own (and numbers their events after its own), but they executed first. The
/// incumbent orders custody by `(block_height, microblock_sequence, tx_index, event_index)` with
/// anchored transactions last; so must we. Seed 10 moves devpunk u2 through both in block 3
/// (event 19); ordering by listing order gave the microblock's recipient.
async fn nft_custody_follows_execution_order(db: Db) {
    let (events, _) = devnet_events(devnet_config(10, 60, TXS_PER_BLOCK));
    let (id, block, asset, value, owner) =
        nft_moved_by_stream_and_block(&events).expect("seed 10 has the case");
    let Some(ts) = TestStore::new(db, "nft_order", Network::Testnet).await else { return };
    let upto: Vec<RawEvent> = events.iter().filter(|e| e.id <= id).cloned().collect();
    ingest_all(&ts.store, upto, &[], "nft order").await;
    let tip = ts.store.tip().await.unwrap().map(|t| t.block).unwrap();
    assert_eq!(tip.index_block_hash, block, "{db:?}: the block is the canonical tip");
    println!("{db:?}: event {id}, height {}, {asset} {value}: expected owner {owner}", tip.block_height);
    assert_eq!(ts.store.nft_owner(&asset, &value).await.unwrap(), Some(owner), "{db:?}: owner of {value}");
    ts.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_nft_custody_follows_execution_order() {
    nft_custody_follows_execution_order(Db::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_nft_custody_follows_execution_order() {
    nft_custody_follows_execution_order(Db::Postgres).await;
}

/// Many more chains, with more forks (30%) and streams: `SEEDS=100..130 cargo test --test
/// store_devnet -- --ignored many_seeds`. Ignored: minutes of work, and seeds 104, 107, 110, ...
/// hit the NFT custody bug above.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "long; run by hand (see its doc)"]
async fn many_seeds() {
    let range = std::env::var("SEEDS").unwrap_or_else(|_| "100..130".into());
    let (from, to) = range.split_once("..").expect("SEEDS=FROM..TO");
    for seed in from.parse::<u64>().unwrap()..to.parse().unwrap() {
        let mut cfg = devnet_config(seed, BLOCKS, TXS_PER_BLOCK);
        cfg.fork_per_mille = 300;
        let (events, generator) = devnet_events(cfg);
        check_chain(Db::Sqlite, &format!("Sqlite devnet seed {seed} (30% forks)"), events, generator).await;
    }
}

macro_rules! devnet_tests {
    ($($name:ident: $seed:expr;)*) => {
        mod sqlite {
            use super::*;
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                check_devnet(Db::Sqlite, $seed).await;
            })*
        }
        mod postgres {
            use super::*;
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                check_devnet(Db::Postgres, $seed).await;
            })*
        }
    };
}

devnet_tests! {
    seed_1: 1;
    seed_2: 2;
    seed_3: 3;
}
