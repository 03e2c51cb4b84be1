//! For the core's own tests: a [`TxRender`] that marks the text it keeps with the transaction's
//! id, in the two forms a store tells apart, so tests see what the store kept without any
//! surface's shape.

use std::sync::Arc;

use ledger_read::tx::MinedTx;
use ledger_read::TxRender;
use stacks_codec::tx::Transaction;

pub struct Marked;

impl TxRender for Marked {
    fn materialized(&self, _: &Transaction, tx_id: &str, _: bool, _: &str) -> String {
        format!("parts of {tx_id}")
    }

    fn materialized_from_raw(&self, tx_id: &str, _: &str, _: bool, _: &str) -> Option<String> {
        Some(format!("parts of {tx_id}"))
    }

    fn row_text(&self, tx: &MinedTx) -> Option<String> {
        Some(format!("{{row of {} in {}}}", tx.tx_id, tx.index_block_hash))
    }

    fn is_row_text(&self, stored: &str) -> bool {
        stored.starts_with('{')
    }
}

/// [`Marked`], as `Store::open` takes it.
pub fn marked() -> Arc<dyn TxRender> {
    Arc::new(Marked)
}
