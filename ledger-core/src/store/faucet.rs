//! Faucet bookkeeping: the rate-limit records (`faucet_requests`) and the faucet key's next
//! possible nonce. The transaction the faucet broadcast enters the mempool through
//! [`Store::record_local_tx`], as every local submission does.
//!
//! A rate-limited request is *reserved* before anything is sent: the count of recent requests
//! and the insert of the new one happen in one transaction under a lock on the (address,
//! currency, kind) key (SQLite: `BEGIN IMMEDIATE`, the database's single writer lock;
//! PostgreSQL: `pg_advisory_xact_lock` on a hash of the key), so concurrent requests for one
//! address, from this process or another sharing the database, cannot both see a free slot.
//! When nothing was sent, the handler releases the reservation again.

use ledger_read::faucet::BookFuture;
use ledger_read::{FaucetBook, FaucetRequest, RateLimit, Reservation};

use super::conn::Conn;
use super::sql;
use super::sql::query;
use super::{Engine, Store, StoreError};

/// The faucets' bookkeeping, read and written by the methods below.
impl FaucetBook for Store {
    fn reserve<'a>(
        &'a self,
        req: &'a FaucetRequest,
        limit: Option<RateLimit>,
    ) -> BookFuture<'a, Reservation> {
        Box::pin(async move { Ok(self.reserve_faucet_request(req, limit).await?) })
    }

    fn release(&self, id: i64) -> BookFuture<'_, ()> {
        Box::pin(async move { Ok(self.release_faucet_request(id).await?) })
    }

    fn possible_next_nonce<'a>(&'a self, account: &'a str) -> BookFuture<'a, i64> {
        Box::pin(async move { Ok(Store::possible_next_nonce(self, account).await?) })
    }
}

const RECENT: &str = "SELECT occurred_at FROM faucet_requests \
    WHERE address = $1 AND currency = $2 AND kind = $3 AND occurred_at > $4 ORDER BY occurred_at DESC";
const INSERT: &str = "INSERT INTO faucet_requests (address, currency, kind, ip, occurred_at) \
    VALUES ($1, $2, $3, $4, $5) RETURNING id";

impl Store {
    /// Records `req` unless `limit` (when given) is reached; see the module comment for why
    /// concurrent callers cannot slip past it.
    pub async fn reserve_faucet_request(
        &self,
        req: &FaucetRequest,
        limit: Option<RateLimit>,
    ) -> Result<Reservation, StoreError> {
        match self.engine() {
            Engine::Sqlite => {
                // The writer's connection, under the writer's mutex: no in-process contention
                // for SQLite's write lock; other processes wait on it through busy_timeout.
                let mut writer = self.writer.lock().await;
                let conn = self.writer_conn(&mut writer).await?;
                conn.batch("BEGIN IMMEDIATE").await?;
                let result = reserve_in(conn, req, limit).await;
                let end = if result.is_ok() { "COMMIT" } else { "ROLLBACK" };
                if let Err(e) = conn.batch(end).await {
                    // The connection may still be in a transaction: the writer starts afresh.
                    self.drop_writer(&mut writer).await;
                    return Err(e.into());
                }
                result
            }
            Engine::Postgres => {
                let mut conn = Conn::pooled(self.write_pool()?.acquire().await?);
                let mut tx = conn.begin().await?;
                // Wrapped: the `Any` driver cannot carry the function's `void` result.
                sql::exec(
                    &mut tx,
                    "SELECT CAST(1 AS BIGINT) AS locked FROM (SELECT pg_advisory_xact_lock($1)) AS l",
                    vec![lock_key(req).into()],
                )
                .await?;
                let result = reserve_in(&mut tx, req, limit).await?;
                tx.commit().await?;
                Ok(result)
            }
        }
    }

    /// Forgets a reservation whose request sent nothing, so it does not count against the limit.
    pub async fn release_faucet_request(&self, id: i64) -> Result<(), StoreError> {
        match self.engine() {
            Engine::Sqlite => {
                let mut writer = self.writer.lock().await;
                let conn = self.writer_conn(&mut writer).await?;
                sql::exec(conn, "DELETE FROM faucet_requests WHERE id = $1", vec![id.into()]).await?;
            }
            Engine::Postgres => {
                query("DELETE FROM faucet_requests WHERE id = $1", vec![id.into()])
                    .execute(self.write_pool()?)
                    .await?;
            }
        }
        Ok(())
    }

    /// How many requests of (address, currency, kind) are recorded, in all.
    pub async fn faucet_request_count(
        &self,
        address: &str,
        currency: &str,
        kind: &str,
    ) -> Result<i64, StoreError> {
        let r = sql::select(
            "SELECT CAST(COUNT(*) AS BIGINT) AS n FROM faucet_requests WHERE address = $1 AND currency = $2 AND kind = $3",
            vec![address.into(), currency.into(), kind.into()],
        )
        .fetch_one(self)
        .await?;
        Ok(r.try_get("n")?)
    }

    /// The incumbent's `possible_next_nonce`: one past the highest nonce `account` used, as
    /// origin or sponsor, in a canonical transaction or a pending mempool one (0 if none).
    pub async fn possible_next_nonce(&self, account: &str) -> Result<i64, StoreError> {
        let r = sql::select(
            "SELECT CAST(COALESCE(MAX(n), -1) AS BIGINT) AS n FROM ( \
               SELECT MAX(nonce) AS n FROM txs WHERE sender_address = $1 AND canonical = true AND is_burnchain_op = false \
               UNION ALL \
               SELECT MAX(sponsor_nonce) AS n FROM txs WHERE sponsor_address = $1 AND canonical = true \
               UNION ALL \
               SELECT MAX(nonce) AS n FROM mempool_txs WHERE sender_address = $1 AND pruned = false \
               UNION ALL \
               SELECT MAX(sponsor_nonce) AS n FROM mempool_txs WHERE sponsor_address = $1 AND pruned = false) m",
            vec![account.into()],
        )
        .fetch_one(self)
        .await?;
        Ok(r.try_get::<i64, _>("n")? + 1)
    }
}

async fn reserve_in(
    conn: &mut Conn,
    req: &FaucetRequest,
    limit: Option<RateLimit>,
) -> Result<Reservation, StoreError> {
    if let Some(limit) = limit {
        let since = req.occurred_at - limit.window_ms;
        let recent: Vec<i64> = sql::fetch_all(
            conn,
            RECENT,
            vec![req.address.as_str().into(), req.currency.into(), req.kind.into(), since.into()],
        )
        .await?
        .iter()
        .map(|r| r.try_get("occurred_at"))
        .collect::<Result<_, _>>()?;
        if recent.len() >= limit.max as usize {
            // A slot frees when the `max`-th most recent request leaves the window.
            let frees_at = recent[limit.max.max(1) as usize - 1] + limit.window_ms;
            return Ok(Reservation::Limited { retry_after_ms: (frees_at - req.occurred_at).max(1) });
        }
    }
    let row = sql::fetch_one(
        conn,
        INSERT,
        vec![
            req.address.as_str().into(),
            req.currency.into(),
            req.kind.into(),
            req.ip.as_str().into(),
            req.occurred_at.into(),
        ],
    )
    .await?;
    Ok(Reservation::Granted(row.try_get("id")?))
}

/// The advisory-lock key: FNV-1a over the (currency, kind, address) key, as an `i64`.
fn lock_key(req: &FaucetRequest) -> i64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in req.currency.bytes().chain([0]).chain(req.kind.bytes()).chain([0]).chain(req.address.bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(address: &str) -> FaucetRequest {
        FaucetRequest {
            address: address.into(),
            currency: "stx",
            kind: "regular",
            ip: "127.0.0.1".into(),
            occurred_at: 0,
        }
    }

    #[test]
    fn lock_keys_differ_per_address_and_kind() {
        let a = req("ST1");
        let b = req("ST2");
        let c = FaucetRequest { kind: "stacking", ..req("ST1") };
        assert_eq!(lock_key(&a), lock_key(&req("ST1")));
        assert_ne!(lock_key(&a), lock_key(&b));
        assert_ne!(lock_key(&a), lock_key(&c));
    }

    #[tokio::test]
    async fn limits_count_per_key_and_free_with_time() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}/db.sqlite", dir.path().display());
        let store =
            Store::open(&url, crate::ledger::Network::Testnet, crate::test_render::marked()).await.unwrap();
        let limit = Some(RateLimit { max: 2, window_ms: 1000 });
        let at = |t: i64| FaucetRequest { occurred_at: t, ..req("ST1") };
        assert!(matches!(
            store.reserve_faucet_request(&at(0), limit).await.unwrap(),
            Reservation::Granted(_)
        ));
        assert!(matches!(
            store.reserve_faucet_request(&at(100), limit).await.unwrap(),
            Reservation::Granted(_)
        ));
        // The 2nd most recent (t=0) leaves the window at 1000.
        assert_eq!(
            store.reserve_faucet_request(&at(400), limit).await.unwrap(),
            Reservation::Limited { retry_after_ms: 600 }
        );
        // Another kind and another address have their own budgets.
        let stacking = FaucetRequest { kind: "stacking", ..at(400) };
        assert!(matches!(
            store.reserve_faucet_request(&stacking, limit).await.unwrap(),
            Reservation::Granted(_)
        ));
        let other = FaucetRequest { occurred_at: 400, ..req("ST2") };
        assert!(matches!(
            store.reserve_faucet_request(&other, limit).await.unwrap(),
            Reservation::Granted(_)
        ));
        // At 1000 the first is out of the window (> since, strictly).
        let Reservation::Granted(id) = store.reserve_faucet_request(&at(1000), limit).await.unwrap() else {
            panic!("a slot should be free at t=1000");
        };
        assert_eq!(store.faucet_request_count("ST1", "stx", "regular").await.unwrap(), 3);
        store.release_faucet_request(id).await.unwrap();
        assert_eq!(store.faucet_request_count("ST1", "stx", "regular").await.unwrap(), 2);
        store.close().await;
    }
}
