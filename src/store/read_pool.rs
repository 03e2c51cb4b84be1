//! PostgreSQL: the connections the API's reads run on, kept here rather than in sqlx's pool.
//! sqlx pings a pooled connection every time it is returned (a round trip to the server, and a
//! wake-up of both processes, per statement read); on the short routes that was 18–37 % of
//! a request's CPU. A connection here goes back to
//! the idle list as it is, once its statement completed; one whose statement failed or was
//! cancelled (a client that hung up) is closed instead, since it may have unread replies.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use sqlx::any::{AnyArguments, AnyConnectOptions, AnyRow};
use sqlx::query::Query;
use sqlx::{Any, AnyConnection, ConnectOptions};
use tokio::sync::{Semaphore, SemaphorePermit};

/// How long a read waits for a connection before failing (sqlx's pool default).
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(30);
/// An idle connection older than this is closed rather than reused (sqlx's `idle_timeout`
/// default): a restarted or failed-over server leaves no long-dead connections behind.
const IDLE_FOR: Duration = Duration::from_secs(600);

pub(super) struct ReadPool {
    options: AnyConnectOptions,
    permits: Semaphore,
    max: u32,
    /// Most recently used last: the busy set stays warm, the rest ages out.
    idle: Mutex<Vec<(AnyConnection, Instant)>>,
    open: AtomicU32,
}

/// A connection checked out of a [`ReadPool`]; back to it on drop if [`ReadConn::done`] was
/// called, else closed.
pub(super) struct ReadConn<'p> {
    pool: &'p ReadPool,
    conn: Option<AnyConnection>,
    reusable: bool,
    _permit: SemaphorePermit<'p>,
}

impl ReadPool {
    pub(super) fn new(options: AnyConnectOptions, max: u32) -> ReadPool {
        ReadPool {
            options,
            permits: Semaphore::new(max as usize),
            max,
            idle: Mutex::new(Vec::new()),
            open: AtomicU32::new(0),
        }
    }

    pub(super) async fn get(&self) -> Result<ReadConn<'_>, sqlx::Error> {
        let permit = match tokio::time::timeout(ACQUIRE_TIMEOUT, self.permits.acquire()).await {
            Ok(Ok(permit)) => permit,
            Ok(Err(_closed)) => return Err(sqlx::Error::PoolClosed),
            Err(_elapsed) => return Err(sqlx::Error::PoolTimedOut),
        };
        let kept = {
            let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
            // The oldest are at the front: drop those past their time, keep the rest.
            let stale = idle.iter().take_while(|(_, since)| since.elapsed() >= IDLE_FOR).count();
            idle.drain(..stale).for_each(|_| {
                self.open.fetch_sub(1, Ordering::Relaxed);
            });
            idle.pop().map(|(conn, _)| conn)
        };
        let conn = match kept {
            Some(conn) => conn,
            None => {
                let conn = self.options.connect().await?;
                self.open.fetch_add(1, Ordering::Relaxed);
                conn
            }
        };
        Ok(ReadConn { pool: self, conn: Some(conn), reusable: false, _permit: permit })
    }

    /// The rows of `q` (at most one when `one`) on a kept connection, which goes back to the
    /// idle list once the statement completed (and is closed when it failed or was cancelled).
    pub(super) async fn fetch<'q>(
        &self,
        q: Query<'q, Any, AnyArguments<'q>>,
        one: bool,
    ) -> Result<Vec<AnyRow>, sqlx::Error> {
        let mut conn = self.get().await?;
        let rows = if one {
            q.fetch_optional(conn.conn()).await?.into_iter().collect()
        } else {
            q.fetch_all(conn.conn()).await?
        };
        conn.done();
        Ok(rows)
    }

    /// Open connections, idle ones, and the bound.
    pub(super) fn stats(&self) -> (u32, u32, u32) {
        let idle = self.idle.lock().unwrap_or_else(|e| e.into_inner()).len();
        (self.open.load(Ordering::Relaxed), u32::try_from(idle).unwrap_or(u32::MAX), self.max)
    }

    /// No further checkouts; the idle connections are closed (those checked out close when
    /// returned).
    pub(super) async fn close(&self) {
        self.permits.close();
        let idle = std::mem::take(&mut *self.idle.lock().unwrap_or_else(|e| e.into_inner()));
        for (conn, _) in idle {
            self.open.fetch_sub(1, Ordering::Relaxed);
            let _ = sqlx::Connection::close(conn).await;
        }
    }
}

impl ReadConn<'_> {
    pub(super) fn conn(&mut self) -> &mut AnyConnection {
        self.conn.as_mut().expect("a read connection is held until dropped")
    }

    /// The statement run on it completed: the connection may serve the next read.
    pub(super) fn done(mut self) {
        self.reusable = true;
    }
}

impl Drop for ReadConn<'_> {
    fn drop(&mut self) {
        let Some(conn) = self.conn.take() else { return };
        if self.reusable && !self.pool.permits.is_closed() {
            self.pool.idle.lock().unwrap_or_else(|e| e.into_inner()).push((conn, Instant::now()));
        } else {
            // Dropped without a graceful close: the server ends the session when the socket
            // closes (and logs nothing for a session outside a transaction).
            self.pool.open.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    // The pool's bookkeeping without a server: SQLite in memory stands in for PostgreSQL.
    fn pool(max: u32) -> ReadPool {
        sqlx::any::install_default_drivers();
        ReadPool::new(AnyConnectOptions::from_str("sqlite::memory:").unwrap(), max)
    }

    #[tokio::test]
    async fn a_completed_read_returns_its_connection_a_failed_one_closes_it() {
        let pool = pool(2);
        let mut c = pool.get().await.unwrap();
        sqlx::query("SELECT 1").fetch_all(c.conn()).await.unwrap();
        c.done();
        assert_eq!(pool.stats(), (1, 1, 2));
        // Reused, not reopened.
        let c = pool.get().await.unwrap();
        assert_eq!(pool.stats(), (1, 0, 2));
        // Dropped without `done` (an error, or a cancelled request): closed.
        drop(c);
        assert_eq!(pool.stats(), (0, 0, 2));
    }

    #[tokio::test]
    async fn fetch_keeps_the_connection_of_a_completed_statement_only() {
        let pool = pool(2);
        assert_eq!(pool.fetch(sqlx::query("SELECT 1"), false).await.unwrap().len(), 1);
        assert_eq!(pool.fetch(sqlx::query("SELECT 1 UNION ALL SELECT 2"), true).await.unwrap().len(), 1);
        assert_eq!(pool.stats(), (1, 1, 2));
        assert!(pool.fetch(sqlx::query("SELECT * FROM no_such_table"), false).await.is_err());
        assert_eq!(pool.stats(), (0, 0, 2));
    }

    #[tokio::test]
    async fn checkouts_are_bounded_and_close_refuses_more() {
        let pool = pool(1);
        let held = pool.get().await.unwrap();
        let waiting = tokio::time::timeout(Duration::from_millis(50), pool.get()).await;
        assert!(waiting.is_err(), "a second checkout must wait while the only one is held");
        held.done();
        pool.get().await.unwrap().done();
        pool.close().await;
        assert_eq!(pool.stats(), (0, 0, 1));
        assert!(matches!(pool.get().await, Err(sqlx::Error::PoolClosed)));
    }
}
