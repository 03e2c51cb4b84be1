//! Stacks node event-observer events: the raw TSV event log and the typed payload models.

pub mod path;
pub mod payload;
pub mod tsv;

pub use path::{EventPath, UnknownEventPath};
pub use payload::{EventPayload, PayloadError};
pub use tsv::{RawEvent, TsvError, TsvReader, TsvWriter};

#[cfg(test)]
mod fixture_tests;
#[cfg(test)]
mod test_support;
