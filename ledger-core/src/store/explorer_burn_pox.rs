//! The PoX payout outputs of the burnchain (`burn_block_pox_txs`), behind v2
//! `/burn-blocks/{h}/pox-transactions` and `/addresses/{btc}/pox-transactions`.

use ledger_read::chain::{BurnPoxTx, BurnRef, PoxTxsOf};

use super::sql::{select, Val};
use super::{Store, StoreError};

fn u(v: i64) -> u64 {
    u64::try_from(v).unwrap_or_default()
}

fn i(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

impl Store {
    /// A page of canonical payout outputs, newest burn block first, then by transaction and
    /// output index; and how many there are.
    pub(crate) async fn burn_pox_txs(
        &self,
        of: PoxTxsOf,
        limit: u32,
        offset: u64,
    ) -> Result<(u64, Vec<BurnPoxTx>), StoreError> {
        let (filter, mut vals): (&str, Vec<Val>) = match of {
            PoxTxsOf::Burn(BurnRef::Hash(h)) => ("burn_block_hash = $1", vec![h.into()]),
            PoxTxsOf::Burn(BurnRef::Height(h)) => ("burn_block_height = $1", vec![i(h).into()]),
            PoxTxsOf::Burn(BurnRef::Latest) => (
                "burn_block_height = (SELECT MAX(burn_block_height) FROM burn_blocks WHERE canonical = true)",
                vec![],
            ),
            PoxTxsOf::Recipient(a) => ("recipient = $1", vec![a.into()]),
        };
        let total = select(
            &format!("SELECT CAST(COUNT(*) AS BIGINT) AS n FROM burn_block_pox_txs WHERE canonical = true AND {filter}"),
            vals.clone(),
        )
        .fetch_one(self)
        .await?
        .try_get::<i64, _>("n")?;
        let n = vals.len();
        vals.push(i64::from(limit).into());
        vals.push(i(offset).into());
        let rows = select(
            &format!(
                "SELECT burn_block_hash, burn_block_height, tx_id, recipient, utxo_idx, amount \
                 FROM burn_block_pox_txs WHERE canonical = true AND {filter} \
                 ORDER BY burn_block_height DESC, tx_id, utxo_idx LIMIT ${} OFFSET ${}",
                n + 1,
                n + 2
            ),
            vals,
        )
        .fetch_all(self)
        .await?;
        let txs = rows
            .iter()
            .map(|r| {
                Ok(BurnPoxTx {
                    burn_block_hash: r.try_get("burn_block_hash")?,
                    burn_block_height: u(r.try_get("burn_block_height")?),
                    tx_id: r.try_get("tx_id")?,
                    recipient: r.try_get("recipient")?,
                    utxo_idx: u(r.try_get("utxo_idx")?),
                    amount: u(r.try_get("amount")?),
                })
            })
            .collect::<Result<_, sqlx::Error>>()?;
        Ok((u(total), txs))
    }
}
