//! Locating the shared reference data for this module's tests (one rule for the whole repo,
//! in the `test-support` crate).

pub use test_support::{shared_path as shared_file, EVENT_LOGS};
