//! What the rest of the product reads off a transaction: txid, who pays, nonces, fees, type.

use super::*;
use crate::address::version;
use crate::hash::sha512_256;

/// The txid of a raw transaction: SHA-512/256 of its bytes.
pub fn txid_of(raw: &[u8]) -> [u8; 32] {
    sha512_256(raw)
}

impl TransactionVersion {
    pub fn is_mainnet(self) -> bool {
        self == TransactionVersion::Mainnet
    }
}

impl HashMode {
    /// The address version a signer with this hash mode has. Only P2PKH maps to the single-sig
    /// versions; P2WPKH and every multisig mode use the multisig ones (as stacks-core does).
    pub fn address_version(self, tx_version: TransactionVersion) -> u8 {
        match (self, tx_version.is_mainnet()) {
            (HashMode::P2PKH, true) => version::MAINNET_SINGLE_SIG,
            (HashMode::P2PKH, false) => version::TESTNET_SINGLE_SIG,
            (_, true) => version::MAINNET_MULTI_SIG,
            (_, false) => version::TESTNET_MULTI_SIG,
        }
    }
}

impl SpendingCondition {
    pub fn hash_mode(&self) -> HashMode {
        match self {
            SpendingCondition::SingleSig(c) => c.hash_mode,
            SpendingCondition::MultiSig(c) => c.hash_mode,
        }
    }

    pub fn signer(&self) -> [u8; 20] {
        match self {
            SpendingCondition::SingleSig(c) => c.signer,
            SpendingCondition::MultiSig(c) => c.signer,
        }
    }

    pub fn nonce(&self) -> u64 {
        match self {
            SpendingCondition::SingleSig(c) => c.nonce,
            SpendingCondition::MultiSig(c) => c.nonce,
        }
    }

    pub fn tx_fee(&self) -> u64 {
        match self {
            SpendingCondition::SingleSig(c) => c.tx_fee,
            SpendingCondition::MultiSig(c) => c.tx_fee,
        }
    }

    /// The signer's address on the network of `tx_version`.
    pub fn address(&self, tx_version: TransactionVersion) -> StacksAddress {
        StacksAddress::new(self.hash_mode().address_version(tx_version), self.signer())
    }
}

impl Authorization {
    pub fn origin(&self) -> &SpendingCondition {
        match self {
            Authorization::Standard(origin) | Authorization::Sponsored(origin, _) => origin,
        }
    }

    pub fn sponsor(&self) -> Option<&SpendingCondition> {
        match self {
            Authorization::Standard(_) => None,
            Authorization::Sponsored(_, sponsor) => Some(sponsor),
        }
    }

    /// Auth type byte: 0x04 standard, 0x05 sponsored.
    pub fn type_id(&self) -> u8 {
        match self {
            Authorization::Standard(_) => wire::AUTH_STANDARD,
            Authorization::Sponsored(..) => wire::AUTH_SPONSORED,
        }
    }
}

impl Transaction {
    /// SHA-512/256 of the consensus serialization.
    pub fn txid(&self) -> [u8; 32] {
        txid_of(&self.serialize())
    }

    /// `0x`-prefixed txid, the form the API serves.
    pub fn txid_hex(&self) -> String {
        crate::to_hex_prefixed(&self.txid())
    }

    pub fn origin(&self) -> &SpendingCondition {
        self.auth.origin()
    }

    pub fn sponsor(&self) -> Option<&SpendingCondition> {
        self.auth.sponsor()
    }

    pub fn is_sponsored(&self) -> bool {
        self.sponsor().is_some()
    }

    /// The sender: the origin's address (the API's `sender_address`).
    pub fn origin_address(&self) -> StacksAddress {
        self.origin().address(self.version)
    }

    pub fn sponsor_address(&self) -> Option<StacksAddress> {
        self.sponsor().map(|s| s.address(self.version))
    }

    /// The origin's nonce (the API's `nonce`).
    pub fn nonce(&self) -> u64 {
        self.origin().nonce()
    }

    pub fn sponsor_nonce(&self) -> Option<u64> {
        self.sponsor().map(SpendingCondition::nonce)
    }

    /// The fee actually paid: the sponsor's in a sponsored transaction, else the origin's.
    pub fn fee(&self) -> u64 {
        self.sponsor().unwrap_or(self.origin()).tx_fee()
    }

    /// The API's `tx_type`: the three coinbase payloads are all `coinbase`, both contract
    /// deploys `smart_contract`.
    pub fn tx_type_name(&self) -> &'static str {
        self.payload.tx_type_name()
    }
}

impl Payload {
    pub fn tx_type_name(&self) -> &'static str {
        match self {
            Payload::TokenTransfer { .. } => "token_transfer",
            Payload::SmartContract { .. } => "smart_contract",
            Payload::ContractCall { .. } => "contract_call",
            Payload::PoisonMicroblock(..) => "poison_microblock",
            Payload::Coinbase { .. } => "coinbase",
            Payload::TenureChange(_) => "tenure_change",
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A sponsored testnet token transfer: P2WPKH origin, P2PKH sponsor.
    pub(in crate::tx) fn sponsored() -> Transaction {
        let single = |hash_mode, signer, nonce, tx_fee| {
            SpendingCondition::SingleSig(SingleSigSpendingCondition {
                hash_mode,
                signer,
                nonce,
                tx_fee,
                key_encoding: KeyEncoding::Compressed,
                signature: [0; 65],
            })
        };
        Transaction {
            version: TransactionVersion::Testnet,
            chain_id: 0x8000_0000,
            auth: Authorization::Sponsored(
                single(HashMode::P2WPKH, [1; 20], 7, 0),
                single(HashMode::P2PKH, [2; 20], 9, 180),
            ),
            anchor_mode: AnchorMode::Any,
            post_condition_mode: PostConditionMode::Deny,
            post_conditions: vec![],
            payload: Payload::TokenTransfer {
                recipient: Principal::Standard(StacksAddress::new(26, [3; 20])),
                amount: 5,
                memo: [0; 34],
            },
        }
    }

    #[test]
    fn sponsored_accessors() {
        let tx = sponsored();
        assert!(tx.is_sponsored());
        assert_eq!(tx.origin_address(), StacksAddress::new(version::TESTNET_MULTI_SIG, [1; 20]));
        assert_eq!(tx.sponsor_address(), Some(StacksAddress::new(version::TESTNET_SINGLE_SIG, [2; 20])));
        assert_eq!((tx.nonce(), tx.sponsor_nonce(), tx.fee()), (7, Some(9), 180));
        assert_eq!(tx.tx_type_name(), "token_transfer");
        assert_eq!(tx.txid(), txid_of(&tx.serialize()));
        assert_eq!(HashMode::P2SHNonSequential.address_version(TransactionVersion::Mainnet), 20);
        assert_eq!(HashMode::P2PKH.address_version(TransactionVersion::Mainnet), 22);
    }
}
