//! The STX faucet: a token transfer from a faucet key, built and signed with our codec,
//! broadcast through the node and recorded in our mempool.
//!
//! Sends are serialised (one at a time per process) so that each reads the nonce the previous
//! one left in the mempool. Another process sharing the database may still race for a nonce;
//! the node then refuses one of them with `ConflictingNonceInMempool` and, as the incumbent
//! does, the next key is tried.

use ledger_read::{FaucetBook, LocalSource, LocalTxSink};
use stacks_codec::address::{single_sig_address, Principal, StacksAddress};
use stacks_codec::sign::{sign_origin, PrivateKey};
use stacks_codec::tx::{
    AnchorMode, Authorization, HashMode, Payload, PostConditionMode, SingleSigSpendingCondition,
    SpendingCondition, Transaction, TransactionVersion,
};
use tokio::sync::Mutex;

use super::node::Node;
use super::FaucetError;

/// 500 STX, the incumbent's default.
pub const DEFAULT_AMOUNT_USTX: u64 = 500_000_000;
pub const MEMO: &str = "faucet";

/// A faucet key and the address it spends from.
pub struct FaucetKey {
    pub key: PrivateKey,
    pub address: StacksAddress,
}

impl FaucetKey {
    pub fn new(key: PrivateKey) -> Result<FaucetKey, FaucetError> {
        let address = single_sig_address(false, HashMode::P2PKH, &key.public_key())
            .map_err(|e| FaucetError::Failed(format!("faucet key: {e}")))?;
        Ok(FaucetKey { key, address })
    }
}

/// What a successful send returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StxSent {
    pub tx_id: String,
    /// Hex without `0x`, as the incumbent serves `txRaw`.
    pub raw_hex: String,
}

pub struct StxFaucet {
    keys: Vec<FaucetKey>,
    fallback_fee: u64,
    /// The key to start with: the last one that worked. Held for the whole send.
    next_key: Mutex<usize>,
}

impl StxFaucet {
    pub fn new(keys: Vec<PrivateKey>, fallback_fee: u64) -> Result<StxFaucet, FaucetError> {
        let keys = keys.into_iter().map(FaucetKey::new).collect::<Result<_, _>>()?;
        Ok(StxFaucet { keys, fallback_fee, next_key: Mutex::new(0) })
    }

    /// The faucet keys' addresses.
    pub fn addresses(&self) -> Vec<StacksAddress> {
        self.keys.iter().map(|k| k.address).collect()
    }

    /// Sends `amount` µSTX (the PoX minimum plus 20% when `stacking`) to `recipient`: the
    /// nonce read from `book`, the sent transaction recorded in our mempool through
    /// `local_txs` (the write path Rosetta submit and `/v2` broadcasts take).
    pub async fn send(
        &self,
        book: &dyn FaucetBook,
        local_txs: &dyn LocalTxSink,
        node: &Node,
        recipient: Principal,
        stacking: bool,
    ) -> Result<StxSent, FaucetError> {
        if self.keys.is_empty() {
            return Err(FaucetError::Unavailable("no faucet key (FAUCET_PRIVATE_KEY) is configured".into()));
        }
        let amount =
            if stacking { stacking_amount(node.pox_min_amount().await?)? } else { DEFAULT_AMOUNT_USTX };
        let chain_id = node.chain_id().await?;
        let mut next_key = self.next_key.lock().await;
        let mut last_refusal = None;
        for attempt in 0..self.keys.len() {
            let index = (*next_key + attempt) % self.keys.len();
            let key = &self.keys[index];
            let nonce = book.possible_next_nonce(&key.address.to_c32()).await?;
            let nonce = u64::try_from(nonce).map_err(|_| FaucetError::Failed(format!("nonce {nonce}")))?;
            let unsigned = transfer(chain_id, key, nonce, 0, recipient.clone(), amount)?;
            let fee = match node.transfer_fee_rate().await? {
                Some(rate) => rate.saturating_mul(unsigned.serialize().len() as u64),
                None => self.fallback_fee,
            };
            let mut tx = transfer(chain_id, key, nonce, fee, recipient.clone(), amount)?;
            sign_origin(&mut tx, &key.key).map_err(|e| FaucetError::Failed(format!("signing: {e}")))?;
            let raw = tx.serialize();
            match node.broadcast(raw.clone()).await? {
                Ok(_) => {
                    let raw_hex = hex::encode(&raw);
                    // Our mempool has it at once, so the next send reads the next nonce. It was
                    // sent whatever happens here: a failure is logged, not the request's.
                    if let Err(e) = local_txs.record(&raw, LocalSource::Faucet).await {
                        tracing::error!(error = %e, txid = %tx.txid_hex(), "faucet tx not recorded in the mempool");
                    }
                    *next_key = index;
                    tracing::info!(txid = %tx.txid_hex(), sender = %key.address, nonce, amount, "STX faucet sent");
                    return Ok(StxSent { tx_id: tx.txid_hex(), raw_hex });
                }
                Err(refusal) if refusal.rotates_key() => {
                    tracing::warn!(sender = %key.address, reason = %refusal.reason, "faucet key refused; trying the next");
                    last_refusal = Some(refusal);
                }
                Err(refusal) => {
                    return Err(FaucetError::Failed(format!("node refused the transfer: {}", refusal.body)))
                }
            }
        }
        // Every key was refused; advance so the next request starts elsewhere.
        *next_key = (*next_key + 1) % self.keys.len();
        match last_refusal {
            Some(r) if r.reason == "NotEnoughFunds" => Err(FaucetError::OutOfFunds(r.body)),
            Some(r) => Err(FaucetError::Failed(format!("every faucet key was refused: {}", r.body))),
            None => Err(FaucetError::Failed("no faucet key tried".into())),
        }
    }
}

/// The PoX minimum plus 20% (rounded up).
pub fn stacking_amount(min_amount_ustx: u128) -> Result<u64, FaucetError> {
    let amount = min_amount_ustx + min_amount_ustx.div_ceil(5);
    u64::try_from(amount).map_err(|_| FaucetError::Failed(format!("stacking amount {amount} is too large")))
}

/// `faucet`, zero-padded to the 34-byte memo.
pub fn memo() -> [u8; 34] {
    let mut memo = [0u8; 34];
    memo[..MEMO.len()].copy_from_slice(MEMO.as_bytes());
    memo
}

/// An unsigned testnet token transfer from `key` (P2PKH, any anchor mode, no post-conditions).
fn transfer(
    chain_id: u32,
    key: &FaucetKey,
    nonce: u64,
    fee: u64,
    recipient: Principal,
    amount: u64,
) -> Result<Transaction, FaucetError> {
    Ok(Transaction {
        version: TransactionVersion::Testnet,
        chain_id,
        auth: Authorization::Standard(SpendingCondition::SingleSig(SingleSigSpendingCondition {
            hash_mode: HashMode::P2PKH,
            signer: key.address.hash160,
            nonce,
            tx_fee: fee,
            key_encoding: key.key.key_encoding(),
            signature: [0; 65],
        })),
        anchor_mode: AnchorMode::Any,
        post_condition_mode: PostConditionMode::Deny,
        post_conditions: Vec::new(),
        payload: Payload::TokenTransfer { recipient, amount, memo: memo() },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use stacks_codec::sign::verify_origin;

    #[test]
    fn stacking_amount_is_the_minimum_plus_a_fifth() {
        assert_eq!(stacking_amount(100).unwrap(), 120);
        assert_eq!(stacking_amount(125_000_000_000).unwrap(), 150_000_000_000);
        assert_eq!(stacking_amount(7).unwrap(), 9);
        assert!(stacking_amount(u128::from(u64::MAX)).is_err());
    }

    #[test]
    fn a_signed_transfer_verifies_and_carries_the_memo() {
        let key = FaucetKey::new(PrivateKey::from_hex(&format!("{}01", "42".repeat(32))).unwrap()).unwrap();
        let recipient: Principal = "ST1PQHQKV0RJXZFY1DGX8MNSNYVE3VGZJSRTPGZGM".parse().unwrap();
        let mut tx = transfer(0x8000_0000, &key, 7, 180, recipient.clone(), 5).unwrap();
        sign_origin(&mut tx, &key.key).unwrap();
        let decoded = Transaction::deserialize(&tx.serialize()).unwrap();
        let verified = verify_origin(&decoded).unwrap();
        assert_eq!(verified.signers, vec![key.key.public_key()]);
        assert_eq!(decoded.origin_address(), key.address);
        assert_eq!((decoded.nonce(), decoded.fee()), (7, 180));
        let Payload::TokenTransfer { recipient: r, amount, memo: m } = decoded.payload else { panic!() };
        assert_eq!((r, amount), (recipient, 5));
        assert_eq!(&m[..6], b"faucet");
        assert!(m[6..].iter().all(|b| *b == 0));
    }
}
