//! PostgreSQL LISTEN/NOTIFY for live updates: the ingesting process announces what it
//! committed, every API process (itself included) listens, as the incumbent does.

use futures_util::stream::BoxStream;
use futures_util::StreamExt;
use sqlx::postgres::PgListener;

use super::{Engine, Store, StoreError};
use sqlx::{AnyConnection, Connection};

/// The channel every process listens on.
pub const LIVE_CHANNEL: &str = "stacks_ledger_live";
/// NOTIFY payloads must stay under PostgreSQL's 8,000-byte limit.
pub const MAX_NOTIFY_PAYLOAD: usize = 7_000;

impl Store {
    /// The payloads NOTIFYed on the live channel, from now on, on a connection of its own
    /// (reconnected by sqlx when it drops). `None` on SQLite.
    pub async fn listen_live(
        &self,
    ) -> Result<Option<BoxStream<'static, Result<String, StoreError>>>, StoreError> {
        if self.engine() != Engine::Postgres {
            return Ok(None);
        }
        let mut listener = PgListener::connect(self.listen_url()).await?;
        listener.listen(LIVE_CHANNEL).await?;
        let stream =
            listener.into_stream().map(|n| n.map(|n| n.payload().to_owned()).map_err(StoreError::from));
        Ok(Some(stream.boxed()))
    }
}

/// NOTIFYs sent in order on one connection kept for them, for a process that announces every
/// event: a connection taken from the pool for each would be pinged by sqlx when returned, a
/// second round trip per NOTIFY (and two more wake-ups of both processes) on the two cores the
/// node's POSTs need.
#[derive(Default)]
pub struct LiveNotifier {
    conn: Option<AnyConnection>,
}

impl LiveNotifier {
    /// Sends `payload` to every listener (PostgreSQL only; a no-op on SQLite, whose updates
    /// stay in the process), on the kept connection: taken from `store`'s write pool the first
    /// time, and again after a failure (a failed NOTIFY drops it).
    pub async fn notify(&mut self, store: &Store, payload: &str) -> Result<(), StoreError> {
        if store.engine() != Engine::Postgres {
            return Ok(());
        }
        let conn = match &mut self.conn {
            Some(conn) => conn,
            None => self.conn.insert(store.write_pool()?.acquire().await?.detach()),
        };
        let sent =
            sqlx::query("SELECT pg_notify($1, $2)").bind(LIVE_CHANNEL).bind(payload).execute(conn).await;
        if sent.is_err() {
            self.conn = None;
        }
        sent?;
        Ok(())
    }

    /// Closes the kept connection (telling the server so).
    pub async fn close(mut self) {
        if let Some(conn) = self.conn.take() {
            let _ = conn.close().await;
        }
    }
}
