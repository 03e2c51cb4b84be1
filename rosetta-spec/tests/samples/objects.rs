//! Samples of identifiers, core objects and key material.

use rosetta_spec::*;

use super::{meta, string, Sample};

const HASH: &str = "0x4e5a1b4cbd5c2ad79f6a1cd4c7a5b8a9e53f1f6b7b4c7e0d2f2c6a9b1e3d5f70";
const ADDRESS: &str = "SP2J6ZY48GV1EZ5V2V5RB9MP66SW86PYKKNRV9EJ7";

impl Sample for NetworkIdentifier {
    fn minimal() -> Self {
        NetworkIdentifier::new("stacks", "mainnet")
    }
    fn maximal() -> Self {
        NetworkIdentifier { sub_network_identifier: Some(SubNetworkIdentifier::maximal()), ..Self::minimal() }
    }
}

impl Sample for SubNetworkIdentifier {
    fn minimal() -> Self {
        SubNetworkIdentifier { network: string("shard-1"), metadata: None }
    }
    fn maximal() -> Self {
        SubNetworkIdentifier { metadata: Some(meta()), ..Self::minimal() }
    }
}

impl Sample for BlockIdentifier {
    fn minimal() -> Self {
        BlockIdentifier::new(1000, HASH)
    }
    fn maximal() -> Self {
        Self::minimal()
    }
}

impl Sample for PartialBlockIdentifier {
    fn minimal() -> Self {
        PartialBlockIdentifier::default()
    }
    fn maximal() -> Self {
        BlockIdentifier::minimal().into()
    }
}

impl Sample for TransactionIdentifier {
    fn minimal() -> Self {
        TransactionIdentifier::new(HASH)
    }
    fn maximal() -> Self {
        Self::minimal()
    }
}

impl Sample for OperationIdentifier {
    fn minimal() -> Self {
        OperationIdentifier::new(0)
    }
    fn maximal() -> Self {
        OperationIdentifier { index: 2, network_index: Some(1) }
    }
}

impl Sample for AccountIdentifier {
    fn minimal() -> Self {
        AccountIdentifier::new(ADDRESS)
    }
    fn maximal() -> Self {
        AccountIdentifier {
            sub_account: Some(SubAccountIdentifier::maximal()),
            metadata: Some(meta()),
            ..Self::minimal()
        }
    }
}

impl Sample for SubAccountIdentifier {
    fn minimal() -> Self {
        SubAccountIdentifier { address: string("locked"), metadata: None }
    }
    fn maximal() -> Self {
        SubAccountIdentifier { metadata: Some(meta()), ..Self::minimal() }
    }
}

impl Sample for CoinIdentifier {
    fn minimal() -> Self {
        CoinIdentifier { identifier: format!("{HASH}:0") }
    }
    fn maximal() -> Self {
        Self::minimal()
    }
}

impl Sample for Block {
    fn minimal() -> Self {
        Block {
            block_identifier: BlockIdentifier::minimal(),
            parent_block_identifier: BlockIdentifier::new(999, HASH),
            timestamp: 1_600_000_000_000,
            transactions: vec![],
            metadata: None,
        }
    }
    fn maximal() -> Self {
        Block { transactions: vec![Transaction::maximal()], metadata: Some(meta()), ..Self::minimal() }
    }
}

impl Sample for Transaction {
    fn minimal() -> Self {
        Transaction {
            transaction_identifier: TransactionIdentifier::minimal(),
            operations: vec![],
            metadata: None,
        }
    }
    fn maximal() -> Self {
        Transaction {
            operations: vec![Operation::minimal(), Operation::maximal()],
            metadata: Some(meta()),
            ..Self::minimal()
        }
    }
}

impl Sample for Operation {
    fn minimal() -> Self {
        Operation {
            operation_identifier: OperationIdentifier::minimal(),
            related_operations: None,
            r#type: string("fee"),
            status: string("success"),
            account: None,
            amount: None,
            coin_change: None,
            metadata: None,
        }
    }
    fn maximal() -> Self {
        Operation {
            operation_identifier: OperationIdentifier::maximal(),
            related_operations: Some(vec![OperationIdentifier::minimal()]),
            r#type: string("token_transfer"),
            account: Some(AccountIdentifier::maximal()),
            amount: Some(Amount::maximal()),
            coin_change: Some(CoinChange::maximal()),
            metadata: Some(meta()),
            ..Self::minimal()
        }
    }
}

impl Sample for Amount {
    fn minimal() -> Self {
        Amount::new("-184467440737095516150", Currency::minimal())
    }
    fn maximal() -> Self {
        Amount { currency: Currency::maximal(), metadata: Some(meta()), ..Self::minimal() }
    }
}

impl Sample for Currency {
    fn minimal() -> Self {
        Currency::new("STX", 6)
    }
    fn maximal() -> Self {
        Currency { metadata: Some(meta()), ..Self::minimal() }
    }
}

impl Sample for OperationStatus {
    fn minimal() -> Self {
        OperationStatus { status: string("success"), successful: true }
    }
    fn maximal() -> Self {
        OperationStatus { status: string("abort_by_response"), successful: false }
    }
}

impl Sample for CoinChange {
    fn minimal() -> Self {
        CoinChange { coin_identifier: CoinIdentifier::minimal(), coin_action: CoinAction::CoinCreated }
    }
    fn maximal() -> Self {
        CoinChange { coin_action: CoinAction::CoinSpent, ..Self::minimal() }
    }
}

impl Sample for Coin {
    fn minimal() -> Self {
        Coin { coin_identifier: CoinIdentifier::minimal(), amount: Amount::minimal() }
    }
    fn maximal() -> Self {
        Coin { amount: Amount::maximal(), ..Self::minimal() }
    }
}

impl Sample for BalanceExemption {
    fn minimal() -> Self {
        BalanceExemption::default()
    }
    fn maximal() -> Self {
        BalanceExemption {
            sub_account_address: Some(string("locked")),
            currency: Some(Currency::minimal()),
            exemption_type: Some(ExemptionType::Dynamic),
        }
    }
}

impl Sample for PublicKey {
    fn minimal() -> Self {
        PublicKey {
            hex_bytes: string("03a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1"),
            curve_type: CurveType::Secp256k1,
        }
    }
    fn maximal() -> Self {
        Self::minimal()
    }
}

impl Sample for SigningPayload {
    fn minimal() -> Self {
        SigningPayload {
            address: None,
            account_identifier: None,
            hex_bytes: string("ab".repeat(32).as_str()),
            signature_type: None,
        }
    }
    fn maximal() -> Self {
        SigningPayload {
            address: Some(string(ADDRESS)),
            account_identifier: Some(AccountIdentifier::minimal()),
            signature_type: Some(SignatureType::EcdsaRecovery),
            ..Self::minimal()
        }
    }
}

impl Sample for Signature {
    fn minimal() -> Self {
        Signature {
            signing_payload: SigningPayload::minimal(),
            public_key: PublicKey::minimal(),
            signature_type: SignatureType::EcdsaRecovery,
            hex_bytes: "cd".repeat(65),
        }
    }
    fn maximal() -> Self {
        Signature { signing_payload: SigningPayload::maximal(), ..Self::minimal() }
    }
}

impl Sample for Error {
    fn minimal() -> Self {
        Error::new(601, "Invalid Account.", true)
    }
    fn maximal() -> Self {
        Error {
            description: Some(string("The account identifier is not a valid Stacks address.")),
            details: Some(meta()),
            ..Self::minimal()
        }
    }
}
