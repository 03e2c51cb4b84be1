//! The reads behind the `/v2` answers served from the ledger (the server's `src/v2`): the store's
//! [`V2Reader`]. (The broadcast hook's write is [`Store::record_local_tx`], through
//! `ledger_read::LocalTxSink`.)

use ledger_read::{
    ReadFuture, V2Account, V2BurnBlock, V2Contract, V2InfoState, V2Microblock, V2Reader, V2Tip,
};

use super::sql::select;
use super::{Store, StoreError};

/// stacks-core's `stable_confirmations` (bitcoin mainnet and testnet): the stable burn block is
/// this many blocks below the burn tip.
pub const STABLE_CONFIRMATIONS: i64 = 7;

impl Store {
    /// What `/v2/info` needs, or `None` before the first canonical block.
    async fn info_state_at_tip(&self) -> Result<Option<V2InfoState>, StoreError> {
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
    async fn account_at_tip(&self, principal: &str) -> Result<V2Account, StoreError> {
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
    async fn contract_deployed(&self, contract_id: &str) -> Result<Option<V2Contract>, StoreError> {
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

/// The reader over the inherent reads above; the tip is the one `TipReader` (Rosetta's too).
impl V2Reader for Store {
    fn v2_info_state(&self) -> ReadFuture<'_, Option<V2InfoState>> {
        Box::pin(async move { Ok(self.info_state_at_tip().await?) })
    }

    fn v2_account<'a>(&'a self, principal: &'a str) -> ReadFuture<'a, V2Account> {
        Box::pin(async move { Ok(self.account_at_tip(principal).await?) })
    }

    fn v2_contract<'a>(&'a self, contract_id: &'a str) -> ReadFuture<'a, Option<V2Contract>> {
        Box::pin(async move { Ok(self.contract_deployed(contract_id).await?) })
    }
}
