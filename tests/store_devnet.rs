//! Generated chains with forks and microblocks, ingested event by event through
//! `EventSink::ingest` on SQLite and PostgreSQL: the store's invariants hold, its canonical
//! chain and every account's balance, lock, nonce and tokens equal the generator's own ledger,
//! orphaned transactions go back to the mempool until the node drops them, and re-ingesting
//! the log changes nothing.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use common::{
    check_invariants, check_reingest_adds_nothing, devnet_config, devnet_events, incoming, Db, TestStore,
};
use stacks_codec::clarity::Value;
use stacks_codec::to_hex_prefixed;
use stacks_ledger::events::payload::{DropReason, EventPayload};
use stacks_ledger::events::EventPath;
use stacks_ledger::ingest::{EventSink, IngestOutcome};
use stacks_ledger::ledger::mempool::drop_status;
use stacks_ledger::ledger::Network;

const BLOCKS: u64 = 100;
const TXS_PER_BLOCK: u32 = 6;

async fn check_devnet(db: Db, seed: u64) {
    let (events, generator) = devnet_events(devnet_config(seed, BLOCKS, TXS_PER_BLOCK));
    let stats = generator.stats().clone();
    // The seeds are chosen so that the chain exercises what this test is about.
    assert!(stats.forks > 0 && stats.orphaned_blocks > 0, "seed {seed}: no fork: {stats:?}");
    assert!(stats.microblocks > 0 && stats.orphaned_microblock_txs > 0, "seed {seed}: {stats:?}");
    let label = format!("{db:?} devnet seed {seed}");
    let Some(ts) = TestStore::new(db, &format!("devnet_{seed}"), Network::Testnet).await else { return };
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
    assert!(back_in_mempool > 0, "{label}: no orphaned transaction was checked");

    check_invariants(store, &label, true).await;

    // The canonical tip is the generator's, at the requested height.
    let tip = store.chain_tip().await.unwrap().unwrap();
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
    assert!(orphaned > 1, "{label}: forks leave orphaned blocks");
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
