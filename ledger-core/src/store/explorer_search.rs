//! The reads behind search: exact lookups by hash, contract id or address, each one index seek.

use ledger_read::search::{ContractHit, HashHit, MinedAt, SearchReader};
use ledger_read::ReadError;

use super::db_row::DbRow;
use super::sql::{get_bool, select};
use super::{Store, StoreError};

/// A mined row of a transaction, streamed (not yet anchored, `index_block_hash` empty) ones
/// included: the incumbent keeps those as canonical rows of the next height, with block hash
/// `0x` and burn time -1.
const MINED: &str = "SELECT t.tx_id, t.tx_type, \
    (CASE WHEN t.canonical OR t.index_block_hash = '' THEN 1 ELSE 0 END) AS canonical, \
    COALESCE(b.block_hash, '0x') AS block_hash, COALESCE(b.burn_block_time, -1) AS burn_block_time, \
    t.block_height FROM txs t LEFT JOIN blocks b ON b.index_block_hash = t.index_block_hash";

fn mined_at(r: &DbRow) -> Result<MinedAt, sqlx::Error> {
    Ok(MinedAt {
        canonical: get_bool(r, "canonical")?,
        block_hash: r.try_get("block_hash")?,
        burn_block_time: r.try_get("burn_block_time")?,
        block_height: u64::try_from(r.try_get::<i64, _>("block_height")?).unwrap_or(0),
    })
}

impl Store {
    async fn hash_hit(&self, hash: &str) -> Result<Option<HashHit>, StoreError> {
        // The incumbent takes whichever row its index returns first (`LIMIT 1`, no order). The
        // recordings show the canonical row when there is one (mainnet-reorg-scenario2: a tx
        // orphaned at height 2 and mined again at 4 is found at 4), else the one stored first
        // (mainnet-reorg-scenario1: a tx of the orphaned block 30 that the non-canonical block 45
        // mined again is found at 30); that is our order. A streamed row comes last: its block
        // replaces it.
        let sql = format!(
            "{MINED} WHERE t.tx_id = $1 ORDER BY t.canonical DESC, \
             (CASE WHEN t.index_block_hash = '' THEN 1 ELSE 0 END), b.raw_event_id LIMIT 1"
        );
        if let Some(r) = select(&sql, vec![hash.into()]).fetch_optional(self).await? {
            return Ok(Some(HashHit::Tx { tx_type: r.try_get("tx_type")?, at: mined_at(&r)? }));
        }
        let pending =
            select("SELECT tx_type FROM mempool_txs WHERE tx_id = $1 AND pruned = false", vec![hash.into()])
                .fetch_optional(self)
                .await?;
        if let Some(r) = pending {
            return Ok(Some(HashHit::MempoolTx { tx_type: r.try_get("tx_type")? }));
        }
        let block = select(
            "SELECT block_hash, parent_block_hash, burn_block_time, block_height, \
             (CASE WHEN canonical THEN 1 ELSE 0 END) AS canonical FROM blocks WHERE block_hash = $1 \
             ORDER BY canonical DESC LIMIT 1",
            vec![hash.into()],
        )
        .fetch_optional(self)
        .await?;
        Ok(block
            .map(|r| {
                Ok::<_, sqlx::Error>(HashHit::Block {
                    canonical: get_bool(&r, "canonical")?,
                    hash: r.try_get("block_hash")?,
                    parent_block_hash: r.try_get("parent_block_hash")?,
                    burn_block_time: r.try_get("burn_block_time")?,
                    height: u64::try_from(r.try_get::<i64, _>("block_height")?).unwrap_or(0),
                })
            })
            .transpose()?)
    }

    async fn contract_hit(&self, contract_id: &str) -> Result<Option<ContractHit>, StoreError> {
        let pending = select(
            "SELECT tx_id, tx_type FROM mempool_txs WHERE contract_id = $1 AND tx_type = 'smart_contract' \
             AND pruned = false LIMIT 1",
            vec![contract_id.into()],
        )
        .fetch_optional(self)
        .await?;
        if let Some(r) = pending {
            return Ok(Some(ContractHit {
                tx_id: r.try_get("tx_id")?,
                tx_type: r.try_get("tx_type")?,
                at: None,
            }));
        }
        let sql = format!(
            "{MINED} WHERE t.contract_id = $1 AND t.tx_type = 'smart_contract' AND t.index_block_hash <> '' \
             ORDER BY t.canonical DESC, b.block_height DESC LIMIT 1"
        );
        let Some(r) = select(&sql, vec![contract_id.into()]).fetch_optional(self).await? else {
            return Ok(None);
        };
        Ok(Some(ContractHit {
            tx_id: r.try_get("tx_id")?,
            tx_type: r.try_get("tx_type")?,
            at: Some(mined_at(&r)?),
        }))
    }
}

impl SearchReader for Store {
    async fn search_hash(&self, hash: &str) -> Result<Option<HashHit>, ReadError> {
        Ok(self.hash_hit(hash).await?)
    }

    async fn search_contract(&self, contract_id: &str) -> Result<Option<ContractHit>, ReadError> {
        Ok(self.contract_hit(contract_id).await?)
    }

    async fn address_seen(&self, address: &str) -> Result<bool, ReadError> {
        let r = select("SELECT 1 AS one FROM account_txs WHERE principal = $1 LIMIT 1", vec![address.into()])
            .fetch_optional(self)
            .await
            .map_err(StoreError::from)?;
        Ok(r.is_some())
    }
}
