//! `/call`: network-specific procedures listed in `Allow::call_methods`.

use serde::{Deserialize, Serialize};

use super::{Metadata, NetworkIdentifier};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallRequest {
    pub network_identifier: NetworkIdentifier,
    pub method: String,
    pub parameters: Metadata,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallResponse {
    pub result: Metadata,
    /// True only if the same call always gives the same result (safe to cache).
    pub idempotent: bool,
}
