//! The public API server's route table: every API mounted over one store, then the fallback
//! that answers unknown URLs with the spec's 404.

use std::convert::Infallible;
use std::sync::Arc;

use warp::{Filter, Reply};

use crate::rosetta::construction;
use crate::rosetta::{self, Rosetta};
use crate::store::Store;

/// Every route of the public API (port 3999); construction without a node to submit through.
pub fn routes(store: Arc<Store>) -> impl Filter<Extract = (impl Reply,), Error = Infallible> + Clone {
    let construction = construction::Context::online(Arc::clone(&store), None);
    routes_with(store, construction)
}

/// Every route, with the construction routes' context (node client, fee rate) given.
pub fn routes_with(
    store: Arc<Store>,
    construction: construction::Context,
) -> impl Filter<Extract = (impl Reply,), Error = Infallible> + Clone {
    // Rosetta first: it answers everything under `/rosetta` itself (its errors are Rosetta's);
    // the construction endpoints ahead of the rest of it.
    let rosetta = rosetta::routes(Arc::new(Rosetta::new(Arc::clone(&store))));
    construction::routes(construction)
        .or(rosetta)
        .or(stacks_extended::routes(store).recover(stacks_extended::recover))
        .or(stacks_extended::not_found_fallback())
}
