//! The Rosetta Construction API. Pure modules ([`intent`], [`ops`], [`build`], [`signers`],
//! [`parse`]) do
//! the work with no I/O; the route handlers translate requests and responses around them.

pub mod build;
pub mod error;
pub mod intent;
pub mod ops;
pub mod parse;
pub mod routes;
pub mod signers;
pub mod wire;

#[cfg(test)]
mod tests;

pub use error::ConstructionError;
pub use intent::Intent;
pub use routes::{routes, Context};
