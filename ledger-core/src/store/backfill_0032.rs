//! Migration 0032's backfill, run once by `Store::open`: the materialized parts of the stored
//! text (`txs.api_json`, [`TxRender::materialized`]) of transactions stored before the column
//! existed, derived from each row's stored bytes as ingestion derives them (`backfill_txs`:
//! keyset pages, one commit each).

use ledger_read::TxRender;

use super::backfill_txs::rewrite_api_json;
use super::conn::Conn;
use super::sql::get_bool;

pub(super) async fn backfill(conn: &mut Conn, render: &dyn TxRender) -> Result<(), sqlx::Error> {
    let columns = "t.tx_id, t.raw_tx, t.synthetic_tx, t.raw_result, \
                   (CASE WHEN t.is_burnchain_op THEN 1 ELSE 0 END) AS is_burnchain_op";
    let log = ("tx_api_json", "migration 0032", "materialized transaction JSON of stored transactions");
    rewrite_api_json(conn, log, columns, "t.api_json IS NULL", |r| {
        let tx_id: String = r.try_get("tx_id")?;
        let raw: String = match r.try_get::<Option<String>, _>("synthetic_tx")? {
            Some(s) => s,
            None => r.try_get("raw_tx")?,
        };
        let raw_result: String = r.try_get("raw_result")?;
        let json = render
            .materialized_from_raw(&tx_id, &raw, get_bool(r, "is_burnchain_op")?, &raw_result)
            // Every stored transaction was decoded when it was stored; one that no longer
            // does keeps an empty value, which the renderer reports as it did before.
            .unwrap_or_default();
        Ok(Some(json))
    })
    .await
}
