//! `/extended/v3` (temporary module root until the shared v3 skeleton is merged).

pub mod principals;
