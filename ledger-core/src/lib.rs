//! The core of stacks-ledger: the node's events ([`events`]), the ledger derived from them by
//! pure code ([`ledger`]), the store that records it and answers every reader of `ledger-read`
//! ([`store`], the only place that knows SQL), and the seam that hands events to it
//! ([`ingest`]). It names no API: the surfaces read through `ledger-read`'s traits, and what a
//! surface renders at ingest reaches the store as a `ledger_read::TxRender`.

// Unsafe code is allowed in one module only, `store::lite::wal_index` (its doc says why).
#![deny(unsafe_code)]

pub mod events;
pub mod ingest;
pub mod ledger;
pub mod store;
#[cfg(test)]
mod test_render;
pub mod timestamp;
