//! The positions the cursor-paged list reads start from, parsed from text a surface has
//! already checked against the cursor's pattern, and written back as that text.

use std::fmt;

/// Digits as a number, saturating (the incumbent's `parseInt` of an oversized height finds
/// nothing, as a saturated one does).
pub fn number(s: &str) -> u64 {
    s.bytes().try_fold(0u64, |n, b| n.checked_mul(10)?.checked_add(u64::from(b - b'0'))).unwrap_or(u64::MAX)
}

/// The `microblock_sequence` of a transaction mined in an anchor block (`I32_MAX`).
pub const ANCHORED_SEQUENCE: u64 = 2_147_483_647;
/// The largest `tx_index` the incumbent's cursors resolve a whole block to (`0x7fff`).
pub const MAX_TX_INDEX: u64 = 0x7fff;

/// A position in the transaction order (height, then microblock sequence, then index), newest
/// first. `H:0:0` names the whole of block `H` when no transaction sits exactly there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TxCursor {
    pub block_height: u64,
    pub microblock_sequence: u64,
    pub tx_index: u64,
}

impl TxCursor {
    /// A cursor that matched the transaction cursor pattern (`H:S:I`, digits).
    pub fn parse(raw: &str) -> Self {
        let mut p = raw.split(':').map(number);
        let mut next = || p.next().unwrap_or(0);
        TxCursor { block_height: next(), microblock_sequence: next(), tx_index: next() }
    }

    /// `H:0:0`: resolved to the whole block (from its last position) unless a transaction sits
    /// exactly at it (the incumbent's `resolveTransactionCursor`).
    pub fn may_name_block(&self) -> bool {
        self.microblock_sequence == 0 && self.tx_index == 0
    }

    /// The last position of block `h`: every transaction of the block is at or before it.
    pub fn block_end(h: u64) -> Self {
        TxCursor { block_height: h, microblock_sequence: ANCHORED_SEQUENCE, tx_index: MAX_TX_INDEX }
    }
}

impl fmt::Display for TxCursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.block_height, self.microblock_sequence, self.tx_index)
    }
}

/// A position in the mempool order (newest receipt first, then tx id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MempoolCursor {
    pub receipt_time: u64,
    /// `0x`-prefixed, lower case.
    pub tx_id: String,
}

impl MempoolCursor {
    /// A cursor that matched the mempool cursor pattern (`T:txid`).
    pub fn parse(raw: &str) -> Self {
        let (t, id) = raw.split_once(':').unwrap_or((raw, ""));
        let id = id.strip_prefix("0x").unwrap_or(id).to_ascii_lowercase();
        MempoolCursor { receipt_time: number(t), tx_id: format!("0x{id}") }
    }
}

impl fmt::Display for MempoolCursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.receipt_time, self.tx_id)
    }
}

/// A position in a principal's FT balances (largest balance first, then asset identifier).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FtBalanceCursor {
    pub balance: u128,
    pub asset_identifier: String,
}

impl FtBalanceCursor {
    /// A cursor that matched the FT balance pattern (`balance:asset`), split at its first colon (the asset identifier
    /// holds `::`). A balance beyond `u128` saturates: no balance held is above it.
    pub fn parse(raw: &str) -> Self {
        let (b, asset) = raw.split_once(':').unwrap_or((raw, ""));
        let balance = b.bytes().try_fold(0u128, |n, d| n.checked_mul(10)?.checked_add(u128::from(d - b'0')));
        FtBalanceCursor { balance: balance.unwrap_or(u128::MAX), asset_identifier: asset.to_string() }
    }
}

/// A position in a principal's NFT holdings (by asset identifier, then value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NftBalanceCursor {
    /// `0x` hex, as sent (compared as text, as the incumbent compares it).
    pub value: String,
    pub asset_identifier: String,
}

impl NftBalanceCursor {
    /// A cursor that matched the NFT balance pattern (`0xvalue:asset`), split at its first colon.
    pub fn parse(raw: &str) -> Self {
        let (v, asset) = raw.split_once(':').unwrap_or((raw, ""));
        NftBalanceCursor { value: v.to_string(), asset_identifier: asset.to_string() }
    }
}
