//! The public API server's route table: every API mounted over one store, then the fallback
//! that answers unknown URLs with the spec's 404.

use std::convert::Infallible;
use std::sync::Arc;

use warp::{Filter, Reply};

use crate::store::Store;
use crate::v2::V2Settings;

/// Every route of the public API (port 3999), with `/v2` answered by the ledger alone.
pub fn routes(store: Arc<Store>) -> impl Filter<Extract = (impl Reply,), Error = Infallible> + Clone {
    routes_with(store, V2Settings::ledger_only())
}

/// Every route of the public API, with the given `/v2` settings (node, policy).
pub fn routes_with(
    store: Arc<Store>,
    v2: V2Settings,
) -> impl Filter<Extract = (impl Reply,), Error = Infallible> + Clone {
    stacks_extended::routes(Arc::clone(&store))
        .recover(stacks_extended::recover)
        .or(crate::v2::routes(store, v2))
        .or(stacks_extended::not_found_fallback())
}
