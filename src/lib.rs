//! stacks-ledger library: ingestion of Stacks node events and the ledger built from them.

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
pub mod metrics;
pub mod observer;
pub mod rosetta;
pub mod store;
pub mod v2;
