//! The public API server's route table: every API mounted over one store, then the fallback
//! that answers unknown URLs with the spec's 404.

use std::convert::Infallible;
use std::sync::Arc;

use stacks_node_proxy::NodeClient;
use warp::{Filter, Reply};

pub mod admission;
pub mod cache;
mod generation;
pub mod observe;
pub mod ready;
pub mod runtime;
pub mod scrape;
pub mod server;
pub use admission::{Admission, AdmissionConfig, IngestFirst};
pub use cache::ResponseCache;
pub use ready::Readiness;
pub use scrape::Sampled;

use crate::config::Config;
use crate::faucet::{FaucetError, Faucets};
use crate::rosetta::construction;
use crate::rosetta::{self, Rosetta};
use crate::store::Store;
use crate::v2::V2Settings;

/// Every route of the public API (port 3999) with no node: `/v2` answered by the ledger alone,
/// construction `/submit` without a node to broadcast through; the faucets, the response cache
/// and the admission gate as `config` says. Fails only on an unusable faucet key.
pub fn routes(
    store: Arc<Store>,
    config: &Config,
) -> Result<impl Filter<Extract = (impl Reply,), Error = Infallible> + Clone, FaucetError> {
    let faucets = faucets(&store, config)?;
    Ok(routes_with(store, V2Settings::ledger_only(), faucets, config))
}

/// The faucets `config` sets up over `store`. Fails only on an unusable faucet key: it is never
/// replaced by a default.
pub fn faucets(store: &Arc<Store>, config: &Config) -> Result<Arc<Faucets>, FaucetError> {
    let local_txs: Arc<dyn ledger_read::LocalTxSink> = Arc::clone(store) as _;
    Ok(Arc::new(Faucets::new(Arc::clone(store) as _, local_txs, store.network(), config.faucet.clone())?))
}

/// The whole public API as `serve` runs it, every part from `config`: `/v2` and Rosetta
/// construction through its node, the faucets, the response cache, readiness, live updates,
/// and a span and metrics per request. Fails only on an unusable faucet key.
pub fn app(
    store: Arc<Store>,
    config: &Config,
    live: &crate::live::Live,
) -> Result<App<impl Filter<Extract = (impl Reply,), Error = Infallible> + Clone>, FaucetError> {
    let faucets = faucets(&store, config)?;
    let cache = Arc::new(ResponseCache::configured(config));
    let admission = admission_for(&store, config);
    let readiness =
        Arc::new(Readiness::new(Arc::clone(&store), config.v2.node.clone(), config.ready_max_lag));
    let sampled = Arc::new(Sampled {
        store: Arc::clone(&store),
        cache: Arc::clone(&cache),
        readiness: Arc::clone(&readiness),
        admission: Arc::clone(&admission),
        hub: Some(Arc::clone(&live.hub)),
    });
    let table =
        table(store, config.v2.clone(), faucets, Arc::clone(&cache), readiness, Arc::clone(&admission));
    Ok(App { routes: observe::observed(live.routes().or(table)), sampled, admission, cache })
}

/// The admission gate `config` sizes for `store` (its bound by default the pool's size).
fn admission_for(store: &Store, config: &Config) -> Arc<Admission> {
    Admission::new(&config.load.admission, store.pool_stats().max as usize)
}

/// What the metrics sample in a process without the API (`serve --mode writeonly`): the store,
/// and the ledger's tip against the node's.
pub fn sampled_without_api(store: Arc<Store>, config: &Config) -> Arc<Sampled> {
    let readiness =
        Arc::new(Readiness::new(Arc::clone(&store), config.v2.node.clone(), config.ready_max_lag));
    let admission = admission_for(&store, config);
    let cache = Arc::new(ResponseCache::new(0));
    Arc::new(Sampled { store, cache, admission, readiness, hub: None })
}

/// The public API's routes, and what the metrics sample of its parts.
pub struct App<F> {
    pub routes: F,
    sampled: Arc<Sampled>,
    admission: Arc<Admission>,
    cache: Arc<ResponseCache>,
}

impl<F> App<F> {
    pub fn sampled(&self) -> Arc<Sampled> {
        Arc::clone(&self.sampled)
    }

    /// The admission gate: the event observer's sink holds readers back through it
    /// ([`IngestFirst`]).
    pub fn admission(&self) -> Arc<Admission> {
        Arc::clone(&self.admission)
    }

    /// The response cache the routes answer from ([`server::serve`] answers its kept answers
    /// on its event loops).
    pub fn cache(&self) -> Arc<ResponseCache> {
        Arc::clone(&self.cache)
    }
}

/// Every route of the public API, with the given `/v2` settings (node, policy) and faucets, and
/// the response cache and admission gate `config` sizes. The construction routes broadcast
/// through, and ask nonces and fees of, the same node.
pub fn routes_with(
    store: Arc<Store>,
    v2: V2Settings,
    faucets: Arc<Faucets>,
    config: &Config,
) -> impl Filter<Extract = (impl Reply,), Error = Infallible> + Clone {
    routes_with_cache(store, v2, faucets, Arc::new(ResponseCache::configured(config)), config)
}

/// [`routes_with`] with the given `/extended` response cache (see [`cache`]), and the
/// admission gate `config` sizes.
pub fn routes_with_cache(
    store: Arc<Store>,
    v2: V2Settings,
    faucets: Arc<Faucets>,
    cache: Arc<ResponseCache>,
    config: &Config,
) -> impl Filter<Extract = (impl Reply,), Error = Infallible> + Clone {
    let admission = admission_for(&store, config);
    routes_with_parts(store, v2, faucets, cache, admission)
}

/// [`routes_with_cache`] with the given admission gate (see [`admission`]).
pub fn routes_with_parts(
    store: Arc<Store>,
    v2: V2Settings,
    faucets: Arc<Faucets>,
    cache: Arc<ResponseCache>,
    admission: Arc<Admission>,
) -> impl Filter<Extract = (impl Reply,), Error = Infallible> + Clone {
    let readiness =
        Arc::new(Readiness::new(Arc::clone(&store), v2.node.clone(), crate::config::DEFAULT_READY_MAX_LAG));
    table(store, v2, faucets, cache, readiness, admission)
}

/// The route table over its parts.
fn table(
    store: Arc<Store>,
    v2: V2Settings,
    faucets: Arc<Faucets>,
    cache: Arc<ResponseCache>,
    readiness: Arc<Readiness>,
    admission: Arc<Admission>,
) -> impl Filter<Extract = (impl Reply,), Error = Infallible> + Clone {
    let node = v2
        .node
        .as_ref()
        .map(|c| NodeClient::with_timeouts(c.node.clone(), c.connect_timeout, c.request_timeout));
    let reader: Arc<dyn ledger_read::LedgerReader> = Arc::clone(&store) as _;
    let local_txs: Arc<dyn ledger_read::LocalTxSink> = Arc::clone(&store) as _;
    let construction =
        construction::Context::online(store.network(), Arc::clone(&reader), Arc::clone(&local_txs), node);
    // Rosetta first: it answers everything under `/rosetta` itself (its errors are Rosetta's);
    // the construction endpoints ahead of the rest of it.
    // `sync_status` measures ingestion against the same node `/v2` uses.
    let rosetta = match &v2.node {
        Some(config) => Rosetta::new(reader, store.network()).with_node(Arc::clone(config)),
        None => Rosetta::new(reader, store.network()),
    };
    let rosetta = rosetta::routes(Arc::new(rosetta));
    let with_node = v2.node.is_some();
    let sync: Arc<dyn stacks_extended::SyncProbe> = Arc::clone(&readiness) as _;
    let extended = stacks_extended::routes_with_sync(Arc::clone(&store), sync);
    construction::routes(construction)
        .or(rosetta)
        .or(ready::routes(readiness))
        .or(cache::cached(cache, Arc::clone(&store), extended, with_node, admission)
            .or(crate::faucet::routes(faucets))
            .recover(stacks_extended::recover))
        .or(crate::v2::routes(Arc::clone(&store) as _, local_txs, store.network(), v2))
        .or(stacks_extended::not_found_fallback())
}

/// The public API in offline mode (`serve --mode offline`): no store and no node. The Rosetta
/// construction routes that need neither answer; the other Rosetta endpoints answer the listed
/// 646; every other URL is a 503 JSON saying the server is offline.
pub fn routes_offline(
    network: crate::ledger::Network,
) -> impl Filter<Extract = (impl Reply,), Error = Infallible> + Clone {
    construction::routes(construction::Context::offline(network))
        .or(rosetta::offline::routes(network))
        .or(warp::path::full().map(|path: warp::path::FullPath| {
            let body = serde_json::json!({
                "error": "offline mode",
                "message": format!("{} is not available: this server runs in offline mode (no database, no node)", path.as_str()),
                "statusCode": 503,
            });
            stacks_extended::with_common_headers(warp::reply::with_status(
                warp::reply::json(&body),
                warp::http::StatusCode::SERVICE_UNAVAILABLE,
            ))
        }))
}

/// [`routes_with`] plus the live updates (`/extended/v1/ws`) of `live`.
pub fn routes_live(
    store: Arc<Store>,
    v2: V2Settings,
    faucets: Arc<Faucets>,
    config: &Config,
    live: &crate::live::Live,
) -> impl Filter<Extract = (impl Reply,), Error = Infallible> + Clone {
    live.routes().or(routes_with(store, v2, faucets, config))
}
