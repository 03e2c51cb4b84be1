//! Read methods (the API helpers will add more). Every query here is served by an index; none
//! scans history.

use std::collections::BTreeMap;

use super::db_row::DbRow;
use super::rows::{account_state, ACCOUNT_STATE_COLS};
use super::sql::{get_bool, select};
use super::{lite, Store, StoreError};
use crate::events::RawEvent;
use crate::ledger::AccountState;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockInfo {
    pub index_block_hash: String,
    pub block_hash: String,
    pub block_height: i64,
    pub parent_index_block_hash: String,
    pub burn_block_height: i64,
    pub tx_count: i64,
    pub canonical: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxInfo {
    pub tx_id: String,
    /// `""` for a streamed, not yet anchored microblock transaction.
    pub index_block_hash: String,
    pub block_height: i64,
    pub tx_index: i64,
    pub tx_type: String,
    pub status: String,
    pub canonical: bool,
    pub microblock_hash: String,
    pub sender_address: String,
    pub nonce: i64,
    pub fee: i64,
    pub event_count: i64,
}

/// Canonical issuance and destruction of STX, from the operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Supply {
    pub minted: i64,
    pub miner_rewards: i64,
    pub burned: i64,
    pub fees: i64,
}

impl Supply {
    /// STX in accounts: mints and miner rewards, less burns and fees (fees leave circulation
    /// until they come back inside a miner reward).
    pub fn total(&self) -> i64 {
        self.minted + self.miner_rewards - self.burned - self.fees
    }
}

/// How an account used its nonce on the canonical chain (as origin or sponsor).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NonceUsage {
    pub account: String,
    pub tx_count: i64,
    pub distinct_nonces: i64,
    pub min_nonce: i64,
    pub max_nonce: i64,
}

const BLOCK_INFO: &str = "SELECT index_block_hash, block_hash, block_height, parent_index_block_hash, \
    burn_block_height, tx_count, (CASE WHEN canonical THEN 1 ELSE 0 END) AS canonical FROM blocks";

fn block_info(r: &DbRow) -> Result<BlockInfo, sqlx::Error> {
    Ok(BlockInfo {
        index_block_hash: r.try_get("index_block_hash")?,
        block_hash: r.try_get("block_hash")?,
        block_height: r.try_get("block_height")?,
        parent_index_block_hash: r.try_get("parent_index_block_hash")?,
        burn_block_height: r.try_get("burn_block_height")?,
        tx_count: r.try_get("tx_count")?,
        canonical: get_bool(r, "canonical")?,
    })
}

impl Store {
    pub(super) async fn read_raw_events_after(
        &self,
        after: Option<i64>,
        limit: usize,
    ) -> Result<Vec<RawEvent>, StoreError> {
        let rows = select(
            "SELECT id, receive_timestamp, event_path, payload FROM raw_events WHERE id > $1 ORDER BY id LIMIT $2",
            vec![after.unwrap_or(i64::MIN).into(), (limit.min(i64::MAX as usize) as i64).into()],
        )
        .fetch_all(self)
        .await?;
        Ok(rows
            .iter()
            .map(|r| {
                Ok(RawEvent {
                    id: r.try_get("id")?,
                    receive_timestamp: r.try_get("receive_timestamp")?,
                    path: r.try_get("event_path")?,
                    payload: r.try_get("payload")?,
                })
            })
            .collect::<Result<_, sqlx::Error>>()?)
    }

    pub(super) async fn read_last_event_id(&self) -> Result<Option<i64>, StoreError> {
        let row =
            select("SELECT id FROM raw_events ORDER BY id DESC LIMIT 1", vec![]).fetch_optional(self).await?;
        Ok(row.map(|r| r.try_get("id")).transpose()?)
    }
}

impl Store {
    /// Every stored block at `height` (canonical first).
    pub async fn blocks_at_height(&self, height: i64) -> Result<Vec<BlockInfo>, StoreError> {
        let sql = format!("{BLOCK_INFO} WHERE block_height = $1 ORDER BY canonical DESC, index_block_hash");
        let rows = select(&sql, vec![height.into()]).fetch_all(self).await?;
        Ok(rows.iter().map(block_info).collect::<Result<_, _>>()?)
    }

    /// The canonical block at `height`.
    pub async fn canonical_block_at(&self, height: i64) -> Result<Option<BlockInfo>, StoreError> {
        Ok(self.blocks_at_height(height).await?.into_iter().find(|b| b.canonical))
    }

    /// A block by its block hash or index block hash (0x hex).
    pub async fn block_by_hash(&self, hash: &str) -> Result<Option<BlockInfo>, StoreError> {
        let h = crate::ledger::normalize_hex(hash);
        let sql = format!(
            "{BLOCK_INFO} WHERE index_block_hash = $1 OR block_hash = $1 ORDER BY canonical DESC LIMIT 1"
        );
        Ok(select(&sql, vec![h.into()]).fetch_optional(self).await?.as_ref().map(block_info).transpose()?)
    }

    /// Every stored row of a transaction: canonical first, then other forks, then a streamed
    /// microblock preview.
    pub async fn tx(&self, tx_id: &str) -> Result<Vec<TxInfo>, StoreError> {
        let rows = select(
            "SELECT tx_id, index_block_hash, block_height, tx_index, tx_type, status, \
             (CASE WHEN canonical THEN 1 ELSE 0 END) AS canonical, microblock_hash, \
             sender_address, nonce, fee, event_count FROM txs WHERE tx_id = $1 \
             ORDER BY canonical DESC, block_height DESC, index_block_hash DESC",
            vec![crate::ledger::normalize_hex(tx_id).into()],
        )
        .fetch_all(self)
        .await?;
        Ok(rows
            .iter()
            .map(|r| {
                Ok(TxInfo {
                    tx_id: r.try_get("tx_id")?,
                    index_block_hash: r.try_get("index_block_hash")?,
                    block_height: r.try_get("block_height")?,
                    tx_index: r.try_get("tx_index")?,
                    tx_type: r.try_get("tx_type")?,
                    status: r.try_get("status")?,
                    canonical: get_bool(r, "canonical")?,
                    microblock_hash: r.try_get("microblock_hash")?,
                    sender_address: r.try_get("sender_address")?,
                    nonce: r.try_get("nonce")?,
                    fee: r.try_get("fee")?,
                    event_count: r.try_get("event_count")?,
                })
            })
            .collect::<Result<_, sqlx::Error>>()?)
    }

    /// `account`'s row of the STX balance index after the canonical block at `height` (the tip
    /// when `None`): `stx_accounts` at the tip, the `stx_balances` history below it, both kept
    /// by the write path from the account's operations. The one read behind every surface's
    /// STX balance (Rosetta, `/v2/accounts`, `/extended`); `None` for an account never touched.
    /// One index seek either way.
    pub(crate) async fn balance_row(
        &self,
        account: &str,
        height: Option<i64>,
    ) -> Result<Option<AccountState>, StoreError> {
        const COLS: &str = ACCOUNT_STATE_COLS;
        let row = match height {
            None => select(&format!("SELECT {COLS} FROM stx_accounts WHERE account = $1"), vec![account.into()])
                .fetch_optional(self)
                .await?,
            Some(h) => select(
                &format!(
                    "SELECT {COLS} FROM stx_balances WHERE account = $1 AND canonical = true AND block_height <= $2 \
                     ORDER BY block_height DESC LIMIT 1"
                ),
                vec![account.into(), h.into()],
            )
            .fetch_optional(self)
            .await?,
        };
        Ok(row.as_ref().map(account_state).transpose()?)
    }

    /// `(liquid, locked)` of `account` after the canonical block at `height` (the tip when
    /// `None`); `(0, 0)` for an account never touched.
    pub async fn balance(&self, account: &str, height: Option<i64>) -> Result<(i64, i64), StoreError> {
        Ok(self.balance_row(account, height).await?.map_or((0, 0), |b| (b.liquid, b.locked)))
    }

    /// `(Σ amount, Σ locked_delta)` of `account`'s canonical successful operations.
    pub async fn operations_sum(&self, account: &str) -> Result<(i64, i64), StoreError> {
        let r = select(
            "SELECT CAST(COALESCE(SUM(amount), 0) AS BIGINT) AS liquid, CAST(COALESCE(SUM(locked_delta), 0) AS BIGINT) AS locked \
             FROM operations WHERE account = $1 AND canonical = true AND status = 'success' AND asset_identifier IS NULL",
            vec![account.into()],
        )
        .fetch_one(self)
        .await?;
        Ok((r.try_get("liquid")?, r.try_get("locked")?))
    }

    /// Every account with a balance state, with its tip `(liquid, locked)`.
    pub async fn accounts(&self) -> Result<Vec<(String, i64, i64)>, StoreError> {
        let rows = select("SELECT account, liquid, locked FROM stx_accounts ORDER BY account", vec![])
            .fetch_all(self)
            .await?;
        Ok(rows
            .iter()
            .map(|r| Ok((r.try_get("account")?, r.try_get("liquid")?, r.try_get("locked")?)))
            .collect::<Result<_, sqlx::Error>>()?)
    }

    /// Accounts with canonical operations (whether or not their balance is zero).
    pub async fn operation_accounts(&self) -> Result<Vec<String>, StoreError> {
        let rows = select(
            "SELECT DISTINCT account FROM operations WHERE canonical = true AND status = 'success' AND asset_identifier IS NULL ORDER BY account",
            vec![],
        )
        .fetch_all(self)
        .await?;
        Ok(rows.iter().map(|r| r.try_get("account")).collect::<Result<_, _>>()?)
    }

    pub async fn supply(&self) -> Result<Supply, StoreError> {
        let rows = select(
            "SELECT op_type, CAST(COALESCE(SUM(amount), 0) AS BIGINT) AS total FROM operations \
             WHERE canonical = true AND status = 'success' AND op_type IN ('mint', 'miner_reward', 'burn', 'fee') GROUP BY op_type",
            vec![],
        )
        .fetch_all(self)
        .await?;
        let mut s = Supply::default();
        for r in rows {
            let total: i64 = r.try_get("total")?;
            match r.try_get::<String, _>("op_type")?.as_str() {
                "mint" => s.minted = total,
                "miner_reward" => s.miner_rewards = total,
                "burn" => s.burned = -total,
                "fee" => s.fees = -total,
                _ => {}
            }
        }
        Ok(s)
    }

    /// The highest nonce `account` used as origin (burnchain operations aside) and as sponsor in
    /// canonical transactions at or below `height`, `(origin, sponsor)`.
    ///
    /// On the canonical chain an account's nonces grow with the block (and within a block), so
    /// the highest is the last transaction's: one seek down `txs_sender_height` /
    /// `txs_sponsor_height` (migration 0014) instead of a `MAX` over every row up to `height`,
    /// which the SQLite planner answered by walking all canonical transactions.
    pub(crate) async fn nonces_at(
        &self,
        account: &str,
        height: i64,
    ) -> Result<(Option<i64>, Option<i64>), StoreError> {
        let r = select(
            "SELECT \
               (SELECT nonce FROM txs WHERE sender_address = $1 AND canonical = true \
                  AND block_height <= $2 AND is_burnchain_op = false \
                  ORDER BY block_height DESC, nonce DESC LIMIT 1) AS n, \
               (SELECT sponsor_nonce FROM txs WHERE sponsor_address = $1 AND canonical = true \
                  AND block_height <= $2 \
                  ORDER BY block_height DESC, sponsor_nonce DESC LIMIT 1) AS s",
            vec![account.into(), height.into()],
        )
        .fetch_one(self)
        .await?;
        Ok((r.try_get("n")?, r.try_get("s")?))
    }

    /// The next nonce of `account`: one past the highest nonce it used as origin or sponsor
    /// in a canonical transaction (0 if none).
    pub async fn next_nonce(&self, account: &str) -> Result<i64, StoreError> {
        let r = select(
            "SELECT CAST(COALESCE(MAX(n), -1) AS BIGINT) AS n FROM ( \
               SELECT MAX(nonce) AS n FROM txs WHERE sender_address = $1 AND canonical = true AND is_burnchain_op = false \
               UNION ALL \
               SELECT MAX(sponsor_nonce) AS n FROM txs WHERE sponsor_address = $1 AND canonical = true) m",
            vec![account.into()],
        )
        .fetch_one(self)
        .await?;
        Ok(r.try_get::<i64, _>("n")? + 1)
    }

    /// The next nonce `account` can use counting its pending mempool transactions too: one
    /// past the highest of its canonical nonces and its unpruned mempool nonces (as origin or
    /// sponsor). What `/construction/metadata` hands out.
    pub async fn next_nonce_with_mempool(&self, account: &str) -> Result<i64, StoreError> {
        let chain = self.next_nonce(account).await?;
        let r = select(
            "SELECT CAST(COALESCE(MAX(n), -1) AS BIGINT) AS n FROM ( \
               SELECT MAX(nonce) AS n FROM mempool_txs WHERE sender_address = $1 AND pruned = false \
               UNION ALL \
               SELECT MAX(sponsor_nonce) AS n FROM mempool_txs WHERE sponsor_address = $1 AND pruned = false) m",
            vec![account.into()],
        )
        .fetch_one(self)
        .await?;
        Ok(chain.max(r.try_get::<i64, _>("n")? + 1))
    }

    /// Nonce usage of every account with canonical transactions (for consistency checks).
    pub async fn nonce_usage(&self) -> Result<Vec<NonceUsage>, StoreError> {
        let rows = select(
            "SELECT account, CAST(COUNT(*) AS BIGINT) AS c, CAST(COUNT(DISTINCT n) AS BIGINT) AS d, \
             CAST(MIN(n) AS BIGINT) AS lo, CAST(MAX(n) AS BIGINT) AS hi FROM ( \
               SELECT sender_address AS account, nonce AS n FROM txs WHERE canonical = true AND is_burnchain_op = false \
               UNION ALL \
               SELECT sponsor_address AS account, sponsor_nonce AS n FROM txs WHERE canonical = true AND sponsored = true) u \
             GROUP BY account ORDER BY account",
            vec![],
        )
        .fetch_all(self)
        .await?;
        Ok(rows
            .iter()
            .map(|r| {
                Ok(NonceUsage {
                    account: r.try_get("account")?,
                    tx_count: r.try_get("c")?,
                    distinct_nonces: r.try_get("d")?,
                    min_nonce: r.try_get("lo")?,
                    max_nonce: r.try_get("hi")?,
                })
            })
            .collect::<Result<_, sqlx::Error>>()?)
    }

    /// Pending (not pruned) mempool transaction ids, oldest first.
    pub async fn mempool_tx_ids(&self) -> Result<Vec<String>, StoreError> {
        let rows =
            select("SELECT tx_id FROM mempool_txs WHERE pruned = false ORDER BY receipt_time, tx_id", vec![])
                .fetch_all(self)
                .await?;
        Ok(rows.iter().map(|r| r.try_get("tx_id")).collect::<Result<_, _>>()?)
    }

    /// `(tx_id, status, replaced_by_tx_id, pruned)` of a mempool entry.
    pub async fn mempool_status(
        &self,
        tx_id: &str,
    ) -> Result<Option<(String, Option<String>, bool)>, StoreError> {
        let r = select(
            "SELECT status, replaced_by_tx_id, (CASE WHEN pruned THEN 1 ELSE 0 END) AS pruned FROM mempool_txs WHERE tx_id = $1",
            vec![crate::ledger::normalize_hex(tx_id).into()],
        )
        .fetch_optional(self)
        .await?;
        Ok(r.map(|r| {
            Ok::<_, sqlx::Error>((
                r.try_get("status")?,
                r.try_get("replaced_by_tx_id")?,
                get_bool(&r, "pruned")?,
            ))
        })
        .transpose()?)
    }

    /// Current holder of an NFT (`""` once burnt).
    pub async fn nft_owner(
        &self,
        asset_identifier: &str,
        value_hex: &str,
    ) -> Result<Option<String>, StoreError> {
        let r = select(
            "SELECT owner FROM nft_custody WHERE asset_identifier = $1 AND value_hex = $2",
            vec![asset_identifier.into(), value_hex.into()],
        )
        .fetch_optional(self)
        .await?;
        Ok(r.map(|r| r.try_get("owner")).transpose()?)
    }

    /// `(asset_identifier, balance)` of every FT `account` holds.
    pub async fn ft_balances(&self, account: &str) -> Result<Vec<(String, i128)>, StoreError> {
        let rows = select(
            "SELECT asset_identifier, balance FROM ft_balances WHERE account = $1 ORDER BY asset_identifier",
            vec![account.into()],
        )
        .fetch_all(self)
        .await?;
        Ok(rows
            .iter()
            .map(|r| {
                Ok((
                    r.try_get("asset_identifier")?,
                    super::amount::ft_parse(&r.try_get::<String, _>("balance")?),
                ))
            })
            .collect::<Result<_, sqlx::Error>>()?)
    }

    /// Row count of every table.
    pub async fn table_counts(&self) -> Result<BTreeMap<&'static str, i64>, StoreError> {
        const TABLES: &[&str] = &[
            "raw_events",
            "blocks",
            "txs",
            "events",
            "operations",
            "stx_balances",
            "stx_accounts",
            "account_txs",
            "smart_contracts",
            "miner_rewards",
            "pox_events",
            "microblocks",
            "ft_balances",
            "nft_custody",
            "mempool_txs",
            "burn_blocks",
            "burnchain_rewards",
            "reward_slot_holders",
        ];
        let mut out = BTreeMap::new();
        for t in TABLES {
            let r = select(&format!("SELECT CAST(COUNT(*) AS BIGINT) AS n FROM {t}"), vec![])
                .fetch_one(self)
                .await?;
            out.insert(*t, r.try_get("n")?);
        }
        Ok(out)
    }

    /// The number of canonical transactions (one index scan; the benches' header line).
    pub async fn canonical_tx_count(&self) -> Result<i64, StoreError> {
        let r = select("SELECT CAST(COUNT(*) AS BIGINT) AS n FROM txs WHERE canonical = true", vec![])
            .fetch_one(self)
            .await?;
        Ok(r.try_get("n")?)
    }

    /// Counts of canonical and non-canonical rows per flagged table, e.g. to compare states.
    pub async fn canonical_counts(&self) -> Result<BTreeMap<String, i64>, StoreError> {
        let mut out = BTreeMap::new();
        for t in [
            "blocks",
            "txs",
            "events",
            "operations",
            "stx_balances",
            "account_txs",
            "miner_rewards",
            "pox_events",
            "microblocks",
        ] {
            let rows = select(&format!("SELECT (CASE WHEN canonical THEN 1 ELSE 0 END) AS canonical, CAST(COUNT(*) AS BIGINT) AS n FROM {t} GROUP BY 1"), vec![])
                .fetch_all(self)
                .await?;
            for r in rows {
                let c = get_bool(&r, "canonical")?;
                out.insert(format!("{t}.{}", if c { "canonical" } else { "orphaned" }), r.try_get("n")?);
            }
        }
        Ok(out)
    }

    /// `account_txs.tx_rid` against the rows it points at (SQLite, migration 0045): the
    /// entries, as `principal tx_id@index_block_hash`, whose pointer leads to another row or
    /// none, or that have none while their transaction has one row under the block (for
    /// consistency checks; readers check each pointer they follow and read by key instead).
    pub async fn account_tx_rid_mismatches(&self) -> Result<Vec<String>, StoreError> {
        if self.engine() != super::Engine::Sqlite {
            return Ok(Vec::new());
        }
        let rows = select(
            "SELECT a.principal, a.tx_id, a.index_block_hash FROM account_txs a \
             LEFT JOIN txs t ON t.rowid = a.tx_rid \
             WHERE (a.tx_rid IS NOT NULL AND (t.tx_id IS NOT a.tx_id OR t.index_block_hash IS NOT a.index_block_hash)) \
             OR (a.tx_rid IS NULL AND (SELECT COUNT(*) FROM txs u \
               WHERE u.tx_id = a.tx_id AND u.index_block_hash = a.index_block_hash) = 1) \
             LIMIT 20",
            vec![],
        )
        .fetch_all(self)
        .await?;
        rows.iter()
            .map(|r| {
                Ok(format!(
                    "{} {}@{}",
                    r.try_get::<String, _>("principal")?,
                    r.try_get::<String, _>("tx_id")?,
                    r.try_get::<String, _>("index_block_hash")?
                ))
            })
            .collect::<Result<_, sqlx::Error>>()
            .map_err(StoreError::from)
    }

    /// `account_txs.seq` against its transaction's row (migration 0041): the rows whose `seq`
    /// is a microblock's, and those whose `seq` is not `COALESCE(microblock_sequence,
    /// 2147483647)` of their `txs` row or have none (for consistency checks).
    pub async fn account_tx_seqs(&self) -> Result<(i64, i64), StoreError> {
        let r = select(
            "SELECT CAST(COALESCE(SUM(CASE WHEN a.seq <> 2147483647 THEN 1 ELSE 0 END), 0) AS BIGINT) AS micro, \
             CAST(COALESCE(SUM(CASE WHEN t.tx_id IS NULL \
               OR a.seq <> COALESCE(t.microblock_sequence, 2147483647) THEN 1 ELSE 0 END), 0) AS BIGINT) AS bad \
             FROM account_txs a LEFT JOIN txs t ON t.tx_id = a.tx_id AND t.index_block_hash = a.index_block_hash",
            vec![],
        )
        .fetch_one(self)
        .await?;
        Ok((r.try_get("micro")?, r.try_get("bad")?))
    }
}

/// What every stored answer depends on (see [`Store::generation`]): two reads of one
/// generation are equal only when no change was committed between them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Generation {
    /// The newest raw event's id and receive time (`None` for an empty store).
    pub last_event: Option<(i64, String)>,
    /// The newest raw event that may change the chain's own data (any but a mempool event,
    /// [`crate::events::EventPath::changes_chain`]), id and receive time.
    pub chain_event: Option<(i64, String)>,
    /// Changes committed without a raw event (`store_changes`, see `write::note_change`).
    pub changes: i64,
}

impl Generation {
    /// The generation of the answers that depend on the chain only (no mempool state): it
    /// moves with blocks, microblocks, burn blocks and attachments, not with mempool traffic.
    pub fn chain(&self) -> Generation {
        Generation {
            last_event: self.chain_event.clone(),
            chain_event: self.chain_event.clone(),
            changes: self.changes,
        }
    }
}

/// The generation statement: the newest raw event, and the newest of each chain-changing kind
/// (one seek of `raw_events_path (event_path, id)` per kind).
static GENERATION_SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    let newest: Vec<String> = crate::events::EventPath::ALL
        .into_iter()
        .filter(|p| p.changes_chain())
        .map(|p| format!("SELECT MAX(id) AS m FROM raw_events WHERE event_path = '{}'", p.as_str()))
        .collect();
    format!(
        "SELECT r.id, r.receive_timestamp, c.n, k.id AS chain_id, k.receive_timestamp AS chain_timestamp \
         FROM store_changes c \
         LEFT JOIN (SELECT id, receive_timestamp FROM raw_events ORDER BY id DESC LIMIT 1) r ON 1 = 1 \
         LEFT JOIN raw_events k ON k.id = (SELECT MAX(m) FROM ({}) newest) \
         WHERE c.id = 1",
        newest.join(" UNION ALL ")
    )
});

impl Store {
    /// What every stored answer depends on, for the API's response cache: the newest raw
    /// event's id and receive time, and the count of changes written without a raw event.
    /// Every change a read route can see (blocks, microblocks, burn blocks, mempool adds and
    /// drops, reorgs) is written in the same database transaction as its raw event, whose id
    /// is above every stored one (the observer takes `max + 1`, an import resumes after the
    /// last id), or bumps `store_changes` in its transaction (the faucet's mempool entry, a
    /// totals backfill), so the value changes in the commit that makes the change visible,
    /// for every process reading the database. The receive time tells apart a store wiped
    /// and refilled to the same id from another log. Also the newest event that is not a
    /// mempool event ([`Generation::chain`]). One statement of index seeks.
    ///
    /// On SQLite the statement runs only when something committed since the last time: the
    /// wal-index header, which every commit of any process rewrites, is compared first (a
    /// read of shared memory, no lock), so a cached API request reads the generation on its own
    /// thread for the cost of a comparison, without waiting for another's read.
    pub async fn generation(&self) -> Result<Generation, StoreError> {
        let Some(lite) = self.lite() else {
            return Self::generation_of(&select(&GENERATION_SQL, vec![]).fetch_one(self).await?);
        };
        let seen = || self.generation_seen.lock().unwrap_or_else(|e| e.into_inner());
        let kept_at = |header: &lite::WalHeader| {
            seen().as_ref().filter(|(h, _)| h == header).map(|(_, generation)| generation.clone())
        };
        let last = seen().as_ref().map(|(header, _)| *header);
        let mut changed = lite.fetch_if_changed(&GENERATION_SQL, last.as_ref())?;
        if changed.is_none() {
            // Unchanged since `last`: its generation, unless another thread has just kept one
            // of another state (it may be an older one, read before `last`'s).
            if let Some(generation) = last.as_ref().and_then(kept_at) {
                return Ok(generation);
            }
            changed = lite.fetch_if_changed(&GENERATION_SQL, None)?;
        }
        let (state, rows) = changed.expect("read when no header is given");
        let row = rows.into_iter().next().ok_or(sqlx::Error::RowNotFound)?;
        let generation = Self::generation_of(&row)?;
        if let Some(state) = state {
            *seen() = Some((state, generation.clone()));
        }
        Ok(generation)
    }

    /// Whether [`Store::generation`] is a comparison in memory while nothing commits (SQLite),
    /// rather than a statement each time (PostgreSQL).
    pub fn generation_is_cheap(&self) -> bool {
        self.lite().is_some()
    }

    fn generation_of(row: &DbRow) -> Result<Generation, StoreError> {
        let event = |id: &str, at: &str| -> Result<Option<(i64, String)>, StoreError> {
            Ok(match row.try_get::<Option<i64>, _>(id)? {
                Some(id) => Some((id, row.try_get(at)?)),
                None => None,
            })
        };
        Ok(Generation {
            last_event: event("id", "receive_timestamp")?,
            chain_event: event("chain_id", "chain_timestamp")?,
            changes: row.try_get("n")?,
        })
    }
}
