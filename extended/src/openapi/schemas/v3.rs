//! The `/extended/v3` component schemas, one function per route family (each returns its
//! `(name, schema)` entries), written from the incumbent's `schemas/v3/entities`.

use super::*;

/// The v3 cursor envelope of `item`.
pub(super) fn cursor_page(item: Value) -> Value {
    obj(&[
        ("total", int()),
        ("limit", int()),
        ("cursor", obj(&[("next", nullable(s())), ("previous", nullable(s())), ("current", nullable(s()))])),
        ("results", arr(item)),
    ])
}

/// Every v3 entry.
pub(super) fn entries() -> Vec<(&'static str, Value)> {
    [core(), principals(), staking()].concat()
}

fn sender() -> Value {
    obj(&[("address", s()), ("nonce", int())])
}

fn hex_repr_v3() -> Value {
    obj(&[("hex", s()), ("repr", s())])
}

/// What a mined transaction summary and a full transaction share (`BaseTransactionSummary`).
fn tx_summary_base() -> Vec<(&'static str, Value)> {
    vec![
        ("tx_id", s()),
        ("sender", sender()),
        ("sponsor", nullable(sender())),
        ("fee_rate", s()),
        (
            "block",
            obj(&[
                ("height", int()),
                ("hash", s()),
                ("index_hash", s()),
                ("time", num()),
                ("tx_index", int()),
            ]),
        ),
        ("bitcoin_block", obj(&[("height", int()), ("time", num())])),
        (
            "status",
            one_of(&["success", "abort_by_response", "abort_by_post_condition", "problematic_skipped"]),
        ),
        ("type", one_of(&TX_TYPES)),
    ]
}

fn mempool_summary_base() -> Vec<(&'static str, Value)> {
    vec![
        ("tx_id", s()),
        ("sender", sender()),
        ("sponsor", nullable(sender())),
        ("fee_rate", s()),
        ("receipt_time", int()),
        ("receipt_block_height", int()),
        (
            "status",
            one_of(&[
                "pending",
                "dropped_replace_by_fee",
                "dropped_replace_across_fork",
                "dropped_too_expensive",
                "dropped_stale_garbage_collect",
                "dropped_problematic",
            ]),
        ),
        ("type", one_of(&TX_TYPES)),
    ]
}

/// The per-type payloads of summaries (the full entities add optional heavy fields).
fn payloads(full: bool) -> Vec<(&'static str, Value)> {
    let mut smart_contract = vec![("contract_id", s()), ("clarity_version", nullable(num()))];
    let mut contract_call = vec![("contract_id", s()), ("function_name", s())];
    if full {
        smart_contract.push(("?source_code", s()));
        contract_call.push(("?function_args", arr(hex_repr_v3())));
    }
    vec![
        ("?token_transfer", obj(&[("recipient", s()), ("amount", s()), ("memo", nullable(hex_repr_v3()))])),
        ("?smart_contract", obj(&smart_contract)),
        ("?contract_call", obj(&contract_call)),
        ("?coinbase", obj(&[("?payload", s()), ("alt_recipient", nullable(s()))])),
        ("?tenure_change", obj(&[("cause", s())])),
    ]
}

fn transaction_summary() -> Value {
    obj(&[tx_summary_base(), payloads(false)].concat())
}

fn mempool_transaction_summary() -> Value {
    obj(&[mempool_summary_base(), payloads(false)].concat())
}

fn transaction() -> Value {
    let extra = vec![
        ("parent_block", obj(&[("hash", s()), ("index_hash", s())])),
        ("?post_conditions", arr(json!({"type": "object"}))),
        ("event_count", int()),
        (
            "execution_cost",
            obj(&["read_count", "read_length", "runtime", "write_count", "write_length"].map(|n| (n, int()))),
        ),
        ("vm_error", nullable(s())),
        ("?result", hex_repr_v3()),
    ];
    obj(&[tx_summary_base(), extra, payloads(true)].concat())
}

fn mempool_transaction() -> Value {
    let extra =
        vec![("?post_conditions", arr(json!({"type": "object"}))), ("replaced_by_tx_id", nullable(s()))];
    obj(&[mempool_summary_base(), extra, payloads(true)].concat())
}

fn transaction_event() -> Value {
    obj(&[
        ("event_index", int()),
        ("type", one_of(&["contract_log", "stx_lock", "stx_asset", "ft_asset", "nft_asset"])),
        ("?contract_log", obj(&[("contract_id", s()), ("topic", s()), ("value", hex_repr_v3())])),
        ("?stx_lock", obj(&[("amount", s()), ("unlock_bitcoin_height", int()), ("address", s())])),
        ("?stx_asset", obj(&[("type", one_of(&["transfer", "mint", "burn"])), ("amount", s())])),
        (
            "?ft_asset",
            obj(&[
                ("type", one_of(&["transfer", "mint", "burn"])),
                ("asset_identifier", s()),
                ("amount", s()),
            ]),
        ),
        (
            "?nft_asset",
            obj(&[
                ("type", one_of(&["transfer", "mint", "burn"])),
                ("asset_identifier", s()),
                ("value", hex_repr_v3()),
            ]),
        ),
    ])
}

/// Transactions, blocks' transactions, the mempool, the supply.
fn core() -> Vec<(&'static str, Value)> {
    vec![
        ("V3TransactionSummaryPage", cursor_page(transaction_summary())),
        ("V3Transaction", json!({"anyOf": [transaction(), mempool_transaction()]})),
        ("V3TransactionEventPage", cursor_page(transaction_event())),
        ("V3MempoolTransactionSummaryPage", cursor_page(mempool_transaction_summary())),
        ("V3StxSupply", obj(&[("total", s()), ("projected_total_2050", s())])),
    ]
}

fn btc_rewards() -> Value {
    obj(&[("accrued", s()), ("claimed", s()), ("claimable", s())])
}

fn tx_location() -> Value {
    obj(&[
        ("tx_id", s()),
        (
            "block",
            obj(&[
                ("height", int()),
                ("hash", s()),
                ("index_hash", s()),
                ("time", int()),
                ("tx_index", int()),
            ]),
        ),
        ("bitcoin_block", obj(&[("height", int()), ("time", int())])),
    ])
}

fn bond_summary_props() -> Vec<(&'static str, Value)> {
    let at = || obj(&[("bitcoin_height", int()), ("pox_cycle", int())]);
    vec![
        ("index", int()),
        ("pox_version", one_of(&["pox5"])),
        ("status", one_of(&["upcoming", "active", "unlocked"])),
        (
            "parameters",
            obj(&[
                ("target_rate_bps", int()),
                ("stx_value_ratio", int()),
                ("minimum_stx_ratio", int()),
                ("btc_capacity", s()),
            ]),
        ),
        ("registrations", obj(&[("allowed_count", int()), ("registered_count", int())])),
        ("schedule", obj(&[("activation", at()), ("unlock", at())])),
        (
            "balances",
            obj(&[("locked", obj(&[("btc", s()), ("stx", s())])), ("paid_out", obj(&[("btc", s())]))]),
        ),
    ]
}

fn registration_summary_props() -> Vec<(&'static str, Value)> {
    vec![
        ("signer", s()),
        ("staker", s()),
        ("type", one_of(&["l1", "l2"])),
        ("balances", obj(&[("btc", s()), ("stx", s())])),
    ]
}

/// PoX-5 staking, from the incumbent's `bonds.ts`, `bond-*.ts`,
/// `staking-signers.ts`, `staking-cycles.ts` and `principal-bond-positions.ts`.
fn staking() -> Vec<(&'static str, Value)> {
    let signer = || vec![("signer", s()), ("signer_key", s())];
    let l1 = obj(&[("transactions", arr(obj(&[("tx_id", s()), ("output_index", int())])))]);
    let grant = obj(&[("signer_key", s()), ("auth_id", s()), ("tx_id", s())]);
    let manager = obj(&[
        ("signer_manager", s()),
        ("registered_at", obj(&[("block_height", int()), ("bitcoin_block_height", int()), ("tx_id", s())])),
        ("granted_keys", arr(grant)),
        ("grant_active", b()),
        (
            "pending_key_update",
            nullable(obj(&[("signer_key", s()), ("effective_cycle", int()), ("tx_id", s())])),
        ),
    ]);
    let cycle_signer = obj(&[
        ("signing_key", s()),
        ("weight", obj(&[("amount", int()), ("percent", num())])),
        ("staked_stx", obj(&[("amount", s()), ("percent", num())])),
        ("signer_managers", arr(manager)),
    ]);
    let position = obj(&[
        ("bond_index", int()),
        ("status", one_of(&["enrolled", "running", "unlocked", "early_exit"])),
        ("active", b()),
        ("enrollment", obj(&[("tx_id", s()), ("btc_lockup", obj(&[("amount", s())]))])),
        ("locked", obj(&[("btc", s()), ("stx", s())])),
        ("rewards", obj(&[("btc", btc_rewards())])),
    ]);
    let summary = obj(&[
        ("stx", obj(&[("locked", s()), ("rewards", obj(&[("btc", btc_rewards())]))])),
        (
            "bonds",
            obj(&[
                ("count", int()),
                ("locked", obj(&[("btc", s()), ("stx", s())])),
                ("rewards", obj(&[("btc", btc_rewards())])),
            ]),
        ),
    ]);
    vec![
        ("V3BondSummaryPage", cursor_page(obj(&bond_summary_props()))),
        ("V3Bond", obj(&[bond_summary_props(), vec![("transaction", tx_location())]].concat())),
        ("V3BondAllowlistEntry", obj(&[("staker", s()), ("max_sats", s())])),
        ("V3BondAllowlistPage", cursor_page(obj(&[("staker", s()), ("max_sats", s())]))),
        ("V3BondRegistrationSummaryPage", cursor_page(obj(&registration_summary_props()))),
        (
            "V3BondRegistration",
            obj(&[
                registration_summary_props(),
                vec![("?l1_lockup", l1), ("?l2_lockup", obj(&[("tx_id", s())]))],
            ]
            .concat()),
        ),
        ("V3StakingSignerPage", cursor_page(obj(&signer()))),
        ("V3StakingSigner", obj(&[signer(), vec![("transaction", tx_location())]].concat())),
        ("V3SignerStakerPage", cursor_page(obj(&[("staker", s()), ("types", arr(one_of(&["stx", "btc"])))]))),
        ("V3CycleSignerPage", cursor_page(cycle_signer)),
        ("V3PrincipalStakingSummary", summary),
        ("V3PrincipalBondPositionPage", cursor_page(position)),
    ]
}

fn balance_change() -> Value {
    obj(&[("sent", s()), ("received", s()), ("net", s())])
}

fn change_asset() -> Value {
    obj(&[("type", one_of(&["stx", "ft", "nft"])), ("?identifier", s())])
}

/// A principal's transactions, balance changes, balances and nonces.
fn principals() -> Vec<(&'static str, Value)> {
    let row = obj(&[
        ("transaction", transaction_summary()),
        ("involvement", one_of(&["sender", "sponsor", "affected"])),
        ("balance_changes", obj(&[("stx", balance_change())])),
        (
            "affected_balances",
            obj(&[
                ("stx", json!({"type": "boolean"})),
                ("ft", json!({"type": "boolean"})),
                ("nft", json!({"type": "boolean"})),
            ]),
        ),
    ]);
    let lock = obj(&[
        ("amount", s()),
        ("pox_version", int()),
        ("lock_tx_id", s()),
        ("stacks_lock_height", int()),
        ("burn_lock_height", int()),
        ("burn_unlock_height", int()),
    ]);
    let mempool = obj(&[("estimated_balance", s()), ("inbound", s()), ("outbound", s())]);
    let ft = obj(&[("asset_identifier", s()), ("balance", s())]);
    vec![
        ("V3PrincipalTransactionPage", cursor_page(row)),
        (
            "V3PrincipalTransactionBalanceChangePage",
            cursor_page(obj(&[("asset", change_asset()), ("balance_change", balance_change())])),
        ),
        (
            "V3PrincipalBalanceChangePage",
            cursor_page(obj(&[
                ("tx_id", s()),
                ("asset", change_asset()),
                ("balance_change", balance_change()),
            ])),
        ),
        (
            "V3PrincipalStxBalance",
            obj(&[
                ("balance", s()),
                ("available", s()),
                ("locked", nullable(lock)),
                ("mempool", nullable(mempool)),
            ]),
        ),
        ("V3PrincipalFtPositionPage", cursor_page(ft.clone())),
        ("V3PrincipalFtPosition", ft),
        (
            "V3PrincipalNftPositionPage",
            cursor_page(obj(&[("asset_identifier", s()), ("value", hex_repr_v3())])),
        ),
        (
            "V3PrincipalNonces",
            obj(&[
                ("next_nonce", int()),
                ("last_confirmed_nonce", nullable(int())),
                (
                    "mempool",
                    obj(&[
                        ("last_nonce", nullable(int())),
                        ("pending_nonces", arr(int())),
                        ("missing_nonces", arr(int())),
                    ]),
                ),
            ]),
        ),
    ]
}
