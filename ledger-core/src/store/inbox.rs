//! The event inbox: node events acknowledged once logged, applied after (`ingest::inbox`).
//! This is its SQL; the order, the queue and the applier are in `ingest::inbox`.
//!
//! Where it lives: on PostgreSQL, the `event_inbox` table (migration 0046), written on a
//! connection of its own beside the writer's. On a SQLite file, the same table in a file of
//! its own next to the database (`<file>-inbox`, WAL, `synchronous = NORMAL` like the
//! database): SQLite has one writer per file, and an inbox in the database file would make
//! every POST wait for the batch being applied.
//!
//! A logged event has the raw-event id it will keep. The applier applies events in id order,
//! so an inbox row is applied exactly when its id is at most `raw_events`' highest; those rows
//! are deleted later ([`EventInbox::inbox_trim`]), the others applied at the next start.

use super::conn::Conn;
use super::lite::LiteWriter;
use super::sql::{exec, fetch_all};
use super::{parse, sqlite_path, ApplyError, Store, StoreError};
use crate::events::EventPath;
use crate::ingest::{EventInbox, IncomingEvent, IngestError};

/// The inbox table, as the SQLite inbox file creates it (PostgreSQL: migration 0046).
const INBOX_TABLE: &str = "CREATE TABLE IF NOT EXISTS event_inbox (\
     id BIGINT PRIMARY KEY, receive_timestamp TEXT NOT NULL, event_path TEXT NOT NULL, payload TEXT NOT NULL)";

/// Where the inbox of the SQLite database file `path` lives.
pub fn sqlite_inbox_path(path: &str) -> String {
    format!("{path}-inbox")
}

impl Store {
    /// Runs `f` on the connection the inbox is on (see the module doc). A connection that
    /// failed is closed; the next call opens another.
    async fn on_inbox<T>(
        &self,
        f: impl for<'c> FnOnce(&'c mut Conn) -> futures_util::future::BoxFuture<'c, Result<T, sqlx::Error>>,
    ) -> Result<T, StoreError> {
        if self.readonly {
            return Err(StoreError::Schema("a readonly process does not ingest events".into()));
        }
        let mut slot = self.inbox_conn.lock().await;
        if slot.is_none() {
            *slot = Some(match self.sqlite_file() {
                Some(path) => {
                    let mut conn =
                        Conn::lite(LiteWriter::create(&sqlite_inbox_path(path), super::LIVE_PAGE_SIZE)?);
                    conn.batch(INBOX_TABLE).await?;
                    conn
                }
                None => Conn::sqlx(self.write_pool()?.acquire().await?.detach()),
            });
        }
        let conn = slot.as_mut().expect("inbox connection just set");
        let result = f(conn).await;
        if result.is_err() {
            self.drop_writer(&mut slot).await;
        }
        Ok(result?)
    }

    /// A SQLite file whose inbox file was never made (no event was ever logged): nothing to
    /// read or delete, and no file is made to find that out (`serve --event-ack applied`).
    fn no_inbox_file(&self) -> bool {
        self.sqlite_file().is_some_and(|p| !std::path::Path::new(&sqlite_inbox_path(p)).exists())
    }

    /// The SQLite database file, when the store is one.
    fn sqlite_file(&self) -> Option<&str> {
        sqlite_path(&self.url)
    }

    /// The highest raw-event id stored (0 when none): the inbox rows up to it are applied.
    async fn applied_upto(&self) -> Result<i64, StoreError> {
        Ok(self.read_last_event_id().await?.unwrap_or(0))
    }

    /// Empties the inbox (with `wipe`).
    pub(super) async fn inbox_clear(&self) -> Result<(), StoreError> {
        if self.no_inbox_file() {
            return Ok(());
        }
        self.on_inbox(|conn| Box::pin(async move { exec(conn, "DELETE FROM event_inbox", vec![]).await }))
            .await?;
        Ok(())
    }
}

impl EventInbox for Store {
    async fn inbox_next_id(&self) -> Result<i64, IngestError> {
        let raw = self.applied_upto().await?;
        if self.no_inbox_file() {
            return Ok(raw + 1);
        }
        let logged = self
            .on_inbox(|conn| {
                Box::pin(async move {
                    let rows =
                        fetch_all(conn, "SELECT COALESCE(MAX(id), 0) AS id FROM event_inbox", vec![]).await?;
                    rows.first().map_or(Ok(0), |r| r.try_get::<i64, _>("id"))
                })
            })
            .await?;
        Ok(raw.max(logged) + 1)
    }

    /// Parses the body first: an invalid event is refused here, before anything is written or
    /// acknowledged, exactly as `ingest` refuses it. One statement, committed on its own.
    async fn inbox_put(&self, event: &IncomingEvent) -> Result<(), IngestError> {
        let path = event.path;
        let (Some(id), Some(ts)) = (event.id, event.receive_timestamp.clone()) else {
            return Err(IngestError::Store("an inbox event needs its id and receive time".into()));
        };
        parse(event).map_err(|e| super::ingest_error(path, e))?;
        let payload = event.payload.clone();
        self.on_inbox(move |conn| {
            Box::pin(async move {
                exec(
                    conn,
                    "INSERT INTO event_inbox (id, receive_timestamp, event_path, payload) VALUES ($1, $2, $3, $4)",
                    vec![id.into(), ts.into(), path.as_str().into(), payload.into()],
                )
                .await
            })
        })
        .await
        .map_err(|e| super::ingest_error(path, ApplyError::Store(e)))?;
        Ok(())
    }

    async fn inbox_pending(&self) -> Result<Vec<IncomingEvent>, IngestError> {
        if self.no_inbox_file() {
            return Ok(Vec::new());
        }
        let upto = self.applied_upto().await?;
        let rows = self
            .on_inbox(move |conn| {
                Box::pin(async move {
                    fetch_all(
                        conn,
                        "SELECT id, receive_timestamp, event_path, payload FROM event_inbox WHERE id > $1 ORDER BY id",
                        vec![upto.into()],
                    )
                    .await
                })
            })
            .await?;
        rows.into_iter()
            .map(|r| {
                let id: i64 = r.try_get("id").map_err(StoreError::from)?;
                let path: String = r.try_get("event_path").map_err(StoreError::from)?;
                let path = EventPath::from_path(&path).ok_or_else(|| {
                    StoreError::Corrupt(format!("inbox event {id} has an unknown path `{path}`"))
                })?;
                Ok(IncomingEvent {
                    id: Some(id),
                    receive_timestamp: Some(r.try_get("receive_timestamp").map_err(StoreError::from)?),
                    path,
                    payload: r.try_get("payload").map_err(StoreError::from)?,
                })
            })
            .collect()
    }

    async fn inbox_trim(&self) -> Result<u64, IngestError> {
        if self.no_inbox_file() {
            return Ok(0);
        }
        let upto = self.applied_upto().await?;
        Ok(self
            .on_inbox(move |conn| {
                Box::pin(async move {
                    exec(conn, "DELETE FROM event_inbox WHERE id <= $1", vec![upto.into()]).await
                })
            })
            .await?)
    }
}
