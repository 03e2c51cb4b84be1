//! Decoding a serialized transaction (block receipt or mempool entry) into its row fields.

use stacks_codec::tx::{Payload, Transaction};
use stacks_codec::{decode_hex, to_hex_prefixed};

use super::rows::{MempoolTxRow, TxRow};
use super::{int, normalize_hex, LedgerError, Network};

/// A transaction decoded and checked against the configured network.
pub struct Decoded {
    pub tx: Transaction,
    pub tx_id: String,
    pub raw_size: i64,
}

/// Whether a transaction's chain id must match the configured network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChainCheck {
    /// Anchored blocks and the mempool: a foreign chain id means the node and this server are
    /// configured for different networks, and the event is refused.
    Enforce,
    /// Unconfirmed microblock previews: kept as the node reported them. They never move a
    /// balance, and the anchor block that confirms a stream carries the receipts again (and is
    /// checked). The incumbent stores such previews too (the mocknet fixture has two).
    Skip,
}

/// Decodes `raw_hex`; when the node named the txid, it must match the bytes.
pub fn decode(
    raw_hex: &str,
    claimed_txid: Option<&str>,
    network: Network,
    chain: ChainCheck,
) -> Result<Decoded, LedgerError> {
    let label = || claimed_txid.map(normalize_hex).unwrap_or_else(|| "(mempool)".into());
    let bytes =
        decode_hex(raw_hex).map_err(|e| LedgerError::BadRawTx { txid: label(), reason: e.to_string() })?;
    let tx = Transaction::deserialize(&bytes)
        .map_err(|e| LedgerError::BadRawTx { txid: label(), reason: e.to_string() })?;
    let tx_id = to_hex_prefixed(&stacks_codec::tx::txid_of(&bytes));
    if let Some(claimed) = claimed_txid {
        if normalize_hex(claimed) != tx_id {
            return Err(LedgerError::TxidMismatch { txid: normalize_hex(claimed), computed: tx_id });
        }
    }
    if chain == ChainCheck::Enforce {
        check_chain(&tx, &tx_id, network)?;
    }
    Ok(Decoded { tx, tx_id, raw_size: bytes.len() as i64 })
}

pub fn check_chain(tx: &Transaction, tx_id: &str, network: Network) -> Result<(), LedgerError> {
    // The boot block's transactions (boot contracts, genesis allocations) are built by the
    // node itself with chain id 0 from the boot address; they are part of every network.
    let boot = tx.chain_id == 0 && super::is_boot_address(&tx.origin_address().to_string());
    if tx.chain_id != network.chain_id() && !boot {
        return Err(LedgerError::WrongChain {
            txid: tx_id.to_owned(),
            found: tx.chain_id,
            expected: network.chain_id(),
            network,
        });
    }
    Ok(())
}

/// The fields every stored transaction has, from the decoded transaction.
pub fn tx_fields(tx: &Transaction) -> TxRow {
    let sender = tx.origin_address().to_string();
    let (contract_id, function_name, recipient, amount) = match &tx.payload {
        Payload::SmartContract { name, .. } => (Some(format!("{sender}.{name}")), None, None, None),
        Payload::ContractCall { contract, function_name, .. } => {
            (Some(contract.to_string()), Some(function_name.clone()), None, None)
        }
        Payload::TokenTransfer { recipient, amount, .. } => {
            (None, None, Some(recipient.to_string()), Some(int(*amount)))
        }
        _ => (None, None, None, None),
    };
    TxRow {
        tx_type: tx.tx_type_name().to_owned(),
        nonce: int(tx.nonce()),
        fee: int(tx.fee()),
        sender_address: sender,
        sponsored: tx.is_sponsored(),
        sponsor_address: tx.sponsor_address().map(|a| a.to_string()),
        sponsor_nonce: tx.sponsor_nonce().map(int),
        anchor_mode: tx.anchor_mode.api_name().to_owned(),
        post_condition_mode: tx.post_condition_mode.api_name().to_owned(),
        contract_id,
        function_name,
        token_transfer_recipient: recipient,
        token_transfer_amount: amount,
        ..TxRow::default()
    }
}

/// A `/new_mempool_tx` entry.
pub fn mempool_row(raw_hex: &str, network: Network) -> Result<MempoolTxRow, LedgerError> {
    let d = decode(raw_hex, None, network, ChainCheck::Enforce)?;
    let f = tx_fields(&d.tx);
    Ok(MempoolTxRow {
        tx_id: d.tx_id,
        raw_tx: normalize_hex(raw_hex),
        tx_type: f.tx_type,
        sender_address: f.sender_address,
        nonce: f.nonce,
        sponsored: f.sponsored,
        sponsor_address: f.sponsor_address,
        sponsor_nonce: f.sponsor_nonce,
        fee: f.fee,
        contract_id: f.contract_id,
        function_name: f.function_name,
        token_transfer_recipient: f.token_transfer_recipient,
        raw_size: d.raw_size,
    })
}

/// The incumbent strips NUL bytes from `vm_error` before storing it (PostgreSQL text cannot
/// hold them).
pub fn clean_vm_error(s: &Option<String>) -> Option<String> {
    s.as_ref().map(|e| e.replace('\0', ""))
}
