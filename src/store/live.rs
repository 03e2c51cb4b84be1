//! PostgreSQL LISTEN/NOTIFY for live updates: the ingesting process announces what it
//! committed, every API process (itself included) listens, as the incumbent does.

use futures_util::stream::BoxStream;
use futures_util::StreamExt;
use sqlx::postgres::PgListener;

use super::{Engine, Store, StoreError};

/// The channel every process listens on.
pub const LIVE_CHANNEL: &str = "stacks_ledger_live";
/// NOTIFY payloads must stay under PostgreSQL's 8,000-byte limit.
pub const MAX_NOTIFY_PAYLOAD: usize = 7_000;

impl Store {
    /// Sends `payload` to every listener (PostgreSQL only; a no-op on SQLite, whose updates
    /// stay in the process).
    pub async fn notify_live(&self, payload: &str) -> Result<(), StoreError> {
        if self.engine != Engine::Postgres {
            return Ok(());
        }
        sqlx::query("SELECT pg_notify($1, $2)")
            .bind(LIVE_CHANNEL)
            .bind(payload)
            .execute(self.write_pool())
            .await?;
        Ok(())
    }

    /// The payloads NOTIFYed on the live channel, from now on, on a connection of its own
    /// (reconnected by sqlx when it drops). `None` on SQLite.
    pub async fn listen_live(
        &self,
    ) -> Result<Option<BoxStream<'static, Result<String, StoreError>>>, StoreError> {
        if self.engine != Engine::Postgres {
            return Ok(None);
        }
        let mut listener = PgListener::connect(self.listen_url()).await?;
        listener.listen(LIVE_CHANNEL).await?;
        let stream =
            listener.into_stream().map(|n| n.map(|n| n.payload().to_owned()).map_err(StoreError::from));
        Ok(Some(stream.boxed()))
    }
}
