//! The reads behind `/extended/v3/principals/{p}/…`: a principal's transaction list (the
//! `account_txs` listed set, keyset-paged by chain position) and its balance changes, which are
//! its operations (STX and token operations, migration 0035) folded per transaction and asset
//! by the ledger's one effect rule ([`effect`]). No parallel table: the operations' canonical
//! flags follow their block, so a reorg flips the balance changes with everything else.
//!
//! The boot block's transactions (a stored block 0, kept in block 1: `account_txs.boot`) are in
//! none of these answers, totals included: the incumbent stores block 0 non-canonical, and its
//! block-0 fix-up (`fixBlockZeroData`) moves block 0's rows of the other tables into block 1
//! but not its `principal_txs`, `principal_tx_balance_changes` and `principal_tx_counts`
//! rows, which stay non-canonical. Boot transactions sent in block 1 itself (mocknet) are
//! ordinary block 1 rows and listed.

use std::collections::{BTreeMap, HashMap, HashSet};

use ledger_read::principals::{
    AssetKind, BalanceChange, PrincipalTx, PrincipalsReader, StxLock, TxPosition, ANCHORED,
};
use ledger_read::ReadError;

use super::db_row::DbRow;
use super::explorer_tx::{mined_tx, PAGE_TX_COLUMNS};
use super::sql::{get_bool, select, select_in};
use super::{Store, StoreError};
use crate::ledger::effect::{self, AssetClass};

/// The principal's listed set as the v3 lists read it (`account_txs_listed_seq`, migration
/// 0041, on SQLite `account_txs_listed_rid`, 0045: the order and the positions are on
/// `account_txs` alone).
const LISTED: &str = "a.principal = $1 AND a.listed = true AND a.canonical = true AND a.boot = false";

/// The position filter of a page: at or before `($2, $3, $4)` newest first. A row-value
/// comparison over the index's last three columns, which both engines read as a range of
/// the principal's index, from the position down.
const AT_OR_BEFORE: &str = "(a.block_height, a.seq, a.tx_index) <= ($2, $3, $4)";

fn u(v: i64) -> u64 {
    u64::try_from(v).unwrap_or_default()
}

fn u32_of(v: i64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

fn pos_vals(p: TxPosition) -> Vec<super::sql::Val> {
    vec![
        i64::try_from(p.block_height).unwrap_or(i64::MAX).into(),
        i64::from(p.microblock_sequence).into(),
        i64::from(p.tx_index).into(),
    ]
}

/// One operation of the principal, as the fold reads it.
struct Op {
    tx_id: String,
    index_block_hash: String,
    op_type: String,
    status: String,
    amount: Option<i64>,
    token_amount: Option<String>,
    asset_identifier: Option<String>,
    locked_delta: i64,
}

const OP_COLUMNS: &str =
    "tx_id, index_block_hash, op_type, status, amount, token_amount, asset_identifier, locked_delta";

fn op_of(r: &DbRow) -> Result<Op, sqlx::Error> {
    Ok(Op {
        tx_id: r.try_get("tx_id")?,
        index_block_hash: r.try_get("index_block_hash")?,
        op_type: r.try_get("op_type")?,
        status: r.try_get("status")?,
        amount: r.try_get("amount")?,
        token_amount: r.try_get("token_amount")?,
        asset_identifier: r.try_get("asset_identifier")?,
        locked_delta: r.try_get("locked_delta")?,
    })
}

/// What one transaction did to one principal, per asset: `(kind, asset)` → (sent, received),
/// and whether it touched each asset class.
#[derive(Default)]
struct TxChanges {
    assets: BTreeMap<(AssetKind, String), (u128, u128)>,
    affected: [bool; 3],
}

/// Folds the principal's operations of one transaction with [`effect::effect`]. The fee payer
/// always has an STX change (the fee counts as sent, even 0), as the incumbent records it; a
/// failed token transfer changes nothing but still marks STX as affected for its parties.
fn fold(ops: &[&Op], pays_fee: bool) -> TxChanges {
    let mut c = TxChanges::default();
    if pays_fee {
        c.assets.entry((AssetKind::Stx, "stx".into())).or_default();
        c.affected[0] = true;
    }
    for o in ops {
        let e = effect::effect(&o.op_type, &o.status, o.amount, o.token_amount.as_deref(), o.locked_delta);
        let key = match (effect::asset_class(&o.op_type), &o.asset_identifier) {
            (AssetClass::Stx, _) => {
                if matches!(o.op_type.as_str(), "token_transfer" | "mint" | "burn") {
                    c.affected[0] = true;
                }
                let counted = o.status == "success"
                    && matches!(o.op_type.as_str(), "fee" | "token_transfer" | "mint" | "burn");
                if !counted {
                    continue;
                }
                (AssetKind::Stx, "stx".to_owned())
            }
            (AssetClass::Ft, Some(a)) => {
                c.affected[1] = true;
                (AssetKind::Ft, a.clone())
            }
            (AssetClass::Nft, Some(a)) => {
                c.affected[2] = true;
                (AssetKind::Nft, a.clone())
            }
            _ => continue,
        };
        let v = c.assets.entry(key).or_default();
        v.0 += e.sent + e.fee;
        v.1 += e.received;
    }
    c
}

/// The fee payer of a `txs` row selected with `v3_sender`, `v3_sponsored`, `v3_sponsor`.
fn payer_of(r: &DbRow) -> Result<(String, Option<String>), sqlx::Error> {
    let sender: String = r.try_get("v3_sender")?;
    let sponsor: Option<String> = if get_bool(r, "v3_sponsored")? { r.try_get("v3_sponsor")? } else { None };
    Ok((sender, sponsor))
}

const PAYER_COLUMNS: &str = "t.sender_address AS v3_sender, \
     (CASE WHEN t.sponsored THEN 1 ELSE 0 END) AS v3_sponsored, t.sponsor_address AS v3_sponsor";

impl Store {
    async fn principal_ops(&self, principal: &str, lo: i64, hi: i64) -> Result<Vec<Op>, StoreError> {
        let rows = select(
            &format!(
                "SELECT {OP_COLUMNS} FROM operations WHERE account = $1 AND canonical = true \
                 AND block_height >= $2 AND block_height <= $3 AND tx_index >= 0"
            ),
            vec![principal.into(), lo.into(), hi.into()],
        )
        .fetch_all(self)
        .await?;
        Ok(rows.iter().map(op_of).collect::<Result<_, _>>()?)
    }

    async fn principal_tx_page(
        &self,
        principal: &str,
        from: Option<TxPosition>,
        limit: u32,
    ) -> Result<Vec<PrincipalTx>, StoreError> {
        let from = from.unwrap_or(TxPosition {
            block_height: u64::MAX >> 1,
            microblock_sequence: ANCHORED,
            tx_index: u32::MAX,
        });
        // The page is picked from the index alone, then only its rows are read; they are
        // put in order here (sorted in SQL, SQLite copied every joined row into a sorter).
        let sql = format!(
            "SELECT {PAGE_TX_COLUMNS}, {PAYER_COLUMNS} FROM (SELECT a.tx_id, a.index_block_hash, \
             a.block_height, a.seq, a.tx_index FROM account_txs a WHERE {LISTED} AND {AT_OR_BEFORE} \
             ORDER BY a.block_height DESC, a.seq DESC, a.tx_index DESC LIMIT $5) p \
             JOIN txs t ON t.tx_id = p.tx_id AND t.index_block_hash = p.index_block_hash \
             JOIN blocks b ON b.index_block_hash = t.index_block_hash"
        );
        let mut vals = vec![principal.into()];
        vals.extend(pos_vals(from));
        vals.push(i64::from(limit).into());
        let rows = select(&sql, vals).fetch_all(self).await?;
        let txs = rows.iter().map(mined_tx).collect::<Result<Vec<_>, _>>()?;
        let (lo, hi) =
            match (txs.iter().map(|t| t.block_height).min(), txs.iter().map(|t| t.block_height).max()) {
                (Some(l), Some(h)) => (l as i64, h as i64),
                _ => return Ok(Vec::new()),
            };
        let ops = self.principal_ops(principal, lo, hi).await?;
        let mut by_tx: HashMap<(&str, &str), Vec<&Op>> = HashMap::new();
        for o in &ops {
            by_tx.entry((&o.tx_id, &o.index_block_hash)).or_default().push(o);
        }
        let mut out = Vec::with_capacity(txs.len());
        for (tx, r) in txs.into_iter().zip(&rows) {
            let (sender, sponsor) = payer_of(r)?;
            let payer = sponsor.as_deref().unwrap_or(&sender);
            let mine =
                by_tx.get(&(tx.tx_id.as_str(), tx.index_block_hash.as_str())).cloned().unwrap_or_default();
            let c = fold(&mine, payer == principal);
            let (stx_sent, stx_received) =
                c.assets.get(&(AssetKind::Stx, "stx".to_owned())).copied().unwrap_or_default();
            let position = TxPosition {
                block_height: tx.block_height,
                microblock_sequence: tx.microblock_sequence.unwrap_or(ANCHORED),
                tx_index: tx.tx_index,
            };
            out.push(PrincipalTx {
                tx,
                position,
                sender,
                sponsor,
                stx_sent,
                stx_received,
                affected: c.affected,
            });
        }
        // Newest first: the position is `(block_height, seq, tx_index)` of the page's order.
        out.sort_unstable_by_key(|t| std::cmp::Reverse(t.position));
        Ok(out)
    }

    async fn principal_tx_positions_after(
        &self,
        principal: &str,
        after: TxPosition,
        limit: u32,
    ) -> Result<Vec<TxPosition>, StoreError> {
        let sql = format!(
            "SELECT a.block_height, a.seq, a.tx_index FROM account_txs a \
             WHERE {LISTED} AND (a.block_height, a.seq, a.tx_index) > ($2, $3, $4) \
             ORDER BY a.block_height, a.seq, a.tx_index LIMIT $5"
        );
        let mut vals = vec![principal.into()];
        vals.extend(pos_vals(after));
        vals.push(i64::from(limit).into());
        let rows = select(&sql, vals).fetch_all(self).await?;
        Ok(rows
            .iter()
            .map(|r| {
                Ok(TxPosition {
                    block_height: u(r.try_get("block_height")?),
                    microblock_sequence: u32_of(r.try_get("seq")?),
                    tx_index: u32_of(r.try_get("tx_index")?),
                })
            })
            .collect::<Result<_, sqlx::Error>>()?)
    }

    async fn principal_tx_count_of(&self, principal: &str) -> Result<u64, StoreError> {
        let row = select(
            "SELECT cum - cum_boot AS cum FROM account_block_txs WHERE principal = $1 ORDER BY block_height DESC LIMIT 1",
            vec![principal.into()],
        )
        .fetch_optional(self)
        .await?;
        Ok(row.map(|r| r.try_get::<i64, _>("cum")).transpose()?.map_or(0, u))
    }

    async fn balance_changes_of(
        &self,
        principal: &str,
        tx_ids: &[String],
    ) -> Result<Vec<BalanceChange>, StoreError> {
        let ids: Vec<String> = {
            let mut seen = HashSet::new();
            tx_ids.iter().filter(|t| seen.insert(t.as_str())).cloned().collect()
        };
        let txs = select_in(
            self,
            &format!(
                "SELECT t.tx_id, t.index_block_hash, t.block_height, t.tx_index, \
                 COALESCE(t.microblock_sequence, 2147483647) AS seq, {PAYER_COLUMNS} FROM txs t \
                 WHERE t.tx_id IN ({{in}}) AND t.canonical = true AND t.index_block_hash <> ''"
            ),
            vec![],
            &ids,
        )
        .await?;
        let ops = select_in(
            self,
            &format!("SELECT {OP_COLUMNS} FROM operations WHERE tx_id IN ({{in}}) AND account = $1 AND canonical = true"),
            vec![principal.into()],
            &ids,
        )
        .await?;
        let ops = ops.iter().map(op_of).collect::<Result<Vec<_>, _>>()?;
        let mut by_tx: HashMap<(&str, &str), Vec<&Op>> = HashMap::new();
        for o in &ops {
            by_tx.entry((&o.tx_id, &o.index_block_hash)).or_default().push(o);
        }
        let mut shown = Vec::new();
        for r in &txs {
            let tx_id: String = r.try_get("tx_id")?;
            let ibh: String = r.try_get("index_block_hash")?;
            let height = u(r.try_get("block_height")?);
            let tx_index = u32_of(r.try_get("tx_index")?);
            // The boot block's transactions have no balance changes (module comment).
            if height == 1
                && self.boot_shift(Some(&ibh)).await?.is_some_and(|s| s.is_boot(i64::from(tx_index)))
            {
                continue;
            }
            let position =
                TxPosition { block_height: height, microblock_sequence: u32_of(r.try_get("seq")?), tx_index };
            let (sender, sponsor) = payer_of(r)?;
            let payer = sponsor.unwrap_or(sender);
            let mine = by_tx.get(&(tx_id.as_str(), ibh.as_str())).cloned().unwrap_or_default();
            let c = fold(&mine, payer == principal);
            for ((kind, asset_identifier), (sent, received)) in c.assets {
                shown.push(BalanceChange {
                    tx_id: tx_id.clone(),
                    position,
                    kind,
                    asset_identifier,
                    sent,
                    received,
                });
            }
        }
        shown.sort_by(|a, b| {
            b.position
                .cmp(&a.position)
                .then(a.kind.cmp(&b.kind))
                .then(a.asset_identifier.cmp(&b.asset_identifier))
        });
        Ok(shown)
    }
}

impl PrincipalsReader for Store {
    async fn principal_txs(
        &self,
        principal: &str,
        from: Option<TxPosition>,
        limit: u32,
    ) -> Result<Vec<PrincipalTx>, ReadError> {
        Ok(self.principal_tx_page(principal, from, limit).await?)
    }

    async fn principal_txs_after(
        &self,
        principal: &str,
        after: TxPosition,
        limit: u32,
    ) -> Result<Vec<TxPosition>, ReadError> {
        Ok(self.principal_tx_positions_after(principal, after, limit).await?)
    }

    async fn principal_tx_at(&self, principal: &str, at: TxPosition) -> Result<bool, ReadError> {
        let sql = format!(
            "SELECT 1 AS one FROM account_txs a WHERE {LISTED} \
             AND a.block_height = $2 AND a.seq = $3 AND a.tx_index = $4 LIMIT 1"
        );
        let mut vals = vec![principal.into()];
        vals.extend(pos_vals(at));
        let row = select(&sql, vals).fetch_optional(self).await.map_err(StoreError::from)?;
        Ok(row.is_some())
    }

    async fn principal_tx_count(&self, principal: &str) -> Result<u64, ReadError> {
        Ok(self.principal_tx_count_of(principal).await?)
    }

    async fn balance_changes(
        &self,
        principal: &str,
        tx_ids: &[String],
    ) -> Result<Vec<BalanceChange>, ReadError> {
        Ok(self.balance_changes_of(principal, tx_ids).await?)
    }

    async fn stx_lock(&self, principal: &str) -> Result<Option<StxLock>, ReadError> {
        let row = select(
            "SELECT locked, pox_version, lock_tx_id, lock_height, lock_burn_height, unlock_burn_height \
             FROM stx_accounts WHERE account = $1 AND locked <> 0",
            vec![principal.into()],
        )
        .fetch_optional(self)
        .await
        .map_err(StoreError::from)?;
        let Some(r) = row else { return Ok(None) };
        let lock = (|| -> Result<StxLock, sqlx::Error> {
            Ok(StxLock {
                amount: i128::from(r.try_get::<i64, _>("locked")?),
                pox_version: u32_of(r.try_get("pox_version")?),
                lock_tx_id: r.try_get::<Option<String>, _>("lock_tx_id")?.unwrap_or_default(),
                stacks_lock_height: u(r.try_get("lock_height")?),
                burn_lock_height: u(r.try_get("lock_burn_height")?),
                burn_unlock_height: u(r.try_get("unlock_burn_height")?),
            })
        })()
        .map_err(StoreError::from)?;
        Ok(Some(lock))
    }

    async fn ft_positions(&self, principal: &str) -> Result<Vec<(String, u128)>, ReadError> {
        let rows = select(
            "SELECT asset_identifier, balance FROM ft_balances WHERE account = $1",
            vec![principal.into()],
        )
        .fetch_all(self)
        .await
        .map_err(StoreError::from)?;
        let mut out = Vec::new();
        for r in rows {
            let b: String = r.try_get("balance").map_err(StoreError::from)?;
            let v = super::amount::ft_parse(&b);
            if v > 0 {
                out.push((r.try_get("asset_identifier").map_err(StoreError::from)?, v as u128));
            }
        }
        Ok(out)
    }

    async fn ft_balance(&self, principal: &str, asset: &str) -> Result<i128, ReadError> {
        let row = select(
            "SELECT balance FROM ft_balances WHERE account = $1 AND asset_identifier = $2",
            vec![principal.into(), asset.into()],
        )
        .fetch_optional(self)
        .await
        .map_err(StoreError::from)?;
        let b: Option<String> = row.map(|r| r.try_get("balance")).transpose().map_err(StoreError::from)?;
        Ok(b.map_or(0, |b| super::amount::ft_parse(&b)))
    }

    async fn nft_positions(&self, principal: &str) -> Result<Vec<(String, String)>, ReadError> {
        let rows = select(
            "SELECT asset_identifier, value_hex FROM nft_custody WHERE owner = $1",
            vec![principal.into()],
        )
        .fetch_all(self)
        .await
        .map_err(StoreError::from)?;
        Ok(rows
            .iter()
            .map(|r| Ok((r.try_get("asset_identifier")?, r.try_get("value_hex")?)))
            .collect::<Result<_, sqlx::Error>>()
            .map_err(StoreError::from)?)
    }
}
