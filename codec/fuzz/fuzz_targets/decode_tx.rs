//! Any bytes: decoding returns Ok or a typed error, never panics or hangs; whatever decodes
//! re-encodes to the same bytes and renders as JSON.
#![no_main]

use libfuzzer_sys::fuzz_target;
use stacks_codec::tx::Transaction;

fuzz_target!(|data: &[u8]| {
    if let Ok(tx) = Transaction::deserialize(data) {
        assert_eq!(tx.serialize(), data, "a decoded transaction re-encodes to its own bytes");
        let _ = (tx.txid(), tx.to_decoded_json(), tx.api_tx_fields());
    }
});
