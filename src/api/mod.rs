//! The public API server's route table: every API mounted over one store, then the fallback
//! that answers unknown URLs with the spec's 404.

use std::convert::Infallible;
use std::sync::Arc;

use warp::{Filter, Reply};

use crate::rosetta::{self, Rosetta};
use crate::store::Store;

/// Every route of the public API (port 3999).
pub fn routes(store: Arc<Store>) -> impl Filter<Extract = (impl Reply,), Error = Infallible> + Clone {
    // Rosetta first: it answers everything under `/rosetta` itself (its errors are Rosetta's).
    let rosetta = rosetta::routes(Arc::new(Rosetta::new(Arc::clone(&store))));
    rosetta
        .or(stacks_extended::routes(store).recover(stacks_extended::recover))
        .or(stacks_extended::not_found_fallback())
}
