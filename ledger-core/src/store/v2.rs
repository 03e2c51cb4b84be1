//! The reads behind the `/v2` answers served from the ledger (the server's `src/v2`): the store's
//! [`V2Reader`]. (The broadcast hook's write is [`Store::record_local_tx`], through
//! `ledger_read::LocalTxSink`.)

use ledger_read::{ReadFuture, V2BurnBlock, V2Contract, V2InfoState, V2Reader};

use super::sql::select;
use super::{Store, StoreError};

/// stacks-core's `stable_confirmations` (bitcoin mainnet and testnet): the stable burn block is
/// this many blocks below the burn tip.
pub const STABLE_CONFIRMATIONS: i64 = 7;

impl Store {
    /// What `/v2/info` needs, or `None` before the first canonical block.
    async fn info_state_at_tip(&self) -> Result<Option<V2InfoState>, StoreError> {
        let Some(tip) = self.read_tip().await? else { return Ok(None) };
        let burn_tip = self.v2_burn_block(None).await?;
        let stable_burn = match &burn_tip {
            Some(b) if b.height >= STABLE_CONFIRMATIONS => {
                self.v2_burn_block(Some(b.height - STABLE_CONFIRMATIONS)).await?
            }
            _ => None,
        };
        Ok(Some(V2InfoState { tip, burn_tip, stable_burn }))
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

/// The reader over the inherent reads above; the tip and accounts are the reads every surface
/// shares (`TipReader`, `AccountReader`).
impl V2Reader for Store {
    fn v2_info_state(&self) -> ReadFuture<'_, Option<V2InfoState>> {
        Box::pin(async move { Ok(self.info_state_at_tip().await?) })
    }

    fn v2_contract<'a>(&'a self, contract_id: &'a str) -> ReadFuture<'a, Option<V2Contract>> {
        Box::pin(async move { Ok(self.contract_deployed(contract_id).await?) })
    }
}
