//! stacks-ledger library: ingestion of Stacks node events and the ledger built from them.

pub mod config;
pub mod events;
pub mod ingest;
pub mod observer;
