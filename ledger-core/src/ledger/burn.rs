//! `/new_burn_block`: burn blocks, PoX payouts and reward-slot holders.

use super::{int, normalize_hex};
use crate::events::payload::NewBurnBlock;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BurnBlockRows {
    pub burn_block_hash: String,
    pub burn_block_height: i64,
    pub burn_amount: i64,
    pub consensus_hash: Option<String>,
    pub parent_burn_block_hash: Option<String>,
    /// (recipient, satoshis), in payout order.
    pub rewards: Vec<(String, i64)>,
    /// Slot holder addresses, one per slot.
    pub slot_holders: Vec<String>,
    /// PoX payouts by Bitcoin output: (tx id, output index, recipient, satoshis).
    pub pox_txs: Vec<(String, i64, String, i64)>,
}

pub fn derive_burn_block(b: &NewBurnBlock) -> BurnBlockRows {
    BurnBlockRows {
        burn_block_hash: normalize_hex(&b.burn_block_hash),
        burn_block_height: int(b.burn_block_height),
        burn_amount: int(b.burn_amount),
        consensus_hash: b.consensus_hash.as_deref().map(normalize_hex),
        parent_burn_block_hash: b.parent_burn_block_hash.as_deref().map(normalize_hex),
        rewards: b.reward_recipients.iter().map(|r| (r.recipient.clone(), int(r.amt))).collect(),
        slot_holders: b.reward_slot_holders.clone(),
        pox_txs: b
            .pox_transactions
            .iter()
            .flat_map(|t| {
                t.reward_recipients
                    .iter()
                    .map(|r| (normalize_hex(&t.txid), i64::from(r.utxo_idx), r.recipient.clone(), int(r.amt)))
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::derive_burn_block;

    /// A PoX payout row per Bitcoin output, its transaction id normalized.
    #[test]
    fn pox_transactions_become_rows() {
        let json = r#"{"burn_amount":0,"burn_block_hash":"0x49","burn_block_height":1,"reward_recipients":[],
            "reward_slot_holders":[],"pox_transactions":[{"txid":"AB01",
            "reward_recipients":[{"recipient":"mkmW1","amt":700,"utxo_idx":2}]}]}"#;
        let b = serde_json::from_str(json).unwrap();
        let rows = derive_burn_block(&b).pox_txs;
        assert_eq!(rows, vec![("0xab01".to_string(), 2, "mkmW1".to_string(), 700)]);
    }
}
