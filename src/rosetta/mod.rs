//! The Rosetta API.

pub mod construction;
