//! The public API server's route table: every API mounted over one store, then the fallback
//! that answers unknown URLs with the spec's 404.

use std::convert::Infallible;
use std::sync::Arc;

use warp::{Filter, Reply};

use crate::faucet::{FaucetConfig, Faucets};
use crate::store::Store;

/// Every route of the public API (port 3999), the faucets configured from the process
/// environment (an unusable faucet setting leaves the faucets on their defaults, logged;
/// `serve` refuses to start on one instead, through [`routes_with_faucets`]).
pub fn routes(store: Arc<Store>) -> impl Filter<Extract = (impl Reply,), Error = Infallible> + Clone {
    let config = FaucetConfig::from_process_env().unwrap_or_else(|e| {
        tracing::error!("faucet configuration: {e}; faucets use their defaults");
        FaucetConfig::resolve(|_| None).expect("the default faucet configuration is valid")
    });
    let faucets = Faucets::new(Arc::clone(&store), config).unwrap_or_else(|e| {
        tracing::error!("faucets: {e}; faucets use their defaults");
        let defaults = FaucetConfig::resolve(|_| None).expect("the default faucet configuration is valid");
        Faucets::new(Arc::clone(&store), defaults).expect("the default faucets start")
    });
    routes_with_faucets(store, Arc::new(faucets))
}

/// Every route of the public API, with these faucets.
pub fn routes_with_faucets(
    store: Arc<Store>,
    faucets: Arc<Faucets>,
) -> impl Filter<Extract = (impl Reply,), Error = Infallible> + Clone {
    stacks_extended::routes(store)
        .or(crate::faucet::routes(faucets))
        .recover(stacks_extended::recover)
        .or(stacks_extended::not_found_fallback())
}
