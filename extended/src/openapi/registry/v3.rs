//! The `/extended/v3` routes of the registry, one function per route family.

use super::*;
use crate::v3::cursor::{self, Format};
use crate::v3::page;

impl Route {
    /// v3 paging: `limit` (minimum 1, the resource's default and maximum) and `cursor` in
    /// `format`.
    pub fn cursor_paged(mut self, rule: LimitRule, format: Format) -> Self {
        self = self.q("limit", ParamType::Integer, "Results per page").q(
            "cursor",
            ParamType::String,
            "Where the page starts: a `cursor` of a previous answer",
        );
        let limit = self.param_mut("limit");
        limit.default = Some(json!(rule.default));
        limit.minimum = Some(1);
        limit.maximum = Some(u64::from(rule.max));
        self.param_mut("cursor").pattern = Some(format.pattern);
        self
    }
}

/// Every v3 route.
pub(super) fn routes() -> Vec<Route> {
    core()
}

/// Transactions, blocks' transactions, the mempool, the supply (issue 22 item 1): declared
/// with their handlers.
fn core() -> Vec<Route> {
    vec![
        get(
            "/extended/v3/transactions",
            "get_transactions_v3",
            "Transactions",
            "Recently mined transactions, newest first (cursor paging)",
            "V3TransactionSummaryPage",
        )
        .cursor_paged(page::TX, cursor::TX),
        get(
            "/extended/v3/transactions/{tx_id}",
            "get_transaction_v3",
            "Transactions",
            "A mined or mempool transaction",
            "V3Transaction",
        )
        .q(
            "include",
            StringList,
            "Heavy fields: function_args, source_code, post_conditions, result",
        ),
        get(
            "/extended/v3/transactions/{tx_id}/events",
            "get_transaction_events_v3",
            "Transactions",
            "A mined transaction's events (cursor paging)",
            "V3TransactionEventPage",
        )
        .cursor_paged(page::EVENT, cursor::EVENT),
        get(
            "/extended/v3/blocks/{height_or_hash}/transactions",
            "get_block_transactions_v3",
            "Transactions",
            "The transactions of a canonical block (cursor paging)",
            "V3TransactionSummaryPage",
        )
        .cursor_paged(page::TX, cursor::TX),
        get(
            "/extended/v3/mempool/transactions",
            "get_mempool_transactions_v3",
            "Mempool",
            "Pending transactions, newest first (cursor paging)",
            "V3MempoolTransactionSummaryPage",
        )
        .cursor_paged(page::TX, cursor::MEMPOOL),
        get(
            "/extended/v3/tokens/stx/supply",
            "get_stx_total_supply_v3",
            "Info",
            "The liquid STX supply at the tip (µSTX) and its 2050 projection",
            "V3StxSupply",
        ),
    ]
}
