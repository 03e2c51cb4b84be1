//! stacks-ledger library: ingestion of Stacks node events and the ledger built from them.

// Unsafe code is allowed in one module only, `store::lite::wal_index` (its doc says why).
#![deny(unsafe_code)]

pub mod api;
pub mod checkconstruction;
pub mod checkdata;
pub mod config;
pub mod devnet;
pub mod events;
pub mod faucet;
pub mod ingest;
pub mod ledger;
pub mod live;
#[cfg(test)]
mod log_capture;
pub mod metrics;
pub mod observer;
pub mod rosetta;
pub mod store;
pub mod timestamp;
pub mod v2;

/// jemalloc as the allocator of every binary built on this library (the server, the CLI, the
/// benchmarks and tests measure the same one). A request's memory is allocated on one thread
/// and freed on another; glibc's malloc then spent ~17 % of a read's CPU in its arena
/// bookkeeping (`malloc_consolidate`, `_int_malloc`, `unlink_chunk`),
/// where jemalloc's per-thread caches take and return memory without a shared lock.
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;
