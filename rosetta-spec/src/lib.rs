//! Rosetta API v1.4.6 as Rust: hand-written serde models of every component schema (plus the
//! 1.4.7 indexer endpoints), the wire [`Error`] with the [`ErrorCatalog`] trait, and a small
//! OpenAPI [`schema`] walker and validator used to check responses against the spec document.

#![forbid(unsafe_code)]

pub mod error;
pub mod models;
pub mod schema;

pub use error::{Error, ErrorCatalog};
pub use models::*;

/// The Rosetta version this crate models and the server reports in `/network/options`.
pub const ROSETTA_VERSION: &str = "1.4.6";
