//! Every shared event log must read, round-trip byte for byte, and parse into the typed
//! payload models.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufReader;

use super::path::EventPath;
use super::payload::{EventBody, EventPayload, NewBlock, RewardedAddress};
use super::test_support::{shared_file, EVENT_LOGS};
use super::tsv::{RawEvent, TsvReader, TsvWriter};

fn read_events(rel: &str) -> Option<Vec<RawEvent>> {
    let path = shared_file(rel)?;
    let file = File::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let events = TsvReader::new(BufReader::new(file))
        .collect::<Result<Vec<_>, _>>()
        .unwrap_or_else(|e| panic!("{rel}: {e}"));
    Some(events)
}

fn blocks(events: &[RawEvent]) -> Vec<NewBlock> {
    events
        .iter()
        .filter(|e| e.path == "/new_block")
        .map(|e| match EventPayload::parse(EventPath::NewBlock, &e.payload) {
            Ok(EventPayload::NewBlock(b)) => *b,
            other => panic!("event {}: {other:?}", e.id),
        })
        .collect()
}

#[test]
fn every_log_reads_and_round_trips_byte_for_byte() {
    for rel in EVENT_LOGS {
        let Some(path) = shared_file(rel) else { continue };
        let original = std::fs::read(&path).unwrap();
        let Some(events) = read_events(rel) else { continue };
        assert_eq!(events.len(), original.iter().filter(|&&b| b == b'\n').count(), "{rel}");

        let mut writer = TsvWriter::new(Vec::with_capacity(original.len()));
        for ev in &events {
            writer.write_event(ev).unwrap();
        }
        assert!(writer.into_inner() == original, "{rel}: re-written file differs");

        // And line by line through the single-line API.
        for (i, line) in original.split_inclusive(|&b| b == b'\n').enumerate() {
            let line = std::str::from_utf8(line).unwrap();
            let ev = super::tsv::parse_line(line, i as u64 + 1).unwrap();
            assert_eq!(ev.to_line(), line, "{rel} line {}", i + 1);
        }

        let mut paths: BTreeMap<&str, usize> = BTreeMap::new();
        for ev in &events {
            *paths.entry(ev.path.as_str()).or_default() += 1;
        }
        println!("{rel}: {} lines, paths {paths:?}", events.len());
    }
}

#[test]
fn every_event_parses_into_its_typed_model() {
    for rel in EVENT_LOGS {
        let Some(events) = read_events(rel) else { continue };
        let mut per_path: BTreeMap<EventPath, usize> = BTreeMap::new();
        let mut event_kinds: BTreeMap<String, usize> = BTreeMap::new();
        for ev in &events {
            let path = EventPath::from_path(&ev.path).unwrap_or_else(|| panic!("{rel}: path {}", ev.path));
            let payload = EventPayload::parse(path, &ev.payload)
                .unwrap_or_else(|e| panic!("{rel} event {}: {e}", ev.id));
            assert_eq!(payload.path(), path);
            *per_path.entry(path).or_default() += 1;
            let tx_events = match &payload {
                EventPayload::NewBlock(b) => &b.events,
                EventPayload::NewMicroblocks(m) => &m.events,
                _ => continue,
            };
            for e in tx_events {
                assert!(!matches!(e.body, EventBody::Unknown { .. }), "{rel}: unknown event {e:?}");
                *event_kinds.entry(e.body.kind().to_owned()).or_default() += 1;
            }
        }
        println!("{rel}: {per_path:?}");
        println!("{rel}: tx events {event_kinds:?}");
    }
}

#[test]
fn mainnet_genesis_block() {
    let Some(events) = read_events("fixtures/mainnet-block0.tsv") else { return };
    let blocks = blocks(&events);
    assert_eq!(blocks.iter().map(|b| b.block_height).collect::<Vec<_>>(), [0, 1, 2]);
    let genesis = &blocks[0];
    assert_eq!(genesis.transactions.len(), 8);
    assert_eq!(genesis.burn_block_height, 666_053);
    assert_eq!(genesis.block_hash, "0x6b2c809627f2fd19991d8eb6ae034cb4cce1e1fc714aa77351506b5af1f8248e");
    let [ev] = &genesis.events[..] else { panic!("{:?}", genesis.events) };
    let EventBody::StxMint(mint) = &ev.body else { panic!("{ev:?}") };
    assert_eq!(
        (mint.recipient.as_str(), mint.amount),
        ("SP1JK59T2PY5AZYXC70MKPQ61FWYAGENMA17HVV3A", 100_000_000)
    );
    assert_eq!(ev.event_index, 118_517);
    // Genesis boot contracts deploy with an ABI under the old field name.
    assert!(genesis.transactions.iter().any(|t| t.contract_abi.is_some() && t.contract_abi().is_some()));
    assert!(blocks.iter().all(|b| b.block_time.is_none() && b.tenure_height.is_none()));
}

#[test]
fn epoch3_transition_fixture() {
    let Some(events) = read_events("fixtures/epoch-3-transition.tsv") else { return };
    let blocks = blocks(&events);
    assert_eq!(blocks.len(), 52);
    // Post-transition, several Stacks blocks share one burn block (Nakamoto tenures)...
    let mut per_burn: BTreeMap<u64, usize> = BTreeMap::new();
    for b in &blocks {
        *per_burn.entry(b.burn_block_height).or_default() += 1;
    }
    assert_eq!(per_burn.get(&133), Some(&4));
    // ...but this 2024-03 node predates the Nakamoto payload fields: none is present.
    assert!(blocks.iter().all(|b| b.block_time.is_none()
        && b.tenure_height.is_none()
        && b.signer_bitvec.is_none()
        && b.signer_signature.is_none()
        && b.pox_v4_unlock_height.is_none()));
    // Reward sets computed at cycle starts carry the Nakamoto signer set.
    let with_set: Vec<_> = blocks.iter().filter(|b| b.reward_set.is_some()).collect();
    assert_eq!(
        with_set.iter().map(|b| b.cycle_number).collect::<Vec<_>>(),
        [Some(11), Some(12), Some(13), Some(14)]
    );
    let rs = with_set[1].reward_set.as_ref().unwrap();
    let signers = rs.signers.as_ref().unwrap();
    assert_eq!(signers.iter().map(|s| s.weight).collect::<Vec<_>>(), [3, 1, 5]);
    assert_eq!(signers[0].stacked_amt, 457_500_900_000_000_000);
    assert_eq!(rs.pox_ustx_threshold, Some(137_250_270_000_000_000));
    assert!(matches!(rs.rewarded_addresses[0], RewardedAddress::Structured(_)));
    let locks = blocks
        .iter()
        .flat_map(|b| &b.events)
        .filter_map(|e| match &e.body {
            EventBody::StxLock(l) => Some(l),
            _ => None,
        })
        .collect::<Vec<_>>();
    assert_eq!(locks.len(), 9);
    assert!(locks
        .iter()
        .all(|l| l.contract_identifier.as_deref() == Some("ST000000000000000000002AMW42H.pox-4")));
}

#[test]
fn realnode_blocks_carry_current_node_fields() {
    let Some(events) = read_events("bench/realnode-2/events.tsv") else { return };
    let blocks = blocks(&events);
    assert_eq!(blocks.len(), 514);
    for (h, b) in blocks.iter().enumerate() {
        assert_eq!(b.block_height, h as u64);
        // Epoch 2.5: tenure height is the block height, no Nakamoto block time or signers.
        assert_eq!(b.tenure_height, Some(b.block_height));
        assert_eq!((b.block_time, &b.signer_bitvec), (None, &None));
        assert!(b.consensus_hash.is_some() && b.pox_v4_unlock_height == Some(100_007));
        assert!(b.transactions.iter().all(|t| t.contract_abi.is_none()));
    }
    let txs: usize = blocks.iter().map(|b| b.transactions.len()).sum();
    assert_eq!(txs, 8_065);
    let hot = blocks[256]
        .transactions
        .iter()
        .find(|t| t.txid == "0x3d54f92e55e67a7ba2e793695272240725cb88d774a1e3963ae91790e9cdbc3b")
        .unwrap();
    assert_eq!(hot.tx_index, 9);
    assert!(blocks.iter().flat_map(|b| &b.transactions).any(|t| t.vm_error.is_some()));
    assert!(blocks.iter().flat_map(|b| &b.transactions).any(|t| t.contract_interface.is_some()));
}

#[test]
fn microblock_fixtures() {
    let Some(events) = read_events("fixtures/mainnet-out-of-order-microblock.tsv") else { return };
    let mut micro_txs = 0;
    for ev in events.iter().filter(|e| e.path == "/new_microblocks") {
        let Ok(EventPayload::NewMicroblocks(m)) = EventPayload::parse(EventPath::NewMicroblocks, &ev.payload)
        else {
            panic!("event {}", ev.id)
        };
        assert_eq!(m.burn_block_height, 700_862);
        for t in &m.transactions {
            assert!(t.microblock().unwrap().is_some(), "{}", t.txid);
            micro_txs += 1;
        }
    }
    assert_eq!(micro_txs, 5);
    let block = &blocks(&events)[0];
    assert_eq!(block.parent_microblock_sequence, 5);
    assert!(block.transactions.iter().all(|t| t.microblock().is_ok()));
}
