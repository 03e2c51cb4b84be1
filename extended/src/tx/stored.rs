//! The renderer the store is handed for `/extended`'s transaction text: what ingestion stores
//! with each transaction row (the materialized parts, then the whole row text under its block)
//! so that list reads copy it ([`super::entity`] writes both forms).

use ledger_read::TxRender;
use stacks_codec::tx::Transaction;

use super::entity;
use super::model::MinedTx;

/// `/extended`'s [`TxRender`].
#[derive(Debug, Clone, Copy, Default)]
pub struct StoredText;

impl TxRender for StoredText {
    fn materialized(&self, tx: &Transaction, tx_id: &str, is_burnchain_op: bool, raw_result: &str) -> String {
        entity::materialized_json(tx, tx_id, is_burnchain_op, raw_result)
    }

    fn materialized_from_raw(
        &self,
        tx_id: &str,
        raw_tx: &str,
        is_burnchain_op: bool,
        raw_result: &str,
    ) -> Option<String> {
        entity::materialized_from_raw(tx_id, raw_tx, is_burnchain_op, raw_result).ok()
    }

    fn row_text(&self, tx: &MinedTx) -> Option<String> {
        entity::row_text(tx).ok()
    }

    fn is_row_text(&self, stored: &str) -> bool {
        entity::is_row_text(stored)
    }
}
