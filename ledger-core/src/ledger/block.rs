//! `/new_block` → ledger rows.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use ledger_read::tx::MinedTx;
use ledger_read::TxRender;
use serde_json::json;
use stacks_codec::to_hex_prefixed;
use stacks_codec::tx::{ClarityVersion, Payload, Transaction};

use super::ops::{op, token_operations, tx_operations};
use super::rows::*;
use super::tx::{clean_vm_error, decode, tx_fields, ChainCheck};
use super::{int, normalize_hex, pox, stx_amount, synth, LedgerError, Network};
use crate::events::payload::{EventBody, ExecutionCost, NewBlock, TxEvent, TxReceipt};

/// Everything a block contributes that does not depend on chain state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DerivedBlock {
    pub block: BlockRow,
    pub txs: Vec<TxRow>,
    pub events: Vec<EventRow>,
    /// Static operations; lock/unlock operations come from `materialize`.
    pub ops: Vec<OpRow>,
    /// FT/NFT operations (`ops::token_operations`), stored in `operations` with the STX ones.
    pub token_ops: Vec<OpRow>,
    pub locks: Vec<LockIntent>,
    pub contracts: Vec<ContractRow>,
    pub miner_rewards: Vec<MinerRewardRow>,
    pub pox_events: Vec<PoxEventRow>,
    pub account_txs: Vec<AccountTxRow>,
    /// Microblocks this block accepts (from its microblock-confirmed receipts).
    pub microblocks: Vec<MicroblockRow>,
}

impl DerivedBlock {
    /// Next free op_index for block-level operations (after the miner rewards).
    pub fn next_block_op_index(&self) -> i64 {
        self.ops.iter().filter(|o| o.tx_index == -1).count() as i64
    }
}

/// Derives the rows of `b`. `genesis` is the boot block (height 0) when `b` is block 1 built on
/// it: as the incumbent does, block 0's transactions become part of block 1 (after block 1's
/// own, so tx_index stays unique) and block 0 itself stays non-canonical. Each transaction's
/// stored text is `render`'s (the surface that serves it owns its shape).
pub fn derive_block(
    b: &NewBlock,
    genesis: Option<&NewBlock>,
    network: Network,
    render: &dyn TxRender,
) -> Result<DerivedBlock, LedgerError> {
    let mut out = DerivedBlock::default();
    let mut micro: Vec<MicroblockRow> = Vec::new();
    let mut summed_cost = Cost::default();
    let mut size = 0i64;
    let own = b.transactions.len() as i64;
    for (src, offset) in std::iter::once((b, 0i64)).chain(genesis.map(|g| (g, own))) {
        let by_tx = group_events(&src.transactions, &src.events)?;
        for r in &src.transactions {
            let txid = normalize_hex(&r.txid);
            let evs = by_tx.get(&txid).map(Vec::as_slice).unwrap_or(&[]);
            let t = derive_tx(
                r,
                evs,
                int(u64::from(r.tx_index)) + offset,
                src.burn_block_height,
                network,
                ChainCheck::Enforce,
                render,
            )?;
            summed_cost.add(&t.row.cost);
            size += t.row.raw_size;
            if let Some(mb) = t.row.microblock_sequence.map(|seq| (seq, &t.row)) {
                match micro.iter_mut().find(|m| m.microblock_hash == mb.1.microblock_hash) {
                    Some(m) => m.tx_count += 1,
                    None => micro.push(MicroblockRow {
                        microblock_hash: mb.1.microblock_hash.clone(),
                        microblock_sequence: mb.0,
                        microblock_parent_hash: mb.1.microblock_parent_hash.clone().unwrap_or_default(),
                        parent_index_block_hash: normalize_hex(&b.parent_index_block_hash),
                        tx_count: 1,
                        stream_burn_block: None,
                        stream_receipt_time: None,
                    }),
                }
            }
            out.txs.push(t.row);
            out.events.extend(t.events);
            out.ops.extend(t.ops);
            out.token_ops.extend(t.token_ops);
            out.locks.extend(t.locks);
            out.contracts.extend(t.contract);
            out.pox_events.extend(t.pox);
            // The incumbent keeps the boot block's transactions in block 0: most address lists
            // leave them out.
            let boot = offset > 0;
            out.account_txs.extend(t.principals.into_iter().map(|a| AccountTxRow { boot, ..a }));
        }
    }
    micro.sort_by_key(|m| m.microblock_sequence);
    out.microblocks = micro;
    out.txs.sort_by_key(|t| t.tx_index);

    for (i, r) in b.matured_miner_rewards.iter().enumerate() {
        let amt = |v: u128, what: &str| stx_amount(v, || format!("miner reward {what}"));
        let row = MinerRewardRow {
            from_index_block_hash: normalize_hex(&r.from_index_consensus_hash),
            from_block_hash: normalize_hex(&r.from_stacks_block_hash),
            recipient: r.recipient.clone(),
            miner_address: r.miner_address.clone().unwrap_or_else(|| r.recipient.clone()),
            coinbase_amount: amt(r.coinbase_amount, "coinbase")?,
            tx_fees_anchored: amt(r.tx_fees_anchored, "anchored fees")?,
            tx_fees_streamed_confirmed: amt(r.tx_fees_streamed_confirmed, "confirmed streamed fees")?,
            tx_fees_streamed_produced: amt(r.tx_fees_streamed_produced, "produced streamed fees")?,
        };
        let meta = json!({
            "from_index_block_hash": row.from_index_block_hash,
            "coinbase_amount": row.coinbase_amount.to_string(),
            "tx_fees_anchored": row.tx_fees_anchored.to_string(),
            "tx_fees_streamed_confirmed": row.tx_fees_streamed_confirmed.to_string(),
            "tx_fees_streamed_produced": row.tx_fees_streamed_produced.to_string(),
        });
        let mut o =
            op("miner_reward", "success", row.recipient.clone(), Some(row.total()), Some(meta.to_string()));
        o.tx_index = -1;
        o.op_index = i as i64;
        out.ops.push(o);
        out.miner_rewards.push(row);
    }

    let cost = b.anchored_cost.as_ref().map(cost_of).unwrap_or(summed_cost);
    out.block = block_row(b, cost, out.txs.len() as i64, size)?;
    for t in &mut out.txs {
        t.api_json = row_text(t, &out.block, render);
    }
    Ok(out)
}

/// A mined transaction's whole stored text under `b` ([`TxRender::row_text`]), from its
/// materialized parts and the fields the store reads back for it
/// (`store::explorer_tx::mined_tx`; `check_invariants` compares the two). Kept as the
/// materialized parts if they do not render, which reads then render from the fields.
fn row_text(t: &mut TxRow, b: &BlockRow, render: &dyn TxRender) -> String {
    let u = |v: i64| u64::try_from(v).unwrap_or_default();
    let view = MinedTx {
        tx_id: t.tx_id.clone(),
        is_burnchain_op: t.is_burnchain_op,
        index_block_hash: b.index_block_hash.clone(),
        block_hash: b.block_hash.clone(),
        block_height: u(b.block_height),
        block_time: u(b.block_time),
        burn_block_time: u(b.burn_block_time),
        burn_block_height: u(b.burn_block_height),
        parent_burn_block_time: u(b.parent_burn_block_time),
        parent_block_hash: b.parent_block_hash.clone(),
        canonical: true,
        tx_index: u32::try_from(t.tx_index).unwrap_or_default(),
        status: t.status.clone(),
        raw_result: t.raw_result.clone(),
        event_count: u(t.event_count),
        microblock_hash: t.microblock_hash.clone(),
        microblock_sequence: t.microblock_sequence.and_then(|s| u32::try_from(s).ok()),
        microblock_canonical: true,
        execution_cost: [
            u(t.cost.read_count),
            u(t.cost.read_length),
            u(t.cost.runtime),
            u(t.cost.write_count),
            u(t.cost.write_length),
        ],
        vm_error: t.vm_error.clone(),
        api_json: Some(std::mem::take(&mut t.api_json)),
        ..Default::default()
    };
    match render.row_text(&view) {
        Some(text) => text,
        None => view.api_json.unwrap_or_default(),
    }
}

fn block_row(b: &NewBlock, cost: Cost, tx_count: i64, tx_total_size: i64) -> Result<BlockRow, LedgerError> {
    let zero = b.parent_microblock.trim_start_matches("0x").bytes().all(|c| c == b'0');
    Ok(BlockRow {
        index_block_hash: normalize_hex(&b.index_block_hash),
        block_hash: normalize_hex(&b.block_hash),
        block_height: int(b.block_height),
        parent_index_block_hash: normalize_hex(&b.parent_index_block_hash),
        parent_block_hash: normalize_hex(&b.parent_block_hash),
        parent_microblock_hash: if zero { String::new() } else { normalize_hex(&b.parent_microblock) },
        parent_microblock_sequence: if zero { -1 } else { i64::from(b.parent_microblock_sequence) },
        block_time: int(b.effective_block_time()),
        burn_block_time: int(b.burn_block_time),
        burn_block_hash: normalize_hex(&b.burn_block_hash),
        burn_block_height: int(b.burn_block_height),
        miner_txid: normalize_hex(&b.miner_txid),
        parent_burn_block_hash: normalize_hex(&b.parent_burn_block_hash),
        parent_burn_block_height: int(b.parent_burn_block_height),
        parent_burn_block_time: int(b.parent_burn_block_timestamp),
        tenure_height: b.tenure_height.map(int),
        consensus_hash: b.consensus_hash.as_deref().map(normalize_hex),
        signer_bitvec: b.signer_bitvec.as_deref().map(bitvec_text).transpose()?,
        signer_signatures: b.signer_signature.as_ref().map(|s| {
            serde_json::Value::from(s.iter().map(|x| normalize_hex(x)).collect::<Vec<_>>()).to_string()
        }),
        signer_signature_hash: b.signer_signature_hash.as_deref().map(normalize_hex),
        miner_signature: b.miner_signature.as_deref().map(normalize_hex),
        cost,
        tx_count,
        tx_total_size,
        cycle_number: b.cycle_number.map(int),
        reward_set: b.reward_set.as_ref().map(reward_set_json),
        pox_v1_unlock_height: b.pox_v1_unlock_height.map(int),
        pox_v2_unlock_height: b.pox_v2_unlock_height.map(int),
        pox_v3_unlock_height: b.pox_v3_unlock_height.map(int),
        pox_v4_unlock_height: b.pox_v4_unlock_height.map(int),
    })
}

fn reward_set_json(rs: &crate::events::payload::RewardSet) -> String {
    use crate::events::payload::RewardedAddress;
    let addrs: Vec<serde_json::Value> = rs
        .rewarded_addresses
        .iter()
        .map(|a| match a {
            RewardedAddress::Text(t) => json!(t),
            RewardedAddress::Structured(v) => v.clone(),
        })
        .collect();
    let signers = rs.signers.as_ref().map(|s| {
        s.iter()
            .map(|x| json!({"signing_key": normalize_hex(&x.signing_key), "weight": x.weight, "stacked_amt": x.stacked_amt.to_string()}))
            .collect::<Vec<_>>()
    });
    json!({
        "rewarded_addresses": addrs,
        "signers": signers,
        "pox_ustx_threshold": rs.pox_ustx_threshold.map(|v| v.to_string()),
    })
    .to_string()
}

/// Consensus-serialized bitvec (`u16` bit count, `u32` byte count, bytes) → `"1011..."`.
fn bitvec_text(hex_text: &str) -> Result<String, LedgerError> {
    let bad = |why: &str| LedgerError::Other(format!("signer_bitvec {hex_text}: {why}"));
    let bytes = stacks_codec::decode_hex(hex_text).map_err(|e| bad(&e.to_string()))?;
    if bytes.len() < 6 {
        return Err(bad("too short"));
    }
    let bits = usize::from(u16::from_be_bytes([bytes[0], bytes[1]]));
    let data = &bytes[6..];
    if data.len() * 8 < bits {
        return Err(bad("fewer data bytes than bits"));
    }
    Ok((0..bits).map(|i| if data[i / 8] >> (i % 8) & 1 == 1 { '1' } else { '0' }).collect())
}

pub(crate) fn cost_of(c: &ExecutionCost) -> Cost {
    Cost {
        read_count: int(c.read_count),
        read_length: int(c.read_length),
        runtime: int(c.runtime),
        write_count: int(c.write_count),
        write_length: int(c.write_length),
    }
}

/// Committed events by (normalised) txid, each txid known to the block; unknown event kinds
/// are refused (the incumbent throws on them too).
pub(crate) fn group_events<'a>(
    txs: &[TxReceipt],
    events: &'a [TxEvent],
) -> Result<HashMap<String, Vec<&'a TxEvent>>, LedgerError> {
    let known: BTreeSet<String> = txs.iter().map(|t| normalize_hex(&t.txid)).collect();
    let mut by_tx: HashMap<String, Vec<&TxEvent>> = HashMap::new();
    for e in events {
        let txid = normalize_hex(&e.txid);
        if !known.contains(&txid) {
            return Err(LedgerError::OrphanEvent { txid, event_index: e.event_index });
        }
        if let EventBody::Unknown { kind, .. } = &e.body {
            return Err(LedgerError::UnknownEvent { txid, event_index: e.event_index, kind: kind.clone() });
        }
        if e.committed {
            by_tx.entry(txid).or_default().push(e);
        }
    }
    for v in by_tx.values_mut() {
        v.sort_by_key(|e| e.event_index);
    }
    Ok(by_tx)
}

/// One receipt's rows.
pub(crate) struct DerivedTx {
    pub row: TxRow,
    pub events: Vec<EventRow>,
    pub ops: Vec<OpRow>,
    pub token_ops: Vec<OpRow>,
    pub locks: Vec<LockIntent>,
    pub contract: Option<ContractRow>,
    pub pox: Vec<PoxEventRow>,
    pub principals: Vec<AccountTxRow>,
}

pub(crate) fn derive_tx(
    r: &TxReceipt,
    evs: &[&TxEvent],
    tx_index: i64,
    burn_block_height: u64,
    network: Network,
    chain: ChainCheck,
    render: &dyn TxRender,
) -> Result<DerivedTx, LedgerError> {
    let txid = normalize_hex(&r.txid);
    let micro =
        r.microblock().map_err(|e| LedgerError::BadReceipt { txid: txid.clone(), reason: e.to_string() })?;
    let (tx, raw_size, synthetic) = if r.is_burnchain_op() {
        let tx = synth::synthesize(&txid, r.burnchain_op.as_ref(), evs, burn_block_height, network)?;
        let hex = to_hex_prefixed(&tx.serialize());
        (tx, 0, Some(hex))
    } else {
        let d = decode(&r.raw_tx, Some(&r.txid), network, chain)?;
        (d.tx, d.raw_size, None)
    };
    let mut row = tx_fields(&tx);
    if synthetic.is_some() {
        row.nonce = 0;
        row.fee = 0;
    }
    row.tx_id = txid.clone();
    row.tx_index = tx_index;
    row.raw_tx = normalize_hex(&r.raw_tx);
    row.synthetic_tx = synthetic;
    row.status = r.status.as_str().to_owned();
    row.raw_result = normalize_hex(&r.raw_result);
    row.api_json = render.materialized(&tx, &txid, r.is_burnchain_op(), &row.raw_result);
    row.vm_error = clean_vm_error(&r.vm_error);
    row.cost = cost_of(&r.execution_cost);
    row.is_burnchain_op = r.is_burnchain_op();
    row.raw_size = raw_size;
    if let Some(m) = micro {
        row.microblock_hash = normalize_hex(m.hash);
        row.microblock_sequence = Some(i64::from(m.sequence));
        row.microblock_parent_hash = Some(normalize_hex(m.parent_hash));
    }
    // Events of transactions that did not succeed are dropped, as the incumbent does.
    let success = r.status == crate::events::payload::TxStatus::Success;
    let mut events = Vec::new();
    let mut pox_rows = Vec::new();
    if success {
        for (i, e) in evs.iter().enumerate() {
            let ev = event_row(&txid, tx_index, i as i64, &e.body)?;
            if ev.kind == "contract_log" {
                let (cid, topic, value) = (
                    ev.contract_identifier.as_deref().unwrap_or(""),
                    ev.topic.as_deref().unwrap_or(""),
                    ev.value_hex.as_deref().unwrap_or(""),
                );
                if let Some(mut p) = pox::decode(cid, topic, value, network.is_mainnet()) {
                    p.tx_id = txid.clone();
                    p.tx_index = tx_index;
                    p.event_index = i as i64;
                    pox_rows.push(p);
                }
            }
            events.push(ev);
        }
    }
    row.event_count = events.len() as i64;
    let memo = match &tx.payload {
        Payload::TokenTransfer { memo, .. } => Some(to_hex_prefixed(memo)),
        _ => None,
    };
    let (ops, locks) = tx_operations(&row, memo.as_deref(), &events);
    let token_ops = token_operations(&row.tx_id, tx_index, &events);
    let contract = contract_row(&tx, &row, r.contract_abi(), success);
    let principals = principals(&tx, &row, &events);
    Ok(DerivedTx { row, events, ops, token_ops, locks, contract, pox: pox_rows, principals })
}

/// The contract row of a deploy, failed ones too (the incumbent keeps one for every deploy:
/// `/extended/v1/contract/{id}` answers it), with the ABI the node sent (none when the deploy
/// failed type-checking) in the node's text and in the incumbent's jsonb order.
pub(crate) fn contract_row(
    tx: &Transaction,
    row: &TxRow,
    abi: Option<&serde_json::Value>,
    success: bool,
) -> Option<ContractRow> {
    let Payload::SmartContract { code_body, clarity_version, .. } = &tx.payload else { return None };
    Some(ContractRow {
        contract_id: row.contract_id.clone().unwrap_or_default(),
        tx_id: row.tx_id.clone(),
        clarity_version: clarity_version.map(|v| match v {
            ClarityVersion::Clarity1 => 1,
            ClarityVersion::Clarity2 => 2,
            ClarityVersion::Clarity3 => 3,
            ClarityVersion::Clarity4 => 4,
        }),
        source_code: code_body.clone(),
        abi: abi.map(|v| v.to_string()),
        abi_jsonb: abi.map(super::abi::jsonb_text),
        success,
    })
}

/// The contract row of the deploy `txid` in a stored `/new_block` payload, derived as when the
/// block was applied (for stores that kept no row of failed deploys: `Store::open`'s backfill).
pub fn deploy_row_from_block(block: &NewBlock, txid: &str, network: Network) -> Option<ContractRow> {
    let r = block.transactions.iter().find(|r| normalize_hex(&r.txid) == txid)?;
    let d = decode(&r.raw_tx, Some(&r.txid), network, ChainCheck::Skip).ok()?;
    let mut row = tx_fields(&d.tx);
    row.tx_id = txid.to_owned();
    let success = r.status == crate::events::payload::TxStatus::Success;
    contract_row(&d.tx, &row, r.contract_abi(), success)
}

/// Every principal a transaction involves, once each: sender, sponsor, transfer recipient,
/// deployed or called contract, and the parties of its asset and lock events. `listed` marks the
/// principals the incumbent lists the transaction for (its `principal_txs`, behind the v1 and v2
/// address transactions): all of them but a lock's account that is nothing else. The sponsor
/// is listed: it pays the fee, which the incumbent records as the fee payer's STX sent.
fn principals(_tx: &Transaction, row: &TxRow, events: &[EventRow]) -> Vec<AccountTxRow> {
    let mut parties: Vec<(&str, bool)> = vec![(&row.sender_address, true)];
    parties.extend(row.sponsor_address.as_deref().filter(|_| row.sponsored).map(|s| (s, true)));
    for p in [&row.token_transfer_recipient, &row.contract_id].into_iter().flatten() {
        parties.push((p, true));
    }
    for e in events.iter().filter(|e| e.kind != "contract_log") {
        let listed = e.kind != "stx_lock";
        parties.extend([&e.sender, &e.recipient].into_iter().flatten().map(|p| (p.as_str(), listed)));
    }
    let mut set: BTreeMap<&str, bool> = BTreeMap::new();
    for (p, listed) in parties {
        *set.entry(p).or_default() |= listed;
    }
    set.into_iter()
        .map(|(p, listed)| AccountTxRow {
            principal: p.to_owned(),
            tx_id: row.tx_id.clone(),
            tx_index: row.tx_index,
            listed,
            boot: false,
            seq: row.microblock_sequence.unwrap_or(ANCHORED_SEQ),
        })
        .collect()
}

pub(crate) fn event_row(
    txid: &str,
    tx_index: i64,
    event_index: i64,
    body: &EventBody,
) -> Result<EventRow, LedgerError> {
    let base = EventRow { tx_id: txid.to_owned(), tx_index, event_index, ..EventRow::default() };
    let memo = |m: &Option<String>| m.as_ref().filter(|m| !m.is_empty()).map(|m| normalize_hex(m));
    Ok(match body {
        EventBody::Contract(c) => EventRow {
            kind: "contract_log".into(),
            contract_identifier: Some(c.contract_identifier.clone()),
            topic: Some(c.topic.clone()),
            value_hex: Some(normalize_hex(&c.raw_value)),
            ..base
        },
        EventBody::StxTransfer(t) => {
            stx_amount(t.amount, || format!("stx transfer in {txid}"))?;
            EventRow {
                kind: "stx_transfer".into(),
                sender: Some(t.sender.clone()),
                recipient: Some(t.recipient.clone()),
                amount: Some(t.amount.to_string()),
                memo: memo(&t.memo),
                ..base
            }
        }
        EventBody::StxMint(m) => {
            stx_amount(m.amount, || format!("stx mint in {txid}"))?;
            EventRow {
                kind: "stx_mint".into(),
                recipient: Some(m.recipient.clone()),
                amount: Some(m.amount.to_string()),
                ..base
            }
        }
        EventBody::StxBurn(m) => {
            stx_amount(m.amount, || format!("stx burn in {txid}"))?;
            EventRow {
                kind: "stx_burn".into(),
                sender: Some(m.sender.clone()),
                amount: Some(m.amount.to_string()),
                ..base
            }
        }
        EventBody::StxLock(l) => {
            stx_amount(l.locked_amount, || format!("stx lock in {txid}"))?;
            let contract = l.contract_identifier.clone().unwrap_or_else(|| {
                let boot = if l.locked_address.starts_with("SP") || l.locked_address.starts_with("SM") {
                    "SP000000000000000000002Q6VF78"
                } else {
                    "ST000000000000000000002AMW42H"
                };
                format!("{boot}.pox")
            });
            EventRow {
                kind: "stx_lock".into(),
                sender: Some(l.locked_address.clone()),
                amount: Some(l.locked_amount.to_string()),
                unlock_height: Some(int(l.unlock_height)),
                contract_identifier: Some(contract),
                ..base
            }
        }
        EventBody::FtTransfer(t) => EventRow {
            kind: "ft_transfer".into(),
            asset_identifier: Some(t.asset_identifier.clone()),
            sender: Some(t.sender.clone()),
            recipient: Some(t.recipient.clone()),
            amount: Some(t.amount.to_string()),
            ..base
        },
        EventBody::FtMint(t) => EventRow {
            kind: "ft_mint".into(),
            asset_identifier: Some(t.asset_identifier.clone()),
            recipient: Some(t.recipient.clone()),
            amount: Some(t.amount.to_string()),
            ..base
        },
        EventBody::FtBurn(t) => EventRow {
            kind: "ft_burn".into(),
            asset_identifier: Some(t.asset_identifier.clone()),
            sender: Some(t.sender.clone()),
            amount: Some(t.amount.to_string()),
            ..base
        },
        EventBody::NftTransfer(t) => EventRow {
            kind: "nft_transfer".into(),
            asset_identifier: Some(t.asset_identifier.clone()),
            sender: Some(t.sender.clone()),
            recipient: Some(t.recipient.clone()),
            value_hex: Some(normalize_hex(&t.raw_value)),
            ..base
        },
        EventBody::NftMint(t) => EventRow {
            kind: "nft_mint".into(),
            asset_identifier: Some(t.asset_identifier.clone()),
            recipient: Some(t.recipient.clone()),
            value_hex: Some(normalize_hex(&t.raw_value)),
            ..base
        },
        EventBody::NftBurn(t) => EventRow {
            kind: "nft_burn".into(),
            asset_identifier: Some(t.asset_identifier.clone()),
            sender: Some(t.sender.clone()),
            value_hex: Some(normalize_hex(&t.raw_value)),
            ..base
        },
        EventBody::Unknown { kind, .. } => {
            return Err(LedgerError::UnknownEvent {
                txid: txid.to_owned(),
                event_index: event_index as u64,
                kind: kind.clone(),
            })
        }
    })
}
