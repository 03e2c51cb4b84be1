//! Health and readiness: `GET /health` (the process answers) and `GET /ready` (the database
//! answers and, with a node configured, the ledger is within `max_lag` blocks of the node's
//! tip). The same comparison gives `GET /extended` its `status` ([`SyncProbe`]).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use ledger_read::TipReader;
use serde_json::json;
use stacks_extended::{SyncProbe, SyncState};
use stacks_node_proxy::ProxyConfig;
use warp::http::StatusCode;
use warp::{Filter, Rejection, Reply};

use crate::store::Store;
use crate::v2::NodeTipCache;

/// A database that does not answer within this is not ready (a stopped PostgreSQL would
/// otherwise hold the probe for the pool's whole acquire timeout).
const DB_TIMEOUT: Duration = Duration::from_secs(3);

/// Why the server is not ready; the JSON `reason` of a 503.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotReady {
    Database(String),
    /// The node did not say where its tip is (down, slow, or an answer without it).
    NodeUnknown,
    Lagging {
        ledger_tip_height: u64,
        node_tip_height: u64,
        lag: u64,
    },
    /// A `readonly` process whose replica is too far behind its primary.
    ReplicaBehind {
        replica_tip_height: u64,
        primary_tip_height: u64,
        lag: u64,
        replay_lag_bytes: u64,
    },
}

pub struct Readiness {
    store: Arc<Store>,
    node: Option<NodeTipCache>,
    max_lag: u64,
}

impl Readiness {
    pub fn new(store: Arc<Store>, node: Option<Arc<ProxyConfig>>, max_lag: u64) -> Readiness {
        Readiness { store, node: node.map(NodeTipCache::new), max_lag }
    }

    /// The ledger's tip height, or why the database cannot give it.
    async fn ledger_height(&self) -> Result<u64, NotReady> {
        match tokio::time::timeout(DB_TIMEOUT, TipReader::tip(&*self.store)).await {
            Ok(Ok(tip)) => Ok(tip.map_or(0, |t| t.height())),
            Ok(Err(e)) => Err(NotReady::Database(e.to_string())),
            Err(_) => Err(NotReady::Database(format!("no answer within {} s", DB_TIMEOUT.as_secs()))),
        }
    }

    /// The node's tip height: `Ok(None)` without a node.
    async fn node_height(&self) -> Result<Option<u64>, NotReady> {
        match &self.node {
            None => Ok(None),
            Some(cache) => {
                let tip = cache.node_tip().await.ok_or(NotReady::NodeUnknown)?;
                Ok(Some(tip.height))
            }
        }
    }

    fn compare(&self, ledger: u64, node: Option<u64>) -> Result<(), NotReady> {
        match node {
            Some(node) if node.saturating_sub(ledger) > self.max_lag => Err(NotReady::Lagging {
                ledger_tip_height: ledger,
                node_tip_height: node,
                lag: node - ledger,
            }),
            _ => Ok(()),
        }
    }

    /// The ledger's and the node's tip heights, each when known (the metrics).
    pub async fn heights(&self) -> (Option<u64>, Option<u64>) {
        (self.ledger_height().await.ok(), self.node_height().await.ok().flatten())
    }

    /// A `readonly` process's replica against its primary: `Err` when more than `max_lag`
    /// blocks behind (or unreadable); `Ok` without a primary.
    async fn replica(&self) -> Result<(), NotReady> {
        let lag = match tokio::time::timeout(DB_TIMEOUT, self.store.replica_lag()).await {
            Ok(Ok(Some(lag))) => lag,
            Ok(Ok(None)) => return Ok(()),
            Ok(Err(e)) => return Err(NotReady::Database(e.to_string())),
            Err(_) => return Err(NotReady::Database(format!("no answer within {} s", DB_TIMEOUT.as_secs()))),
        };
        crate::metrics::replica_lag(lag.blocks_behind(), lag.replay_lag_bytes);
        let height = |h: Option<i64>| h.map_or(0, |h| u64::try_from(h).unwrap_or(0));
        if lag.blocks_behind() > self.max_lag {
            return Err(NotReady::ReplicaBehind {
                replica_tip_height: height(lag.replica_tip_height),
                primary_tip_height: height(lag.primary_tip_height),
                lag: lag.blocks_behind(),
                replay_lag_bytes: lag.replay_lag_bytes,
            });
        }
        Ok(())
    }

    /// Records a `readonly` process's replica lag in the metrics (see [`Readiness::check`]).
    pub async fn sample_replica(&self) {
        let _ = self.replica().await;
    }

    /// Ready, or why not.
    pub async fn check(&self) -> Result<(), NotReady> {
        let ledger = self.ledger_height().await?;
        self.replica().await?;
        let node = self.node_height().await?;
        self.compare(ledger, node)
    }
}

impl SyncProbe for Readiness {
    /// `syncing` only when the node's tip is known to be too far ahead; a node that cannot
    /// tell leaves the status `ready` (the ledger still answers; `/ready` is the strict check).
    fn sync_state(&self, ledger_height: u64) -> Pin<Box<dyn Future<Output = SyncState> + Send + '_>> {
        Box::pin(async move {
            if let Err(NotReady::ReplicaBehind { primary_tip_height, lag, replay_lag_bytes, .. }) =
                self.replica().await
            {
                return SyncState::ReplicaBehind { primary_tip_height, lag, replay_lag_bytes };
            }
            match self.node_height().await.ok().flatten() {
                Some(node) => match self.compare(ledger_height, Some(node)) {
                    Err(NotReady::Lagging { node_tip_height, lag, .. }) => {
                        SyncState::Syncing { node_tip_height, lag }
                    }
                    _ => SyncState::Ready,
                },
                None => SyncState::Ready,
            }
        })
    }
}

/// `GET /health` and `GET /ready`.
pub fn routes(readiness: Arc<Readiness>) -> impl Filter<Extract = (impl Reply,), Error = Rejection> + Clone {
    let health = warp::get().and(warp::path!("health")).map(|| warp::reply::json(&json!({ "status": "ok" })));
    let ready = warp::get().and(warp::path!("ready")).and_then(move || {
        let readiness = Arc::clone(&readiness);
        async move { Ok::<_, Rejection>(ready_reply(readiness.check().await)) }
    });
    health.or(ready)
}

fn ready_reply(state: Result<(), NotReady>) -> warp::reply::Response {
    let (status, body) = match state {
        Ok(()) => (StatusCode::OK, json!({ "status": "ready" })),
        Err(NotReady::Database(e)) => (
            StatusCode::SERVICE_UNAVAILABLE,
            json!({ "status": "not_ready", "reason": "database", "message": format!("the database does not answer: {e}") }),
        ),
        Err(NotReady::NodeUnknown) => (
            StatusCode::SERVICE_UNAVAILABLE,
            json!({ "status": "not_ready", "reason": "node", "message": "the Stacks node does not say where its tip is" }),
        ),
        Err(NotReady::Lagging { ledger_tip_height, node_tip_height, lag }) => (
            StatusCode::SERVICE_UNAVAILABLE,
            json!({
                "status": "syncing",
                "reason": "lagging",
                "message": format!("the ledger is {lag} blocks behind the node"),
                "ledger_tip_height": ledger_tip_height,
                "node_tip_height": node_tip_height,
                "lag": lag,
            }),
        ),
        Err(NotReady::ReplicaBehind { replica_tip_height, primary_tip_height, lag, replay_lag_bytes }) => (
            StatusCode::SERVICE_UNAVAILABLE,
            json!({
                "status": "syncing",
                "reason": "replica_lagging",
                "message": format!("this process's database replica is {lag} blocks behind its primary"),
                "replica_tip_height": replica_tip_height,
                "primary_tip_height": primary_tip_height,
                "lag": lag,
                "replay_lag_bytes": replay_lag_bytes,
            }),
        ),
    };
    warp::reply::with_status(warp::reply::json(&body), status).into_response()
}
