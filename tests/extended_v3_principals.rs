//! End to end, `/extended/v3/principals/{p}/…` over a generated chain with FT and NFT
//! activity, forks and microblocks, on SQLite and PostgreSQL: every principal's balance
//! changes (per transaction and by transaction list), its transaction list's STX sums and
//! affected flags, its FT balances and NFT count equal the values recomputed here from the
//! chain's own events (the canonical chain found by walking parents from the generator's tip);
//! every page is walked with its cursors; transactions of blocks a reorg orphaned lose their
//! balance changes (or show them at their new place) once the fork wins.

mod common;

use ledger_read::TipReader;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use common::{devnet_config, devnet_events, incoming, Db, TestStore};
use serde_json::Value;
use stacks_codec::tx::Transaction;
use stacks_devnet::DevnetConfig;
use stacks_ledger::events::payload::{EventBody, EventPayload, NewBlock, TxStatus};
use stacks_ledger::events::{EventPath, RawEvent};
use stacks_ledger::ingest::EventSink;
use stacks_ledger::ledger::Network;

/// `(principal, tx_id)` → `(asset_type, asset)` → (sent, received).
type Changes = BTreeMap<(String, String), BTreeMap<(u8, String), (u128, u128)>>;

fn config(seed: u64) -> DevnetConfig {
    DevnetConfig { sponsored_call_per_mille: 150, ..devnet_config(seed, 40, 6) }
}

fn new_block(ev: &RawEvent) -> Option<NewBlock> {
    let path = EventPath::from_path(&ev.path)?;
    match EventPayload::parse(path, &ev.payload).ok()? {
        EventPayload::NewBlock(b) => Some(*b),
        _ => None,
    }
}

/// The balance changes of one block's transactions, recomputed from its receipts and events as
/// the incumbent defines them: the fee payer's fee as STX sent (even 0), STX/FT event amounts,
/// one per NFT token; events of transactions that did not succeed move nothing.
fn block_changes(b: &NewBlock, out: &mut Changes, positions: &mut HashMap<String, (u64, String)>) {
    for r in &b.transactions {
        let bytes = stacks_codec::decode_hex(&r.raw_tx).unwrap();
        let tx = Transaction::deserialize(&bytes).unwrap();
        let payer = tx.sponsor_address().unwrap_or_else(|| tx.origin_address()).to_c32();
        let e = out.entry((payer, r.txid.clone())).or_default().entry((1, "stx".into())).or_default();
        e.0 += u128::from(tx.fee());
        positions.insert(r.txid.clone(), (b.block_height, b.index_block_hash.clone()));
        if r.status != TxStatus::Success {
            continue;
        }
        for ev in b.events.iter().filter(|e| e.txid == r.txid && e.committed) {
            let mut add = |who: &str, kind: u8, asset: &str, sent: u128, received: u128| {
                let v = out
                    .entry((who.to_string(), r.txid.clone()))
                    .or_default()
                    .entry((kind, asset.into()))
                    .or_default();
                v.0 += sent;
                v.1 += received;
            };
            match &ev.body {
                EventBody::StxTransfer(t) => {
                    add(&t.sender, 1, "stx", t.amount, 0);
                    add(&t.recipient, 1, "stx", 0, t.amount);
                }
                EventBody::StxMint(t) => add(&t.recipient, 1, "stx", 0, t.amount),
                EventBody::StxBurn(t) => add(&t.sender, 1, "stx", t.amount, 0),
                EventBody::FtTransfer(t) => {
                    add(&t.sender, 2, &t.asset_identifier, t.amount, 0);
                    add(&t.recipient, 2, &t.asset_identifier, 0, t.amount);
                }
                EventBody::FtMint(t) => add(&t.recipient, 2, &t.asset_identifier, 0, t.amount),
                EventBody::FtBurn(t) => add(&t.sender, 2, &t.asset_identifier, t.amount, 0),
                EventBody::NftTransfer(t) => {
                    add(&t.sender, 3, &t.asset_identifier, 1, 0);
                    add(&t.recipient, 3, &t.asset_identifier, 0, 1);
                }
                EventBody::NftMint(t) => add(&t.recipient, 3, &t.asset_identifier, 0, 1),
                EventBody::NftBurn(t) => add(&t.sender, 3, &t.asset_identifier, 1, 0),
                _ => {}
            }
        }
    }
}

async fn get<F, R>(api: &F, url: &str) -> Value
where
    F: warp::Filter<Extract = (R,), Error = std::convert::Infallible> + Clone + Send + Sync + 'static,
    R: warp::Reply + Send,
{
    let res = warp::test::request().path(url).reply(api).await;
    assert_eq!(res.status(), 200, "{url}: {}", String::from_utf8_lossy(res.body()));
    serde_json::from_slice(res.body()).unwrap()
}

/// Every row of a cursor-paged list, checking the envelope on the way: `current` names the
/// page's first row, `next` the next page's, a full page's `next` is the following page's
/// `current`, each page after the first has a `previous` naming the page before it.
async fn walk<F, R>(api: &F, url: &str) -> (u64, Vec<Value>)
where
    F: warp::Filter<Extract = (R,), Error = std::convert::Infallible> + Clone + Send + Sync + 'static,
    R: warp::Reply + Send,
{
    let sep = if url.contains('?') { '&' } else { '?' };
    let first = get(api, url).await;
    let total = first["total"].as_u64().unwrap();
    let mut rows: Vec<Value> = first["results"].as_array().unwrap().clone();
    let mut page = first;
    let mut currents = vec![page["cursor"]["current"].clone()];
    while let Some(next) = page["cursor"]["next"].as_str().map(str::to_string) {
        let p = get(api, &format!("{url}{sep}cursor={next}")).await;
        assert_eq!(p["cursor"]["current"].as_str(), Some(next.as_str()), "{url}");
        assert_eq!(p["cursor"]["previous"], currents[currents.len() - 1], "{url}: previous page");
        assert_eq!(p["total"].as_u64(), Some(total), "{url}");
        currents.push(p["cursor"]["current"].clone());
        rows.extend(p["results"].as_array().unwrap().iter().cloned());
        page = p;
    }
    (total, rows)
}

async fn check(db: Db, seed: u64) {
    let (events, generator) = devnet_events(config(seed));
    let stats = generator.stats().clone();
    assert!(stats.forks > 0 && stats.orphaned_blocks > 0, "seed {seed}: no fork: {stats:?}");
    let Some(ts) = TestStore::new(db, "v3_principals", Network::Testnet).await else { return };
    let store = &ts.store;
    let api = common::routes(Arc::clone(store));
    let (ft_asset, nft_asset) = generator.asset_identifiers();
    let (ft_asset, nft_asset) = (ft_asset.to_string(), nft_asset.to_string());

    let blocks: HashMap<String, NewBlock> =
        events.iter().filter_map(new_block).map(|b| (b.index_block_hash.clone(), b)).collect();
    let mut canonical = BTreeSet::new();
    let mut at = Some(generator.canonical_tip().index_block_hash.clone());
    while let Some(h) = at {
        let Some(b) = blocks.get(&h) else { break };
        canonical.insert(h.clone());
        at = Some(b.parent_index_block_hash.clone());
    }
    let mut expected = Changes::new();
    let mut positions = HashMap::new();
    // The boot block's (block 0's) transactions are in none of the principal routes: the
    // incumbent never makes their `principal_txs` rows canonical (ledger-core/src/store/v3_principals.rs).
    for h in canonical.iter().filter(|h| blocks[*h].block_height > 0) {
        block_changes(&blocks[h], &mut expected, &mut positions);
    }
    let boot: BTreeSet<String> = canonical
        .iter()
        .filter(|h| blocks[*h].block_height == 0)
        .flat_map(|h| blocks[h].transactions.iter().map(|r| r.txid.clone()))
        .collect();
    assert!(!boot.is_empty(), "seed {seed}: no boot block");
    let token_moves = expected.values().flat_map(|m| m.keys()).filter(|(k, _)| *k > 1).count();
    assert!(token_moves > 20, "seed {seed}: too little FT/NFT activity: {token_moves}");

    // Ingest, and while a block that the chain later orphans is the tip, note a transaction of
    // it with its balance changes then.
    let mut orphaned_seen: Vec<(String, String, Value)> = Vec::new();
    for ev in &events {
        store.ingest(incoming(ev)).await.unwrap();
        let Some(b) = new_block(ev) else { continue };
        if canonical.contains(&b.index_block_hash) || orphaned_seen.len() >= 3 {
            continue;
        }
        let tip = store.tip().await.unwrap().map(|t| t.block).unwrap();
        if tip.index_block_hash != b.index_block_hash {
            continue;
        }
        let mut own = BTreeMap::new();
        let mut ignored = HashMap::new();
        block_changes(&b, &mut own, &mut ignored);
        if let Some(((p, tx), _)) =
            own.iter().find(|(_, m)| m.keys().any(|(k, _)| *k > 1)).or(own.iter().next())
        {
            let url = format!("/extended/v3/principals/{p}/transactions/{tx}/balance-changes");
            let now = get(&api, &url).await;
            assert_eq!(
                now["total"].as_u64(),
                Some(own[&(p.clone(), tx.clone())].len() as u64),
                "{url} before the reorg"
            );
            orphaned_seen.push((p.clone(), tx.clone(), now));
        }
    }
    assert!(!orphaned_seen.is_empty(), "seed {seed}: no orphaned block was ever the tip");
    for (p, tx, before) in &orphaned_seen {
        let url = format!("/extended/v3/principals/{p}/transactions/{tx}/balance-changes");
        let after = get(&api, &url).await;
        match expected.get(&(p.clone(), tx.clone())) {
            None => assert_eq!(after["total"], 0, "{url}: the reorg orphaned it"),
            Some(m) => {
                assert_eq!(after["total"].as_u64(), Some(m.len() as u64), "{url}: re-mined ({before})")
            }
        }
    }

    // Per principal: balance changes, transaction list, balances.
    let mut by_principal: BTreeMap<&str, Vec<&String>> = BTreeMap::new();
    for (p, tx) in expected.keys() {
        by_principal.entry(p.as_str()).or_default().push(tx);
    }
    let mut ft_expected: BTreeMap<&str, i128> = BTreeMap::new();
    for ((p, _), m) in &expected {
        if let Some((s, r)) = m.get(&(2, ft_asset.clone())) {
            *ft_expected.entry(p.as_str()).or_default() += *r as i128 - *s as i128;
        }
    }
    let mut checked_pages = 0;
    for (p, txs) in &by_principal {
        // Newest first, as the list orders them.
        let mut txs: Vec<&String> = txs.clone();
        txs.sort_by_key(|t| std::cmp::Reverse(positions[t.as_str()].0));
        for chunk in txs.chunks(50) {
            let ids: Vec<&str> = chunk.iter().map(|t| t.as_str()).collect();
            let (total, rows) = walk(
                &api,
                &format!("/extended/v3/principals/{p}/balance-changes?tx_id={}&limit=3", ids.join(",")),
            )
            .await;
            let want: usize = chunk.iter().map(|t| expected[&(p.to_string(), t.to_string())].len()).sum();
            assert_eq!((total as usize, rows.len()), (want, want), "{p}: balance-change rows");
            for row in &rows {
                let tx = row["tx_id"].as_str().unwrap().to_string();
                let kind = match row["asset"]["type"].as_str().unwrap() {
                    "stx" => 1,
                    "ft" => 2,
                    _ => 3,
                };
                let asset = row["asset"]["identifier"].as_str().unwrap_or("stx").to_string();
                let (s, r) = expected[&(p.to_string(), tx.clone())][&(kind, asset)];
                let bc = &row["balance_change"];
                assert_eq!(
                    (
                        bc["sent"].as_str().unwrap(),
                        bc["received"].as_str().unwrap(),
                        bc["net"].as_str().unwrap()
                    ),
                    (
                        s.to_string().as_str(),
                        r.to_string().as_str(),
                        (r as i128 - s as i128).to_string().as_str()
                    ),
                    "{p} {tx}"
                );
            }
            checked_pages += 1;
        }
        // The transaction list: every transaction with a change is there, with its STX sums;
        // its pages walked with their cursors.
        let (total, rows) = walk(&api, &format!("/extended/v3/principals/{p}/transactions?limit=3")).await;
        assert_eq!(total as usize, rows.len(), "{p}: list total");
        let mut last: Option<(u64, u64, u64)> = None;
        let mut listed = BTreeSet::new();
        for row in &rows {
            let t = &row["transaction"];
            let tx = t["tx_id"].as_str().unwrap().to_string();
            let pos = (t["block"]["height"].as_u64().unwrap(), 0, t["block"]["tx_index"].as_u64().unwrap());
            if let Some(l) = last {
                assert!(pos.0 <= l.0, "{p}: newest first");
            }
            last = Some(pos);
            assert!(listed.insert(tx.clone()), "{p}: {tx} listed twice");
            assert!(!boot.contains(&tx), "{p}: boot transaction {tx} listed");
            let m = expected.get(&(p.to_string(), tx.clone())).cloned().unwrap_or_default();
            let (s, r) = m.get(&(1, "stx".to_string())).copied().unwrap_or_default();
            let bc = &row["balance_changes"]["stx"];
            assert_eq!(
                (bc["sent"].as_str().unwrap(), bc["received"].as_str().unwrap()),
                (s.to_string().as_str(), r.to_string().as_str()),
                "{p} {tx}"
            );
            assert_eq!(
                row["affected_balances"]["ft"].as_bool(),
                Some(m.keys().any(|(k, _)| *k == 2)),
                "{p} {tx}"
            );
            assert_eq!(
                row["affected_balances"]["nft"].as_bool(),
                Some(m.keys().any(|(k, _)| *k == 3)),
                "{p} {tx}"
            );
        }
        for t in &txs {
            assert!(listed.contains(t.as_str()), "{p}: {t} has balance changes but is not listed");
        }
        // FT balance (the store keeps it from the token operations).
        if let Some(want) = ft_expected.get(p) {
            let one = get(&api, &format!("/extended/v3/principals/{p}/balances/ft/{ft_asset}")).await;
            assert_eq!(one["balance"].as_str(), Some(want.to_string().as_str()), "{p}: FT balance");
            let (_, list) = walk(&api, &format!("/extended/v3/principals/{p}/balances/ft?limit=1")).await;
            let listed: Vec<&Value> =
                list.iter().filter(|r| r["asset_identifier"] == ft_asset.as_str()).collect();
            assert_eq!(listed.len(), usize::from(*want > 0), "{p}: FT list");
        }
    }
    assert!(checked_pages > 5, "seed {seed}: {checked_pages} pages");
    // Nor do the boot transactions have balance changes, for their sender either.
    for h in canonical.iter().filter(|h| blocks[*h].block_height == 0) {
        for r in &blocks[h].transactions {
            let tx = Transaction::deserialize(&stacks_codec::decode_hex(&r.raw_tx).unwrap()).unwrap();
            let url = format!(
                "/extended/v3/principals/{}/transactions/{}/balance-changes",
                tx.origin_address().to_c32(),
                r.txid
            );
            assert_eq!(get(&api, &url).await["total"], 0, "{url}");
        }
    }
    // The generator's own ledger agrees: devcoin balances and NFT owners.
    for (address, account) in generator.accounts() {
        assert_eq!(ft_expected.get(address).copied().unwrap_or(0), account.ft as i128, "{address}: devcoin");
    }
    let mut owned: BTreeMap<&str, u64> = BTreeMap::new();
    for (_, owner) in generator.nft_owners() {
        *owned.entry(owner).or_default() += 1;
    }
    for (owner, n) in owned {
        let (total, rows) =
            walk(&api, &format!("/extended/v3/principals/{owner}/balances/nft?limit=2")).await;
        assert_eq!((total, rows.len() as u64), (n, n), "{owner}: NFTs");
        assert!(rows.iter().all(|r| r["asset_identifier"] == nft_asset.as_str()));
    }
    ts.finish().await;
}

#[tokio::test]
async fn v3_principals_follow_the_chain_sqlite() {
    check(Db::Sqlite, 7).await;
}

#[tokio::test]
async fn v3_principals_follow_the_chain_postgres() {
    check(Db::Postgres, 7).await;
}
