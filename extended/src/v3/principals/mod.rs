//! `/extended/v3/principals/{p}/…`: a principal's transactions with its balance changes, its
//! balance changes per transaction, balances, nonces and pending transactions.

mod reader;

pub use reader::*;
