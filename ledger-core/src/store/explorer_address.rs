//! The reads behind the address, balance, nonce and token-holder routes. Every query is an
//! index seek on the principal (or asset); sums run over that principal's rows only.

use std::collections::BTreeMap;

use ledger_read::address::{
    AddressReader, AssetTotals, FtHolder, MempoolDelta, NonceState, PrincipalActivity, StxInbound, StxTotals,
    UntilBlock,
};
use ledger_read::tx::{MinedTx, PageTx, TxEvent};
use ledger_read::{Paging, ReadError};
use stacks_codec::tx::{Payload, Transaction};

use super::amount::ft_parse;
use super::explorer_tx::{tx_event, PageRows, EVENT_COLUMNS, SEQ};
use super::sql::{select, Val};
use super::{Store, StoreError};
use crate::ledger::Network;

/// A height bound for "up to the tip".
fn up_to(height: Option<u64>) -> i64 {
    height.map(|h| i64::try_from(h).unwrap_or(i64::MAX)).unwrap_or(i64::MAX)
}

fn u64_of(v: Option<i64>) -> Option<u64> {
    v.and_then(|v| u64::try_from(v).ok())
}

/// asset → (sent, received) as the balances list them, ordered by asset.
fn asset_totals(m: BTreeMap<String, (i128, i128)>) -> Vec<AssetTotals> {
    m.into_iter()
        .map(|(asset_identifier, (sent, received))| AssetTotals {
            asset_identifier,
            balance: received - sent,
            total_sent: sent,
            total_received: received,
        })
        .collect()
}

/// The amount a pending token transfer would move (0 for any other payload).
fn transfer_amount(raw_tx: &str) -> i128 {
    let tx = stacks_codec::decode_hex(raw_tx).ok().and_then(|b| Transaction::deserialize(&b).ok());
    match tx.map(|t| t.payload) {
        Some(Payload::TokenTransfer { amount, .. }) => i128::from(amount),
        _ => 0,
    }
}

impl Store {
    async fn stx_totals_at(&self, principal: &str, height: Option<u64>) -> Result<StxTotals, StoreError> {
        let mut t = match height {
            // At the tip: the sums kept by the write path (`totals`), one row.
            None => self.stx_sums_kept(principal).await?,
            Some(_) => self.stx_sums_at(principal, height).await?,
        };
        self.add_lock_state(&mut t, principal, height).await?;
        Ok(t)
    }

    /// The tip's STX sums as the write path keeps them (`account_stx_totals`, migration 0017).
    pub async fn stx_sums_kept(&self, principal: &str) -> Result<StxTotals, StoreError> {
        let row = select(
            "SELECT total_sent, total_received, total_fees_sent, total_miner_rewards FROM account_stx_totals \
             WHERE account = $1",
            vec![principal.into()],
        )
        .fetch_optional(self)
        .await?;
        let mut t = StxTotals::default();
        if let Some(r) = row {
            t.total_sent = i128::from(r.try_get::<i64, _>("total_sent")?);
            t.total_received = i128::from(r.try_get::<i64, _>("total_received")?);
            t.total_fees_sent = i128::from(r.try_get::<i64, _>("total_fees_sent")?);
            t.total_miner_rewards_received = i128::from(r.try_get::<i64, _>("total_miner_rewards")?);
        }
        Ok(t)
    }

    /// The STX sums recomputed from the account's canonical operations up to `height` (all of
    /// them with `None`: what `stx_sums_kept` must equal).
    pub async fn stx_sums_at(&self, principal: &str, height: Option<u64>) -> Result<StxTotals, StoreError> {
        let rows = select(
            "SELECT op_type, CAST(COALESCE(SUM(CASE WHEN amount > 0 THEN amount ELSE 0 END), 0) AS BIGINT) AS plus, \
             CAST(COALESCE(SUM(CASE WHEN amount < 0 THEN -amount ELSE 0 END), 0) AS BIGINT) AS minus \
             FROM operations WHERE account = $1 AND canonical = true AND status = 'success' AND block_height <= $2 \
             AND asset_identifier IS NULL \
             GROUP BY op_type",
            vec![principal.into(), up_to(height).into()],
        )
        .fetch_all(self)
        .await?;
        let mut t = StxTotals::default();
        for r in rows {
            let (plus, minus): (i64, i64) = (r.try_get("plus")?, r.try_get("minus")?);
            let (plus, minus) = (i128::from(plus), i128::from(minus));
            match r.try_get::<String, _>("op_type")?.as_str() {
                "token_transfer" => {
                    t.total_sent += minus;
                    t.total_received += plus;
                }
                "mint" => t.total_received += plus,
                "burn" => t.total_sent += minus,
                "fee" => t.total_fees_sent += minus,
                "miner_reward" => t.total_miner_rewards_received += plus,
                _ => {}
            }
        }
        Ok(t)
    }

    async fn add_lock_state(
        &self,
        t: &mut StxTotals,
        principal: &str,
        height: Option<u64>,
    ) -> Result<(), StoreError> {
        let height = height.map(|h| i64::try_from(h).unwrap_or(i64::MAX));
        if let Some(b) = self.balance_row(principal, height).await? {
            t.locked = i128::from(b.locked);
            t.lock_tx_id = b.lock_tx_id;
            t.lock_height = u64_of(Some(b.lock_height)).unwrap_or(0);
            t.burnchain_lock_height = u64_of(Some(b.lock_burn_height)).unwrap_or(0);
            t.burnchain_unlock_height = u64_of(Some(b.unlock_burn_height)).unwrap_or(0);
        }
        Ok(())
    }

    /// One statement for the three kinds of pending rows (a statement is a round trip, and
    /// `/balances` and `/stx` ask this on every request): `k` 0 = sent (fee, and the amount of
    /// a transfer), 1 = sponsored (the incumbent charges a sponsored tx's fee to both its
    /// origin and its sponsor here), 2 = a transfer received.
    async fn mempool_delta_of(&self, principal: &str) -> Result<MempoolDelta, StoreError> {
        let mut d = MempoolDelta::default();
        let rows = select(
            "SELECT CAST(0 AS BIGINT) AS k, raw_tx, fee, tx_type FROM mempool_txs \
             WHERE sender_address = $1 AND pruned = false \
             UNION ALL SELECT CAST(1 AS BIGINT) AS k, '' AS raw_tx, fee, '' AS tx_type FROM mempool_txs \
             WHERE sponsor_address = $1 AND pruned = false AND sponsored = true \
             UNION ALL SELECT CAST(2 AS BIGINT) AS k, raw_tx, fee, '' AS tx_type FROM mempool_txs \
             WHERE token_transfer_recipient = $1 AND pruned = false",
            vec![principal.into()],
        )
        .fetch_all(self)
        .await?;
        for r in rows {
            match r.try_get::<i64, _>("k")? {
                0 => {
                    d.outbound += i128::from(r.try_get::<i64, _>("fee")?);
                    if r.try_get::<String, _>("tx_type")? == "token_transfer" {
                        d.outbound += transfer_amount(&r.try_get::<String, _>("raw_tx")?);
                    }
                }
                1 => d.outbound += i128::from(r.try_get::<i64, _>("fee")?),
                _ => d.inbound += transfer_amount(&r.try_get::<String, _>("raw_tx")?),
            }
        }
        Ok(d)
    }

    async fn asset_totals_at(
        &self,
        principal: &str,
        height: Option<u64>,
    ) -> Result<(Vec<AssetTotals>, Vec<AssetTotals>), StoreError> {
        match height {
            None => self.asset_totals_kept(principal).await,
            Some(_) => self.asset_totals_summed(principal, height).await,
        }
    }

    /// The tip's asset totals as the write path keeps them (`account_asset_totals`).
    pub async fn asset_totals_kept(
        &self,
        principal: &str,
    ) -> Result<(Vec<AssetTotals>, Vec<AssetTotals>), StoreError> {
        let rows = select(
            "SELECT asset_identifier, kind, total_sent, total_received FROM account_asset_totals \
             WHERE account = $1 AND events > 0",
            vec![principal.into()],
        )
        .fetch_all(self)
        .await?;
        let mut ft: BTreeMap<String, (i128, i128)> = BTreeMap::new();
        let mut nft: BTreeMap<String, (i128, i128)> = BTreeMap::new();
        for r in rows {
            let map = if r.try_get::<String, _>("kind")? == "nft" { &mut nft } else { &mut ft };
            map.insert(
                r.try_get("asset_identifier")?,
                (
                    ft_parse(&r.try_get::<String, _>("total_sent")?),
                    ft_parse(&r.try_get::<String, _>("total_received")?),
                ),
            );
        }
        Ok((asset_totals(ft), asset_totals(nft)))
    }

    /// The asset totals recomputed from the account's canonical events up to `height` (all of
    /// them with `None`: what `asset_totals_kept` must equal).
    pub async fn asset_totals_summed(
        &self,
        principal: &str,
        height: Option<u64>,
    ) -> Result<(Vec<AssetTotals>, Vec<AssetTotals>), StoreError> {
        let rows = select(
            "SELECT kind, asset_identifier, amount, 1 AS sent FROM events WHERE sender = $1 AND canonical = true \
             AND block_height <= $2 AND kind IN ('ft_transfer', 'ft_burn', 'nft_transfer', 'nft_burn') \
             UNION ALL \
             SELECT kind, asset_identifier, amount, 0 AS sent FROM events WHERE recipient = $1 AND canonical = true \
             AND block_height <= $2 AND kind IN ('ft_transfer', 'ft_mint', 'nft_transfer', 'nft_mint')",
            vec![principal.into(), up_to(height).into()],
        )
        .fetch_all(self)
        .await?;
        // asset → (sent, received), FTs and NFTs apart.
        let mut ft: BTreeMap<String, (i128, i128)> = BTreeMap::new();
        let mut nft: BTreeMap<String, (i128, i128)> = BTreeMap::new();
        for r in rows {
            let kind: String = r.try_get("kind")?;
            let asset: String = r.try_get::<Option<String>, _>("asset_identifier")?.unwrap_or_default();
            let sent = r.try_get::<i64, _>("sent")? != 0;
            let (map, n) = if kind.starts_with("nft_") {
                (&mut nft, 1)
            } else {
                (&mut ft, ft_parse(&r.try_get::<Option<String>, _>("amount")?.unwrap_or_default()))
            };
            let e = map.entry(asset).or_default();
            if sent {
                e.0 += n;
            } else {
                e.1 += n;
            }
        }
        Ok((asset_totals(ft), asset_totals(nft)))
    }

    async fn ft_balance_page(
        &self,
        principal: &str,
        token: Option<&str>,
        limit: u32,
        offset: u64,
    ) -> Result<(u64, Vec<(String, i128)>), StoreError> {
        let (filter, mut vals) = match token {
            Some(t) => ("account = $1 AND asset_identifier = $2", vec![principal.into(), t.into()]),
            // The incumbent lists positive balances only: not the zero rows it keeps, nor the
            // negatives a partial chain can leave.
            None => (
                "account = $1 AND balance > '000000000000000000000000000000000000000'",
                vec![principal.into()],
            ),
        };
        let count_sql = format!("SELECT CAST(COUNT(*) AS BIGINT) AS n FROM ft_balances WHERE {filter}");
        let total: i64 = select(&count_sql, vals.clone()).fetch_one(self).await?.try_get("n")?;
        let n = vals.len();
        // The incumbent orders by `LOWER(token)`; the token itself breaks its ties.
        let sql = format!(
            "SELECT asset_identifier, balance FROM ft_balances WHERE {filter} \
             ORDER BY LOWER(asset_identifier), asset_identifier LIMIT ${} OFFSET ${}",
            n + 1,
            n + 2
        );
        vals.push(i64::from(limit).into());
        vals.push(i64::try_from(offset).unwrap_or(i64::MAX).into());
        let rows = select(&sql, vals).fetch_all(self).await?;
        let page = rows
            .iter()
            .map(|r| Ok((r.try_get("asset_identifier")?, ft_parse(&r.try_get::<String, _>("balance")?))))
            .collect::<Result<_, sqlx::Error>>()?;
        Ok((u64::try_from(total).unwrap_or(0), page))
    }

    async fn nonce_state(&self, principal: &str, height: Option<u64>) -> Result<NonceState, StoreError> {
        if height.is_some() {
            let (origin, sponsor) = self.nonces_at(principal, up_to(height)).await?;
            return Ok(NonceState { last_executed: u64_of(origin.max(sponsor)), ..Default::default() });
        }
        // One statement: the highest canonical nonces as origin and sponsor (`nonces_at`, kind
        // 0), then the pending ones (kind 1).
        let rows = select(
            "SELECT CAST(0 AS BIGINT) AS k, \
               (SELECT nonce FROM txs WHERE sender_address = $1 AND canonical = true \
                  AND is_burnchain_op = false ORDER BY block_height DESC, nonce DESC LIMIT 1) AS n, \
               (SELECT sponsor_nonce FROM txs WHERE sponsor_address = $1 AND canonical = true \
                  ORDER BY block_height DESC, sponsor_nonce DESC LIMIT 1) AS s \
             UNION ALL \
             SELECT CAST(1 AS BIGINT) AS k, nonce AS n, CAST(NULL AS BIGINT) AS s FROM mempool_txs \
               WHERE sender_address = $1 AND pruned = false \
             UNION ALL \
             SELECT CAST(1 AS BIGINT) AS k, sponsor_nonce AS n, CAST(NULL AS BIGINT) AS s FROM mempool_txs \
               WHERE sponsor_address = $1 AND pruned = false",
            vec![principal.into()],
        )
        .fetch_all(self)
        .await?;
        let mut state = NonceState::default();
        for r in rows {
            let n: Option<i64> = r.try_get("n")?;
            if r.try_get::<i64, _>("k")? == 0 {
                let s: Option<i64> = r.try_get("s")?;
                state.last_executed = u64_of(n.max(s));
            } else if let Some(n) = u64_of(n) {
                state.mempool_nonces.push(n);
            }
        }
        state.last_mempool = state.mempool_nonces.iter().copied().max();
        Ok(state)
    }

    async fn ft_holder_page(
        &self,
        token: &str,
        limit: u32,
        offset: u64,
    ) -> Result<(u64, i128, Vec<FtHolder>), StoreError> {
        let page = vec![i64::from(limit).into(), i64::try_from(offset).unwrap_or(i64::MAX).into()];
        if token == "stx" {
            return self.stx_holder_page(page).await;
        }
        // Balances are u128 text, so the supply is summed here rather than in SQL.
        let all = select("SELECT balance FROM ft_balances WHERE asset_identifier = $1", vec![token.into()])
            .fetch_all(self)
            .await?;
        let supply = all
            .iter()
            .map(|r| r.try_get::<String, _>("balance").map(|b| ft_parse(&b)))
            .sum::<Result<i128, sqlx::Error>>()?;
        let mut vals = vec![token.into()];
        vals.extend(page);
        let rows = select(
            "SELECT account, balance FROM ft_balances WHERE asset_identifier = $1 \
             ORDER BY balance DESC, account LIMIT $2 OFFSET $3",
            vals,
        )
        .fetch_all(self)
        .await?;
        let holders = super::explorer_holders::ft_holders(&rows)?;
        // Negative balances (a history starting mid-chain) come last, by value.
        let non_negative =
            all.iter().filter(|r| r.try_get::<String, _>("balance").is_ok_and(|b| !b.starts_with('-')));
        let mut holders: Vec<FtHolder> = holders.into_iter().filter(|h| h.balance >= 0).collect();
        let tail = self
            .ft_negative_holders(token, non_negative.count() as u64, limit, offset, holders.len())
            .await?;
        holders.extend(tail);
        Ok((all.len() as u64, supply, holders))
    }
}

impl AddressReader for Store {
    async fn resolve_block(&self, at: &UntilBlock) -> Result<Option<u64>, ReadError> {
        match at {
            UntilBlock::Height(h) => Ok(Some(*h)),
            UntilBlock::Hash(hash) => {
                let r = select(
                    "SELECT block_height FROM blocks WHERE block_hash = $1 OR index_block_hash = $1 \
                     ORDER BY canonical DESC LIMIT 1",
                    vec![hash.into()],
                )
                .fetch_optional(self)
                .await
                .map_err(StoreError::from)?;
                Ok(r.map(|r| r.try_get::<i64, _>("block_height"))
                    .transpose()
                    .map_err(StoreError::from)?
                    .and_then(|h| u64::try_from(h).ok()))
            }
        }
    }

    async fn stx_totals(&self, principal: &str, height: Option<u64>) -> Result<StxTotals, ReadError> {
        Ok(self.stx_totals_at(principal, height).await?)
    }

    async fn mempool_delta(&self, principal: &str) -> Result<MempoolDelta, ReadError> {
        Ok(self.mempool_delta_of(principal).await?)
    }

    async fn asset_totals(
        &self,
        principal: &str,
        height: Option<u64>,
    ) -> Result<(Vec<AssetTotals>, Vec<AssetTotals>), ReadError> {
        Ok(self.asset_totals_at(principal, height).await?)
    }

    async fn ft_balances(
        &self,
        principal: &str,
        token: Option<&str>,
        limit: u32,
        offset: u64,
    ) -> Result<(u64, Vec<(String, i128)>), ReadError> {
        Ok(self.ft_balance_page(principal, token, limit, offset).await?)
    }

    async fn nonces(&self, principal: &str, height: Option<u64>) -> Result<NonceState, ReadError> {
        Ok(self.nonce_state(principal, height).await?)
    }

    async fn ft_holders(
        &self,
        token: &str,
        limit: u32,
        offset: u64,
    ) -> Result<(u64, i128, Vec<FtHolder>), ReadError> {
        Ok(self.ft_holder_page(token, limit, offset).await?)
    }

    async fn address_txs(
        &self,
        principal: &str,
        from: u64,
        to: Option<u64>,
        paging: Paging,
    ) -> Result<(u64, Vec<MinedTx>), ReadError> {
        let (total, rows) = self.address_txs_page(principal, false, from, to, paging).await?;
        Ok((total, self.page_rows_mined(rows).await?))
    }

    async fn address_txs_listed(
        &self,
        principal: &str,
        from: u64,
        to: Option<u64>,
        paging: Paging,
    ) -> Result<(u64, Vec<PageTx>), ReadError> {
        let (total, rows) = self.address_txs_page(principal, false, from, to, paging).await?;
        Ok((total, self.page_rows_listed(rows).await?))
    }

    async fn address_txs_with_transfers(
        &self,
        principal: &str,
        from: u64,
        to: Option<u64>,
        paging: Option<Paging>,
    ) -> Result<(u64, Vec<MinedTx>), ReadError> {
        Ok(self.with_transfers_page(principal, from, to, paging).await?)
    }

    async fn principal_tx_events(
        &self,
        principal: &str,
        txs: &[MinedTx],
    ) -> Result<Vec<Vec<TxEvent>>, ReadError> {
        let sql = format!(
            "SELECT {EVENT_COLUMNS} FROM events WHERE tx_id = $1 AND index_block_hash = $2 \
             AND microblock_hash = $3 AND (sender = $4 OR recipient = $4) AND kind <> 'contract_log' \
             AND kind <> 'stx_lock' ORDER BY event_index DESC"
        );
        let mut out = Vec::with_capacity(txs.len());
        for t in txs {
            let vals = vec![
                (&t.tx_id).into(),
                (&t.index_block_hash).into(),
                (&t.microblock_hash).into(),
                principal.into(),
            ];
            let rows = select(&sql, vals).fetch_all(self).await.map_err(StoreError::from)?;
            out.push(rows.iter().map(tx_event).collect::<Result<_, _>>().map_err(StoreError::from)?);
        }
        Ok(out)
    }

    async fn address_assets(
        &self,
        principal: &str,
        height: Option<u64>,
        paging: Paging,
    ) -> Result<(u64, Vec<TxEvent>), ReadError> {
        Ok(self.address_assets_page(principal, height, paging).await?)
    }

    async fn stx_inbound(
        &self,
        principal: &str,
        from: u64,
        to: Option<u64>,
        paging: Paging,
    ) -> Result<(u64, Vec<StxInbound>), ReadError> {
        Ok(self.stx_inbound_page(principal, from, to, paging).await?)
    }

    async fn principal_activity(
        &self,
        principal: &str,
        mempool: bool,
    ) -> Result<PrincipalActivity, ReadError> {
        Ok(self.principal_activity_of(principal, mempool).await?)
    }
}

/// A principal's entry in `account_txs`, with its order key (height, microblock sequence, index).
struct ListedEntry {
    tx_id: String,
    index_block_hash: String,
    key: [i64; 3],
}

/// The newest-first order of a principal's listed transactions, over the columns of
/// `account_txs` (`a`) or of a page picked from it (`p`).
fn listed_order(t: &str) -> String {
    format!("{t}.block_height DESC, {t}.seq DESC, {t}.tx_index DESC")
}

/// The v1 address page of a principal's listed transactions, picked from
/// `account_txs_listed_seq` (PostgreSQL) or `account_txs_listed_rid` (SQLite) alone: `$1` the
/// principal, heights `$2..=$3`, `$4` rows after skipping `$5`; with the boot block's
/// transactions, each half (`boot` false, true) read in order up to `$6` (= `$4 + $5`) rows and
/// the two merged. Its columns the order keys and `tx_id`, `index_block_hash` (`by_key`) or
/// `tx_rid` (SQLite, on the index), in its order; and the order of its rows over `p`.
fn listed_page(with_boot: bool, by_key: bool) -> (String, String) {
    let ids = if by_key { "a.tx_id, a.index_block_hash" } else { "a.tx_rid" };
    let half = |boot: bool, limit: &str| {
        format!(
            "SELECT {ids}, a.block_height, a.seq, a.tx_index FROM account_txs a \
             WHERE a.principal = $1 AND a.listed = true AND a.canonical = true AND a.boot = {boot} \
             AND a.block_height >= $2 AND a.block_height <= $3 ORDER BY {} {limit}",
            listed_order("a")
        )
    };
    let page = if with_boot {
        format!(
            "SELECT * FROM (SELECT * FROM ({}) h0 UNION ALL SELECT * FROM ({}) h1) u \
             ORDER BY {} LIMIT $4 OFFSET $5",
            half(false, "LIMIT $6"),
            half(true, "LIMIT $6"),
            listed_order("u")
        )
    } else {
        half(false, "LIMIT $4 OFFSET $5")
    };
    (page, listed_order("p"))
}

/// SQLite's two statements of a v1 address page ([`listed_page`]), which depend on `with_boot`
/// alone: built once. `pointed`: the page's entries with their `tx_rid`; `by_key`: the same
/// page's `txs` rowids (`page_rid`) found by key, with its order keys (`k_h`, `k_s`, `k_i`).
struct LitePageSql {
    pointed: String,
    by_key: String,
}

fn lite_page_sql(with_boot: bool) -> &'static LitePageSql {
    static SQL: [std::sync::OnceLock<LitePageSql>; 2] =
        [std::sync::OnceLock::new(), std::sync::OnceLock::new()];
    SQL[usize::from(with_boot)].get_or_init(|| {
        let (page, _) = listed_page(with_boot, true);
        LitePageSql {
            pointed: listed_page(with_boot, false).0,
            by_key: format!(
                "SELECT t.rowid AS page_rid, p.block_height AS k_h, p.seq AS k_s, p.tx_index AS k_i \
                 FROM ({page}) p JOIN txs t ON t.tx_id = p.tx_id AND t.index_block_hash = p.index_block_hash"
            ),
        }
    })
}

/// `LIMIT` / `OFFSET` values of a page.
fn page_vals(paging: Paging) -> [Val; 2] {
    [i64::from(paging.limit).into(), i64::try_from(paging.offset).unwrap_or(i64::MAX).into()]
}

fn height_val(h: u64) -> Val {
    i64::try_from(h).unwrap_or(i64::MAX).into()
}

/// The send-many-memo contract whose calls `stx_inbound` reports as `bulk-send`.
fn send_many_contract(network: Network) -> &'static str {
    match network {
        Network::Mainnet => "SP3FBR2AGK5H9QBDH3EEN6DF8EK8JY7RX8QJ5SVTE.send-many-memo",
        Network::Testnet => "STR8P3RD1EHA8AA37ERSSSZSWKS9T2GYQFGXNA4C.send-many-memo",
    }
}

/// The memo of a token-transfer transaction, `0x` hex.
fn transfer_memo(raw_tx: &str) -> String {
    let tx = stacks_codec::decode_hex(raw_tx).ok().and_then(|b| Transaction::deserialize(&b).ok());
    match tx.map(|t| t.payload) {
        Some(Payload::TokenTransfer { memo, .. }) => format!("0x{}", hex::encode(memo)),
        _ => "0x".into(),
    }
}

impl Store {
    async fn principal_activity_of(
        &self,
        principal: &str,
        mempool: bool,
    ) -> Result<PrincipalActivity, StoreError> {
        // One statement: the newest listed transaction (one `account_txs_listed_seq` seek, or
        // `account_txs_listed_rid` on SQLite:
        // `account_txs.seq` and `canonical` are the tx row's, migration 0041), the newest
        // mempool transaction when asked, and the lock.
        let mempool_sql = if mempool {
            "(SELECT tx_id FROM mempool_txs WHERE pruned = false \
             AND (sender_address = $1 OR sponsor_address = $1 OR token_transfer_recipient = $1) \
             ORDER BY receipt_time DESC, tx_id DESC LIMIT 1)"
        } else {
            "CAST(NULL AS TEXT)"
        };
        let r = select(
            &format!(
                "SELECT (SELECT a.tx_id FROM account_txs a \
                 WHERE a.principal = $1 AND a.listed = true AND a.canonical = true AND a.boot = false \
                 ORDER BY a.block_height DESC, a.seq DESC, a.tx_index DESC LIMIT 1) AS last_tx, \
                 {mempool_sql} AS last_mempool_tx, \
                 (SELECT unlock_burn_height FROM stx_accounts WHERE account = $1 AND locked <> 0) AS unlock"
            ),
            vec![principal.into()],
        )
        .fetch_one(self)
        .await?;
        Ok(PrincipalActivity {
            last_tx_id: r.try_get("last_tx")?,
            last_mempool_tx_id: r.try_get("last_mempool_tx")?,
            pox_state: r.try_get::<Option<i64>, _>("unlock")?.map(|h| h.to_string()),
        })
    }

    /// The total and the block holding a deep `offset` come from the running counts kept at
    /// ingest (`account_block_txs`, migration 0017; `totals::add_tx_lists`): three index seeks
    /// whatever the principal's history or the offset. Only the page itself (at most one block's
    /// entries plus `limit`) walks `account_txs_listed_seq` (`_rid` on SQLite), in the list's order (the microblock
    /// sequence is `account_txs.seq`, migration 0041), and only the page's rows are joined to
    /// `txs` and `blocks`. The boot block's transactions only `with_boot`.
    async fn address_txs_page(
        &self,
        principal: &str,
        with_boot: bool,
        from: u64,
        to: Option<u64>,
        paging: Paging,
    ) -> Result<(u64, PageRows), StoreError> {
        let to = to.map_or(i64::MAX, |h| i64::try_from(h).unwrap_or(i64::MAX));
        let from = i64::try_from(from).unwrap_or(i64::MAX);
        let offset = i64::try_from(paging.offset).unwrap_or(i64::MAX);
        // Running counts (listed entries, boot ones) of the principal's highest canonical block
        // at or below a height: the entries up to it.
        let counts_upto = |h: i64| async move {
            let row = select(
                "SELECT block_height, cum, cum_boot FROM account_block_txs WHERE principal = $1 \
                 AND block_height <= $2 ORDER BY block_height DESC LIMIT 1",
                vec![principal.into(), h.into()],
            )
            .fetch_optional(self)
            .await?;
            row.map(|r| Ok::<_, sqlx::Error>((r.try_get::<i64, _>("cum")?, r.try_get::<i64, _>("cum_boot")?)))
                .transpose()
        };
        // One statement: the running counts up to `to`, and the block holding the entry at
        // `offset` (newest first): the lowest whose running count passes the entries below
        // it (`cum` strictly grows: every row has entries). Those are `total - 1 - offset`,
        // i.e. `cum(to) - 1 - offset` counted from the first entry, whatever `from` and the
        // boot entries leave out. (`offset` bounded: past every count, the page is empty.)
        const AT: &str = "FROM account_block_txs s WHERE s.principal = $1 AND s.cum > h.cum - 1 - $3 \
                          ORDER BY s.cum LIMIT 1";
        let row = select(
            &format!(
                "SELECT h.cum, h.cum_boot, (SELECT s.block_height {AT}) AS start_height, \
                 (SELECT s.cum {AT}) AS start_cum \
                 FROM (SELECT cum, cum_boot FROM account_block_txs WHERE principal = $1 \
                 AND block_height <= $2 ORDER BY block_height DESC LIMIT 1) h"
            ),
            vec![principal.into(), to.into(), offset.min(1 << 40).into()],
        )
        .fetch_optional(self)
        .await?;
        let Some(row) = row else { return Ok((0, PageRows::Txs(Vec::new()))) };
        let hi: (i64, i64) = (row.try_get("cum")?, row.try_get("cum_boot")?);
        // Boot entries are all in block 1, below every other: `cum_boot` is the same on every row.
        let boot = if with_boot { 0 } else { hi.1 };
        let lo = if from > 0 { counts_upto(from - 1).await?.map_or(0, |c| c.0 - boot) } else { 0 };
        let total = hi.0 - boot - lo;
        let total_u = u64::try_from(total).unwrap_or_default();
        if offset >= total {
            return Ok((total_u, PageRows::Txs(Vec::new())));
        }
        let (Some(start), Some(start_cum)) =
            (row.try_get::<Option<i64>, _>("start_height")?, row.try_get::<Option<i64>, _>("start_cum")?)
        else {
            return Err(StoreError::Corrupt(format!(
                "no running count of {principal} passes entry {offset}"
            )));
        };
        let above = total - (start_cum - boot - lo);
        let skip = offset - above;
        let limit = i64::from(paging.limit);
        let mut vals = vec![principal.into(), from.into(), start.into(), limit.into(), skip.into()];
        if with_boot {
            vals.push(limit.saturating_add(skip).into());
        }
        if self.lite().is_some() {
            // SQLite: the page's `txs` rowids with their order keys (no sort of joined rows
            // nor `blocks` seek in SQL: 2,594 → 1,133 VM steps for realnode-2's hot page),
            // ordered here, then the rows whole (`mined_page` does the same after its sort).
            // Found by key only when the entries' own pointers (`tx_rid`) are missing or stale.
            let sql = lite_page_sql(with_boot);
            let picked = select(&sql.pointed, vals.clone()).fetch_all(self).await?;
            let mut rows = Vec::with_capacity(picked.len());
            for r in &picked {
                let Some(rid) = r.try_get::<Option<i64>, _>("tx_rid")? else {
                    return Ok((total_u, self.page_rids_by_key(&sql.by_key, vals).await?));
                };
                let at = [r.try_get("block_height")?, r.try_get("seq")?, r.try_get("tx_index")?];
                rows.push((rid, at));
            }
            return Ok((total_u, PageRows::Pointed { rows, by_key: (&sql.by_key, vals) }));
        }
        let (page, order) = listed_page(with_boot, true);
        let from_where = format!(
            "FROM ({page}) p JOIN txs t ON t.tx_id = p.tx_id AND t.index_block_hash = p.index_block_hash \
             JOIN blocks b ON b.index_block_hash = t.index_block_hash"
        );
        let page = Paging { limit: paging.limit, offset: 0 };
        let (_, txs) = self.mined_page(&from_where, &order, vals, page, false).await?;
        Ok((total_u, PageRows::Txs(txs)))
    }

    /// The page of v1 `transactions_with_transfers`: the listed entries (`address_txs_page`,
    /// boot block included) less those where `principal` is only the sponsor. `paging` `None`:
    /// every entry in range (the incumbent's `height=N` answer, which ignores limit and offset).
    ///
    /// The sponsor-only entries (`sponsor_only_keys`) are few, so the page is the listed one
    /// widened by their count: of the listed entries from `offset` on, those not sponsor-only,
    /// after skipping as many as there are sponsor-only entries above the first one.
    async fn with_transfers_page(
        &self,
        principal: &str,
        from: u64,
        to: Option<u64>,
        paging: Option<Paging>,
    ) -> Result<(u64, Vec<MinedTx>), StoreError> {
        let excluded = self.sponsor_only_keys(principal, from, to).await?;
        // Every entry in range: one block's, so an unbounded limit is bounded by its size.
        let paging = paging.unwrap_or(Paging { limit: u32::MAX, offset: 0 });
        if excluded.is_empty() {
            let (total, rows) = self.address_txs_page(principal, true, from, to, paging).await?;
            return Ok((total, self.page_rows_mined(rows).await?));
        }
        let k = u32::try_from(excluded.len()).unwrap_or(u32::MAX);
        let wide = Paging { limit: paging.limit.saturating_add(k), offset: paging.offset };
        let (total, rows) = self.address_txs_page(principal, true, from, to, wide).await?;
        let total = total.saturating_sub(excluded.len() as u64);
        let window = self.page_rows_mined(rows).await?;
        let Some(first) = window.first() else { return Ok((total, window)) };
        let first_key = self.listed_key(principal, &first.tx_id, &first.index_block_hash).await?;
        let above = excluded.iter().filter(|e| e.key > first_key).count();
        let page = window
            .into_iter()
            .filter(|t| {
                !excluded.iter().any(|e| e.tx_id == t.tx_id && e.index_block_hash == t.index_block_hash)
            })
            .skip(above)
            .take(paging.limit as usize)
            .collect();
        Ok((total, page))
    }

    /// The canonical listed entries of `principal` in blocks `from..=to` whose transaction it
    /// only sponsored: not its sender, token-transfer recipient or contract, and no party of
    /// its STX, FT or NFT events. Found through the sponsor index of `txs`.
    async fn sponsor_only_keys(
        &self,
        principal: &str,
        from: u64,
        to: Option<u64>,
    ) -> Result<Vec<ListedEntry>, StoreError> {
        let rows = select(
            "SELECT a.tx_id, a.index_block_hash, a.block_height, a.seq, a.tx_index FROM txs t \
             JOIN account_txs a ON a.principal = $1 AND a.tx_id = t.tx_id \
             AND a.index_block_hash = t.index_block_hash \
             WHERE t.sponsor_address = $1 AND t.canonical = true AND t.sponsored = true \
             AND t.block_height >= $2 AND t.block_height <= $3 \
             AND a.listed = true AND a.canonical = true AND t.sender_address <> $1 \
             AND COALESCE(t.token_transfer_recipient, '') <> $1 AND COALESCE(t.contract_id, '') <> $1 \
             AND NOT EXISTS (SELECT 1 FROM events e WHERE e.tx_id = t.tx_id \
               AND e.index_block_hash = t.index_block_hash AND e.microblock_hash = t.microblock_hash \
               AND (e.sender = $1 OR e.recipient = $1) AND e.kind <> 'contract_log' AND e.kind <> 'stx_lock')",
            vec![principal.into(), height_val(from), up_to(to).into()],
        )
        .fetch_all(self)
        .await?;
        rows.iter()
            .map(|r| {
                Ok(ListedEntry {
                    tx_id: r.try_get("tx_id")?,
                    index_block_hash: r.try_get("index_block_hash")?,
                    key: [r.try_get("block_height")?, r.try_get("seq")?, r.try_get("tx_index")?],
                })
            })
            .collect::<Result<_, sqlx::Error>>()
            .map_err(StoreError::from)
    }

    /// The order key (height, microblock sequence, index) of `principal`'s entry for a
    /// transaction, as its listed pages order it.
    async fn listed_key(
        &self,
        principal: &str,
        tx_id: &str,
        index_block_hash: &str,
    ) -> Result<[i64; 3], StoreError> {
        let r = select(
            "SELECT block_height, seq, tx_index FROM account_txs WHERE principal = $1 AND tx_id = $2 \
             AND index_block_hash = $3",
            vec![principal.into(), tx_id.into(), index_block_hash.into()],
        )
        .fetch_one(self)
        .await?;
        Ok([r.try_get("block_height")?, r.try_get("seq")?, r.try_get("tx_index")?])
    }

    async fn address_assets_page(
        &self,
        principal: &str,
        height: Option<u64>,
        paging: Paging,
    ) -> Result<(u64, Vec<TxEvent>), StoreError> {
        let filter = "FROM events e WHERE (e.sender = $1 OR e.recipient = $1) AND e.kind <> 'contract_log' \
             AND e.canonical = true AND e.block_height <= $2";
        let vals = vec![principal.into(), up_to(height).into()];
        let count = select(&format!("SELECT COUNT(*) AS n {filter}"), vals.clone()).fetch_one(self).await?;
        let total = u64::try_from(count.try_get::<i64, _>("n")?).unwrap_or_default();
        let cols =
            EVENT_COLUMNS.split(", ").map(|c| format!("e.{}", c.trim())).collect::<Vec<_>>().join(", ");
        let sql = format!(
            "SELECT {cols} {filter} ORDER BY e.block_height DESC, \
             (SELECT {SEQ} FROM txs t WHERE t.tx_id = e.tx_id AND t.index_block_hash = e.index_block_hash \
              AND t.microblock_hash = e.microblock_hash) DESC, e.tx_index DESC, e.event_index DESC \
             LIMIT $3 OFFSET $4"
        );
        let mut vals = vals;
        vals.extend(page_vals(paging));
        let rows = select(&sql, vals).fetch_all(self).await?;
        Ok((total, rows.iter().map(tx_event).collect::<Result<_, _>>()?))
    }

    /// The incumbent's three sources of inbound STX, merged newest first. Each branch seeks an
    /// index on the recipient (`txs_recipient`, `events_recipient`).
    async fn stx_inbound_page(
        &self,
        principal: &str,
        from: u64,
        to: Option<u64>,
        paging: Paging,
    ) -> Result<(u64, Vec<StxInbound>), StoreError> {
        let inbound = "SELECT 'stx-transfer' AS transfer_type, t.sender_address AS sender, \
               CAST(t.token_transfer_amount AS TEXT) AS amount, t.raw_tx AS raw_tx, NULL AS memo, \
               t.block_height AS block_height, COALESCE(t.microblock_sequence, 2147483647) AS seq, \
               t.tx_index AS tx_index, t.tx_id AS tx_id \
             FROM txs t WHERE t.token_transfer_recipient = $1 AND t.canonical = true \
               AND t.tx_type = 'token_transfer' AND t.block_height >= $2 AND t.block_height <= $3 \
             UNION ALL \
             SELECT 'stx-transfer-memo', e.sender, e.amount, NULL, e.memo, e.block_height, \
               COALESCE(t.microblock_sequence, 2147483647), e.tx_index, e.tx_id \
             FROM events e JOIN txs t ON t.tx_id = e.tx_id AND t.index_block_hash = e.index_block_hash \
               AND t.microblock_hash = e.microblock_hash \
             WHERE e.recipient = $1 AND e.canonical = true AND e.kind = 'stx_transfer' \
               AND e.memo IS NOT NULL AND e.memo <> '' AND e.block_height >= $2 AND e.block_height <= $3 \
             UNION ALL \
             SELECT 'bulk-send', e.sender, e.amount, NULL, l.value_hex, e.block_height, \
               COALESCE(t.microblock_sequence, 2147483647), e.tx_index, e.tx_id \
             FROM events e JOIN events l ON l.tx_id = e.tx_id AND l.index_block_hash = e.index_block_hash \
               AND l.microblock_hash = e.microblock_hash AND l.event_index = e.event_index + 1 \
             JOIN txs t ON t.tx_id = e.tx_id AND t.index_block_hash = e.index_block_hash \
               AND t.microblock_hash = e.microblock_hash \
             WHERE e.recipient = $1 AND e.canonical = true AND e.kind = 'stx_transfer' \
               AND l.kind = 'contract_log' AND l.contract_identifier = $4 \
               AND e.block_height >= $2 AND e.block_height <= $3";
        let vals = vec![
            principal.into(),
            height_val(from),
            to.map_or(i64::MAX.into(), height_val),
            send_many_contract(self.network()).into(),
        ];
        let count =
            select(&format!("SELECT COUNT(*) AS n FROM ({inbound}) x"), vals.clone()).fetch_one(self).await?;
        let total = u64::try_from(count.try_get::<i64, _>("n")?).unwrap_or_default();
        let sql = format!(
            "SELECT * FROM ({inbound}) x \
             ORDER BY block_height DESC, seq DESC, tx_index DESC, transfer_type LIMIT $5 OFFSET $6"
        );
        let mut vals = vals;
        vals.extend(page_vals(paging));
        let rows = select(&sql, vals).fetch_all(self).await?;
        let page = rows
            .iter()
            .map(|r| {
                let memo = match r.try_get::<Option<String>, _>("memo")? {
                    Some(m) => m,
                    None => transfer_memo(&r.try_get::<Option<String>, _>("raw_tx")?.unwrap_or_default()),
                };
                Ok(StxInbound {
                    sender: r.try_get("sender")?,
                    amount: r.try_get::<Option<String>, _>("amount")?.unwrap_or_default(),
                    memo,
                    block_height: u64_of(Some(r.try_get("block_height")?)).unwrap_or(0),
                    tx_id: r.try_get("tx_id")?,
                    transfer_type: r.try_get("transfer_type")?,
                    tx_index: u32::try_from(r.try_get::<i64, _>("tx_index")?).unwrap_or(0),
                })
            })
            .collect::<Result<Vec<StxInbound>, sqlx::Error>>()?;
        Ok((total, self.show_boot_inbound(page).await?))
    }

    /// The boot block's rows with the index the incumbent shows (`BootShift`).
    async fn show_boot_inbound(&self, mut page: Vec<StxInbound>) -> Result<Vec<StxInbound>, StoreError> {
        if !page.iter().any(|r| r.block_height == 1) {
            return Ok(page);
        }
        if let Some(s) = self.boot_shift(None).await? {
            for r in page.iter_mut().filter(|r| r.block_height == 1) {
                r.tx_index = u32::try_from(s.shown_index(i64::from(r.tx_index))).unwrap_or(r.tx_index);
            }
        }
        Ok(page)
    }
}
