//! The rosetta-cli style checks, as a client of any Rosetta server over HTTP: [`data`] is what
//! `check:data` verifies (sync, reconciliation, every answer validated) and [`construction`]
//! what `check:construction` runs with `rosetta-cli-configs/stacks.ros`. A development and
//! operations tool: the server's library does not contain it, the `stacks-ledger check-data`
//! and `check-construction` commands and the end-to-end tests run it.

#![forbid(unsafe_code)]

pub mod construction;
pub mod data;
