//! What the composition root hands the core from the surfaces above it. The store keeps each
//! transaction's served text without knowing its shape ([`ledger_read::TxRender`]); the text is
//! `/extended`'s, so its renderer is.

use std::sync::Arc;

use ledger_read::TxRender;

/// The renderer of the transaction text the store keeps (`/extended`'s list JSON, rendered once
/// when a block is applied): every `Store::open*` of a process that serves `/extended` gets it.
pub fn tx_render() -> Arc<dyn TxRender> {
    Arc::new(stacks_extended::tx::StoredText)
}
