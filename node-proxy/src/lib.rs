//! The `/v2/*` Stacks node RPC proxy.
//!
//! Wallets send the node's RPC (`/v2/info`, `/v2/accounts/...`, `POST /v2/transactions`, ...) to
//! the API host, which relays it to a configured stacks-node. [`routes`] is that relay as a warp
//! filter: bodies are streamed both ways, hop-by-hop headers stop here, and node failures become
//! 502/503/504 JSON errors. Broadcasts are also reported to the root crate through
//! [`BroadcastHook`] (for its mempool) and copied to the configured extra endpoints.
//!
//! [`NodeClient`] is the one client of the node's RPC: the proxy's buffered routes go through it,
//! and so do the root crate's callers (Construction, the faucets, readiness).
//!
//! This crate knows nothing of the ledger: the root crate wires it and answers what it can itself
//! before falling through to it.

#![forbid(unsafe_code)]

mod broadcast;
mod client;
mod config;
mod error;
mod fees;
mod headers;
mod hook;
mod proxy;
mod upstream;

pub use client::{Answer, BlockLimit, NodeClient, NodeError, NodeInfo, PoxEpoch, PoxInfo, Rejection};
pub use config::{
    load_extra_endpoints, parse_extra_endpoints, ConfigError, FeeRewriteConfig, ProxyConfig,
    DEFAULT_BODY_LIMIT, DEFAULT_CONNECT_TIMEOUT, DEFAULT_REQUEST_TIMEOUT, DEFAULT_RPC_HOST, DEFAULT_RPC_PORT,
};
pub use error::ProxyError;
pub use headers::SOURCE_HEADER;
pub use hook::{BroadcastHook, BroadcastedTx, CostDimensions, FeeMarketCosts, NoopHook};
pub use proxy::{routes, try_routes};
/// The URL type of [`ProxyConfig`] (reqwest's re-export of `url::Url`).
pub use reqwest::Url;
