//! Fungible token balances and non-fungible token custody at the tip.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::super::amount::{ft_parse, ft_text};
use super::super::conn::Conn;
use super::super::sql;
use super::super::sql::{fetch_in, insert_rows};
use crate::ledger;
use crate::ledger::block::DerivedBlock;

type FtDeltas = BTreeMap<(String, String), i128>;

/// Each (asset, account)'s FT balance change in a block: its FT operations' effects.
pub(super) fn ft_deltas(token_ops: &[ledger::OpRow]) -> FtDeltas {
    let mut out = FtDeltas::new();
    for o in token_ops {
        let (Some(asset), ledger::effect::AssetClass::Ft) =
            (&o.asset_identifier, ledger::effect::asset_class(&o.op_type))
        else {
            continue;
        };
        *out.entry((asset.clone(), o.account.clone())).or_default() += ledger::effect::of(o).balance();
    }
    out
}

pub(super) async fn apply_ft(conn: &mut Conn, deltas: &FtDeltas, sign: i128) -> Result<(), sqlx::Error> {
    let mut by_asset: BTreeMap<&str, Vec<(&str, i128)>> = BTreeMap::new();
    for ((asset, account), d) in deltas {
        // A zero net change still gets its row when applied: the incumbent keeps one for every
        // account an FT event touched.
        if *d != 0 || sign > 0 {
            by_asset.entry(asset).or_default().push((account, *d * sign));
        }
    }
    for (asset, changes) in by_asset {
        let accounts: Vec<String> = changes.iter().map(|(a, _)| a.to_string()).collect();
        let rows = fetch_in(
            conn,
            "SELECT account, balance FROM ft_balances WHERE asset_identifier = $1 AND account IN ({in})",
            vec![asset.into()],
            &accounts,
        )
        .await?;
        let mut current: HashMap<String, i128> = HashMap::new();
        for r in rows {
            current.insert(r.try_get("account")?, ft_parse(&r.try_get::<String, _>("balance")?));
        }
        let vals = changes
            .iter()
            .map(|(account, d)| {
                let v = current.get(*account).copied().unwrap_or(0) + d;
                vec![asset.into(), (*account).into(), ft_text(v).into()]
            })
            .collect();
        insert_rows(
            conn,
            "ft_balances",
            &["asset_identifier", "account", "balance"],
            vals,
            "ON CONFLICT (asset_identifier, account) DO UPDATE SET balance = excluded.balance",
        )
        .await?;
    }
    Ok(())
}

const NFT_COLS: &[&str] = &[
    "asset_identifier",
    "value_hex",
    "owner",
    "tx_id",
    "index_block_hash",
    "block_height",
    "tx_index",
    "event_index",
];
const NFT_UPSERT: &str = "ON CONFLICT (asset_identifier, value_hex) DO UPDATE SET owner = excluded.owner, \
    tx_id = excluded.tx_id, index_block_hash = excluded.index_block_hash, block_height = excluded.block_height, \
    tx_index = excluded.tx_index, event_index = excluded.event_index";

/// Where a transaction ran within its block: confirmed microblock transactions ran before the
/// block's own, though the block lists them after (the incumbent orders by microblock sequence,
/// with the block's own transactions last).
fn execution_key(micro_seq: Option<i64>, tx_index: i64) -> (i64, i64) {
    (micro_seq.unwrap_or(i64::MAX), tx_index)
}

/// Custody after a canonical block: the last NFT event of each token, in execution order, wins.
pub(super) async fn nft_upsert_from_events(conn: &mut Conn, d: &DerivedBlock) -> Result<(), sqlx::Error> {
    let seq: HashMap<&str, Option<i64>> =
        d.txs.iter().map(|t| (t.tx_id.as_str(), t.microblock_sequence)).collect();
    let mut nft: Vec<&ledger::EventRow> = d.events.iter().filter(|e| e.kind.starts_with("nft_")).collect();
    nft.sort_by_key(|e| {
        (execution_key(seq.get(e.tx_id.as_str()).copied().flatten(), e.tx_index), e.event_index)
    });
    let mut last: BTreeMap<(String, String), &ledger::EventRow> = BTreeMap::new();
    for e in nft {
        if let (Some(a), Some(v)) = (&e.asset_identifier, &e.value_hex) {
            last.insert((a.clone(), v.clone()), e);
        }
    }
    let vals = last
        .into_iter()
        .map(|((a, v), e)| {
            let owner =
                if e.kind == "nft_burn" { String::new() } else { e.recipient.clone().unwrap_or_default() };
            vec![
                a.into(),
                v.into(),
                owner.into(),
                (&e.tx_id).into(),
                (&d.block.index_block_hash).into(),
                d.block.block_height.into(),
                e.tx_index.into(),
                e.event_index.into(),
            ]
        })
        .collect();
    insert_rows(conn, "nft_custody", NFT_COLS, vals, NFT_UPSERT).await
}

/// Recomputes custody of tokens from their latest canonical event (after a reorg).
pub(super) async fn nft_recompute(
    conn: &mut Conn,
    pairs: &BTreeSet<(String, String)>,
) -> Result<(), sqlx::Error> {
    for (asset, value) in pairs {
        let row = sql::fetch_optional(conn, "SELECT e.kind, e.recipient, e.tx_id, e.index_block_hash, e.block_height, e.tx_index, e.event_index \
             FROM events e JOIN txs t ON t.tx_id = e.tx_id AND t.index_block_hash = e.index_block_hash \
             AND t.microblock_hash = e.microblock_hash \
             WHERE e.asset_identifier = $1 AND e.value_hex = $2 AND e.canonical = true AND e.kind LIKE 'nft%' \
             ORDER BY e.block_height DESC, COALESCE(t.microblock_sequence, 9223372036854775807) DESC, \
             e.tx_index DESC, e.event_index DESC LIMIT 1",
            vec![asset.into(), value.into()])
        .await?;
        let vals = match row {
            Some(r) => {
                let kind: String = r.try_get("kind")?;
                let owner = if kind == "nft_burn" {
                    String::new()
                } else {
                    r.try_get::<Option<String>, _>("recipient")?.unwrap_or_default()
                };
                vec![
                    asset.into(),
                    value.into(),
                    owner.into(),
                    r.try_get::<String, _>("tx_id")?.into(),
                    r.try_get::<String, _>("index_block_hash")?.into(),
                    r.try_get::<i64, _>("block_height")?.into(),
                    r.try_get::<i64, _>("tx_index")?.into(),
                    r.try_get::<i64, _>("event_index")?.into(),
                ]
            }
            // No canonical event left: nobody holds it.
            None => vec![
                asset.into(),
                value.into(),
                "".into(),
                "".into(),
                "".into(),
                0i64.into(),
                0i64.into(),
                0i64.into(),
            ],
        };
        insert_rows(conn, "nft_custody", NFT_COLS, vec![vals], NFT_UPSERT).await?;
    }
    Ok(())
}

pub(super) fn nft_pairs(d: &DerivedBlock) -> impl Iterator<Item = (String, String)> + '_ {
    d.events
        .iter()
        .filter(|e| e.kind.starts_with("nft_"))
        .filter_map(|e| Some((e.asset_identifier.clone()?, e.value_hex.clone()?)))
}
