//! Samples of the request and response bodies of the 1.4.6 endpoints.

use rosetta_spec::*;

use super::{meta, string, Sample};

const TX_HEX: &str = "0x80800000000400164247d6f2b425ac5771423ae6c80c754f7172b0";

fn network() -> NetworkIdentifier {
    NetworkIdentifier::minimal()
}

impl Sample for MetadataRequest {
    fn minimal() -> Self {
        MetadataRequest::default()
    }
    fn maximal() -> Self {
        MetadataRequest { metadata: Some(meta()) }
    }
}

impl Sample for NetworkRequest {
    fn minimal() -> Self {
        NetworkRequest { network_identifier: network(), metadata: None }
    }
    fn maximal() -> Self {
        NetworkRequest { network_identifier: NetworkIdentifier::maximal(), metadata: Some(meta()) }
    }
}

impl Sample for NetworkListResponse {
    fn minimal() -> Self {
        NetworkListResponse { network_identifiers: vec![] }
    }
    fn maximal() -> Self {
        NetworkListResponse { network_identifiers: vec![network(), NetworkIdentifier::maximal()] }
    }
}

impl Sample for NetworkStatusResponse {
    fn minimal() -> Self {
        NetworkStatusResponse {
            current_block_identifier: BlockIdentifier::minimal(),
            current_block_timestamp: 1_600_000_000_000,
            genesis_block_identifier: BlockIdentifier::new(0, "0x00"),
            oldest_block_identifier: None,
            sync_status: None,
            peers: vec![],
        }
    }
    fn maximal() -> Self {
        NetworkStatusResponse {
            oldest_block_identifier: Some(BlockIdentifier::new(10, "0x0a")),
            sync_status: Some(SyncStatus::maximal()),
            peers: vec![Peer::minimal(), Peer::maximal()],
            ..Self::minimal()
        }
    }
}

impl Sample for SyncStatus {
    fn minimal() -> Self {
        SyncStatus { current_index: 100, target_index: None, stage: None, synced: None }
    }
    fn maximal() -> Self {
        SyncStatus {
            target_index: Some(2000),
            stage: Some(string("header sync")),
            synced: Some(false),
            ..Self::minimal()
        }
    }
}

impl Sample for Peer {
    fn minimal() -> Self {
        Peer { peer_id: string("127.0.0.1:20444"), metadata: None }
    }
    fn maximal() -> Self {
        Peer { metadata: Some(meta()), ..Self::minimal() }
    }
}

impl Sample for NetworkOptionsResponse {
    fn minimal() -> Self {
        NetworkOptionsResponse { version: Version::minimal(), allow: Allow::minimal() }
    }
    fn maximal() -> Self {
        NetworkOptionsResponse { version: Version::maximal(), allow: Allow::maximal() }
    }
}

impl Sample for Version {
    fn minimal() -> Self {
        Version {
            rosetta_version: string(ROSETTA_VERSION),
            node_version: string("3.1.0.0.0"),
            middleware_version: None,
            metadata: None,
        }
    }
    fn maximal() -> Self {
        Version { middleware_version: Some(string("0.1.0")), metadata: Some(meta()), ..Self::minimal() }
    }
}

impl Sample for Allow {
    fn minimal() -> Self {
        Allow {
            operation_statuses: vec![],
            operation_types: vec![],
            errors: vec![],
            historical_balance_lookup: true,
            timestamp_start_index: None,
            call_methods: vec![],
            balance_exemptions: vec![],
        }
    }
    fn maximal() -> Self {
        Allow {
            operation_statuses: vec![OperationStatus::minimal(), OperationStatus::maximal()],
            operation_types: vec![string("token_transfer"), string("fee")],
            errors: vec![Error::minimal()],
            timestamp_start_index: Some(1),
            call_methods: vec![string("contract_call_read_only")],
            balance_exemptions: vec![BalanceExemption::minimal(), BalanceExemption::maximal()],
            ..Self::minimal()
        }
    }
}

impl Sample for BlockRequest {
    fn minimal() -> Self {
        BlockRequest { network_identifier: network(), block_identifier: PartialBlockIdentifier::minimal() }
    }
    fn maximal() -> Self {
        BlockRequest { block_identifier: PartialBlockIdentifier::maximal(), ..Self::minimal() }
    }
}

impl Sample for BlockResponse {
    fn minimal() -> Self {
        BlockResponse::default()
    }
    fn maximal() -> Self {
        BlockResponse {
            block: Some(Block::maximal()),
            other_transactions: Some(vec![TransactionIdentifier::minimal()]),
        }
    }
}

impl Sample for BlockTransactionRequest {
    fn minimal() -> Self {
        BlockTransactionRequest {
            network_identifier: network(),
            block_identifier: BlockIdentifier::minimal(),
            transaction_identifier: TransactionIdentifier::minimal(),
        }
    }
    fn maximal() -> Self {
        Self::minimal()
    }
}

impl Sample for BlockTransactionResponse {
    fn minimal() -> Self {
        BlockTransactionResponse { transaction: Transaction::minimal() }
    }
    fn maximal() -> Self {
        BlockTransactionResponse { transaction: Transaction::maximal() }
    }
}

impl Sample for AccountBalanceRequest {
    fn minimal() -> Self {
        AccountBalanceRequest {
            network_identifier: network(),
            account_identifier: AccountIdentifier::minimal(),
            block_identifier: None,
        }
    }
    fn maximal() -> Self {
        AccountBalanceRequest {
            account_identifier: AccountIdentifier::maximal(),
            block_identifier: Some(PartialBlockIdentifier { index: Some(7), hash: None }),
            ..Self::minimal()
        }
    }
}

impl Sample for AccountBalanceResponse {
    fn minimal() -> Self {
        AccountBalanceResponse {
            block_identifier: BlockIdentifier::minimal(),
            balances: vec![],
            coins: None,
            metadata: None,
        }
    }
    fn maximal() -> Self {
        AccountBalanceResponse {
            balances: vec![Amount::minimal(), Amount::maximal()],
            coins: Some(vec![Coin::maximal()]),
            metadata: Some(meta()),
            ..Self::minimal()
        }
    }
}

impl Sample for MempoolResponse {
    fn minimal() -> Self {
        MempoolResponse { transaction_identifiers: vec![] }
    }
    fn maximal() -> Self {
        MempoolResponse { transaction_identifiers: vec![TransactionIdentifier::minimal()] }
    }
}

impl Sample for MempoolTransactionRequest {
    fn minimal() -> Self {
        MempoolTransactionRequest {
            network_identifier: network(),
            transaction_identifier: TransactionIdentifier::minimal(),
        }
    }
    fn maximal() -> Self {
        Self::minimal()
    }
}

impl Sample for MempoolTransactionResponse {
    fn minimal() -> Self {
        MempoolTransactionResponse { transaction: Transaction::minimal(), metadata: None }
    }
    fn maximal() -> Self {
        MempoolTransactionResponse { transaction: Transaction::maximal(), metadata: Some(meta()) }
    }
}

impl Sample for ConstructionDeriveRequest {
    fn minimal() -> Self {
        ConstructionDeriveRequest {
            network_identifier: network(),
            public_key: PublicKey::minimal(),
            metadata: None,
        }
    }
    fn maximal() -> Self {
        ConstructionDeriveRequest { metadata: Some(meta()), ..Self::minimal() }
    }
}

impl Sample for ConstructionDeriveResponse {
    fn minimal() -> Self {
        ConstructionDeriveResponse::default()
    }
    fn maximal() -> Self {
        let account = AccountIdentifier::minimal();
        ConstructionDeriveResponse {
            address: Some(account.address.clone()),
            account_identifier: Some(account),
            metadata: Some(meta()),
        }
    }
}

impl Sample for ConstructionPreprocessRequest {
    fn minimal() -> Self {
        ConstructionPreprocessRequest {
            network_identifier: network(),
            operations: vec![],
            metadata: None,
            max_fee: None,
            suggested_fee_multiplier: None,
        }
    }
    fn maximal() -> Self {
        ConstructionPreprocessRequest {
            operations: vec![Operation::maximal()],
            metadata: Some(meta()),
            max_fee: Some(vec![Amount::minimal()]),
            suggested_fee_multiplier: Some(1.5),
            ..Self::minimal()
        }
    }
}

impl Sample for ConstructionPreprocessResponse {
    fn minimal() -> Self {
        ConstructionPreprocessResponse::default()
    }
    fn maximal() -> Self {
        ConstructionPreprocessResponse {
            options: Some(meta()),
            required_public_keys: Some(vec![AccountIdentifier::minimal()]),
        }
    }
}

impl Sample for ConstructionMetadataRequest {
    fn minimal() -> Self {
        ConstructionMetadataRequest { network_identifier: network(), options: None, public_keys: None }
    }
    fn maximal() -> Self {
        ConstructionMetadataRequest {
            options: Some(meta()),
            public_keys: Some(vec![PublicKey::minimal()]),
            ..Self::minimal()
        }
    }
}

impl Sample for ConstructionMetadataResponse {
    fn minimal() -> Self {
        ConstructionMetadataResponse { metadata: meta(), suggested_fee: None }
    }
    fn maximal() -> Self {
        ConstructionMetadataResponse { suggested_fee: Some(vec![Amount::minimal()]), ..Self::minimal() }
    }
}

impl Sample for ConstructionPayloadsRequest {
    fn minimal() -> Self {
        ConstructionPayloadsRequest {
            network_identifier: network(),
            operations: vec![Operation::minimal()],
            metadata: None,
            public_keys: None,
        }
    }
    fn maximal() -> Self {
        ConstructionPayloadsRequest {
            metadata: Some(meta()),
            public_keys: Some(vec![PublicKey::maximal()]),
            ..Self::minimal()
        }
    }
}

impl Sample for ConstructionPayloadsResponse {
    fn minimal() -> Self {
        ConstructionPayloadsResponse { unsigned_transaction: string(TX_HEX), payloads: vec![] }
    }
    fn maximal() -> Self {
        ConstructionPayloadsResponse { payloads: vec![SigningPayload::maximal()], ..Self::minimal() }
    }
}

impl Sample for ConstructionCombineRequest {
    fn minimal() -> Self {
        ConstructionCombineRequest {
            network_identifier: network(),
            unsigned_transaction: string(TX_HEX),
            signatures: vec![],
        }
    }
    fn maximal() -> Self {
        ConstructionCombineRequest { signatures: vec![Signature::maximal()], ..Self::minimal() }
    }
}

impl Sample for ConstructionCombineResponse {
    fn minimal() -> Self {
        ConstructionCombineResponse { signed_transaction: string(TX_HEX) }
    }
    fn maximal() -> Self {
        Self::minimal()
    }
}

impl Sample for ConstructionParseRequest {
    fn minimal() -> Self {
        ConstructionParseRequest { network_identifier: network(), signed: false, transaction: string(TX_HEX) }
    }
    fn maximal() -> Self {
        ConstructionParseRequest { signed: true, ..Self::minimal() }
    }
}

impl Sample for ConstructionParseResponse {
    fn minimal() -> Self {
        ConstructionParseResponse {
            operations: vec![],
            signers: None,
            account_identifier_signers: None,
            metadata: None,
        }
    }
    fn maximal() -> Self {
        let signer = AccountIdentifier::minimal();
        ConstructionParseResponse {
            operations: vec![Operation { status: String::new(), ..Operation::maximal() }],
            signers: Some(vec![signer.address.clone()]),
            account_identifier_signers: Some(vec![signer]),
            metadata: Some(meta()),
        }
    }
}

impl Sample for ConstructionHashRequest {
    fn minimal() -> Self {
        ConstructionHashRequest { network_identifier: network(), signed_transaction: string(TX_HEX) }
    }
    fn maximal() -> Self {
        Self::minimal()
    }
}

impl Sample for ConstructionSubmitRequest {
    fn minimal() -> Self {
        ConstructionSubmitRequest { network_identifier: network(), signed_transaction: string(TX_HEX) }
    }
    fn maximal() -> Self {
        Self::minimal()
    }
}

impl Sample for TransactionIdentifierResponse {
    fn minimal() -> Self {
        TransactionIdentifierResponse {
            transaction_identifier: TransactionIdentifier::minimal(),
            metadata: None,
        }
    }
    fn maximal() -> Self {
        TransactionIdentifierResponse { metadata: Some(meta()), ..Self::minimal() }
    }
}

impl Sample for CallRequest {
    fn minimal() -> Self {
        CallRequest {
            network_identifier: network(),
            method: string("contract_call_read_only"),
            parameters: meta(),
        }
    }
    fn maximal() -> Self {
        Self::minimal()
    }
}

impl Sample for CallResponse {
    fn minimal() -> Self {
        CallResponse { result: meta(), idempotent: false }
    }
    fn maximal() -> Self {
        CallResponse { idempotent: true, ..Self::minimal() }
    }
}
