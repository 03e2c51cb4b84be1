//! The reads behind the `/v2` answers served from the ledger (`crate::v2`). (The broadcast
//! hook's write is [`Store::record_local_tx`].)

use super::sql::select;
use super::{Store, StoreError};

/// stacks-core's `stable_confirmations` (bitcoin mainnet and testnet): the stable burn block is
/// this many blocks below the burn tip.
pub const STABLE_CONFIRMATIONS: i64 = 7;

/// The canonical Stacks tip with the consensus data `/v2/info` reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct V2Tip {
    pub block_height: i64,
    pub block_hash: String,
    pub index_block_hash: String,
    /// The tip's consensus hash, when the node's block event carried one.
    pub consensus_hash: Option<String>,
    /// The Stacks tip's own burn block height.
    pub burn_block_height: i64,
    /// Nakamoto tenure height, when recorded.
    pub tenure_height: Option<i64>,
}

/// A canonical burn block as `/v2/info` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct V2BurnBlock {
    pub height: i64,
    pub consensus_hash: Option<String>,
}

/// The newest streamed microblock on the tip (pre-Nakamoto unconfirmed state).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct V2Microblock {
    pub hash: String,
    pub sequence: i64,
}

/// Everything `/v2/info` derives from the ledger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct V2InfoState {
    pub tip: V2Tip,
    /// The highest canonical burn block (the burnchain tip as last announced).
    pub burn_tip: Option<V2BurnBlock>,
    /// The canonical burn block [`STABLE_CONFIRMATIONS`] below the burn tip, when stored.
    pub stable_burn: Option<V2BurnBlock>,
    pub microblock_tip: Option<V2Microblock>,
}

/// An account as the node's `/v2/accounts` reports it, at the canonical tip.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct V2Account {
    /// Unlocked µSTX.
    pub balance: i64,
    pub locked: i64,
    /// Burn height at which `locked` unlocks; 0 when nothing is locked.
    pub unlock_height: i64,
    /// The next nonce: one past the highest used on the canonical chain (the node's nonce
    /// ignores the mempool too); always 0 for the boot address, as on the node.
    pub nonce: i64,
}

/// A contract deployed on the canonical chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct V2Contract {
    pub source: String,
    /// The ABI JSON text as the node emitted it, when it did.
    pub abi: Option<String>,
    pub clarity_version: Option<i64>,
    pub publish_height: i64,
}

impl Store {
    /// What `/v2/info` needs, or `None` before the first canonical block.
    pub async fn v2_info_state(&self) -> Result<Option<V2InfoState>, StoreError> {
        let Some(row) = select(
            "SELECT block_height, block_hash, index_block_hash, consensus_hash, burn_block_height, tenure_height \
             FROM blocks WHERE canonical = true ORDER BY block_height DESC LIMIT 1",
            vec![],
        )
        .fetch_optional(self)
        .await?
        else {
            return Ok(None);
        };
        let tip = V2Tip {
            block_height: row.try_get("block_height")?,
            block_hash: row.try_get("block_hash")?,
            index_block_hash: row.try_get("index_block_hash")?,
            consensus_hash: row.try_get("consensus_hash")?,
            burn_block_height: row.try_get("burn_block_height")?,
            tenure_height: row.try_get("tenure_height")?,
        };
        let burn_tip = self.v2_burn_block(None).await?;
        let stable_burn = match &burn_tip {
            Some(b) if b.height >= STABLE_CONFIRMATIONS => {
                self.v2_burn_block(Some(b.height - STABLE_CONFIRMATIONS)).await?
            }
            _ => None,
        };
        let microblock_tip = select(
            "SELECT microblock_hash, microblock_sequence FROM microblocks WHERE parent_index_block_hash = $1 \
             AND index_block_hash = '' AND microblock_canonical = true ORDER BY microblock_sequence DESC LIMIT 1",
            vec![tip.index_block_hash.clone().into()],
        )
        .fetch_optional(self)
        .await?
        .map(|r| Ok::<_, sqlx::Error>(V2Microblock { hash: r.try_get("microblock_hash")?, sequence: r.try_get("microblock_sequence")? }))
        .transpose()?;
        Ok(Some(V2InfoState { tip, burn_tip, stable_burn, microblock_tip }))
    }

    /// The canonical burn block at `height`, or the highest one when `None`.
    async fn v2_burn_block(&self, height: Option<i64>) -> Result<Option<V2BurnBlock>, StoreError> {
        let row = match height {
            None => {
                select(
                    "SELECT burn_block_height, consensus_hash FROM burn_blocks WHERE canonical = true \
                 ORDER BY burn_block_height DESC LIMIT 1",
                    vec![],
                )
                .fetch_optional(self)
                .await?
            }
            Some(h) => {
                select(
                    "SELECT burn_block_height, consensus_hash FROM burn_blocks WHERE canonical = true \
                 AND burn_block_height = $1 LIMIT 1",
                    vec![h.into()],
                )
                .fetch_optional(self)
                .await?
            }
        };
        Ok(row
            .map(|r| {
                Ok::<_, sqlx::Error>(V2BurnBlock {
                    height: r.try_get("burn_block_height")?,
                    consensus_hash: r.try_get("consensus_hash")?,
                })
            })
            .transpose()?)
    }

    /// `principal`'s balance, lock and next nonce at the canonical tip (zeros for a principal
    /// the ledger never saw, as the node answers for an empty account).
    pub async fn v2_account(&self, principal: &str) -> Result<V2Account, StoreError> {
        let row = select(
            "SELECT liquid, locked, unlock_burn_height FROM stx_accounts WHERE account = $1",
            vec![principal.into()],
        )
        .fetch_optional(self)
        .await?;
        let (balance, locked, unlock_height) = match row {
            Some(r) => {
                let locked: i64 = r.try_get("locked")?;
                let unlock: i64 = r.try_get("unlock_burn_height")?;
                (r.try_get("liquid")?, locked, if locked == 0 { 0 } else { unlock })
            }
            None => (0, 0, 0),
        };
        // The node runs boot code (the genesis deploys and each epoch's new boot contracts)
        // outside the transaction path, so those deploys never bump the boot address's nonce;
        // they are its only transactions (nobody holds its key). `/extended` counts them as the
        // incumbent does; `/v2` answers the node's 0.
        let nonce =
            if crate::ledger::is_boot_address(principal) { 0 } else { self.next_nonce(principal).await? };
        Ok(V2Account { balance, locked, unlock_height, nonce })
    }

    /// The contract `contract_id` (`ADDR.name`) as deployed on the canonical chain (a failed
    /// deploy created nothing on the node).
    pub async fn v2_contract(&self, contract_id: &str) -> Result<Option<V2Contract>, StoreError> {
        let row = select(
            "SELECT source_code, abi, clarity_version, block_height FROM smart_contracts \
             WHERE contract_id = $1 AND canonical = true AND success = true ORDER BY block_height LIMIT 1",
            vec![contract_id.into()],
        )
        .fetch_optional(self)
        .await?;
        Ok(row
            .map(|r| {
                Ok::<_, sqlx::Error>(V2Contract {
                    source: r.try_get("source_code")?,
                    abi: r.try_get("abi")?,
                    clarity_version: r.try_get("clarity_version")?,
                    publish_height: r.try_get("block_height")?,
                })
            })
            .transpose()?)
    }
}
