//! Why a read failed, in the two cases a surface answers differently.

use thiserror::Error;

type Source = Box<dyn std::error::Error + Send + Sync>;

/// A read that did not answer. Surfaces map it to their own error table in one place: a store
/// that cannot be reached is retriable (Rosetta 649, `/extended` 503), anything else is ours.
#[derive(Debug, Error)]
pub enum ReadError {
    /// The database cannot be reached (pool timed out or closed, I/O).
    #[error("the database service is unavailable")]
    Unavailable(#[source] Source),
    /// The read ran and failed (bad row, inconsistent data, SQL error).
    #[error("read failed: {0}")]
    Failed(#[source] Source),
}

impl ReadError {
    /// Whether the store could not be reached (the same read may succeed later).
    pub fn is_unavailable(&self) -> bool {
        matches!(self, ReadError::Unavailable(_))
    }
}
