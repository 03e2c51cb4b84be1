//! stacks-ledger: the server. The surfaces (Rosetta, `/v2`, the faucets, the event observer)
//! and their wiring over the core (`ledger-core`: events, the ledger derivation, the store,
//! ingestion), whose modules are re-exported here under their own names.

#![forbid(unsafe_code)]

pub mod api;
pub mod compose;
pub mod config;
pub mod faucet;
pub mod live;
pub mod metrics;
pub mod observer;
pub mod rosetta;
pub mod v2;

pub use ledger_core::{events, ingest, ledger, store, timestamp};

/// jemalloc as the allocator of every binary built on this library (the server, the CLI, the
/// benchmarks and tests measure the same one). A request's memory is allocated on one thread
/// and freed on another; glibc's malloc then spent ~17 % of a read's CPU in its arena
/// bookkeeping (`malloc_consolidate`, `_int_malloc`, `unlink_chunk`),
/// where jemalloc's per-thread caches take and return memory without a shared lock.
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;
