//! `GET /extended` (server status and chain tip) and the redirects to it. `status` says whether
//! the ledger has caught up with the node (a [`SyncProbe`] the server supplies).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::{json, Value};
use warp::http::header::{CACHE_CONTROL, ETAG};
use warp::http::{HeaderValue, StatusCode, Uri};
use warp::reply::Response;
use warp::{Filter, Rejection, Reply};

use crate::error::ApiError;
use crate::headers::{with_common_headers, SERVER_VERSION};
use crate::reader::{Tip, TipReader};

/// Where ingestion stands against the node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncState {
    /// Caught up (within the configured distance), or no node to compare with.
    Ready,
    /// Behind the node's tip by `lag` blocks.
    Syncing { node_tip_height: u64, lag: u64 },
    /// A `readonly` process whose replica is `lag` blocks behind its primary's tip.
    ReplicaBehind { primary_tip_height: u64, lag: u64, replay_lag_bytes: u64 },
}

/// Tells the status route how far the ledger (at `ledger_height`) is behind the node.
pub trait SyncProbe: Send + Sync {
    fn sync_state(&self, ledger_height: u64) -> Pin<Box<dyn Future<Output = SyncState> + Send + '_>>;
}

/// No node to compare with: always ready.
pub struct AlwaysReady;

impl SyncProbe for AlwaysReady {
    fn sync_state(&self, _: u64) -> Pin<Box<dyn Future<Output = SyncState> + Send + '_>> {
        Box::pin(std::future::ready(SyncState::Ready))
    }
}

pub fn routes<R: TipReader>(
    reader: Arc<R>,
    sync: Arc<dyn SyncProbe>,
) -> impl Filter<Extract = (impl Reply,), Error = Rejection> + Clone {
    let status = warp::get()
        .and(warp::path("extended"))
        .and(warp::path::end())
        .and(warp::header::optional::<String>("if-none-match"))
        .and_then(move |inm: Option<String>| {
            let reader = reader.clone();
            let sync = sync.clone();
            async move {
                let tip = reader.tip().await.map_err(ApiError::from).map_err(warp::reject::custom)?;
                let state = sync.sync_state(tip.as_ref().map_or(0, Tip::height)).await;
                Ok::<_, Rejection>(status_reply(tip.as_ref(), state, inm.as_deref()))
            }
        });
    let redirect = |target: &'static str| {
        move || {
            let res = warp::redirect(Uri::from_static(target)).into_response();
            let res = with_common_headers(res);
            with_cache(res, "no-store")
        }
    };
    let root = warp::get().and(warp::path::end()).map(redirect("/extended"));
    let v1_status = warp::get().and(warp::path!("extended" / "v1" / "status")).map(redirect("/extended"));
    status.or(root).or(v1_status)
}

pub(crate) fn with_cache(mut res: Response, value: &'static str) -> Response {
    res.headers_mut().insert(CACHE_CONTROL, HeaderValue::from_static(value));
    res
}

/// The incumbent's chain-tip ETag: the microblock hash when there is one, else the index
/// block hash; none before the first block.
pub(crate) fn chain_tip_etag(tip: Option<&Tip>) -> Option<String> {
    let tip = tip.filter(|t| t.block.block_height > 0)?;
    let hash = tip.microblock.as_ref().map_or(&tip.block.index_block_hash, |m| &m.hash);
    Some(format!("\"{hash}\""))
}

fn status_body(tip: Option<&Tip>, state: SyncState) -> Value {
    let mut body = match state {
        SyncState::Ready => json!({ "server_version": SERVER_VERSION, "status": "ready" }),
        // The incumbent's fields, plus how far behind (ours).
        SyncState::Syncing { node_tip_height, lag } => json!({
            "server_version": SERVER_VERSION,
            "status": "syncing",
            "sync": { "node_tip_height": node_tip_height, "lag": lag },
        }),
        SyncState::ReplicaBehind { primary_tip_height, lag, replay_lag_bytes } => json!({
            "server_version": SERVER_VERSION,
            "status": "syncing",
            "replica": {
                "primary_tip_height": primary_tip_height,
                "lag": lag,
                "replay_lag_bytes": replay_lag_bytes,
            },
        }),
    };
    if let Some(t) = tip.filter(|t| t.block.block_height > 0) {
        let mut chain_tip = json!({
            "block_height": t.block.block_height,
            "block_hash": t.block.block_hash,
            "index_block_hash": t.block.index_block_hash,
            "burn_block_height": t.burn_height,
        });
        if let Some(m) = &t.microblock {
            chain_tip["microblock_hash"] = json!(m.hash);
            chain_tip["microblock_sequence"] = json!(m.sequence);
        }
        body["chain_tip"] = chain_tip;
    }
    body
}

fn status_reply(tip: Option<&Tip>, state: SyncState, if_none_match: Option<&str>) -> Response {
    let etag = chain_tip_etag(tip);
    if let (Some(etag), Some(inm)) = (&etag, if_none_match) {
        if inm.split(',').any(|v| v.trim() == etag) {
            let res = warp::reply::with_status(warp::reply(), StatusCode::NOT_MODIFIED);
            return with_cache(with_common_headers(res), "public, no-cache, must-revalidate");
        }
    }
    let mut res = with_common_headers(warp::reply::json(&status_body(tip, state)));
    if let Some(etag) = etag {
        if let Ok(v) = HeaderValue::from_str(&etag) {
            res.headers_mut().insert(ETAG, v);
            res = with_cache(res, "public, no-cache, must-revalidate");
        }
    }
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixed(Option<Tip>);

    impl TipReader for Fixed {
        fn tip(&self) -> ledger_read::ReadFuture<'_, Option<Tip>> {
            Box::pin(std::future::ready(Ok(self.0.clone())))
        }
    }

    fn tip(micro: bool) -> Tip {
        Tip {
            block: at_height(28),
            burn_height: 29,
            microblock: micro.then(|| ledger_read::MicroblockTip {
                hash: "0xdb05bdc45d4f4fb3a05c83198fea805c683e1c5fbc09f55d95ec7bdb1b398d2d".into(),
                sequence: 1,
            }),
        }
    }

    fn at_height(block_height: i64) -> ledger_read::LedgerBlock {
        ledger_read::LedgerBlock {
            block_height,
            block_hash: "0x7682af212d3c1ef62613412f9b5a727269b4548f14eca2e3f941f7ad8b3c11b2".into(),
            index_block_hash: "0x76cd67a65c0dfd5ea450bb9efe30da89fa125bfc077c953802f718353283a533".into(),
            burn_block_height: 28,
            canonical: true,
            ..Default::default()
        }
    }

    #[tokio::test]
    async fn status_has_the_incumbents_shape_and_etag() {
        let api = routes(Arc::new(Fixed(Some(tip(true)))), Arc::new(AlwaysReady));
        let res = warp::test::request().path("/extended").reply(&api).await;
        assert_eq!(res.status(), 200);
        let body: Value = serde_json::from_slice(res.body()).unwrap();
        // The mocknet oracle's answer, but for the server version.
        assert_eq!(body["status"], "ready");
        assert_eq!(body["chain_tip"]["block_height"], 28);
        assert_eq!(body["chain_tip"]["burn_block_height"], 29);
        assert_eq!(body["chain_tip"]["microblock_sequence"], 1);
        let etag = res.headers()["etag"].to_str().unwrap().to_string();
        assert_eq!(etag, "\"0xdb05bdc45d4f4fb3a05c83198fea805c683e1c5fbc09f55d95ec7bdb1b398d2d\"");
        assert_eq!(res.headers()["cache-control"], "public, no-cache, must-revalidate");
        assert_eq!(res.headers()["x-api-version"], crate::API_VERSION);

        let res = warp::test::request().path("/extended").header("if-none-match", &etag).reply(&api).await;
        assert_eq!(res.status(), 304);
        assert!(res.body().is_empty());
    }

    #[tokio::test]
    async fn no_chain_tip_before_the_first_block() {
        for tip in [None, Some(Tip { block: at_height(0), ..tip(false) })] {
            let api = routes(Arc::new(Fixed(tip)), Arc::new(AlwaysReady));
            let res = warp::test::request().path("/extended").reply(&api).await;
            let body: Value = serde_json::from_slice(res.body()).unwrap();
            assert!(body.get("chain_tip").is_none(), "{body}");
            assert!(res.headers().get("etag").is_none());
            assert_eq!(res.headers()["cache-control"], "no-store");
        }
    }

    struct Behind;

    impl SyncProbe for Behind {
        fn sync_state(&self, height: u64) -> Pin<Box<dyn Future<Output = SyncState> + Send + '_>> {
            Box::pin(std::future::ready(SyncState::Syncing { node_tip_height: height + 5, lag: 5 }))
        }
    }

    #[tokio::test]
    async fn status_says_syncing_with_the_lag() {
        let api = routes(Arc::new(Fixed(Some(tip(false)))), Arc::new(Behind));
        let res = warp::test::request().path("/extended").reply(&api).await;
        let body: Value = serde_json::from_slice(res.body()).unwrap();
        assert_eq!(body["status"], "syncing");
        assert_eq!(body["sync"], json!({"node_tip_height": 33, "lag": 5}));
        assert_eq!(body["chain_tip"]["block_height"], 28, "the incumbent's fields stay");
    }

    #[tokio::test]
    async fn root_and_v1_status_redirect() {
        let api = routes(Arc::new(Fixed(None)), Arc::new(AlwaysReady));
        for path in ["/", "/extended/v1/status"] {
            let res = warp::test::request().path(path).reply(&api).await;
            assert_eq!(res.status(), 301, "{path}");
            assert_eq!(res.headers()["location"], "/extended");
        }
    }
}
