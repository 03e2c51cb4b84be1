//! The `/v2` node RPC: answered from the ledger where the ledger is exact, else relayed to the
//! configured Stacks node by `stacks-node-proxy`. [`V2Policy`] chooses per request; every
//! answer says who gave it in `x-stacks-ledger-source` (`ledger` or `node`).
//!
//! Routes answered from the ledger: `GET /v2/info`, `/v2/accounts/{principal}`,
//! `/v2/fees/transfer`, `/v2/contracts/interface/{addr}/{name}`,
//! `/v2/contracts/source/{addr}/{name}`. `POST /v2/contracts/call-read/...` is validated here
//! and needs a node. Everything else under `/v2` needs a node. See docs/configuration.md.

mod auto;
mod error;
mod handlers;
mod hook;
mod params;

use std::sync::Arc;

use clap::ValueEnum;
use ledger_read::{LocalTxSink, V2Reader};
use stacks_node_proxy::ProxyConfig;
use warp::filters::BoxedFilter;
use warp::reply::Response;
use warp::{Filter, Reply};

use crate::ledger::Network;

pub use auto::{NodeTip, NodeTipCache};
pub use error::V2Error;
pub use hook::LedgerHook;

/// The response header that says who answered a `/v2` request.
pub use stacks_node_proxy::SOURCE_HEADER;
/// Set on a ledger answer whose proof fields were requested (the default) but left out.
pub const PROOF_HEADER: &str = "x-stacks-ledger-proof";
/// `GET /v2/fees/transfer` from the ledger: the node's minimum rate, 1 µSTX per byte.
pub const DEFAULT_TRANSFER_FEE: u64 = 1;

/// Who answers the `/v2` routes the ledger can answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum V2Policy {
    /// Everything goes to the node (the incumbent's behaviour).
    Proxy,
    /// Never touch a node: the ledger answers what it can, the rest is a 503.
    Ledger,
    /// The ledger answers where it is exact and caught up with the node, the node otherwise.
    Auto,
}

/// The `/v2` settings: the node (if any), the policy and the ledger's own answers' settings.
#[derive(Debug, Clone, PartialEq)]
pub struct V2Settings {
    pub node: Option<Arc<ProxyConfig>>,
    pub policy: V2Policy,
    /// The bare integer `GET /v2/fees/transfer` answers from the ledger.
    pub transfer_fee: u64,
}

impl V2Settings {
    /// No node: the ledger answers.
    pub fn ledger_only() -> Self {
        V2Settings { node: None, policy: V2Policy::Ledger, transfer_fee: DEFAULT_TRANSFER_FEE }
    }

    /// The policy in force: without a node everything is `Ledger`, whatever was asked.
    pub fn effective_policy(&self) -> V2Policy {
        if self.node.is_none() {
            V2Policy::Ledger
        } else {
            self.policy
        }
    }
}

/// Per-request context of the ledger handlers.
pub(crate) struct Ctx {
    pub reader: Arc<dyn V2Reader>,
    pub network: Network,
    pub settings: V2Settings,
    pub node_tip: Option<NodeTipCache>,
}

/// Every `/v2` route, for the public route table: the ledger's answers read from `reader`
/// (the store, or any other [`V2Reader`]) on `network`; broadcasts the node accepted are
/// recorded through `local_txs`. Matches every path under `/v2`: what neither the ledger nor a
/// node answers gets a 503 JSON error here rather than the generic 404.
pub fn routes(
    reader: Arc<dyn V2Reader>,
    local_txs: Arc<dyn LocalTxSink>,
    network: Network,
    settings: V2Settings,
) -> BoxedFilter<(Response,)> {
    let policy = settings.effective_policy();
    let node = settings.node.clone();
    let node_tip = match (policy, &node) {
        (V2Policy::Auto, Some(config)) => Some(NodeTipCache::new(Arc::clone(config))),
        _ => None,
    };
    let ctx = Arc::new(Ctx { reader, network, settings, node_tip });
    let ledger = handlers::routes(ctx);
    match (policy, node) {
        (V2Policy::Proxy, Some(config)) => proxy(local_txs, config).boxed(),
        (V2Policy::Auto, Some(config)) => ledger.or(proxy(local_txs, config)).unify().boxed(),
        _ => ledger.or(no_node()).unify().boxed(),
    }
}

/// The node proxy, reporting accepted broadcasts to our mempool.
fn proxy(local_txs: Arc<dyn LocalTxSink>, config: Arc<ProxyConfig>) -> BoxedFilter<(Response,)> {
    stacks_node_proxy::routes(config, Arc::new(LedgerHook::new(local_txs))).map(Reply::into_response).boxed()
}

/// Any other `/v2` request when no node may be asked.
fn no_node() -> BoxedFilter<(Response,)> {
    warp::path("v2")
        .and(warp::method())
        .and(warp::path::full())
        .map(|method: warp::http::Method, path: warp::path::FullPath| {
            V2Error::NeedsNode(format!("{method} {}", path.as_str())).into_response()
        })
        .boxed()
}
