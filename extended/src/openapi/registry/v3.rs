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
    [core(), principals(), staking()].concat()
}

/// Transactions, blocks' transactions, the mempool, the supply: declared with their handlers.
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

/// PoX-5 staking.
fn staking() -> Vec<Route> {
    let r = |path: &'static str, id: &'static str, summary: &'static str, schema: &'static str| {
        get(path, id, "Staking", summary, schema)
    };
    vec![
        r("/extended/v3/staking/bonds", "get_bonds", "Bonds, newest index first", "V3BondSummaryPage")
            .cursor_paged(page::TX, cursor::BOND),
        r("/extended/v3/staking/bonds/{bond_index}", "get_bond", "A bond", "V3Bond"),
        r(
            "/extended/v3/staking/bonds/{bond_index}/allowlist",
            "get_bond_allowlist_entries",
            "A bond's allowlist, newest first",
            "V3BondAllowlistPage",
        )
        .cursor_paged(page::TX, cursor::TX),
        r(
            "/extended/v3/staking/bonds/{bond_index}/allowlist/{principal}",
            "get_bond_allowlist_entry",
            "A staker's allowlist entry",
            "V3BondAllowlistEntry",
        ),
        r(
            "/extended/v3/staking/bonds/{bond_index}/registrations",
            "get_bond_registrations",
            "A bond's registrations, newest first",
            "V3BondRegistrationSummaryPage",
        )
        .cursor_paged(page::TX, cursor::TX),
        r(
            "/extended/v3/staking/bonds/{bond_index}/registrations/{principal}",
            "get_bond_registration",
            "A staker's registration",
            "V3BondRegistration",
        ),
        r("/extended/v3/staking/signers", "get_staking_signers", "Registered signers", "V3StakingSignerPage")
            .cursor_paged(page::SIGNER, cursor::SIGNER),
        r("/extended/v3/staking/signers/{principal}", "get_staking_signer", "A signer", "V3StakingSigner"),
        r(
            "/extended/v3/staking/signers/{principal}/stakers",
            "get_staking_signer_stakers",
            "A signer's stakers",
            "V3SignerStakerPage",
        )
        .cursor_paged(page::STAKER, cursor::STAKER),
        r(
            "/extended/v3/staking/cycles/{cycle_number}/signers",
            "get_cycle_signers",
            "The current cycle's signers (`cycle_number` is `current`)",
            "V3CycleSignerPage",
        )
        .cursor_paged(page::SIGNER, cursor::SIGNING_KEY),
        r(
            "/extended/v3/principals/{principal}/staking",
            "get_principal_staking_summary",
            "A principal's staking summary",
            "V3PrincipalStakingSummary",
        ),
        r(
            "/extended/v3/principals/{principal}/staking/bonds",
            "get_principal_bond_positions",
            "A principal's bond positions",
            "V3PrincipalBondPositionPage",
        )
        .cursor_paged(page::TX, cursor::BOND),
    ]
}

/// A principal's transactions, balance changes, balances, nonces and pending transactions.
fn principals() -> Vec<Route> {
    use crate::v3::{cursor, page};
    vec![
        get(
            "/extended/v3/principals/{principal}/transactions",
            "get_principal_transactions_v3",
            "Transactions",
            "Get principal transactions",
            "V3PrincipalTransactionPage",
        )
        .cursor_paged(page::TX, cursor::TX),
        get(
            "/extended/v3/principals/{principal}/transactions/{tx_id}/balance-changes",
            "get_principal_transaction_balance_changes",
            "Transactions",
            "Get principal transaction balance changes",
            "V3PrincipalTransactionBalanceChangePage",
        )
        .cursor_paged(page::TX, cursor::TX_BALANCE_CHANGE),
        get(
            "/extended/v3/principals/{principal}/balance-changes",
            "get_principal_balance_changes",
            "Transactions",
            "Get principal balance changes",
            "V3PrincipalBalanceChangePage",
        )
        .cursor_paged(page::TX, cursor::BALANCE_CHANGE)
        .q("tx_id", ParamType::String, "Transaction IDs (repeated or comma-separated)")
        .required("tx_id"),
        get(
            "/extended/v3/principals/{principal}/balances/stx",
            "get_principal_balances_stx",
            "Accounts",
            "Get principal STX balance",
            "V3PrincipalStxBalance",
        ),
        get(
            "/extended/v3/principals/{principal}/balances/ft",
            "get_principal_balances_ft",
            "Accounts",
            "Get principal FT balances",
            "V3PrincipalFtPositionPage",
        )
        .cursor_paged(page::FT_BALANCE, cursor::FT_BALANCE),
        get(
            "/extended/v3/principals/{principal}/balances/ft/{asset_identifier}",
            "get_principal_balance_ft",
            "Accounts",
            "Get principal FT balance",
            "V3PrincipalFtPosition",
        ),
        get(
            "/extended/v3/principals/{principal}/balances/nft",
            "get_principal_balances_nft",
            "Accounts",
            "Get principal NFT balances",
            "V3PrincipalNftPositionPage",
        )
        .cursor_paged(page::NFT_BALANCE, cursor::NFT_BALANCE),
        get(
            "/extended/v3/principals/{principal}/nonces",
            "get_principal_nonces",
            "Accounts",
            "Get principal nonces",
            "V3PrincipalNonces",
        ),
        get(
            "/extended/v3/principals/{principal}/mempool/transactions",
            "get_principal_mempool_transactions",
            "Transactions",
            "Get principal mempool transactions",
            "V3MempoolTransactionSummaryPage",
        )
        .cursor_paged(page::TX, cursor::MEMPOOL),
    ]
}
