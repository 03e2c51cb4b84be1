//! End-to-end properties of generated chains, checked the way the consumer reads them: every
//! payload through `EventPayload::parse`, every raw transaction through the codec, the chain
//! through the consumer's canonical-block and microblock rules, and the balances the events
//! imply against the generator's own ledger.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use ledger_core::events::payload::{EventBody, EventPayload, NewBlock, NewMicroblocks, TxStatus};
use stacks_codec::clarity::Value;
use stacks_codec::decode_hex;
use stacks_codec::sign::{verify_origin, verify_sponsor};
use stacks_codec::tx::{Payload, Transaction, TransactionVersion};

use super::world::Holder;
use super::{write_tsv, DevnetConfig, DevnetEvent, Generator, Network};

/// A chain with everything switched on, small enough for a debug-build test.
fn busy(seed: u64) -> DevnetConfig {
    DevnetConfig {
        seed,
        blocks: 80,
        txs_per_block: 8,
        forks: true,
        microblocks: true,
        accounts: 12,
        reward_maturity: 6,
        fork_per_mille: 120,
        microblock_per_mille: 500,
        ..DevnetConfig::default()
    }
}

fn events(cfg: DevnetConfig) -> Vec<DevnetEvent> {
    Generator::new(cfg).unwrap().map(Result::unwrap).collect()
}

fn tsv(cfg: DevnetConfig) -> Vec<u8> {
    let mut out = Vec::new();
    write_tsv(Generator::new(cfg).unwrap(), &mut out).unwrap();
    out
}

fn parse(e: &DevnetEvent) -> EventPayload {
    EventPayload::parse(e.path, &e.payload).unwrap_or_else(|err| panic!("event {}: {err}", e.id))
}

fn decode_tx(raw: &str) -> Transaction {
    Transaction::deserialize(&decode_hex(raw).unwrap()).unwrap()
}

fn blocks(evs: &[DevnetEvent]) -> Vec<NewBlock> {
    evs.iter()
        .filter_map(|e| match parse(e) {
            EventPayload::NewBlock(b) => Some(*b),
            _ => None,
        })
        .collect()
}

/// The consumer's rules (api-inventory §b.2) applied in arrival order: the parent must exist,
/// a block is canonical iff its height exceeds the tip's, a canonical block whose parent is
/// not the tip is a reorg. Returns the final canonical chain (index hashes, genesis first),
/// the number of reorgs and of blocks that arrived non-canonical.
fn follow_chain(blocks: &[NewBlock]) -> (Vec<String>, usize, usize) {
    let mut parents: HashMap<&str, (&str, u64)> = HashMap::new();
    let mut tip: Option<(&str, u64)> = None;
    let (mut reorgs, mut side) = (0, 0);
    for b in blocks {
        assert!(
            !parents.contains_key(b.index_block_hash.as_str()),
            "duplicate index_block_hash {}",
            b.index_block_hash
        );
        if b.block_height > 0 {
            let parent = parents.get(b.parent_index_block_hash.as_str());
            assert_eq!(
                parent.map(|p| p.1 + 1),
                Some(b.block_height),
                "block {} has no parent",
                b.index_block_hash
            );
        }
        parents.insert(&b.index_block_hash, (&b.parent_index_block_hash, b.block_height));
        match tip {
            Some((t, h)) if b.block_height <= h => {
                side += 1;
                let _ = t;
            }
            Some((t, _)) => {
                if b.parent_index_block_hash != t {
                    reorgs += 1;
                }
                tip = Some((&b.index_block_hash, b.block_height));
            }
            None => tip = Some((&b.index_block_hash, b.block_height)),
        }
    }
    let mut chain = Vec::new();
    let mut cur = tip.map(|t| t.0);
    while let Some(c) = cur {
        chain.push(c.to_string());
        cur = parents.get(c).filter(|p| p.1 > 0).map(|p| p.0);
    }
    chain.reverse();
    (chain, reorgs, side)
}

#[test]
fn same_seed_gives_identical_bytes() {
    let a = tsv(busy(7));
    assert_eq!(a, tsv(busy(7)));
    assert!(a.len() > 100_000, "{}", a.len());
}

#[test]
fn different_seeds_differ() {
    let a = tsv(busy(1));
    let b = tsv(busy(2));
    assert_ne!(a, b);
    // Even the accounts differ: no shared transaction.
    let txids = |evs: Vec<DevnetEvent>| -> BTreeSet<String> {
        blocks(&evs).iter().skip(1).flat_map(|b| b.transactions.iter().map(|t| t.txid.clone())).collect()
    };
    assert!(txids(events(busy(1))).is_disjoint(&txids(events(busy(2)))));
}

#[test]
fn ids_and_timestamps_increase() {
    let evs = events(busy(3));
    let key = |ts: &str| {
        let (main, rest) = ts.split_at(19);
        let frac = rest.trim_end_matches("+00").trim_start_matches('.');
        (main.to_string(), format!("{frac:0<6}"))
    };
    for (i, w) in evs.windows(2).enumerate() {
        assert_eq!(w[0].id, i as i64 + 1);
        assert!(
            key(&w[0].receive_timestamp) < key(&w[1].receive_timestamp),
            "{:?}",
            (&w[0].receive_timestamp, &w[1].receive_timestamp)
        );
    }
}

/// `busy` with every real-chain case on as well.
fn busy_with_cases(seed: u64) -> DevnetConfig {
    busy(seed).with_real_chain_cases()
}

#[test]
fn every_event_parses_and_every_transaction_decodes_and_verifies() {
    let configs = [
        DevnetConfig { network: Network::Testnet, ..busy(4) },
        DevnetConfig { network: Network::Mainnet, ..busy(4) },
        DevnetConfig { network: Network::Mainnet, ..busy_with_cases(4) },
        DevnetConfig::real_chain_cases(4),
    ];
    for cfg in configs {
        let network = cfg.network;
        let (chain_id, version) = match network {
            Network::Testnet => (0x8000_0000, TransactionVersion::Testnet),
            Network::Mainnet => (1, TransactionVersion::Mainnet),
        };
        let mut checked = 0;
        let mut check = |raw: &str, txid: Option<&str>, boot: bool| {
            let tx = decode_tx(raw);
            if let Some(txid) = txid {
                assert_eq!(tx.txid_hex(), txid);
            }
            assert_eq!(tx.version, version);
            if boot {
                assert_eq!(tx.chain_id, 0);
            } else {
                assert_eq!(tx.chain_id, chain_id);
                verify_origin(&tx).unwrap_or_else(|e| panic!("{raw}: {e}"));
                if tx.is_sponsored() {
                    verify_sponsor(&tx).unwrap();
                }
            }
            checked += 1;
        };
        for e in events(cfg) {
            match parse(&e) {
                EventPayload::NewBlock(b) => {
                    for t in &b.transactions {
                        check(&t.raw_tx, Some(&t.txid), b.block_height == 0);
                        Value::deserialize(&decode_hex(&t.raw_result).unwrap()).unwrap();
                        t.microblock().unwrap();
                    }
                    let txids: BTreeSet<&str> = b.transactions.iter().map(|t| t.txid.as_str()).collect();
                    for (i, ev) in b.events.iter().enumerate() {
                        assert_eq!(ev.event_index, i as u64);
                        assert!(txids.contains(ev.txid.as_str()), "event for a tx not in the block");
                        assert!(!matches!(ev.body, EventBody::Unknown { .. }));
                    }
                }
                EventPayload::NewMicroblocks(m) => {
                    for t in &m.transactions {
                        check(&t.raw_tx, Some(&t.txid), false);
                        assert!(t.microblock().unwrap().is_some());
                    }
                }
                EventPayload::NewMempoolTx(m) => m.raw_txs.iter().for_each(|raw| check(raw, None, false)),
                EventPayload::NewBurnBlock(_) | EventPayload::DropMempoolTx(_) => {}
                other => panic!("unexpected payload {other:?}"),
            }
        }
        assert!(checked > 1_000, "{checked}");
    }
}

#[test]
fn the_ledger_is_conserved_after_every_step() {
    for cfg in [busy(5), busy_with_cases(5)] {
        conserved_after_every_step(cfg);
    }
}

fn conserved_after_every_step(cfg: DevnetConfig) {
    let mut g = Generator::new(cfg).unwrap();
    let mut n = 0;
    while let Some(e) = g.next() {
        e.unwrap();
        g.check_ledger().unwrap_or_else(|err| panic!("after event {n}: {err}"));
        n += 1;
    }
    let w = g.world();
    assert!(w.minted > w.accounts.iter().map(|a| a.balance).sum::<u128>(), "some fees are still pending");
}

/// Balances, nonces, locks and token holdings replayed from the canonical chain's events (as
/// the consumer computes them) equal the generator's own ledger.
#[test]
fn replaying_the_canonical_chain_reproduces_the_ledger() {
    replay_reproduces_the_ledger(busy(6));
}

/// The same with the real-chain cases: sponsors pay for contract calls, failed deploys pay
/// their fee, and each stacker's latest delegate-or-revoke print says whether it delegates.
#[test]
fn replaying_a_chain_with_the_real_chain_cases_reproduces_the_ledger() {
    replay_reproduces_the_ledger(busy_with_cases(6));
    replay_reproduces_the_ledger(DevnetConfig::real_chain_cases(6));
}

/// A pox-4 print event's `name` and stacker, and its `data.delegate-to` when it has one.
fn pox_print(ev: &ledger_core::events::payload::ContractEvent) -> Option<(String, String, Option<String>)> {
    if !ev.contract_identifier.ends_with(".pox-4") {
        return None;
    }
    let Value::ResponseOk(inner) = Value::deserialize(&decode_hex(&ev.raw_value).unwrap()).unwrap() else {
        return None;
    };
    let Value::Tuple(fields) = *inner else { return None };
    let get = |k: &str| fields.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    let Some(Value::StringAscii(name)) = get("name") else { return None };
    let principal = |v: Value| v.repr().trim_start_matches('\'').to_string();
    let stacker = principal(get("stacker")?);
    let delegate_to = match get("data") {
        Some(Value::Tuple(data)) => {
            data.into_iter().find(|(n, _)| n == "delegate-to").map(|(_, v)| principal(v))
        }
        _ => None,
    };
    Some((String::from_utf8(name).unwrap(), stacker, delegate_to))
}

fn replay_reproduces_the_ledger(cfg: DevnetConfig) {
    let mut g = Generator::new(cfg).unwrap();
    let evs: Vec<DevnetEvent> = g.by_ref().map(Result::unwrap).collect();
    let all = blocks(&evs);
    let (chain, _, _) = follow_chain(&all);
    let by_index: HashMap<&str, &NewBlock> = all.iter().map(|b| (b.index_block_hash.as_str(), b)).collect();

    let mut stx: BTreeMap<String, i128> = BTreeMap::new();
    let mut nonces: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let mut locks: BTreeMap<String, (u128, u64)> = BTreeMap::new();
    let mut ft: BTreeMap<String, u128> = BTreeMap::new();
    let mut nfts: BTreeMap<Vec<u8>, String> = BTreeMap::new();
    // Each stacker's latest delegate-stx (true) or revoke-delegate-stx (false).
    let mut delegating: BTreeMap<String, bool> = BTreeMap::new();
    let mut last_burn = 0;
    for index in &chain {
        let b = by_index[index.as_str()];
        last_burn = b.burn_block_height;
        let mut ok = BTreeSet::new();
        for t in &b.transactions {
            if t.status == TxStatus::Success {
                ok.insert(t.txid.as_str());
            }
            if b.block_height == 0 {
                continue;
            }
            let tx = decode_tx(&t.raw_tx);
            let payer = tx.sponsor_address().unwrap_or(tx.origin_address()).to_c32();
            *stx.entry(payer).or_default() -= i128::from(tx.fee());
            nonces.entry(tx.origin_address().to_c32()).or_default().push(tx.nonce());
            if let (Some(s), Some(n)) = (tx.sponsor_address(), tx.sponsor_nonce()) {
                nonces.entry(s.to_c32()).or_default().push(n);
            }
        }
        for r in &b.matured_miner_rewards {
            let total = r.coinbase_amount
                + r.tx_fees_anchored
                + r.tx_fees_streamed_confirmed
                + r.tx_fees_streamed_produced;
            *stx.entry(r.recipient.clone()).or_default() += total as i128;
        }
        // Confirmed microblock transactions executed before the block's own, though the block
        // lists them last: apply their events first.
        let streamed: BTreeSet<&str> =
            b.transactions.iter().filter(|t| t.microblock_hash.is_some()).map(|t| t.txid.as_str()).collect();
        let mut applied: Vec<_> =
            b.events.iter().filter(|e| e.committed && ok.contains(e.txid.as_str())).collect();
        applied.sort_by_key(|e| !streamed.contains(e.txid.as_str()));
        for ev in applied {
            match &ev.body {
                EventBody::StxMint(m) => *stx.entry(m.recipient.clone()).or_default() += m.amount as i128,
                EventBody::StxTransfer(t) => {
                    *stx.entry(t.sender.clone()).or_default() -= t.amount as i128;
                    *stx.entry(t.recipient.clone()).or_default() += t.amount as i128;
                }
                EventBody::StxBurn(b) => *stx.entry(b.sender.clone()).or_default() -= b.amount as i128,
                EventBody::StxLock(l) => {
                    locks.insert(l.locked_address.clone(), (l.locked_amount, l.unlock_height));
                }
                EventBody::FtMint(m) => *ft.entry(m.recipient.clone()).or_default() += m.amount,
                EventBody::FtTransfer(t) => {
                    *ft.entry(t.sender.clone()).or_default() -= t.amount;
                    *ft.entry(t.recipient.clone()).or_default() += t.amount;
                }
                EventBody::NftMint(m) => {
                    let id = decode_hex(&m.raw_value).unwrap();
                    assert!(nfts.insert(id, m.recipient.clone()).is_none());
                }
                EventBody::NftTransfer(t) => {
                    let id = decode_hex(&t.raw_value).unwrap();
                    assert_eq!(nfts.insert(id, t.recipient.clone()), Some(t.sender.clone()));
                }
                EventBody::NftBurn(t) => {
                    assert_eq!(nfts.remove(&decode_hex(&t.raw_value).unwrap()), Some(t.sender.clone()));
                }
                EventBody::Contract(c) => match pox_print(c) {
                    Some((name, stacker, _)) if name == "delegate-stx" => {
                        delegating.insert(stacker, true);
                    }
                    Some((name, stacker, _)) if name == "revoke-delegate-stx" => {
                        assert_eq!(
                            delegating.insert(stacker, false),
                            Some(true),
                            "revoked without delegating"
                        );
                    }
                    _ => {}
                },
                other => panic!("unexpected event {other:?}"),
            }
        }
    }
    let w = g.world();
    let ctx = g.ctx();
    let mut owners = BTreeMap::new();
    for (id, owner) in &w.nfts {
        owners.insert(Value::UInt(*id).serialize(), ctx.key(*owner).c32.clone());
    }
    for ((ns, name), n) in &w.bns.names {
        owners.insert(super::bns::name_token(name, ns).serialize(), ctx.key(n.owner).c32.clone());
    }
    assert_eq!(nfts, owners);
    assert!(!owners.is_empty());
    for (i, a) in w.accounts.iter().enumerate() {
        let key = &ctx.keys[i].c32;
        assert_eq!(stx.get(key).copied().unwrap_or_default(), a.balance as i128, "balance of account {i}");
        // Every nonce from 0 to the next one, each used once. (A block lists the microblock
        // transactions it confirms after its own, though they executed first.)
        let mut used = nonces.get(key).cloned().unwrap_or_default();
        used.sort_unstable();
        assert_eq!(used, (0..a.nonce).collect::<Vec<_>>(), "nonces of account {i}");
        assert_eq!(ft.get(key).copied().unwrap_or_default(), a.ft, "devcoin of account {i}");
        let locked = locks.get(key).filter(|l| l.1 > last_burn).map(|l| l.0).unwrap_or_default();
        assert_eq!(locked, a.locked, "lock of account {i}");
    }
    assert!(locks.values().any(|l| l.1 <= last_burn), "some lock has expired");
    let delegated: BTreeSet<&str> = w
        .delegations
        .keys()
        .map(|h| match h {
            Holder::Seed(i) => ctx.keys[*i as usize].c32.as_str(),
            Holder::External(a) => a.as_str(),
        })
        .collect();
    let replayed: BTreeSet<&str> = delegating.iter().filter(|d| *d.1).map(|d| d.0.as_str()).collect();
    assert_eq!(replayed, delegated, "accounts whose latest pox-4 call is delegate-stx");
}

/// `busy` with BNS traffic.
fn busy_with_bns(seed: u64) -> DevnetConfig {
    DevnetConfig { blocks: 60, accounts: 30, bns_per_mille: 500, ..busy(seed) }
}

#[test]
fn a_chain_with_bns_keeps_and_replays_the_ledger() {
    conserved_after_every_step(busy_with_bns(7));
    replay_reproduces_the_ledger(busy_with_bns(7));
}

/// Every bns function the generator calls appears, each successful name operation's print is
/// followed by its attachment after the block (by transaction, index and metadata), and an
/// empty hash comes with empty content.
#[test]
fn bns_calls_print_and_their_attachments_follow_the_block() {
    let evs = events(busy_with_bns(9));
    let mut functions = BTreeMap::new();
    let mut prints: BTreeMap<(String, String), (u128, Vec<u8>, String)> = BTreeMap::new();
    let mut attached = 0;
    let mut last_block = None;
    for e in &evs {
        match parse(e) {
            EventPayload::NewBlock(b) => {
                let ok: BTreeSet<&str> = b
                    .transactions
                    .iter()
                    .filter(|t| t.status == TxStatus::Success)
                    .map(|t| t.txid.as_str())
                    .collect();
                for t in &b.transactions {
                    if let Payload::ContractCall { contract, function_name, .. } =
                        decode_tx(&t.raw_tx).payload
                    {
                        if contract.to_string().ends_with(".bns") {
                            *functions.entry((function_name, t.status == TxStatus::Success)).or_insert(0) +=
                                1;
                        }
                    }
                }
                for ev in &b.events {
                    let EventBody::Contract(c) = &ev.body else { continue };
                    if !c.contract_identifier.ends_with(".bns") || !ok.contains(ev.txid.as_str()) {
                        continue;
                    }
                    let v = Value::deserialize(&decode_hex(&c.raw_value).unwrap()).unwrap();
                    assert_eq!(v, v.canonical());
                    let Value::Tuple(f) = v else { panic!() };
                    let Some((_, Value::Tuple(a))) = f.iter().find(|(k, _)| k == "attachment") else {
                        continue;
                    };
                    let get = |k: &str| a.iter().find(|(n, _)| n == k).unwrap().1.clone();
                    let (Value::UInt(i), Value::Buffer(h)) = (get("attachment-index"), get("hash")) else {
                        panic!()
                    };
                    let meta = stacks_codec::to_hex_prefixed(&get("metadata").serialize());
                    prints.insert((ev.txid.clone(), b.index_block_hash.clone()), (i, h, meta));
                }
                last_block = Some(b.index_block_hash.clone());
            }
            EventPayload::AttachmentsNew(list) => {
                for a in &list.attachments {
                    assert_eq!(Some(&a.index_block_hash), last_block.as_ref(), "posted after its block");
                    let (i, hash, meta) = &prints[&(a.tx_id.clone(), a.index_block_hash.clone())];
                    assert_eq!((u128::from(a.attachment_index), &a.metadata), (*i, meta));
                    let content = decode_hex(&a.content).unwrap();
                    if hash.is_empty() {
                        assert_eq!(
                            (a.content_hash.as_str(), content.len()),
                            (&*format!("0x{}", "00".repeat(20)), 0)
                        );
                    } else {
                        assert_eq!(decode_hex(&a.content_hash).unwrap(), *hash);
                        assert_eq!(stacks_codec::hash::hash160(&content).to_vec(), *hash);
                    }
                    attached += 1;
                }
            }
            _ => {}
        }
    }
    for f in [
        "namespace-preorder",
        "namespace-reveal",
        "name-import",
        "namespace-ready",
        "name-preorder",
        "name-register",
        "name-update",
        "name-transfer",
        "name-renewal",
        "name-revoke",
    ] {
        assert!(functions.get(&(f.to_string(), true)).is_some_and(|n| *n > 0), "{f}: {functions:?}");
    }
    assert!(functions.contains_key(&("name-update".to_string(), false)), "a refused update: {functions:?}");
    // Most zonefiles reach the node; a few never do.
    assert!(attached > prints.len() / 2 && attached < prints.len(), "{attached} of {}", prints.len());
}

#[test]
fn bns_traffic_is_opt_in() {
    let evs = events(busy(12));
    assert!(evs.iter().all(|e| e.path != ledger_core::events::EventPath::AttachmentsNew));
    assert!(!evs.iter().any(|e| e.payload.contains(".bns")));
}

#[test]
fn forks_happen_and_the_longest_chain_wins() {
    let cfg = busy(8);
    let evs = events(cfg.clone());
    let all = blocks(&evs);
    let (chain, reorgs, side) = follow_chain(&all);
    assert!(reorgs >= 2 && side >= 2, "reorgs {reorgs}, side arrivals {side}");
    let max = all.iter().map(|b| b.block_height).max().unwrap();
    assert_eq!((chain.len() as u64 - 1, max), (cfg.blocks, cfg.blocks));
    let heights: BTreeSet<u64> = all.iter().map(|b| b.block_height).collect();
    assert!(all.len() > heights.len(), "some height has competing blocks");
    // Orphaned-branch transactions leave the mempool once the fork is decided.
    let across_fork = evs
        .iter()
        .filter_map(|e| match parse(e) {
            EventPayload::DropMempoolTx(d) => Some(d.reason.to_string()),
            _ => None,
        })
        .filter(|r| r == "ReplaceAcrossFork")
        .count();
    assert!(across_fork >= 2);
    // Without --forks: one block per height, no reorg.
    let plain = blocks(&events(DevnetConfig { forks: false, ..cfg }));
    let (_, reorgs, side) = follow_chain(&plain);
    assert_eq!((reorgs, side), (0, 0));
}

#[test]
fn microblocks_are_confirmed_or_orphaned_by_the_next_block() {
    let evs = events(busy(9));
    let mut streams: HashMap<String, Vec<NewMicroblocks>> = HashMap::new();
    let (mut confirmed, mut orphaned) = (0, 0);
    for e in &evs {
        match parse(e) {
            EventPayload::NewMicroblocks(m) => {
                streams.entry(m.parent_index_block_hash.clone()).or_default().push(m)
            }
            EventPayload::NewBlock(b) => {
                let stream = streams.remove(&b.parent_index_block_hash).unwrap_or_default();
                let in_block: Vec<&str> = b
                    .transactions
                    .iter()
                    .filter(|t| t.microblock_hash.is_some())
                    .map(|t| t.txid.as_str())
                    .collect();
                let zero = "0x".to_string() + &"0".repeat(64);
                let tip = stream.iter().position(|m| {
                    m.transactions.first().and_then(|t| t.microblock_hash.as_ref())
                        == Some(&b.parent_microblock)
                });
                match tip {
                    None => {
                        assert_eq!(
                            (b.parent_microblock.as_str(), b.parent_microblock_sequence),
                            (zero.as_str(), 0)
                        );
                        assert!(in_block.is_empty());
                    }
                    Some(i) => {
                        let seq = stream[i].transactions[0].microblock_sequence;
                        assert_eq!(seq, Some(b.parent_microblock_sequence));
                        // The first microblock builds on the anchor block itself.
                        assert_eq!(
                            stream[0].transactions[0].microblock_parent_hash.as_deref(),
                            Some(b.parent_block_hash.as_str())
                        );
                        let expected: Vec<&str> = stream[..=i]
                            .iter()
                            .flat_map(|m| m.transactions.iter().map(|t| t.txid.as_str()))
                            .collect();
                        assert_eq!(in_block, expected);
                    }
                }
                let total: usize = stream.iter().map(|m| m.transactions.len()).sum();
                confirmed += in_block.len();
                orphaned += total - in_block.len();
            }
            _ => {}
        }
    }
    assert!(confirmed > 10 && orphaned > 3, "confirmed {confirmed}, orphaned {orphaned}");
}

/// Everything the brief lists shows up in a busy chain.
#[test]
fn the_chain_contains_every_kind_of_traffic() {
    let evs = events(busy(10));
    let mut kinds = BTreeSet::new();
    let mut statuses = BTreeSet::new();
    let mut drops = BTreeSet::new();
    let (mut sponsored, mut memos, mut rewards, mut slot_payouts, mut reward_sets, mut deploys, mut rbf) =
        (0, 0, 0, 0, 0, 0, 0);
    for e in &evs {
        match parse(e) {
            EventPayload::NewBlock(b) => {
                rewards += b.matured_miner_rewards.len();
                reward_sets += usize::from(b.reward_set.is_some());
                for t in &b.transactions {
                    statuses.insert(t.status.as_str());
                    let tx = decode_tx(&t.raw_tx);
                    sponsored += usize::from(tx.is_sponsored());
                    match &tx.payload {
                        Payload::TokenTransfer { memo, .. } if memo.iter().any(|&b| b != 0) => memos += 1,
                        Payload::SmartContract { .. } if b.block_height > 0 => {
                            deploys += 1;
                            assert!(t.contract_abi().is_some());
                        }
                        _ => {}
                    }
                }
                for ev in &b.events {
                    kinds.insert(ev.body.kind().to_string());
                }
            }
            EventPayload::NewBurnBlock(b) => slot_payouts += b.reward_recipients.len(),
            EventPayload::DropMempoolTx(d) => {
                rbf += usize::from(d.new_txid.is_some());
                drops.insert(d.reason.to_string());
            }
            _ => {}
        }
    }
    for k in [
        "stx_transfer_event",
        "stx_mint_event",
        "stx_lock_event",
        "ft_transfer_event",
        "ft_mint_event",
        "nft_mint_event",
        "nft_transfer_event",
        "nft_burn_event",
        "contract_event",
    ] {
        assert!(kinds.contains(k), "no {k} in {kinds:?}");
    }
    assert_eq!(statuses, BTreeSet::from(["abort_by_post_condition", "abort_by_response", "success"]));
    assert_eq!(
        drops,
        BTreeSet::from([
            "ReplaceAcrossFork".to_string(),
            "ReplaceByFee".into(),
            "StaleGarbageCollect".into()
        ])
    );
    assert!(sponsored > 0 && memos > 0 && rbf > 0);
    assert_eq!(deploys, 2);
    assert!(rewards > 10 && slot_payouts > 0 && reward_sets > 0, "{rewards} {slot_payouts} {reward_sets}");
}

#[test]
fn genesis_funds_every_account_and_block_one_follows_it() {
    let cfg = DevnetConfig { blocks: 2, accounts: 5, miners: 2, ..DevnetConfig::default() };
    let evs = events(cfg);
    let bs = blocks(&evs);
    assert_eq!(evs[0].path.as_str(), "/new_block");
    let (b0, b1) = (&bs[0], &bs[1]);
    assert_eq!(b0.block_height, 0);
    let mints = b0.events.iter().filter(|e| matches!(e.body, EventBody::StxMint(_))).count();
    assert_eq!(mints, 7);
    assert_eq!(b1.parent_index_block_hash, b0.index_block_hash);
    assert_eq!(b1.parent_block_hash, b0.block_hash);
    assert_eq!(b1.parent_burn_block_hash, b0.burn_block_hash);
    // Block 1: the coinbase, then the two contract deploys, then user transactions.
    let types: Vec<&str> = b1.transactions.iter().map(|t| decode_tx(&t.raw_tx).tx_type_name()).collect();
    assert_eq!(&types[..3], ["coinbase", "smart_contract", "smart_contract"]);
    assert_eq!(types.len(), 13);
    let burn_before_block = evs
        .windows(2)
        .filter(|w| w[1].path.as_str() == "/new_block")
        .all(|w| w[0].path.as_str() == "/new_burn_block");
    assert!(burn_before_block);
}

/// Whether every object in `v` has its keys sorted, as a node's `serde_json::Value` has them.
fn keys_sorted(v: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::Object(m) => {
            m.keys().zip(m.keys().skip(1)).all(|(a, b)| a < b) && m.values().all(keys_sorted)
        }
        serde_json::Value::Array(a) => a.iter().all(keys_sorted),
        _ => true,
    }
}

/// What the real-chain cases preset is for: several of each case in a 60-block chain, each
/// shaped as a real node sends it.
#[test]
fn the_real_chain_cases_preset_has_several_of_each() {
    use crate::contracts::DeployCase;
    let cfg = DevnetConfig::real_chain_cases(21);
    assert_eq!(cfg.blocks, 60);
    let evs = events(cfg);
    let mut n: BTreeMap<&str, usize> = BTreeMap::new();
    let mut count = |k: &'static str| *n.entry(k).or_default() += 1;
    // Deploy outcomes by (sender, name), in chain order; mempool transactions by txid.
    let mut deploys: BTreeMap<(String, String), Vec<(&'static str, u64)>> = BTreeMap::new();
    let mut mempool: HashMap<String, Transaction> = HashMap::new();
    let mut latest_pox: BTreeMap<String, Vec<String>> = BTreeMap::new();
    // Duplicates replaced in the mempool, waiting for the block that mines their original.
    let mut duplicates: Vec<((String, String), String)> = Vec::new();
    let mut mined: BTreeSet<String> = BTreeSet::new();
    for e in &evs {
        match parse(e) {
            EventPayload::NewBlock(b) => {
                mined.extend(b.transactions.iter().map(|t| t.txid.clone()));
                // A current node's fields: one tenure per block before Nakamoto, ABIs under
                // their current name.
                assert_eq!(b.tenure_height, Some(b.block_height));
                assert!(b.consensus_hash.is_some());
                assert!(!e.payload.contains("\"contract_abi\""));
                let events_of = |txid: &str| b.events.iter().filter(|ev| ev.txid == txid).count();
                for t in &b.transactions {
                    if let Some(abi) = t.contract_abi() {
                        assert!(keys_sorted(abi), "ABI keys not in a node's order: {abi}");
                        count("abis");
                    }
                    if b.block_height == 0 {
                        continue;
                    }
                    let tx = decode_tx(&t.raw_tx);
                    let sender = tx.origin_address().to_c32();
                    match &tx.payload {
                        Payload::TokenTransfer { memo, .. } => count(if memo.iter().any(|&m| m != 0) {
                            "memo transfers"
                        } else {
                            "plain transfers"
                        }),
                        Payload::ContractCall { function_name, contract, .. } => {
                            if tx.is_sponsored() {
                                verify_sponsor(&tx).unwrap();
                                assert_ne!(tx.sponsor_address(), Some(tx.origin_address()));
                                assert_eq!(tx.origin().tx_fee(), 0, "the sponsor pays");
                                count("sponsored calls");
                                if contract.to_string().ends_with(".devnet-nft") {
                                    count("sponsored NFT calls");
                                }
                            }
                            if function_name == "revoke-delegate-stx" {
                                assert_eq!(t.status, TxStatus::Success);
                                let r = Value::deserialize(&decode_hex(&t.raw_result).unwrap()).unwrap();
                                assert!(
                                    r.repr().starts_with("(ok (some (tuple (amount-ustx u"),
                                    "{}",
                                    r.repr()
                                );
                                count("revokes");
                            }
                        }
                        Payload::SmartContract { name, .. } => {
                            let status = t.status.as_str();
                            let case = [DeployCase::Runtime, DeployCase::Analysis]
                                .into_iter()
                                .find(|c| name.starts_with(c.family()));
                            if let (Some(case), TxStatus::AbortByResponse) = (case, t.status) {
                                // A failed deploy: `(err none)`, the node's error text, no events,
                                // and an interface only when the analysis passed.
                                assert_eq!(t.raw_result, "0x0809");
                                assert_eq!(t.vm_error.as_deref(), Some(case.vm_error()));
                                assert_eq!(events_of(&t.txid), 0);
                                assert_eq!(t.contract_abi().is_some(), case == DeployCase::Runtime);
                                count(if case == DeployCase::Runtime {
                                    "runtime failures"
                                } else {
                                    "analysis failures"
                                });
                            }
                            deploys.entry((sender, name.clone())).or_default().push((status, b.block_height));
                        }
                        _ => {}
                    }
                }
                for (key, txid) in duplicates.drain(..) {
                    assert_eq!(deploys[&key].last(), Some(&("success", b.block_height)), "{key:?}");
                    assert!(!mined.contains(&txid));
                    count("replaced duplicate deploys");
                }
                for ev in &b.events {
                    if let EventBody::Contract(c) = &ev.body {
                        if let Some((name, stacker, delegate_to)) = pox_print(c) {
                            if name == "revoke-delegate-stx" {
                                // The pool the revoked delegation named.
                                let pool = delegate_to.clone().expect("revoke print names the pool");
                                assert!(latest_pox[&stacker].last().unwrap().ends_with(&pool));
                            }
                            let entry = latest_pox.entry(stacker).or_default();
                            entry.push(format!("{name} {}", delegate_to.unwrap_or_default()));
                        }
                    }
                }
            }
            EventPayload::NewMempoolTx(m) => {
                for raw in &m.raw_txs {
                    let tx = decode_tx(raw);
                    mempool.insert(tx.txid_hex(), tx);
                }
            }
            EventPayload::DropMempoolTx(d) if d.reason.to_string() == "ReplaceByFee" => {
                // (A cheaper copy of the same deploy replaced by fee is ordinary RBF.)
                let replacement = d.new_txid.as_ref().map(|t| &mempool[t].payload);
                let by_transfer = matches!(replacement, Some(Payload::TokenTransfer { .. }));
                for txid in d.dropped_txids.iter().filter(|_| by_transfer) {
                    let tx = &mempool[txid];
                    if let Payload::SmartContract { name, .. } = &tx.payload {
                        // A duplicate of a deploy the next block mines (a node's mempool admits
                        // it only until then); it is never mined itself.
                        duplicates.push(((tx.origin_address().to_c32(), name.clone()), txid.clone()));
                    }
                }
            }
            _ => {}
        }
    }
    // Re-deploys: a failed deploy, then the same sender deploys the same name successfully.
    for outcomes in deploys.values() {
        let (last, failures) = outcomes.split_last().unwrap();
        assert!(failures.iter().all(|f| f.0 == "abort_by_response"), "{outcomes:?}");
        if last.0 == "success" && !failures.is_empty() {
            count("re-deploys");
        }
    }
    // Delegate, revoke, then delegate again.
    let redelegated = latest_pox
        .values()
        .filter(|calls| {
            calls.windows(3).any(|w| {
                w[0].starts_with("delegate-stx")
                    && w[1].starts_with("revoke")
                    && w[2].starts_with("delegate-stx")
            })
        })
        .count();
    n.insert("delegate, revoke, delegate", redelegated);
    println!("{n:?}");
    for (case, min) in [
        ("memo transfers", 10),
        ("plain transfers", 10),
        ("sponsored calls", 10),
        ("sponsored NFT calls", 3),
        ("revokes", 3),
        ("runtime failures", 3),
        ("analysis failures", 3),
        ("re-deploys", 2),
        ("replaced duplicate deploys", 1),
        ("abis", 5),
        ("delegate, revoke, delegate", 1),
    ] {
        assert!(n.get(case).copied().unwrap_or_default() >= min, "{case}: {n:?}");
    }
}

#[test]
fn the_real_chain_cases_are_opt_in() {
    // The default draws nothing for them: no sponsored call, failed deploy, revoke or current
    // node field, and ABIs keep the fixtures' order.
    let evs = events(busy(12));
    for b in blocks(&evs) {
        assert_eq!((b.tenure_height, b.consensus_hash.is_some()), (None, false));
        for t in &b.transactions {
            assert!(t.contract_interface.is_none() && t.vm_error.is_none());
            let tx = decode_tx(&t.raw_tx);
            if let Payload::ContractCall { function_name, .. } = &tx.payload {
                assert!(!tx.is_sponsored() && function_name != "revoke-delegate-stx");
            }
        }
    }
    let abi = evs.iter().find(|e| e.payload.contains("\"contract_abi\":{\"maps\"")).map(|e| e.id);
    assert!(abi.is_some(), "the FT ABI as the fixtures have it");
}
