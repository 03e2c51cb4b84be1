//! What an applied event changed, as the ingesting process announces it: in-process to its
//! live updates, or as a PostgreSQL NOTIFY payload (this type's JSON) to every API process.
//! Surfaces turn it into their notifications.

use serde::{Deserialize, Serialize};

/// What an ingested event changed, as the ingesting process announces it (in-process, or as a
/// PostgreSQL NOTIFY payload to every API process).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Change {
    /// The canonical chain may have moved (a block, or a burn block that reorged it).
    Chain,
    MempoolAdded {
        tx_ids: Vec<String>,
    },
    MempoolDropped {
        tx_ids: Vec<String>,
    },
    /// Microblocks streamed (unanchored): the microblocks, in stream order, and their
    /// transactions.
    Microblocks {
        tx_ids: Vec<String>,
        /// Absent in payloads of older processes.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        microblock_hashes: Vec<String>,
    },
}
