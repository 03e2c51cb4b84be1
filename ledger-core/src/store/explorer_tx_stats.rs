//! The reads behind `/extended/v1/tx/mempool/stats` and `/extended/v1/tx/events`.

use ledger_read::tx::{EventFilter, EventOwner, MempoolStatRow, TxEvent, TxStatsReader};
use ledger_read::{Paging, ReadError};

use super::explorer_tx::{tx_event, EVENT_COLUMNS};
use super::sql::{select, Val};
use super::{Store, StoreError};

fn u(v: i64) -> u64 {
    u64::try_from(v).unwrap_or_default()
}

/// Asset event kinds: matched on the sender or the recipient.
const ASSET_KINDS: [&str; 9] = [
    "stx_transfer",
    "stx_mint",
    "stx_burn",
    "ft_transfer",
    "ft_mint",
    "ft_burn",
    "nft_transfer",
    "nft_mint",
    "nft_burn",
];

/// The branches of the event search, each an index seek: `(condition column, kinds)`. A tx id
/// matches every kind on `tx_id`; a principal matches asset events as sender or recipient,
/// STX locks as the locked address (stored as the sender) and logs as the contract.
fn branches(filter: &EventFilter) -> Vec<(&'static str, Vec<String>)> {
    let wanted = |kinds: &[&str]| -> Vec<String> {
        filter.kinds.iter().filter(|k| kinds.contains(&k.as_str())).cloned().collect()
    };
    let all: Vec<(&'static str, Vec<String>)> = match filter.owner {
        EventOwner::TxId(_) => vec![("tx_id", filter.kinds.clone())],
        EventOwner::Address(_) => {
            let mut sender_kinds = ASSET_KINDS.to_vec();
            sender_kinds.push("stx_lock");
            vec![
                ("sender", wanted(&sender_kinds)),
                ("recipient", wanted(&ASSET_KINDS)),
                ("contract_identifier", wanted(&["contract_log"])),
            ]
        }
    };
    all.into_iter().filter(|(_, kinds)| !kinds.is_empty()).collect()
}

impl TxStatsReader for Store {
    async fn mempool_stat_rows(&self) -> Result<Vec<MempoolStatRow>, ReadError> {
        let rows = select(
            "SELECT tx_type, fee, raw_size, receipt_block_height FROM mempool_txs WHERE pruned = false",
            vec![],
        )
        .fetch_all(self)
        .await
        .map_err(StoreError::from)?;
        let row = |r: &super::db_row::DbRow| -> Result<MempoolStatRow, sqlx::Error> {
            Ok(MempoolStatRow {
                tx_type: r.try_get("tx_type")?,
                fee: u(r.try_get("fee")?),
                byte_size: u(r.try_get("raw_size")?),
                receipt_block_height: u(r.try_get("receipt_block_height")?),
            })
        };
        Ok(rows.iter().map(row).collect::<Result<_, _>>().map_err(StoreError::from)?)
    }

    async fn events_filtered(&self, filter: &EventFilter, paging: Paging) -> Result<Vec<TxEvent>, ReadError> {
        let owner = match &filter.owner {
            EventOwner::TxId(id) => id.clone(),
            EventOwner::Address(a) => a.clone(),
        };
        let mut vals: Vec<Val> = vec![owner.into()];
        let columns = EVENT_COLUMNS.split(", ").map(|c| format!("e.{c}")).collect::<Vec<_>>().join(", ");
        // One SELECT per branch, combined with UNION (as the incumbent does: an event that
        // matches two branches, a self-transfer, is listed once).
        let mut selects = Vec::new();
        for (column, kinds) in branches(filter) {
            let list: Vec<String> = kinds
                .into_iter()
                .map(|k| {
                    vals.push(k.into());
                    format!("${}", vals.len())
                })
                .collect();
            selects.push(format!(
                "SELECT {columns}, e.block_height AS h, COALESCE(t.microblock_sequence, 2147483647) AS seq, \
                 e.tx_index AS ti FROM events e JOIN txs t ON t.tx_id = e.tx_id \
                 AND t.index_block_hash = e.index_block_hash AND t.microblock_hash = e.microblock_hash \
                 WHERE e.{column} = $1 AND e.canonical = true AND e.kind IN ({})",
                list.join(", ")
            ));
        }
        let n = vals.len();
        vals.push(i64::from(paging.limit).into());
        vals.push(i64::try_from(paging.offset).unwrap_or(i64::MAX).into());
        let sql = format!(
            "{} ORDER BY h DESC, seq DESC, ti DESC, event_index DESC LIMIT ${} OFFSET ${}",
            selects.join(" UNION "),
            n + 1,
            n + 2
        );
        let rows = select(&sql, vals).fetch_all(self).await.map_err(StoreError::from)?;
        Ok(rows.iter().map(tx_event).collect::<Result<_, _>>().map_err(StoreError::from)?)
    }
}
