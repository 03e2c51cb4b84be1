//! Samples of the 1.4.7 indexer bodies.

use rosetta_spec::*;

use super::{meta, string, Sample};

impl Sample for EventsBlocksRequest {
    fn minimal() -> Self {
        EventsBlocksRequest { network_identifier: NetworkIdentifier::minimal(), offset: None, limit: None }
    }
    fn maximal() -> Self {
        EventsBlocksRequest { offset: Some(0), limit: Some(100), ..Self::minimal() }
    }
}

impl Sample for EventsBlocksResponse {
    fn minimal() -> Self {
        EventsBlocksResponse { max_sequence: 0, events: vec![] }
    }
    fn maximal() -> Self {
        let removed =
            BlockEvent { sequence: 1, r#type: BlockEventType::BlockRemoved, ..BlockEvent::minimal() };
        EventsBlocksResponse { max_sequence: 1, events: vec![BlockEvent::minimal(), removed] }
    }
}

impl Sample for BlockEvent {
    fn minimal() -> Self {
        BlockEvent {
            sequence: 0,
            block_identifier: BlockIdentifier::minimal(),
            r#type: BlockEventType::BlockAdded,
        }
    }
    fn maximal() -> Self {
        Self::minimal()
    }
}

impl Sample for SearchTransactionsRequest {
    fn minimal() -> Self {
        SearchTransactionsRequest {
            network_identifier: NetworkIdentifier::minimal(),
            operator: Operator::And,
            max_block: None,
            offset: None,
            limit: None,
            transaction_identifier: None,
            account_identifier: None,
            coin_identifier: None,
            currency: None,
            status: None,
            r#type: None,
            address: None,
            success: None,
        }
    }
    fn maximal() -> Self {
        SearchTransactionsRequest {
            operator: Operator::Or,
            max_block: Some(1000),
            offset: Some(20),
            limit: Some(10),
            transaction_identifier: Some(TransactionIdentifier::minimal()),
            account_identifier: Some(AccountIdentifier::maximal()),
            coin_identifier: Some(CoinIdentifier::minimal()),
            currency: Some(Currency::minimal()),
            status: Some(string("success")),
            r#type: Some(string("token_transfer")),
            address: Some(AccountIdentifier::minimal().address),
            success: Some(true),
            ..Self::minimal()
        }
    }
}

impl Sample for SearchTransactionsResponse {
    fn minimal() -> Self {
        SearchTransactionsResponse { next_offset: None, transactions: vec![] }
    }
    fn maximal() -> Self {
        SearchTransactionsResponse { next_offset: Some(30), transactions: vec![BlockTransaction::maximal()] }
    }
}

impl Sample for BlockTransaction {
    fn minimal() -> Self {
        BlockTransaction { block_identifier: BlockIdentifier::minimal(), transaction: Transaction::minimal() }
    }
    fn maximal() -> Self {
        BlockTransaction { transaction: Transaction::maximal(), ..Self::minimal() }
    }
}

impl Sample for AccountCoinsRequest {
    fn minimal() -> Self {
        AccountCoinsRequest {
            network_identifier: NetworkIdentifier::minimal(),
            account_identifier: AccountIdentifier::minimal(),
            include_mempool: false,
            currencies: None,
        }
    }
    fn maximal() -> Self {
        AccountCoinsRequest {
            include_mempool: true,
            currencies: Some(vec![Currency::maximal()]),
            ..Self::minimal()
        }
    }
}

impl Sample for AccountCoinsResponse {
    fn minimal() -> Self {
        AccountCoinsResponse { block_identifier: BlockIdentifier::minimal(), coins: vec![], metadata: None }
    }
    fn maximal() -> Self {
        AccountCoinsResponse {
            coins: vec![Coin::minimal(), Coin::maximal()],
            metadata: Some(meta()),
            ..Self::minimal()
        }
    }
}
