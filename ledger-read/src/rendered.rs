//! Text a surface renders once, when a block is applied, and the store keeps with the
//! transaction so that the surface's reads copy it instead of rendering it again. The store
//! persists and returns the text without knowing its shape; the surface that serves it owns the
//! renderer, and the composition root hands it to the store.

use stacks_codec::tx::Transaction;

use crate::tx::MinedTx;

/// Renders a mined transaction's stored text. Two forms live in the one stored column: the
/// *materialized* parts (what never changes about the transaction, from its decoded bytes,
/// known before its block is) and the whole *row text* (the transaction under its block).
pub trait TxRender: Send + Sync + 'static {
    /// The materialized parts of `tx`, decoded already (at derivation).
    fn materialized(&self, tx: &Transaction, tx_id: &str, is_burnchain_op: bool, raw_result: &str) -> String;

    /// The materialized parts from a stored raw transaction (`0x` hex); `None` when it does
    /// not decode (rows stored before the text existed).
    fn materialized_from_raw(
        &self,
        tx_id: &str,
        raw_tx: &str,
        is_burnchain_op: bool,
        raw_result: &str,
    ) -> Option<String>;

    /// The whole row text of `tx` under its block, from its fields and its materialized parts
    /// (`tx.api_json`); `None` when it does not render (the row then keeps the parts).
    fn row_text(&self, tx: &MinedTx) -> Option<String>;

    /// Whether `stored` is a whole row text (served as stored) rather than materialized parts.
    fn is_row_text(&self, stored: &str) -> bool;
}
