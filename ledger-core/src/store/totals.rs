//! Per-account totals maintained at ingest (migration 0017): the tip's STX sums and FT/NFT asset
//! totals that `/extended/v1/address/{p}/balances` and `/stx` used to sum over the account's
//! whole history on every request (seconds for a busy account).
//!
//! The rule that keeps them equal to the sums over the canonical rows: a block's rows count
//! from the moment the block is canonical, so [`apply`] adds a block's operations and asset
//! events when it becomes canonical (`canonicalize`, for new blocks and for a restored fork)
//! and subtracts them, with the same rows re-derived, when a reorg orphans it (next to the FT
//! balances, which follow the same rule). Unconfirmed microblock rows are never canonical, and
//! confirmed microblock transactions belong to their anchor block, so a microblock fork changes
//! nothing here. `tests/read_paths.rs` compares both with the recomputed sums at every tip.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::amount::{ft_parse, ft_text};
use super::conn::Conn;
use super::rows::{account_vals, ACCOUNT_COLS, ACCOUNT_UPSERT};
use super::sql;
use super::sql::{exec, exec_in, fetch_in, insert_rows, text_list_table, Val};
use super::write::Inserts;
use crate::ledger::block::DerivedBlock;
use crate::ledger::effect;
use crate::ledger::ops::token_operations;
use crate::ledger::{AccountState, EventRow, OpRow};

/// STX sums of one account: sent, received, fees, miner rewards (µSTX).
type Stx = [i64; 4];

/// `(account, asset, "ft"|"nft")` → (sent, received, events).
type Assets = BTreeMap<(String, String, &'static str), (i128, i128, i64)>;

/// The STX sums an operation adds to its account (as `stx_totals_at` sums them): the amounts
/// are the operation's [`effect`], the operation types are the ones these totals count.
fn stx_of(op_type: &str, status: &str, amount: Option<i64>) -> Option<Stx> {
    let a = amount.filter(|_| status == "success")?;
    if !matches!(op_type, "token_transfer" | "mint" | "burn" | "fee" | "miner_reward") {
        return None;
    }
    let e = effect::effect(op_type, status, Some(a), None, 0);
    let v = |x: u128| i64::try_from(x).unwrap_or(i64::MAX);
    Some([v(e.sent), v(e.received), v(e.fee), v(e.miner_reward)])
}

/// Adds one FT/NFT operation's [`effect`] to `out` (as `asset_totals_at` counts the events:
/// a transfer's debit counts for its sender, its credit for its recipient).
fn add_token_op(out: &mut Assets, o: &OpRow, sign: i128) {
    let class = match effect::asset_class(&o.op_type) {
        effect::AssetClass::Ft => "ft",
        effect::AssetClass::Nft => "nft",
        effect::AssetClass::Stx => return,
    };
    let Some(asset) = &o.asset_identifier else { return };
    let e = effect::of(o);
    let i = |x: u128| i128::try_from(x).unwrap_or(0);
    let t = out.entry((o.account.clone(), asset.clone(), class)).or_default();
    t.0 += i(e.sent) * sign;
    t.1 += i(e.received) * sign;
    t.2 += sign as i64;
}

/// The totals' changes of the blocks applied in one store transaction, written once when the
/// transaction is about to commit ([`Pending::flush`]) instead of once per block: an import
/// batch of 500 events holds ~30 blocks, and a busy principal appears in most of them, so its
/// running count is read once and its totals written once per batch. The sums are additive, so
/// the order of the blocks does not matter to them; the principal-list rows continue the
/// running counts in the order their blocks became canonical, and a reorg flushes first
/// (`write::canonical::restore_chain`), so that the rows it deletes are all stored and every pending row
/// continues the canonical chain. Nothing reads these tables on the writer's connection
/// between two flushes, but for `stx_accounts`, which the next block's materialization reads
/// through [`Pending::account`] and [`Pending::accounts`] before the stored rows.
#[derive(Default)]
pub struct Pending {
    stx: HashMap<String, Stx>,
    assets: Assets,
    /// principal → its listed entries per block `(height, index_block_hash, n, n_boot)`, in the
    /// order the blocks became canonical.
    lists: HashMap<String, Vec<(i64, String, i64, i64)>>,
    /// Accounts for `stx_holders` (insert-only: a set, written once per flush).
    holders: BTreeSet<String>,
    /// The tip's account states (`stx_accounts`) the blocks set, with the height that set
    /// each: newer than the stored rows, read before them ([`Pending::account`]) and written
    /// once at the flush. A busy account changes in most blocks of a batch, and on PostgreSQL
    /// each upsert left a row version that the batch's later lookups (the per-block unlock
    /// scan) still had to walk.
    accounts: HashMap<String, (AccountState, i64)>,
}

impl Pending {
    /// Adds (`sign` 1) or subtracts (`sign` −1) a block's operations and asset events.
    pub(super) fn apply(&mut self, d: &DerivedBlock, sign: i64) {
        for o in &d.ops {
            if let Some(s) = stx_of(&o.op_type, &o.status, o.amount) {
                let t = match self.stx.get_mut(o.account.as_str()) {
                    Some(t) => t,
                    None => self.stx.entry(o.account.clone()).or_default(),
                };
                for (t, s) in t.iter_mut().zip(s) {
                    *t += s * sign;
                }
            }
        }
        for o in &d.token_ops {
            add_token_op(&mut self.assets, o, i128::from(sign));
        }
    }

    /// Records the principal-list counts of a block that just became canonical on top of the
    /// canonical chain (`account_block_txs`): each principal's listed entries in the block; the
    /// running counts are computed at the flush.
    pub(super) fn add_tx_lists(&mut self, d: &DerivedBlock) {
        let mut counts: BTreeMap<&str, (i64, i64)> = BTreeMap::new();
        for a in d.account_txs.iter().filter(|a| a.listed) {
            let c = counts.entry(&a.principal).or_default();
            c.0 += 1;
            c.1 += i64::from(a.boot);
        }
        let b = &d.block;
        for (p, (n, nb)) in counts {
            let row = (b.block_height, b.index_block_hash.clone(), n, nb);
            match self.lists.get_mut(p) {
                Some(v) => v.push(row),
                None => {
                    self.lists.insert(p.to_string(), vec![row]);
                }
            }
        }
    }

    /// The state of `account` set in this transaction, if any (newer than its stored row).
    pub(super) fn account(&self, account: &str) -> Option<&AccountState> {
        self.accounts.get(account).map(|(s, _)| s)
    }

    /// The accounts set in this transaction, with their states.
    pub(super) fn accounts(&self) -> impl Iterator<Item = (&String, &AccountState)> {
        self.accounts.iter().map(|(a, (s, _))| (a, s))
    }

    /// Sets the tip state of `account` after the block at `block_height`.
    pub(super) fn set_account(&mut self, account: &str, state: AccountState, block_height: i64) {
        match self.accounts.get_mut(account) {
            Some(e) => *e = (state, block_height),
            None => {
                self.accounts.insert(account.to_string(), (state, block_height));
            }
        }
    }

    /// Records accounts the incumbent keeps an 'stx' balance row for (`stx_holders`).
    pub(super) fn add_stx_holders<'a>(&mut self, accounts: impl Iterator<Item = &'a str>) {
        for a in accounts {
            if !self.holders.contains(a) {
                self.holders.insert(a.to_string());
            }
        }
    }

    /// Writes what was gathered since the last flush and forgets it: one read of the asset
    /// totals per asset and one of the touched principals' highest principal-list rows, then
    /// the upserts of the STX sums and asset totals and the inserts of the `stx_holders`
    /// accounts and principal-list rows, sent together (`write::Inserts`: one statement on
    /// PostgreSQL, where each is a round trip).
    pub(super) async fn flush(&mut self, conn: &mut Conn) -> Result<(), sqlx::Error> {
        let stx = std::mem::take(&mut self.stx);
        let assets = std::mem::take(&mut self.assets);
        let lists = std::mem::take(&mut self.lists);
        let holders = std::mem::take(&mut self.holders);
        let accounts = account_rows(std::mem::take(&mut self.accounts));
        let asset_rows = add_assets(conn, assets).await?;
        let list_rows = add_lists(conn, lists).await?;
        let mut ins = Inserts::default();
        let rows = holders.into_iter().map(|a| vec![a.into()]).collect();
        ins.add_with("stx_holders", &["account"], rows, "ON CONFLICT (account) DO NOTHING");
        ins.add_with("account_stx_totals", STX_COLS, add_stx(stx), STX_UPSERT);
        ins.add_with("account_asset_totals", ASSET_COLS, asset_rows, ASSET_UPSERT);
        ins.add("account_block_txs", TX_LIST_COLS, list_rows);
        ins.add_with("stx_accounts", ACCOUNT_COLS, accounts, ACCOUNT_UPSERT);
        ins.send(conn).await
    }
}

/// The `stx_accounts` rows of `accounts`, sorted: the same key order in every transaction.
fn account_rows(accounts: HashMap<String, (AccountState, i64)>) -> Vec<Vec<Val>> {
    let accounts: BTreeMap<String, (AccountState, i64)> = accounts.into_iter().collect();
    accounts.iter().map(|(a, (s, height))| account_vals(a, s, *height)).collect()
}

const STX_UPSERT: &str =
    "ON CONFLICT (account) DO UPDATE SET total_sent = account_stx_totals.total_sent + excluded.total_sent, \
     total_received = account_stx_totals.total_received + excluded.total_received, \
     total_fees_sent = account_stx_totals.total_fees_sent + excluded.total_fees_sent, \
     total_miner_rewards = account_stx_totals.total_miner_rewards + excluded.total_miner_rewards";

const ASSET_UPSERT: &str =
    "ON CONFLICT (account, asset_identifier, kind) DO UPDATE SET total_sent = excluded.total_sent, \
     total_received = excluded.total_received, events = excluded.events";

/// The rows adding `stx` to the STX sums (upserted with [`STX_UPSERT`]).
fn add_stx(stx: HashMap<String, Stx>) -> Vec<Vec<Val>> {
    // Sorted: the same key order in every transaction (and on every engine).
    let stx: BTreeMap<String, Stx> = stx.into_iter().collect();
    stx.into_iter().map(|(a, s)| vec![a.into(), s[0].into(), s[1].into(), s[2].into(), s[3].into()]).collect()
}

/// The pending principal-list rows to append, each principal's running counts continued from
/// its highest stored row (every stored row is canonical and below the pending ones).
async fn add_lists(
    conn: &mut Conn,
    lists: HashMap<String, Vec<(i64, String, i64, i64)>>,
) -> Result<Vec<Vec<Val>>, sqlx::Error> {
    if lists.is_empty() {
        return Ok(Vec::new());
    }
    let lists: BTreeMap<String, Vec<(i64, String, i64, i64)>> = lists.into_iter().collect();
    let principals: Vec<String> = lists.keys().cloned().collect();
    // Each principal's highest row, one backward seek on the primary key per principal. Driven
    // from the list: `principal IN (…) AND block_height = (SELECT MAX …)` visited every row of
    // every listed principal (both engines), so each block read the busy principals' whole
    // history again: quadratic in the chain, most of the totals' cost.
    let (list, val) = text_list_table(conn, 1, &principals);
    let sql = format!(
        "SELECT l.item AS principal, \
         (SELECT x.cum FROM account_block_txs x WHERE x.principal = l.item ORDER BY x.block_height DESC LIMIT 1) AS cum, \
         (SELECT x.cum_boot FROM account_block_txs x WHERE x.principal = l.item ORDER BY x.block_height DESC LIMIT 1) AS cum_boot \
         FROM {list}"
    );
    let found = sql::fetch_all(conn, &sql, vec![val]).await?;
    let mut prior: HashMap<String, (i64, i64)> = HashMap::with_capacity(found.len());
    for r in found {
        let (cum, cum_boot): (Option<i64>, Option<i64>) = (r.try_get("cum")?, r.try_get("cum_boot")?);
        if let (Some(c), Some(b)) = (cum, cum_boot) {
            prior.insert(r.try_get("principal")?, (c, b));
        }
    }
    let mut rows = Vec::new();
    for (p, blocks) in lists {
        let (mut cum, mut cum_boot) = prior.get(&p).copied().unwrap_or_default();
        for (height, ibh, n, nb) in blocks {
            cum += n;
            cum_boot += nb;
            rows.push(vec![
                p.as_str().into(),
                height.into(),
                ibh.into(),
                n.into(),
                nb.into(),
                cum.into(),
                cum_boot.into(),
            ]);
        }
    }
    Ok(rows)
}

/// Forgets the principal-list counts of blocks a reorg orphans (all above the fork point).
/// The caller has flushed [`Pending`] first.
pub(super) async fn remove_tx_lists(conn: &mut Conn, blocks: &[String]) -> Result<(), sqlx::Error> {
    exec_in(conn, "DELETE FROM account_block_txs WHERE index_block_hash IN ({in})", vec![], blocks).await?;
    Ok(())
}

const TX_LIST_COLS: &[&str] =
    &["principal", "block_height", "index_block_hash", "n", "n_boot", "cum", "cum_boot"];
const STX_COLS: &[&str] =
    &["account", "total_sent", "total_received", "total_fees_sent", "total_miner_rewards"];
const ASSET_COLS: &[&str] =
    &["account", "asset_identifier", "kind", "total_sent", "total_received", "events"];

/// The asset totals with `deltas` added, to upsert with [`ASSET_UPSERT`] (read, add, write:
/// u128 text cannot be added in SQL).
async fn add_assets(conn: &mut Conn, deltas: Assets) -> Result<Vec<Vec<Val>>, sqlx::Error> {
    if deltas.is_empty() {
        return Ok(Vec::new());
    }
    // One read per asset, of the accounts the block touches.
    let mut by_asset: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for (account, asset, _) in deltas.keys() {
        by_asset.entry(asset).or_default().push(account.clone());
    }
    let mut current: HashMap<(String, String, String), (i128, i128, i64)> = HashMap::new();
    for (asset, accounts) in by_asset {
        let rows = fetch_in(
            conn,
            "SELECT account, kind, total_sent, total_received, events FROM account_asset_totals \
             WHERE asset_identifier = $1 AND account IN ({in})",
            vec![asset.into()],
            &accounts,
        )
        .await?;
        for r in rows {
            current.insert(
                (r.try_get("account")?, asset.to_string(), r.try_get("kind")?),
                (
                    ft_parse(&r.try_get::<String, _>("total_sent")?),
                    ft_parse(&r.try_get::<String, _>("total_received")?),
                    r.try_get("events")?,
                ),
            );
        }
    }
    let rows = deltas
        .into_iter()
        .map(|((account, asset, kind), (s, r, n))| -> Vec<Val> {
            let key = (account, asset, kind.to_string());
            let (s0, r0, n0) = current.get(&key).copied().unwrap_or_default();
            let (account, asset, kind) = key;
            vec![
                account.into(),
                asset.into(),
                kind.into(),
                ft_text(s0 + s).into(),
                ft_text(r0 + r).into(),
                (n0 + n).into(),
            ]
        })
        .collect();
    Ok(rows)
}

/// Fills `account_asset_totals` from the canonical events of a store migrated to 0017 with
/// events already stored (the migration leaves a `pending_backfills` row for it); one
/// transaction, run by `Store::open` before anything else uses the store.
pub(super) async fn backfill(conn: &mut Conn) -> Result<(), sqlx::Error> {
    let pending = sql::fetch_optional(
        conn,
        "SELECT name FROM pending_backfills WHERE name = 'account_asset_totals'",
        vec![],
    )
    .await?;
    if pending.is_none() {
        return Ok(());
    }
    tracing::info!("migration 0017: summing the canonical asset events per account (once)");
    let mut tx = conn.begin().await?;
    let mut assets = Assets::new();
    sql::for_each(
        &mut tx,
        "SELECT kind, sender, recipient, asset_identifier, amount FROM events \
         WHERE (CASE WHEN canonical THEN 1 ELSE 0 END) = 1 \
         AND kind IN ('ft_transfer', 'ft_mint', 'ft_burn', 'nft_transfer', 'nft_mint', 'nft_burn')",
        vec![],
        |r| {
            let ev = EventRow {
                kind: r.try_get("kind")?,
                sender: r.try_get("sender")?,
                recipient: r.try_get("recipient")?,
                asset_identifier: r.try_get("asset_identifier")?,
                amount: r.try_get("amount")?,
                ..EventRow::default()
            };
            for o in token_operations("", 0, std::slice::from_ref(&ev)) {
                add_token_op(&mut assets, &o, 1);
            }
            Ok(true)
        },
    )
    .await?;
    exec(&mut tx, "DELETE FROM account_asset_totals", vec![]).await?;
    let rows = assets
        .into_iter()
        .map(|((account, asset, kind), (s, r, n))| {
            vec![account.into(), asset.into(), kind.into(), ft_text(s).into(), ft_text(r).into(), n.into()]
        })
        .collect();
    insert_rows(&mut tx, "account_asset_totals", ASSET_COLS, rows, "").await?;
    exec(&mut tx, "DELETE FROM pending_backfills WHERE name = 'account_asset_totals'", vec![]).await?;
    sql::note_change(&mut tx).await?;
    tx.commit().await
}

impl super::Store {
    /// Sums the asset totals again from the canonical events, as migration 0017's backfill
    /// does for a store that already has events (on the writer's connection, between events).
    /// For tests of the backfill and for repairs.
    pub async fn rebuild_asset_totals(&self) -> Result<(), super::StoreError> {
        // On the writer's connection, held so that nothing else writes meanwhile.
        let mut writer = self.writer.lock().await;
        let conn = self.writer_conn(&mut writer).await?;
        exec(conn, "DELETE FROM pending_backfills WHERE name = 'account_asset_totals'", vec![]).await?;
        exec(conn, "INSERT INTO pending_backfills (name) VALUES ('account_asset_totals')", vec![]).await?;
        backfill(conn).await?;
        Ok(())
    }

    /// The accounts whose kept totals (`account_stx_totals`, `account_asset_totals`) differ
    /// from the sums recomputed from their canonical history: every account with an operation,
    /// an asset event or a kept row is checked. Empty when the write path is right; for tests
    /// and audits (it reads every account's whole history).
    pub async fn account_totals_mismatches(&self) -> Result<Vec<String>, super::StoreError> {
        let rows = sql::select(
            "SELECT account AS a FROM operations UNION SELECT sender FROM events WHERE sender IS NOT NULL \
             UNION SELECT recipient FROM events WHERE recipient IS NOT NULL \
             UNION SELECT account FROM account_stx_totals UNION SELECT account FROM account_asset_totals",
            vec![],
        )
        .fetch_all(self)
        .await?;
        let mut bad = Vec::new();
        for r in rows {
            let a: String = r.try_get("a")?;
            let stx_ok = self.stx_sums_kept(&a).await? == self.stx_sums_at(&a, None).await?;
            let assets_ok = self.asset_totals_kept(&a).await? == self.asset_totals_summed(&a, None).await?;
            if !stx_ok || !assets_ok {
                bad.push(a);
            }
        }
        Ok(bad)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stx_sums_follow_the_operation_type() {
        assert_eq!(stx_of("token_transfer", "success", Some(-5)), Some([5, 0, 0, 0]));
        assert_eq!(stx_of("token_transfer", "success", Some(7)), Some([0, 7, 0, 0]));
        assert_eq!(stx_of("fee", "success", Some(-3)), Some([0, 0, 3, 0]));
        assert_eq!(stx_of("miner_reward", "success", Some(9)), Some([0, 0, 0, 9]));
        assert_eq!(stx_of("fee", "abort_by_response", Some(-3)), None);
        assert_eq!(stx_of("stx_lock", "success", Some(-3)), None);
        assert_eq!(stx_of("contract_call", "success", None), None);
    }

    fn add(
        a: &mut Assets,
        kind: &str,
        s: Option<&str>,
        r: Option<&str>,
        asset: &str,
        amount: Option<&str>,
        sign: i128,
    ) {
        let ev = EventRow {
            kind: kind.into(),
            sender: s.map(Into::into),
            recipient: r.map(Into::into),
            asset_identifier: Some(asset.into()),
            amount: amount.map(Into::into),
            ..EventRow::default()
        };
        for o in token_operations("", 0, &[ev]) {
            add_token_op(a, &o, sign);
        }
    }

    #[test]
    fn asset_events_add_and_subtract() {
        let mut a = Assets::new();
        let big = "1267650600228229401496703205376"; // 2^100: beyond i64
        add(&mut a, "ft_transfer", Some("A"), Some("B"), "t::x", Some(big), 1);
        add(&mut a, "nft_mint", None, Some("A"), "n::y", None, 1);
        assert_eq!(a[&("A".into(), "t::x".into(), "ft")], (1i128 << 100, 0, 1));
        assert_eq!(a[&("B".into(), "t::x".into(), "ft")].1, ft_parse(big));
        assert_eq!(a[&("A".into(), "n::y".into(), "nft")], (0, 1, 1));
        add(&mut a, "nft_mint", None, Some("A"), "n::y", None, -1);
        assert_eq!(a[&("A".into(), "n::y".into(), "nft")], (0, 0, 0));
        add(&mut a, "stx_transfer", Some("A"), Some("B"), "", Some("5"), 1);
        assert_eq!(a.len(), 3);
    }
}
