//! The canonical chain tip, the one read every surface shares: Rosetta's current block, the
//! node's `/v2/info` tip and the explorer's chain tip are all this one [`Tip`].

use crate::ledger::ReadFuture;
use crate::rows::LedgerBlock;

/// The canonical chain tip: the highest canonical Stacks block, the newest microblock streamed
/// on it, and the burn height the chain has reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tip {
    /// The highest canonical Stacks block.
    pub block: LedgerBlock,
    /// The newest microblock streamed on the tip block that is still on the stream's canonical
    /// branch (before Nakamoto; `None` when nothing was streamed on it).
    pub microblock: Option<MicroblockTip>,
    /// The chain's burn height: the tip block's own burn block height, raised by canonical burn
    /// blocks announced after it (the node announces a burn block before the Stacks block
    /// anchored in it).
    pub burn_height: i64,
}

impl Tip {
    /// The tip block's height, as the unsigned count the explorer's totals and pages use.
    pub fn height(&self) -> u64 {
        u64::try_from(self.block.block_height).unwrap_or(0)
    }
}

/// A microblock on the tip: the unconfirmed state's position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MicroblockTip {
    /// `0x`-prefixed hex.
    pub hash: String,
    pub sequence: i64,
}

/// The canonical tip: the read every surface's reader builds on (Rosetta's
/// [`LedgerReader`](crate::LedgerReader), `/v2`'s [`V2Reader`](crate::V2Reader), each explorer
/// read trait), declared once so that each stays implementable without the others.
pub trait TipReader: Send + Sync + 'static {
    /// The canonical tip (what "at the tip" and "caught up with the node" compare with), or
    /// `None` before the first canonical block.
    fn tip(&self) -> ReadFuture<'_, Option<Tip>>;
}
