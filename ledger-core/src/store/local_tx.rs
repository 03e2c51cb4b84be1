//! The one write path for a transaction we (not the node) put into the mempool: a Rosetta
//! `/construction/submit`, a `/v2/transactions` broadcast the node accepted, a faucet transfer.
//!
//! Raw-log policy: the raw event log stays exactly what the node sent, so `export-events` is
//! the node's stream and a replay reproduces it. A local transaction is a mempool row (the
//! same row the node's `/new_mempool_tx` for it makes, which, when it comes, changes nothing
//! more), a `local_txs` row naming its source, and a change note for the response caches, all
//! in one database transaction. Live subscribers learn of it at once: on PostgreSQL through a
//! NOTIFY sent in that transaction (every API process LISTENs); on SQLite through
//! [`Store::local_txs_recorded`] in this process, and `local_txs` (followed like `raw_events`)
//! in the others.

use ledger_read::{LocalSource, LocalTxError, LocalTxOutcome, LocalTxSink, RecordFuture};
use tokio::sync::broadcast;

use super::sql::{self, select};
use super::{write, Engine, Store, StoreError, LIVE_CHANNEL};
use crate::events::payload::NewMempoolTx;
use crate::events::EventPayload;

/// The store's failures are the sink's `Store` error (shown as the store's own).
impl From<StoreError> for LocalTxError {
    fn from(e: StoreError) -> Self {
        LocalTxError::Store(Box::new(e))
    }
}

/// A `local_txs` row, as other processes follow them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalTx {
    pub id: i64,
    pub tx_id: String,
    pub source: String,
}

/// How many recorded transactions a slow in-process listener may lag behind before it misses
/// some (it then still sees them through `local_txs`).
pub(super) const RECORDED_QUEUE: usize = 1024;

pub(super) fn recorded_channel() -> broadcast::Sender<String> {
    broadcast::channel(RECORDED_QUEUE).0
}

impl Store {
    /// Records `raw_tx` (consensus bytes), which `source` put into the node's mempool, in ours.
    /// Idempotent: a transaction already in the mempool (or mined) is left as it is. Bad input
    /// is refused before the database is touched; a database failure rolls everything back.
    pub async fn record_local_tx(
        &self,
        raw_tx: &[u8],
        source: LocalSource,
    ) -> Result<LocalTxOutcome, LocalTxError> {
        let payload = NewMempoolTx { raw_txs: vec![format!("0x{}", hex::encode(raw_tx))] };
        // Decoded first: what cannot become a mempool row changes nothing.
        let rows = crate::ledger::mempool::mempool_rows(&payload, self.network)
            .map_err(|e| LocalTxError::Invalid(e.to_string()))?;
        let [row] = rows.as_slice() else {
            return Err(LocalTxError::Invalid("expected one transaction".into()));
        };
        let tx_id = row.tx_id.clone();
        let receipt_time = super::now_unix();
        let payload = EventPayload::NewMempoolTx(payload);
        let mut writer = self.writer.lock().await;
        let conn = self.writer_conn(&mut writer).await.map_err(StoreError::from)?;
        let result = async {
            let mut tx = conn.begin().await?;
            let known = sql::fetch_optional(
                &mut tx,
                "SELECT tx_id FROM mempool_txs WHERE tx_id = $1",
                vec![tx_id.as_str().into()],
            )
            .await?
            .is_some();
            if known {
                tx.rollback().await?;
                return Ok(false);
            }
            // Arrival order: after what the newest raw event brought in.
            let newest: i64 =
                sql::fetch_one(&mut tx, "SELECT COALESCE(MAX(id), 0) AS id FROM raw_events", vec![])
                    .await?
                    .try_get("id")?;
            let ctx = write::Ctx {
                network: self.network,
                render: &*self.render,
                raw_event_id: newest + 1,
                receipt_time,
            };
            // A mempool transaction changes no maintained totals; flushed all the same.
            let mut totals = super::totals::Pending::default();
            write::apply(&mut tx, &ctx, &payload, None, &mut totals).await?;
            totals.flush(&mut tx).await?;
            sql::exec(
                &mut tx,
                "INSERT INTO local_txs (tx_id, source, recorded_at) VALUES ($1, $2, $3)",
                vec![tx_id.as_str().into(), source.as_str().into(), receipt_time.into()],
            )
            .await?;
            // No raw event marks this change: the response caches learn it from here.
            write::note_change(&mut tx).await?;
            if self.engine() == Engine::Postgres {
                // Delivered at the commit, to every process LISTENing (this one too).
                let change = ledger_read::Change::MempoolAdded { tx_ids: vec![tx_id.clone()] };
                let note = serde_json::to_string(&change).expect("a change serialises");
                // Wrapped: the `Any` driver cannot carry the function's `void` result.
                sql::exec(
                    &mut tx,
                    "SELECT CAST(1 AS BIGINT) AS sent FROM (SELECT pg_notify($1, $2)) AS n",
                    vec![LIVE_CHANNEL.into(), note.into()],
                )
                .await?;
            }
            tx.commit().await?;
            Ok::<_, super::ApplyError>(true)
        }
        .await;
        let added = match result {
            Ok(added) => added,
            Err(super::ApplyError::Store(e)) => {
                self.drop_writer(&mut writer).await;
                return Err(e.into());
            }
            Err(e) => return Err(LocalTxError::Invalid(e.to_string())),
        };
        drop(writer);
        if !added {
            return Ok(LocalTxOutcome::Known { tx_id });
        }
        if self.engine() == Engine::Sqlite {
            // Nobody listening is fine: other processes follow `local_txs`.
            let _ = self.local_recorded.send(tx_id.clone());
        }
        tracing::debug!(%tx_id, source = source.as_str(), "local transaction entered the mempool");
        Ok(LocalTxOutcome::Added { tx_id })
    }

    /// The ids of transactions this process records with [`Store::record_local_tx`] from now on
    /// (SQLite; on PostgreSQL the live channel's NOTIFY carries them).
    pub fn local_txs_recorded(&self) -> broadcast::Receiver<String> {
        self.local_recorded.subscribe()
    }

    /// The `local_txs` rows after `after` (all when `None`), oldest first, at most `limit`.
    pub async fn local_txs_after(
        &self,
        after: Option<i64>,
        limit: usize,
    ) -> Result<Vec<LocalTx>, StoreError> {
        let rows = select(
            "SELECT id, tx_id, source FROM local_txs WHERE id > $1 ORDER BY id LIMIT $2",
            vec![after.unwrap_or(i64::MIN).into(), (limit.min(i64::MAX as usize) as i64).into()],
        )
        .fetch_all(self)
        .await?;
        Ok(rows
            .iter()
            .map(|r| {
                Ok(LocalTx { id: r.try_get("id")?, tx_id: r.try_get("tx_id")?, source: r.try_get("source")? })
            })
            .collect::<Result<_, sqlx::Error>>()?)
    }

    /// The newest `local_txs` row's id.
    pub async fn last_local_tx_id(&self) -> Result<Option<i64>, StoreError> {
        let row =
            select("SELECT id FROM local_txs ORDER BY id DESC LIMIT 1", vec![]).fetch_optional(self).await?;
        Ok(row.map(|r| r.try_get("id")).transpose()?)
    }
}

/// The surfaces' one write path ([`Store::record_local_tx`]).
impl LocalTxSink for Store {
    fn record<'a>(&'a self, raw_tx: &'a [u8], source: LocalSource) -> RecordFuture<'a> {
        Box::pin(self.record_local_tx(raw_tx, source))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::RawEventLog;

    #[tokio::test]
    async fn bad_input_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}/db.sqlite", dir.path().display());
        let store =
            Store::open(&url, crate::ledger::Network::Testnet, crate::test_render::marked()).await.unwrap();
        let err = store.record_local_tx(&[0x80, 0x00, 0x01], LocalSource::RosettaSubmit).await.unwrap_err();
        assert!(matches!(err, LocalTxError::Invalid(_)), "{err}");
        assert!(store.local_txs_after(None, 10).await.unwrap().is_empty());
        assert!(store.is_empty().await.unwrap());
        store.close().await;
    }
}
