//! The reads behind the transaction entity and the `/extended/v1/tx/*` routes.

use super::db_row::DbRow;
use ledger_read::tx::{
    AnyTx, BlockRef, ListedTx, MempoolFilter, MempoolSort, MempoolTx, MinedTx, PageTx, TxEvent, TxListFilter,
    TxReader, TxSort,
};
use ledger_read::{Paging, ReadError};

use super::db_row::Cols;
use super::sql::{select, select_in, Val};
use super::{Store, StoreError};

/// The columns of a mined transaction with its block's fields, for [`mined_tx`], with `$raw`
/// the raw transaction's two columns, all from `txs` (`t`): the row keeps its block's fields
/// (migration 0043; NULL on a streamed microblock preview, which has no block yet).
macro_rules! mined_tx_columns {
    ($raw:literal) => {
        concat!(
            "t.tx_id, ",
            $raw,
            ", (CASE WHEN t.is_burnchain_op THEN 1 ELSE 0 END) AS is_burnchain_op, t.index_block_hash, \
    t.block_hash, t.block_height, t.burn_block_height, t.in_block_time AS block_time, \
    t.in_burn_block_time AS burn_block_time, t.in_parent_burn_block_time AS parent_burn_block_time, \
    t.in_parent_block_hash AS parent_block_hash, (CASE WHEN t.canonical THEN 1 ELSE 0 END) AS canonical, \
    t.tx_index, t.status, t.raw_result, t.event_count, t.microblock_hash, t.microblock_sequence, \
    t.execution_cost_read_count, t.execution_cost_read_length, t.execution_cost_runtime, \
    t.execution_cost_write_count, t.execution_cost_write_length, t.vm_error, t.tx_type, t.contract_id, t.api_json"
        )
    };
}

/// The block's fields among [`mined_tx_columns`], which a query for rows without a block
/// (`unanchored_txs`) replaces.
pub(super) const BLOCK_FIELD_COLUMNS: &str =
    "t.in_block_time AS block_time, t.in_burn_block_time AS burn_block_time, \
    t.in_parent_burn_block_time AS parent_burn_block_time, t.in_parent_block_hash AS parent_block_hash";

/// [`mined_tx_columns`] with the raw transaction.
pub(super) const MINED_TX_COLUMNS: &str = mined_tx_columns!("t.raw_tx, t.synthetic_tx");

/// [`mined_tx_columns`] for lists, which render the materialized `api_json`: the raw
/// transaction (or a burnchain operation's synthesized one) only for a row not materialized,
/// else empty, so that a page does not carry (and copy) every transaction's bytes for nothing.
pub(super) const PAGE_TX_COLUMNS: &str = mined_tx_columns!(
    "(CASE WHEN t.api_json IS NULL OR t.api_json = '' THEN COALESCE(t.synthetic_tx, t.raw_tx) ELSE '' END) \
     AS raw_tx, CAST(NULL AS TEXT) AS synthetic_tx"
);

/// The columns of a listed transaction ([`ListedTx`]): its stored row text, and what can change
/// or decides whether it can be served from the text.
const LISTED_COLUMNS: &str = "t.tx_id, (CASE WHEN t.canonical THEN 1 ELSE 0 END) AS canonical, \
    t.block_height, t.tx_type, t.contract_id, t.api_json";

/// A page of transactions picked by their `txs` rowids (SQLite), in order, not read yet; or
/// read already (PostgreSQL, or an empty page).
pub(super) enum PageRows {
    Rids(Vec<i64>),
    /// Rowids taken from the entries that picked the page (`account_txs.tx_rid`, migration
    /// 0045), each with the position (height, microblock sequence, index) of the canonical row
    /// it must lead to; and the statement (with its values) that picks the same page's rowids
    /// by key, for when one does not (`rowid` is an address: a restore may renumber `txs`).
    Pointed {
        rows: Vec<(i64, [i64; 3])>,
        by_key: (&'static str, Vec<Val>),
    },
    Txs(Vec<MinedTx>),
}

/// What a pointed row ([`PageRows::Pointed`]) is checked against.
const POINTED_CHECK: &str = "(CASE WHEN t.canonical THEN 1 ELSE 0 END) AS ptr_c, t.block_height AS ptr_h, \
    COALESCE(t.microblock_sequence, 2147483647) AS ptr_s, t.tx_index AS ptr_i";

fn u(v: i64) -> u64 {
    u64::try_from(v).unwrap_or_default()
}

/// Column reads for [`mined_tx`]: from a shared row (texts copied), or from a row of its own
/// (`&mut DbRow`: texts moved out, so each column is read once). A page's rows are read
/// once, and copying every text of 50 rows again (a `String` each) was ~4 % of a page's CPU.
pub(super) trait TxCols {
    type Row: Cols + ?Sized;
    /// The row, for the reads that copy nothing (numbers, flags).
    fn row(&self) -> &Self::Row;
    fn text(&mut self, col: &str) -> Result<String, sqlx::Error>;
    fn opt_text(&mut self, col: &str) -> Result<Option<String>, sqlx::Error>;
}

impl<R: Cols + ?Sized> TxCols for &R {
    type Row = R;
    fn row(&self) -> &R {
        self
    }
    fn text(&mut self, col: &str) -> Result<String, sqlx::Error> {
        Cols::text(*self, col)
    }
    fn opt_text(&mut self, col: &str) -> Result<Option<String>, sqlx::Error> {
        Cols::opt_text(*self, col)
    }
}

impl TxCols for &mut DbRow {
    type Row = DbRow;
    fn row(&self) -> &DbRow {
        self
    }
    fn text(&mut self, col: &str) -> Result<String, sqlx::Error> {
        self.take_text(col)
    }
    fn opt_text(&mut self, col: &str) -> Result<Option<String>, sqlx::Error> {
        self.take_opt_text(col)
    }
}

/// A row selected with [`MINED_TX_COLUMNS`], each column read once; the ABI is filled in by
/// [`Store::with_abis`].
pub(super) fn mined_tx(mut r: impl TxCols) -> Result<MinedTx, sqlx::Error> {
    let synthetic = r.opt_text("synthetic_tx")?;
    let raw_tx = match synthetic {
        Some(s) => s,
        None => r.text("raw_tx")?,
    };
    let index_block_hash = r.text("index_block_hash")?;
    let block_hash = r.opt_text("block_hash")?.unwrap_or_default();
    let opt = |c: &str| r.row().opt_int(c).map(|v| v.map(u).unwrap_or_default());
    let (block_time, burn_block_time, parent_burn_block_time) =
        (opt("block_time")?, opt("burn_block_time")?, opt("parent_burn_block_time")?);
    let microblock_sequence = r.row().opt_int("microblock_sequence")?;
    Ok(MinedTx {
        tx_id: r.text("tx_id")?,
        raw_tx,
        is_burnchain_op: r.row().flag("is_burnchain_op")?,
        block_hash: if index_block_hash.is_empty() { "0x".into() } else { block_hash },
        index_block_hash,
        block_height: u(r.row().int("block_height")?),
        block_time,
        burn_block_time,
        burn_block_height: u(r.row().int("burn_block_height")?),
        parent_burn_block_time,
        parent_block_hash: r.opt_text("parent_block_hash")?.unwrap_or_default(),
        canonical: r.row().flag("canonical")?,
        tx_index: u32::try_from(r.row().int("tx_index")?).unwrap_or_default(),
        status: r.text("status")?,
        raw_result: r.text("raw_result")?,
        event_count: u(r.row().int("event_count")?),
        microblock_hash: r.text("microblock_hash")?,
        microblock_sequence: microblock_sequence.and_then(|s| u32::try_from(s).ok()),
        microblock_canonical: true,
        execution_cost: [
            u(r.row().int("execution_cost_read_count")?),
            u(r.row().int("execution_cost_read_length")?),
            u(r.row().int("execution_cost_runtime")?),
            u(r.row().int("execution_cost_write_count")?),
            u(r.row().int("execution_cost_write_length")?),
        ],
        vm_error: r.opt_text("vm_error")?,
        contract_abi: None,
        // Empty: a row the backfill could not decode; rendering reports it as before.
        api_json: r.opt_text("api_json")?.filter(|s| !s.is_empty()),
    })
}

/// Each row's transaction ([`mined_tx`]) and called contract ([`called_contract`]).
fn decode_calls<T: TxCols>(
    rows: impl IntoIterator<Item = T>,
) -> Result<(Vec<MinedTx>, Vec<Option<String>>), sqlx::Error> {
    let (mut out, mut calls) = (Vec::new(), Vec::new());
    for r in rows {
        calls.push(called_contract(r.row())?);
        out.push(mined_tx(r)?);
    }
    Ok((out, calls))
}

/// The called contract of a contract-call row, if it is one.
pub(super) fn called_contract(r: &(impl Cols + ?Sized)) -> Result<Option<String>, sqlx::Error> {
    Ok(if r.text("tx_type")? == "contract_call" { r.opt_text("contract_id")? } else { None })
}

pub(super) const EVENT_COLUMNS: &str =
    "tx_id, tx_index, event_index, kind, sender, recipient, amount, asset_identifier, \
    value_hex, contract_identifier, topic, memo, unlock_height";

/// A row selected with [`EVENT_COLUMNS`]: the `events` row as stored.
pub(super) fn tx_event(r: &DbRow) -> Result<TxEvent, sqlx::Error> {
    Ok(TxEvent {
        tx_id: r.try_get("tx_id")?,
        tx_index: r.try_get("tx_index")?,
        event_index: r.try_get("event_index")?,
        kind: r.try_get("kind")?,
        sender: r.try_get("sender")?,
        recipient: r.try_get("recipient")?,
        amount: r.try_get("amount")?,
        asset_identifier: r.try_get("asset_identifier")?,
        value_hex: r.try_get("value_hex")?,
        contract_identifier: r.try_get("contract_identifier")?,
        topic: r.try_get("topic")?,
        memo: r.try_get("memo")?,
        unlock_height: r.try_get("unlock_height")?,
    })
}

/// Block 1 of a chain with a stored block 0 holds block 0's transactions after its `own`
/// (docs/store.md "Block 0"; Rosetta shows them so). The incumbent's /extended shows them with
/// block 0's index plus one, block 0's burn time as `block_time` (block 1's when that is 0, as
/// on the regtest chains) and `parent_burn_block_time` 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct BootShift {
    pub own: i64,
    pub boot_time: i64,
}

impl BootShift {
    /// Whether the stored `tx_index` of a block 1 row is one of the boot block's.
    pub fn is_boot(&self, stored_index: i64) -> bool {
        stored_index >= self.own
    }

    /// The index the incumbent shows for a stored block 1 `tx_index`.
    pub fn shown_index(&self, stored_index: i64) -> i64 {
        if self.is_boot(stored_index) {
            stored_index - self.own + 1
        } else {
            stored_index
        }
    }

    fn apply(&self, tx: &mut MinedTx) {
        let stored = i64::from(tx.tx_index);
        if !self.is_boot(stored) {
            return;
        }
        tx.tx_index = u32::try_from(self.shown_index(stored)).unwrap_or(tx.tx_index);
        if self.boot_time > 0 {
            tx.block_time = u(self.boot_time);
        }
        tx.parent_burn_block_time = 0;
    }
}

/// Which deployment of a contract id answers (failed deploys have rows too): the incumbent's
/// `ORDER BY abi != 'null' DESC, canonical DESC, microblock_canonical DESC, block_height DESC`,
/// so a deploy with an ABI wins over one the node sent none for. The tx id settles the order
/// of two deploys in one block, which the incumbent leaves to its plan.
pub(super) const CONTRACT_ORDER: &str =
    "(CASE WHEN abi IS NULL THEN 0 ELSE 1 END) DESC, canonical DESC, block_height DESC, tx_id";

impl Store {
    /// The ABIs of `contract_ids` (distinct), each from the deployment the incumbent's lookup
    /// picks, in one statement; a contract without a deployment row is absent.
    pub(super) async fn contract_abis(
        &self,
        contract_ids: &[String],
    ) -> Result<std::collections::HashMap<String, Option<std::sync::Arc<str>>>, StoreError> {
        let mut out = std::collections::HashMap::new();
        if contract_ids.is_empty() {
            return Ok(out);
        }
        let rows = select_in(
            self,
            &format!(
                "SELECT contract_id, abi FROM smart_contracts WHERE contract_id IN ({{in}}) \
                 ORDER BY contract_id, {CONTRACT_ORDER}"
            ),
            vec![],
            contract_ids,
        )
        .await?;
        for r in &rows {
            let id: String = r.try_get("contract_id")?;
            if let std::collections::hash_map::Entry::Vacant(e) = out.entry(id) {
                e.insert(r.try_get::<Option<String>, _>("abi")?.map(std::sync::Arc::from));
            }
        }
        Ok(out)
    }

    /// The tip's streamed transactions (`unanchored_txs`, newest first) that match `f`.
    async fn previews(&self, f: &TxListFilter) -> Result<Vec<MinedTx>, ReadError> {
        use ledger_read::microblock::MicroblockReader;
        let all = self.unanchored_txs().await?;
        if all.is_empty() {
            return Ok(all);
        }
        let w = preview_where(f);
        let rows = select(&format!("SELECT t.tx_id {}", w.sql), w.vals)
            .fetch_all(self)
            .await
            .map_err(StoreError::from)?;
        let ids: std::collections::HashSet<String> = rows
            .iter()
            .map(|r| r.try_get::<String, _>("tx_id"))
            .collect::<Result<_, _>>()
            .map_err(StoreError::from)?;
        Ok(all.into_iter().filter(|t| ids.contains(&t.tx_id)).collect())
    }

    /// How block 1 at `index_block_hash` (or the canonical block 1) holds the boot block's
    /// transactions: `None` unless it was built on a stored block 0 (docs/store.md "Block 0").
    pub(super) async fn boot_shift(
        &self,
        index_block_hash: Option<&str>,
    ) -> Result<Option<BootShift>, StoreError> {
        let (cond, vals): (&str, Vec<Val>) = match index_block_hash {
            Some(h) => ("b.index_block_hash = $1", vec![h.into()]),
            None => ("b.canonical = true", vec![]),
        };
        let row = select(
            &format!(
                "SELECT b.tx_count - g.tx_count AS own, g.burn_block_time AS boot_time FROM blocks b \
                 JOIN blocks g ON g.index_block_hash = b.parent_index_block_hash AND g.block_height = 0 \
                 WHERE b.block_height = 1 AND {cond} LIMIT 1"
            ),
            vals,
        )
        .fetch_optional(self)
        .await?;
        Ok(match row {
            Some(r) => Some(BootShift { own: r.try_get("own")?, boot_time: r.try_get("boot_time")? }),
            None => None,
        })
    }

    /// Shows the boot block's transactions of block 1 as the incumbent's /extended does.
    pub(super) async fn show_boot_txs(&self, txs: &mut [MinedTx]) -> Result<(), StoreError> {
        let mut shifts: std::collections::HashMap<String, Option<BootShift>> = Default::default();
        for tx in txs.iter_mut().filter(|t| t.block_height == 1 && !t.index_block_hash.is_empty()) {
            if !shifts.contains_key(&tx.index_block_hash) {
                let s = self.boot_shift(Some(&tx.index_block_hash)).await?;
                shifts.insert(tx.index_block_hash.clone(), s);
            }
            if let Some(s) = &shifts[&tx.index_block_hash] {
                s.apply(tx);
            }
        }
        Ok(())
    }

    /// Fills each contract call's ABI (one statement for the distinct contracts) and shows the
    /// boot block's transactions as the incumbent does ([`BootShift`]).
    pub(super) async fn with_abis<R: Cols + Sync>(&self, rows: &[R]) -> Result<Vec<MinedTx>, StoreError> {
        let (mut out, calls) = decode_calls(rows)?;
        self.fill_abis(&mut out, calls).await?;
        self.show_boot_txs(&mut out).await?;
        Ok(out)
    }

    /// [`Store::with_abis`] of rows read for this alone: their texts are moved, not copied.
    pub(super) async fn with_abis_owned(&self, mut rows: Vec<DbRow>) -> Result<Vec<MinedTx>, StoreError> {
        let (mut out, calls) = decode_calls(&mut rows)?;
        drop(rows);
        self.fill_abis(&mut out, calls).await?;
        self.show_boot_txs(&mut out).await?;
        Ok(out)
    }

    /// Sets each contract call's ABI (`calls`: the called contract per transaction), one
    /// statement for the distinct contracts; each ABI's text is shared, not copied per call.
    async fn fill_abis(&self, out: &mut [MinedTx], calls: Vec<Option<String>>) -> Result<(), StoreError> {
        for (tx, abi) in out.iter_mut().zip(self.call_abis(calls).await?) {
            tx.contract_abi = abi;
        }
        Ok(())
    }

    /// The ABI of each called contract of `calls` (one statement for the distinct contracts).
    async fn call_abis(
        &self,
        calls: Vec<Option<String>>,
    ) -> Result<Vec<Option<std::sync::Arc<str>>>, StoreError> {
        let mut ids: Vec<String> = calls.iter().flatten().cloned().collect();
        ids.sort();
        ids.dedup();
        let abis = self.contract_abis(&ids).await?;
        Ok(calls.into_iter().map(|c| c.and_then(|c| abis.get(&c).cloned().flatten())).collect())
    }

    /// The transactions of a page read by rowid ([`PageRows`]), with their fields.
    pub(super) async fn page_rows_mined(&self, rows: PageRows) -> Result<Vec<MinedTx>, StoreError> {
        match rows {
            PageRows::Rids(rids) => self.mined_by_rowid(&rids).await,
            PageRows::Pointed { rows, by_key } => match self.pointed_rows(PAGE_TX_COLUMNS, &rows).await? {
                Some(read) => self.with_abis_owned(read).await,
                None => {
                    Box::pin(self.page_rows_mined(self.page_rids_by_key(by_key.0, by_key.1).await?)).await
                }
            },
            PageRows::Txs(txs) => Ok(txs),
        }
    }

    /// The transactions of a page as lists render them: from their stored row texts
    /// ([`Store::listed_rows`]) when every row has one, else with their fields.
    pub(super) async fn page_rows_listed(&self, rows: PageRows) -> Result<Vec<PageTx>, StoreError> {
        let rows = match rows {
            PageRows::Rids(rids) => {
                let read = self.rows_by_rowid(LISTED_COLUMNS, &rids).await?;
                match self.listed_rows(read).await? {
                    Some(listed) => return Ok(listed.into_iter().map(PageTx::Listed).collect()),
                    None => PageRows::Rids(rids),
                }
            }
            PageRows::Pointed { rows, by_key } => match self.pointed_rows(LISTED_COLUMNS, &rows).await? {
                Some(read) => match self.listed_rows(read).await? {
                    Some(listed) => return Ok(listed.into_iter().map(PageTx::Listed).collect()),
                    // Checked above: the pointers hold.
                    None => PageRows::Rids(rows.iter().map(|r| r.0).collect()),
                },
                None => {
                    return Box::pin(self.page_rows_listed(self.page_rids_by_key(by_key.0, by_key.1).await?))
                        .await
                }
            },
            txs @ PageRows::Txs(_) => txs,
        };
        Ok(self.page_rows_mined(rows).await?.into_iter().map(PageTx::Mined).collect())
    }

    /// The rowids of a page picked by `sql` (SQLite; columns `page_rid` and the order keys
    /// `k_h`, `k_s`, `k_i`), newest first.
    pub(super) async fn page_rids_by_key(&self, sql: &str, vals: Vec<Val>) -> Result<PageRows, StoreError> {
        let mut keys = select(sql, vals)
            .fetch_all(self)
            .await?
            .iter()
            .map(|r| {
                Ok::<_, sqlx::Error>((
                    (r.try_get::<i64, _>("k_h")?, r.try_get::<i64, _>("k_s")?, r.try_get::<i64, _>("k_i")?),
                    r.try_get::<i64, _>("page_rid")?,
                ))
            })
            .collect::<Result<Vec<_>, _>>()?;
        keys.sort_unstable_by_key(|k| std::cmp::Reverse(k.0));
        Ok(PageRows::Rids(keys.iter().map(|k| k.1).collect()))
    }

    /// The rows (`columns` of `txs t`) a pointed page's rowids lead to ([`PageRows::Pointed`]),
    /// in order; `None` when one is missing or is not the canonical row at its entry's
    /// position (one per chain position), i.e. when the pointers are stale.
    async fn pointed_rows(
        &self,
        columns: &str,
        rows: &[(i64, [i64; 3])],
    ) -> Result<Option<Vec<DbRow>>, StoreError> {
        let rids: Vec<i64> = rows.iter().map(|r| r.0).collect();
        let read = self.rows_by_rowid(&format!("{columns}, {POINTED_CHECK}"), &rids).await?;
        if read.len() != rows.len() {
            return Ok(self.stale_pointers());
        }
        for (r, (rid, at)) in read.iter().zip(rows) {
            let found = [r.int("ptr_h")?, r.int("ptr_s")?, r.int("ptr_i")?];
            if r.int("page_rid")? != *rid || r.int("ptr_c")? != 1 || found != *at {
                return Ok(self.stale_pointers());
            }
        }
        Ok(Some(read))
    }

    /// Logs that a page's `account_txs.tx_rid` pointers are stale (read by key instead).
    fn stale_pointers(&self) -> Option<Vec<DbRow>> {
        tracing::warn!(
            "account_txs.tx_rid does not lead to its transaction's row (txs renumbered?): page read by key"
        );
        None
    }

    /// The `txs` rows read for a page (with [`LISTED_COLUMNS`]) as listed rows ([`ListedTx`]:
    /// 6 columns a row, where the whole row is ~30), in that order, with their ABIs. `None`
    /// when one has no stored row text (not materialized yet, or a streamed row, which has
    /// none: no block yet) or is in block 1, whose boot block rows are shown otherwise
    /// ([`BootShift`]): the page is then read whole.
    async fn listed_rows(&self, mut rows: Vec<DbRow>) -> Result<Option<Vec<ListedTx>>, StoreError> {
        let mut out = Vec::with_capacity(rows.len());
        let mut calls = Vec::with_capacity(rows.len());
        for r in &mut rows {
            if r.int("block_height")? == 1 {
                return Ok(None);
            }
            let api_json = r.take_opt_text("api_json")?.unwrap_or_default();
            if !self.render.is_row_text(&api_json) {
                return Ok(None);
            }
            calls.push(called_contract(&*r)?);
            out.push(ListedTx {
                tx_id: r.take_text("tx_id")?,
                canonical: r.flag("canonical")?,
                contract_abi: None,
                api_json,
            });
        }
        for (tx, abi) in out.iter_mut().zip(self.call_abis(calls).await?) {
            tx.contract_abi = abi;
        }
        Ok(Some(out))
    }

    /// A page of mined transactions of `FROM … WHERE …` (`from_where`, its values `vals`) in
    /// `order`, with the count of all its rows when `count` (else 0), in the same statement;
    /// ABIs and boot rows as [`Store::with_abis`].
    pub(super) async fn mined_page(
        &self,
        from_where: &str,
        order: &str,
        vals: Vec<Val>,
        paging: Paging,
        count: bool,
    ) -> Result<(u64, Vec<MinedTx>), StoreError> {
        let (total, rows) = self.tx_page_rows(from_where, order, vals, paging, count).await?;
        Ok((total, self.page_rows_mined(rows).await?))
    }

    /// [`Store::mined_page`] as lists render it ([`Store::page_rows_listed`]).
    async fn listed_page(
        &self,
        from_where: &str,
        order: &str,
        vals: Vec<Val>,
        paging: Paging,
        count: bool,
    ) -> Result<(u64, Vec<PageTx>), StoreError> {
        let (total, rows) = self.tx_page_rows(from_where, order, vals, paging, count).await?;
        Ok((total, self.page_rows_listed(rows).await?))
    }

    /// [`Store::mined_page`], its rows not read yet on SQLite ([`PageRows`]).
    pub(super) async fn tx_page_rows(
        &self,
        from_where: &str,
        order: &str,
        mut vals: Vec<Val>,
        paging: Paging,
        count: bool,
    ) -> Result<(u64, PageRows), StoreError> {
        let n = vals.len();
        vals.push(i64::from(paging.limit).into());
        vals.push(i64::try_from(paging.offset).unwrap_or(i64::MAX).into());
        let total = if count {
            format!("(SELECT CAST(COUNT(*) AS BIGINT) {from_where})")
        } else {
            "CAST(0 AS BIGINT)".into()
        };
        // The count rides on each row (the uncorrelated subquery is evaluated once); an empty
        // page reads it alone.
        let count_alone = || async {
            Ok::<_, StoreError>(match count {
                true => u(select(&format!("SELECT {total} AS n"), vals[..n].to_vec())
                    .fetch_one(self)
                    .await?
                    .try_get("n")?),
                false => 0,
            })
        };
        let limits = format!("ORDER BY {order} LIMIT ${} OFFSET ${}", n + 1, n + 2);
        if self.lite().is_some() {
            // SQLite: first the page's rowids in order, then only those rows whole: ordered
            // with every column, SQLite sorted each block's rows with their JSON (the
            // 100-transaction blocks of the 1M chain: 1.4 → 0.4 ms for the page).
            let sql = format!("SELECT {total} AS page_total, t.rowid AS page_rid {from_where} {limits}");
            let keys = select(&sql, vals.clone()).fetch_all(self).await?;
            let total = match keys.first() {
                Some(r) => u(r.try_get("page_total")?),
                None => count_alone().await?,
            };
            let rids = keys.iter().map(|r| r.try_get::<i64, _>("page_rid")).collect::<Result<Vec<_>, _>>()?;
            return Ok((total, PageRows::Rids(rids)));
        }
        let sql = format!("SELECT {total} AS page_total, {PAGE_TX_COLUMNS} {from_where} {limits}");
        let rows = select(&sql, vals.clone()).fetch_all(self).await?;
        let total = match rows.first() {
            Some(r) => u(r.try_get("page_total")?),
            None => count_alone().await?,
        };
        Ok((total, PageRows::Txs(self.with_abis(&rows).await?)))
    }

    /// The transactions of `rids` (`txs` rowids, SQLite), in that order, with their ABIs.
    pub(super) async fn mined_by_rowid(&self, rids: &[i64]) -> Result<Vec<MinedTx>, StoreError> {
        let rows = self.tx_rows_by_rowid(rids).await?;
        self.with_abis_owned(rows).await
    }

    /// The page rows of `rids` (`txs` rowids, SQLite), in that order. One statement text per
    /// page size: the list is padded with NULLs, which match nothing.
    async fn tx_rows_by_rowid(&self, rids: &[i64]) -> Result<Vec<DbRow>, StoreError> {
        self.rows_by_rowid(PAGE_TX_COLUMNS, rids).await
    }

    /// [`Store::tx_rows_by_rowid`] with `columns` of `txs t`.
    async fn rows_by_rowid(&self, columns: &str, rids: &[i64]) -> Result<Vec<DbRow>, StoreError> {
        if rids.is_empty() {
            return Ok(Vec::new());
        }
        let slots = rids.len().next_power_of_two();
        let list: Vec<String> = (1..=slots).map(|i| format!("${i}")).collect();
        let sql = format!(
            "SELECT t.rowid AS page_rid, {columns} FROM txs t WHERE t.rowid IN ({})",
            list.join(", ")
        );
        let mut vals: Vec<Val> = rids.iter().map(|&r| Val::I(r)).collect();
        vals.resize_with(slots, || Val::OI(None));
        let mut rows = select(&sql, vals).fetch_all(self).await?;
        let at: std::collections::HashMap<i64, usize> =
            rids.iter().enumerate().map(|(i, &r)| (r, i)).collect();
        let mut keyed = Vec::with_capacity(rows.len());
        for r in rows.drain(..) {
            let pos = at.get(&r.try_get::<i64, _>("page_rid")?).copied().unwrap_or(usize::MAX);
            keyed.push((pos, r));
        }
        keyed.sort_unstable_by_key(|(pos, _)| *pos);
        Ok(keyed.into_iter().map(|(_, r)| r).collect())
    }

    /// The `txs` rows whose copy of their block's fields (migration 0043) is not the block's
    /// (a streamed row's must be NULL), as `tx_id@index_block_hash`: for consistency checks.
    pub async fn tx_block_field_mismatches(&self) -> Result<Vec<String>, StoreError> {
        const FIELDS: [(&str, &str); 4] = [
            ("in_block_time", "block_time"),
            ("in_burn_block_time", "burn_block_time"),
            ("in_parent_burn_block_time", "parent_burn_block_time"),
            ("in_parent_block_hash", "parent_block_hash"),
        ];
        let streamed =
            FIELDS.iter().map(|(t, _)| format!("t.{t} IS NOT NULL")).collect::<Vec<_>>().join(" OR ");
        let anchored = FIELDS
            .iter()
            .map(|(t, b)| format!("t.{t} IS DISTINCT FROM b.{b}"))
            .collect::<Vec<_>>()
            .join(" OR ");
        let rows = select(
            &format!(
                "SELECT t.tx_id, t.index_block_hash FROM txs t \
                 LEFT JOIN blocks b ON b.index_block_hash = t.index_block_hash \
                 WHERE (t.index_block_hash = '' AND ({streamed})) \
                 OR (t.index_block_hash <> '' AND (b.index_block_hash IS NULL OR {anchored})) \
                 ORDER BY t.index_block_hash, t.tx_id"
            ),
            vec![],
        )
        .fetch_all(self)
        .await?;
        rows.iter()
            .map(|r| {
                Ok(format!(
                    "{}@{}",
                    r.try_get::<String, _>("tx_id")?,
                    r.try_get::<String, _>("index_block_hash")?
                ))
            })
            .collect()
    }

    /// The `txs` rows under a block whose stored row text (migration 0044) is not the one
    /// derived again from the row's raw transaction and fields, as `tx_id@index_block_hash`:
    /// for consistency checks (what ingestion and the backfill wrote against what the fields
    /// path renders).
    pub async fn tx_row_text_mismatches(&self) -> Result<Vec<String>, StoreError> {
        let rows = select(
            &format!("SELECT {MINED_TX_COLUMNS} FROM txs t WHERE t.index_block_hash <> '' ORDER BY t.tx_id, t.index_block_hash"),
            vec![],
        )
        .fetch_all(self)
        .await?;
        let mut bad = Vec::new();
        for r in &rows {
            let mut tx = mined_tx(r)?;
            let stored = tx.api_json.take().unwrap_or_default();
            let derived = self.render.row_text(&tx).unwrap_or_default();
            if derived.is_empty() || stored != derived {
                bad.push(format!("{}@{}", tx.tx_id, tx.index_block_hash));
            }
        }
        Ok(bad)
    }

    /// The transaction's canonical mined row, or with `any_fork` else its latest row on another
    /// fork; streamed, not yet anchored rows only when `unanchored`.
    async fn mined_tx_by_id(
        &self,
        tx_id: &str,
        unanchored: bool,
        any_fork: bool,
    ) -> Result<Option<MinedTx>, StoreError> {
        let sql = format!(
            "SELECT {MINED_TX_COLUMNS} FROM txs t WHERE t.tx_id = $1 AND (t.index_block_hash <> '' OR $2) \
             AND (t.canonical = true OR t.index_block_hash = '' OR $3) \
             ORDER BY t.canonical DESC, t.block_height DESC, t.index_block_hash DESC LIMIT 1"
        );
        let rows =
            select(&sql, vec![tx_id.into(), unanchored.into(), any_fork.into()]).fetch_all(self).await?;
        Ok(self.with_abis(&rows).await?.pop())
    }

    async fn mempool_tx_by_id(&self, tx_id: &str) -> Result<Option<MempoolTx>, StoreError> {
        let row = select(
            "SELECT tx_id, raw_tx, status, replaced_by_tx_id, receipt_time, tx_type, contract_id \
             FROM mempool_txs WHERE tx_id = $1",
            vec![tx_id.into()],
        )
        .fetch_optional(self)
        .await?;
        let Some(r) = row else { return Ok(None) };
        Ok(self.mempool_with_abis(&[r]).await?.pop())
    }

    pub(super) async fn mempool_with_abis(&self, rows: &[DbRow]) -> Result<Vec<MempoolTx>, StoreError> {
        let mut out = Vec::with_capacity(rows.len());
        let mut calls = Vec::with_capacity(rows.len());
        for r in rows {
            out.push(MempoolTx {
                tx_id: r.try_get("tx_id")?,
                raw_tx: r.try_get("raw_tx")?,
                status: r.try_get("status")?,
                replaced_by_tx_id: r.try_get("replaced_by_tx_id")?,
                receipt_time: u(r.try_get("receipt_time")?),
                contract_abi: None,
            });
            calls.push(called_contract(r)?);
        }
        let mut ids: Vec<String> = calls.iter().flatten().cloned().collect();
        ids.sort();
        ids.dedup();
        let abis = self.contract_abis(&ids).await?;
        for (tx, call) in out.iter_mut().zip(calls) {
            if let Some(c) = call {
                tx.contract_abi = abis.get(&c).cloned().flatten();
            }
        }
        Ok(out)
    }

    /// The number of canonical transactions in canonical blocks: the unfiltered
    /// `/extended/v1/tx` total. Each block keeps the number of transaction rows it wrote
    /// (`blocks.tx_count`: its own and the microblock transactions it confirms, stored with it
    /// in one commit), and its rows are canonical exactly when it is, so the total is the sum
    /// over the canonical blocks: one indexed read of each block row instead of a count over
    /// every transaction (which cost milliseconds per new tip on realnode-2 and hundreds of
    /// milliseconds on the 1M-transaction chain, paid by the first `/tx` request after every
    /// block). Transactions not in a block (unconfirmed microblocks) are not counted.
    /// [`Store::tx_total_mismatch`] checks the sum against the count. With `cached`, the total
    /// is also kept with the canonical tip it was read at, both read by one statement (one
    /// snapshot), and served again while the tip has not moved.
    pub async fn canonical_tx_total(&self, cached: bool) -> Result<u64, StoreError> {
        if cached {
            if let Some(n) = self.canonical_tip_hash().await?.and_then(|t| self.memo_at(&t)?.tx_total) {
                return Ok(n);
            }
        }
        let r = select(
            &format!(
                "SELECT ({TIP}) AS tip, (SELECT CAST(COALESCE(SUM(tx_count), 0) AS BIGINT) FROM blocks \
                 WHERE canonical = true) AS n"
            ),
            vec![],
        )
        .fetch_one(self)
        .await?;
        let n = u(r.try_get("n")?);
        if let Some(tip) = r.try_get::<Option<String>, _>("tip")? {
            self.remember(&tip, |m| m.tx_total = Some(n));
        }
        Ok(n)
    }

    /// [`Store::canonical_tx_total`] against a count of the canonical transactions in canonical
    /// blocks (for consistency checks): `Some((kept, counted))` when they differ.
    pub async fn tx_total_mismatch(&self) -> Result<Option<(u64, u64)>, StoreError> {
        let kept = self.canonical_tx_total(false).await?;
        let r = select(
            "SELECT COUNT(*) AS n FROM txs t JOIN blocks b ON b.index_block_hash = t.index_block_hash \
             WHERE t.canonical = true",
            vec![],
        )
        .fetch_one(self)
        .await?;
        let counted = u(r.try_get("n")?);
        Ok((kept != counted).then_some((kept, counted)))
    }

    /// The canonical transaction total ([`Store::canonical_tx_total`]) and the boot block's
    /// rows v3 leaves out of it (counted by `count_boot` when block 1 has a boot shift), kept
    /// with the canonical tip with the shift itself: once kept, one statement (the tip's).
    pub(super) async fn canonical_total_and_boot<F, Fut>(
        &self,
        count_boot: F,
    ) -> Result<(u64, u64), StoreError>
    where
        F: FnOnce(BootShift) -> Fut,
        Fut: std::future::Future<Output = Result<u64, StoreError>>,
    {
        let (tip, memo, shift) = self.memo_with_shift().await?;
        let remember = |f: &dyn Fn(&mut TipMemo)| {
            if let Some(t) = &tip {
                self.remember(t, f);
            }
        };
        let boot = match (shift, memo.v3_boot) {
            (Some(_), Some(n)) => n,
            (Some(s), None) => {
                let n = count_boot(s).await?;
                remember(&|m| m.v3_boot = Some(n));
                n
            }
            (None, _) => 0,
        };
        let total = match memo.tx_total {
            Some(n) => n,
            None => self.canonical_tx_total(false).await?,
        };
        Ok((total, boot))
    }

    /// The canonical tip, what the memo keeps for it, and block 1's boot shift (read once per
    /// tip, then kept): how every list read the memo serves starts.
    async fn memo_with_shift(&self) -> Result<(Option<String>, TipMemo, Option<BootShift>), StoreError> {
        let tip = self.canonical_tip_hash().await?;
        let memo = tip.as_deref().and_then(|t| self.memo_at(t)).unwrap_or_default();
        let shift = match memo.boot_shift {
            Some(s) => s,
            None => {
                let s = self.boot_shift(None).await?;
                if let Some(t) = &tip {
                    self.remember(t, |m| m.boot_shift = Some(s));
                }
                s
            }
        };
        Ok((tip, memo, shift))
    }

    /// The canonical tip's index block hash (`None` for a store without blocks).
    async fn canonical_tip_hash(&self) -> Result<Option<String>, StoreError> {
        let tip = select(TIP, vec![]).fetch_optional(self).await?;
        Ok(tip.map(|r| r.try_get("index_block_hash")).transpose()?)
    }

    /// What is kept for the canonical tip `tip`, if the memo is of that tip.
    fn memo_at(&self, tip: &str) -> Option<TipMemo> {
        let memo = self.tip_memo.lock().unwrap_or_else(|e| e.into_inner());
        (memo.tip == tip).then(|| memo.clone())
    }

    /// Keeps what `f` sets for the canonical tip `tip` (the memo of another tip starts over).
    fn remember(&self, tip: &str, f: impl FnOnce(&mut TipMemo)) {
        let mut memo = self.tip_memo.lock().unwrap_or_else(|e| e.into_inner());
        if memo.tip != tip {
            *memo = TipMemo { tip: tip.to_string(), ..Default::default() };
        }
        f(&mut memo);
    }

    /// One page of `FROM … WHERE …` (`from_where`), ordered by `order`.
    async fn page(
        &self,
        columns: &str,
        from_where: &str,
        order: &str,
        mut vals: Vec<Val>,
        paging: Paging,
    ) -> Result<Vec<DbRow>, StoreError> {
        let n = vals.len();
        vals.push(i64::from(paging.limit).into());
        vals.push(i64::try_from(paging.offset).unwrap_or(i64::MAX).into());
        let sql =
            format!("SELECT {columns} {from_where} ORDER BY {order} LIMIT ${} OFFSET ${}", n + 1, n + 2);
        Ok(select(&sql, vals).fetch_all(self).await?)
    }

    /// `COUNT(*)` and one page of `FROM … WHERE …` (`from_where`), ordered by `order`.
    async fn count_and_page(
        &self,
        columns: &str,
        from_where: &str,
        order: &str,
        vals: Vec<Val>,
        paging: Paging,
    ) -> Result<(u64, Vec<DbRow>), StoreError> {
        let count =
            select(&format!("SELECT COUNT(*) AS n {from_where}"), vals.clone()).fetch_one(self).await?;
        let total = u(count.try_get("n")?);
        Ok((total, self.page(columns, from_where, order, vals, paging).await?))
    }
}

/// The canonical tip.
const TIP: &str =
    "SELECT index_block_hash FROM blocks WHERE canonical = true ORDER BY block_height DESC LIMIT 1";

/// What the unfiltered `/extended/v1/tx` list derives from the canonical chain, kept with the
/// canonical tip it was read at and used while the tip has not moved (`Store::tip_memo`): each
/// is a function of the tip's chain (see [`Store::canonical_tx_total`]; block 1 and block 0
/// are the tip's ancestors, stored before it).
#[derive(Debug, Clone, Default)]
pub(super) struct TipMemo {
    /// The canonical tip's index block hash.
    tip: String,
    /// [`Store::canonical_tx_total`].
    tx_total: Option<u64>,
    /// The canonical block 1's [`BootShift`].
    boot_shift: Option<Option<BootShift>>,
    /// The boot block's rows of the unfiltered list, which its total leaves out.
    boot_listed: Option<u64>,
    /// The boot block's rows the v3 transaction total leaves out.
    v3_boot: Option<u64>,
}

/// Anchored transactions sort after their block's microblock transactions.
pub(super) const SEQ: &str = "COALESCE(t.microblock_sequence, 2147483647)";

/// Conditions with `$N` placeholders numbered as they are added.
#[derive(Default)]
struct Where {
    sql: String,
    vals: Vec<Val>,
}

impl Where {
    fn new(base: &str) -> Self {
        Where { sql: base.to_string(), vals: Vec::new() }
    }

    fn next(&mut self, v: impl Into<Val>) -> String {
        self.vals.push(v.into());
        format!("${}", self.vals.len())
    }

    /// Appends `cond`, each `?` replaced by the next placeholder bound to `v`.
    fn and(&mut self, cond: &str, v: impl Into<Val> + Clone) {
        let mut out = String::new();
        let mut parts = cond.split('?').peekable();
        while let Some(p) = parts.next() {
            out.push_str(p);
            if parts.peek().is_some() {
                out.push_str(&self.next(v.clone()));
            }
        }
        self.sql.push_str(" AND ");
        self.sql.push_str(&out);
    }
}

/// The canonical rows matching `f` (every canonical row has its block: streamed rows are
/// never canonical; the block's burn time is the row's, migration 0043).
fn list_where(f: &TxListFilter) -> Where {
    filtered(f, Where::new("FROM txs t WHERE t.canonical = true"), BURN_TIME)
}

/// A row's block's burn time (migration 0043).
const BURN_TIME: &str = "t.in_burn_block_time";

/// The streamed, not yet anchored rows (`index_block_hash` empty) matching `f`. They have no
/// burn block yet: their burn time is -1, as the Transaction renderer shows it.
fn preview_where(f: &TxListFilter) -> Where {
    filtered(f, Where::new("FROM txs t WHERE t.index_block_hash = ''"), "-1")
}

/// `w` with `f`'s conditions, `burn_time` the rows' burn block time.
fn filtered(f: &TxListFilter, mut w: Where, burn_time: &str) -> Where {
    if !f.types.is_empty() {
        let list: Vec<String> = f.types.iter().map(|t| w.next(t.as_str())).collect();
        w.sql.push_str(&format!(" AND t.tx_type IN ({})", list.join(", ")));
    }
    if let Some(a) = &f.from_address {
        w.and("t.sender_address = ?", a.as_str());
    }
    if let Some(a) = &f.to_address {
        w.and("t.token_transfer_recipient = ?", a.as_str());
    }
    if let Some(t) = f.start_time {
        w.and(&format!("{burn_time} >= ?"), i64::try_from(t).unwrap_or(i64::MAX));
    }
    if let Some(t) = f.end_time {
        w.and(&format!("{burn_time} <= ?"), i64::try_from(t).unwrap_or(i64::MAX));
    }
    if let Some(c) = &f.contract_id {
        // The called contract only: deployments do not match, as with the incumbent.
        w.and("t.tx_type = 'contract_call' AND t.contract_id = ?", c.as_str());
    }
    if let Some(n) = &f.function_name {
        w.and("t.function_name = ?", n.as_str());
    }
    if let Some(n) = f.nonce {
        w.and("t.nonce = ?", i64::try_from(n).unwrap_or(i64::MAX));
    }
    w
}

/// No condition but `canonical` (sort and order aside).
fn unfiltered(f: &TxListFilter) -> bool {
    f.types.is_empty()
        && f.from_address.is_none()
        && f.to_address.is_none()
        && f.start_time.is_none()
        && f.end_time.is_none()
        && f.contract_id.is_none()
        && f.function_name.is_none()
        && f.nonce.is_none()
}

/// `t.tx_index` as the incumbent shows it ([`BootShift`]), for ordering.
pub(super) fn shown_index_sql(shift: Option<BootShift>) -> String {
    match shift {
        Some(s) => format!(
            "(CASE WHEN t.block_height = 1 AND t.tx_index >= {own} THEN t.tx_index - {own} + 1 ELSE t.tx_index END)",
            own = s.own
        ),
        None => "t.tx_index".into(),
    }
}

/// The list's order. Without a boot shift (`None`) the chain order is `txs_canonical_order`'s
/// (migration 0043), read from the index with no sort; with one, only block 1's rows are
/// ordered otherwise.
fn list_order(f: &TxListFilter, shift: Option<BootShift>) -> String {
    let o = if f.ascending { "ASC" } else { "DESC" };
    // Ties between a boot transaction and one of block 1's own: block 1's first when newest
    // first, the boot one first when oldest first, as recorded.
    let chain = match shift {
        Some(_) => {
            format!("t.block_height {o}, {SEQ} {o}, {} {o}, (0 - t.tx_index) {o}", shown_index_sql(shift))
        }
        None => format!("t.block_height {o}, {SEQ} {o}, t.tx_index {o}"),
    };
    match f.sort {
        TxSort::BlockHeight => chain,
        TxSort::BurnBlockTime => format!("{BURN_TIME} {o}, {chain}"),
        TxSort::Fee => format!("t.fee {o}, {chain}"),
    }
}

const MEMPOOL_COLUMNS: &str = "tx_id, raw_tx, status, replaced_by_tx_id, receipt_time, tx_type, contract_id";

impl TxReader for Store {
    async fn tx(&self, tx_id: &str, unanchored: bool) -> Result<Option<AnyTx>, ReadError> {
        if let Some(t) = self.mined_tx_by_id(tx_id, unanchored, false).await? {
            if t.index_block_hash.is_empty() {
                // A streamed row, as the unanchored list shows it (on the tip, with the tip's
                // hash and burn time as its parent's).
                use ledger_read::microblock::MicroblockReader;
                let streamed = self.unanchored_txs().await?.into_iter().find(|p| p.tx_id == t.tx_id);
                return Ok(Some(AnyTx::Mined(streamed.unwrap_or(t))));
            }
            return Ok(Some(AnyTx::Mined(t)));
        }
        Ok(self.mempool_tx_by_id(tx_id).await?.map(AnyTx::Mempool))
    }

    async fn tx_any_row(&self, tx_id: &str) -> Result<Option<AnyTx>, ReadError> {
        if let Some(t) = self.mined_tx_by_id(tx_id, true, true).await? {
            return Ok(Some(AnyTx::Mined(t)));
        }
        Ok(self.mempool_tx_by_id(tx_id).await?.map(AnyTx::Mempool))
    }

    async fn tx_events(&self, tx: &MinedTx, paging: Paging) -> Result<Vec<TxEvent>, ReadError> {
        let sql = format!(
            "SELECT {EVENT_COLUMNS} FROM events WHERE tx_id = $1 AND index_block_hash = $2 \
             AND microblock_hash = $3 ORDER BY event_index LIMIT $4 OFFSET $5"
        );
        let rows = select(
            &sql,
            vec![
                tx.tx_id.clone().into(),
                tx.index_block_hash.clone().into(),
                tx.microblock_hash.clone().into(),
                i64::from(paging.limit).into(),
                i64::try_from(paging.offset).unwrap_or(i64::MAX).into(),
            ],
        )
        .fetch_all(self)
        .await
        .map_err(StoreError::from)?;
        Ok(rows.iter().map(tx_event).collect::<Result<_, _>>().map_err(StoreError::from)?)
    }

    async fn tx_list(&self, filter: &TxListFilter, paging: Paging) -> Result<(u64, Vec<PageTx>), ReadError> {
        let w = list_where(filter);
        // The tip, then what the memo keeps for it (one statement once it is kept).
        let (tip, memo, shift) = self.memo_with_shift().await?;
        let remember = |f: &dyn Fn(&mut TipMemo)| {
            if let Some(t) = &tip {
                self.remember(t, f);
            }
        };
        let boot = match (shift.filter(|_| unfiltered(filter)), memo.boot_listed) {
            (Some(_), Some(n)) => n,
            // The incumbent's unfiltered total leaves out the boot block's transactions it lists
            // (a filtered total counts them, as recorded).
            (Some(s), None) => {
                let sql = format!(
                    "SELECT COUNT(*) AS n {} AND t.block_height = 1 AND t.tx_index >= {}",
                    w.sql, s.own
                );
                let row = select(&sql, w.vals.clone()).fetch_one(self).await.map_err(StoreError::from)?;
                let n = u(row.try_get("n").map_err(StoreError::from)?);
                remember(&|m| m.boot_listed = Some(n));
                n
            }
            (None, _) => 0,
        };
        let previews = if filter.unanchored { self.previews(filter).await? } else { Vec::new() };
        let n = previews.len() as u64;
        // The previews have the highest block height: first when newest first, else last.
        let before = if filter.ascending || filter.sort != TxSort::BlockHeight { 0 } else { n };
        let anchored_offset = paging.offset.saturating_sub(before);
        let head: Vec<PageTx> = if before > 0 {
            previews
                .iter()
                .skip(usize::try_from(paging.offset).unwrap_or(usize::MAX))
                .take(paging.limit as usize)
                .cloned()
                .map(PageTx::Mined)
                .collect()
        } else {
            Vec::new()
        };
        let limit = paging.limit.saturating_sub(head.len() as u32);
        let anchored = Paging { limit, offset: anchored_offset };
        let order = list_order(filter, shift);
        // With a boot shift only block 1's rows are ordered otherwise than the index: a page
        // without any of them is the same in the index's order, which needs no sort (a page
        // with one is read again in the shown order).
        let fast = (shift.is_some() && filter.sort == TxSort::BlockHeight).then(|| list_order(filter, None));
        // Every canonical transaction: the count is kept per chain tip (a COUNT over the
        // whole table per request cost seconds on a 1M-tx chain).
        let count = !unfiltered(filter);
        let (mut total, mut rows) = self
            .listed_page(&w.sql, fast.as_ref().unwrap_or(&order), w.vals.clone(), anchored, count)
            .await?;
        // Listed rows are never block 1's (`listed_by_rowid`).
        if fast.is_some() && rows.iter().any(|t| matches!(t, PageTx::Mined(m) if m.block_height == 1)) {
            (total, rows) = self.listed_page(&w.sql, &order, w.vals, anchored, count).await?;
        }
        if !count {
            total = match memo.tx_total {
                Some(n) => n,
                None => self.canonical_tx_total(false).await?,
            };
        }
        let total = total.saturating_sub(boot);
        let mut page = head;
        page.extend(rows);
        if before == 0 && n > 0 {
            // Oldest first (or another sort): the previews follow every anchored row.
            let skip = paging.offset.saturating_sub(total);
            let room = (paging.limit as usize).saturating_sub(page.len());
            page.extend(
                previews
                    .into_iter()
                    .rev()
                    .skip(usize::try_from(skip).unwrap_or(usize::MAX))
                    .take(room)
                    .map(PageTx::Mined),
            );
        }
        Ok((total + n, page))
    }

    async fn block_txs(&self, block: &BlockRef, paging: Paging) -> Result<(u64, Vec<MinedTx>), ReadError> {
        let mut w = Where::new(
            "FROM blocks b JOIN txs t ON t.index_block_hash = b.index_block_hash \
             WHERE b.canonical = true AND t.canonical = true",
        );
        match block {
            BlockRef::Hash(h) => w.and("b.block_hash = ?", h.as_str()),
            BlockRef::Height(h) => w.and("b.block_height = ?", i64::try_from(*h).unwrap_or(i64::MAX)),
        }
        let index = shown_index_sql(self.boot_shift(None).await?);
        // Ties between a boot transaction and one of block 1's own: the boot one first, as recorded.
        let order = format!("{SEQ} DESC, {index} DESC, t.tx_index DESC");
        Ok(self.mined_page(&w.sql, &order, w.vals, paging, true).await?)
    }

    async fn block_known(&self, block: &BlockRef) -> Result<bool, ReadError> {
        let (sql, val): (&str, Val) = match block {
            BlockRef::Hash(h) => {
                ("SELECT 1 AS x FROM blocks WHERE block_hash = $1 LIMIT 1", h.as_str().into())
            }
            BlockRef::Height(h) => (
                "SELECT 1 AS x FROM blocks WHERE block_height = $1 LIMIT 1",
                i64::try_from(*h).unwrap_or(i64::MAX).into(),
            ),
        };
        Ok(select(sql, vec![val]).fetch_optional(self).await.map_err(StoreError::from)?.is_some())
    }

    async fn mempool_list(
        &self,
        filter: &MempoolFilter,
        paging: Paging,
    ) -> Result<(u64, Vec<MempoolTx>), ReadError> {
        let mut w = Where::new("FROM mempool_txs WHERE pruned = false");
        if let Some(a) = &filter.sender_address {
            w.and("sender_address = ?", a.as_str());
        }
        if let Some(a) = &filter.recipient_address {
            w.and("token_transfer_recipient = ?", a.as_str());
        }
        if let Some(a) = &filter.address {
            w.and("(sender_address = ? OR token_transfer_recipient = ? OR contract_id = ?)", a.as_str());
        }
        let o = if filter.ascending { "ASC" } else { "DESC" };
        // Equal fees or sizes in arrival order whichever the direction (first come first, as
        // the incumbent's table returns them), then by tx id (rows stored before `arrival`
        // existed). Equal receipt seconds by tx id: the incumbent's own order for those is not
        // consistent from one query to the next (docs/extended-deviations.md), and its paged
        // answers cut them as the tx id order does.
        let order = match filter.sort {
            MempoolSort::Age => format!("receipt_time {o}, tx_id {o}"),
            MempoolSort::Size => format!("raw_size {o}, arrival ASC, tx_id {o}"),
            MempoolSort::Fee => format!("fee {o}, arrival ASC, tx_id {o}"),
        };
        let (total, rows) = self.count_and_page(MEMPOOL_COLUMNS, &w.sql, &order, w.vals, paging).await?;
        Ok((total, self.mempool_with_abis(&rows).await?))
    }

    async fn mempool_fees(&self) -> Result<Vec<(String, u64)>, ReadError> {
        let rows = select("SELECT tx_type, fee FROM mempool_txs WHERE pruned = false", vec![])
            .fetch_all(self)
            .await
            .map_err(StoreError::from)?;
        Ok(rows
            .iter()
            .map(|r| Ok((r.try_get("tx_type")?, u(r.try_get("fee")?))))
            .collect::<Result<_, sqlx::Error>>()
            .map_err(StoreError::from)?)
    }
}

#[cfg(test)]
mod boot_tests {
    use super::{BootShift, BLOCK_FIELD_COLUMNS, MINED_TX_COLUMNS, PAGE_TX_COLUMNS};

    #[test]
    fn block_fields_are_among_the_columns() {
        assert!(MINED_TX_COLUMNS.contains(BLOCK_FIELD_COLUMNS));
        assert!(PAGE_TX_COLUMNS.contains(BLOCK_FIELD_COLUMNS));
    }

    #[test]
    fn boot_rows_follow_block_ones_own() {
        // epoch-3-transition: block 1 has 5 own txs, block 0's 7 are stored at 5..=11.
        let s = BootShift { own: 5, boot_time: 0 };
        assert!(!s.is_boot(4));
        assert_eq!(s.shown_index(4), 4);
        assert!(s.is_boot(5));
        assert_eq!(s.shown_index(5), 1);
        assert_eq!(s.shown_index(11), 7);
    }
}
