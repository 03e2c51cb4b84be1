//! The response schemas of the `/extended` document (OpenAPI 3.0 JSON Schema), written from the
//! incumbent's entity descriptions (api-inventory §a, §c, §d) and checked against its recorded
//! answers by tests/extended_openapi.rs. Undeclared properties are allowed, as in the incumbent's
//! own document; declared ones are typed.

use serde_json::{json, Map, Value};

mod v3;

fn s() -> Value {
    json!({"type": "string"})
}
fn int() -> Value {
    json!({"type": "integer"})
}
fn num() -> Value {
    json!({"type": "number"})
}
fn b() -> Value {
    json!({"type": "boolean"})
}
fn r(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}
fn arr(items: Value) -> Value {
    json!({"type": "array", "items": items})
}
fn nullable(mut v: Value) -> Value {
    v["nullable"] = json!(true);
    v
}
fn one_of(enum_values: &[&str]) -> Value {
    json!({"type": "string", "enum": enum_values})
}
fn any_of(names: &[&str]) -> Value {
    json!({"anyOf": names.iter().map(|n| r(n)).collect::<Vec<_>>()})
}
/// An object whose keys are data (asset ids, tx ids, ...), each value of `value`'s schema.
fn map_of(value: Value) -> Value {
    json!({"type": "object", "additionalProperties": value})
}

/// An object schema; a property name starting with `?` is optional, the others are required.
fn obj(props: &[(&str, Value)]) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for (name, schema) in props {
        let name = match name.strip_prefix('?') {
            Some(optional) => optional,
            None => {
                required.push(json!(name));
                name
            }
        };
        properties.insert(name.to_string(), schema.clone());
    }
    let mut o = json!({"type": "object", "properties": properties});
    if !required.is_empty() {
        o["required"] = Value::Array(required);
    }
    o
}

/// `{limit, offset, total, results}` of `item`.
fn paged(item: Value) -> Value {
    obj(&[("limit", int()), ("offset", int()), ("total", int()), ("results", arr(item))])
}

/// `{limit, offset, results}` of `item` (the incumbent's lists that count nothing).
fn paged_untotalled(item: Value) -> Value {
    obj(&[("limit", int()), ("offset", int()), ("?total", int()), ("results", arr(item))])
}

/// The v2 cursor envelope of `item`.
fn cursor_paged(item: Value) -> Value {
    obj(&[
        ("limit", int()),
        ("offset", int()),
        ("total", int()),
        ("next_cursor", nullable(s())),
        ("prev_cursor", nullable(s())),
        ("cursor", nullable(s())),
        ("results", arr(item)),
    ])
}

fn hex_repr() -> Value {
    obj(&[("hex", s()), ("repr", s())])
}

const EXECUTION_COSTS: [&str; 5] = [
    "execution_cost_read_count",
    "execution_cost_read_length",
    "execution_cost_runtime",
    "execution_cost_write_count",
    "execution_cost_write_length",
];

fn execution_costs() -> Vec<(&'static str, Value)> {
    EXECUTION_COSTS.iter().map(|n| (*n, int())).collect()
}

const TX_TYPES: [&str; 6] =
    ["token_transfer", "smart_contract", "contract_call", "poison_microblock", "coinbase", "tenure_change"];

/// Fields of every transaction, mined or pending (§c).
fn tx_base() -> Vec<(&'static str, Value)> {
    vec![
        ("tx_id", s()),
        ("nonce", int()),
        ("fee_rate", s()),
        ("sender_address", s()),
        ("?sponsor_nonce", int()),
        ("sponsored", b()),
        ("?sponsor_address", s()),
        ("post_condition_mode", one_of(&["allow", "deny", "originator"])),
        ("post_conditions", arr(r("PostCondition"))),
        ("anchor_mode", one_of(&["on_chain_only", "off_chain_only", "any"])),
        ("tx_type", one_of(&TX_TYPES)),
        ("?token_transfer", obj(&[("recipient_address", s()), ("amount", s()), ("memo", s())])),
        (
            "?smart_contract",
            obj(&[("clarity_version", nullable(int())), ("contract_id", s()), ("source_code", s())]),
        ),
        (
            "?contract_call",
            obj(&[
                ("contract_id", s()),
                ("function_name", s()),
                ("function_signature", s()),
                ("?function_args", arr(obj(&[("hex", s()), ("repr", s()), ("name", s()), ("type", s())]))),
            ]),
        ),
        ("?poison_microblock", obj(&[("microblock_header_1", s()), ("microblock_header_2", s())])),
        (
            "?coinbase_payload",
            obj(&[("data", s()), ("alt_recipient", nullable(s())), ("?vrf_proof", nullable(s()))]),
        ),
        (
            "?tenure_change_payload",
            obj(&[
                ("tenure_consensus_hash", s()),
                ("prev_tenure_consensus_hash", s()),
                ("burn_view_consensus_hash", s()),
                ("previous_tenure_end", s()),
                ("previous_tenure_blocks", int()),
                ("cause", s()),
                ("pubkey_hash", s()),
            ]),
        ),
    ]
}

fn transaction() -> Value {
    let mut props = tx_base();
    props.extend([
        ("block_hash", s()),
        ("block_height", int()),
        ("block_time", int()),
        ("block_time_iso", s()),
        ("burn_block_time", int()),
        ("burn_block_height", int()),
        ("burn_block_time_iso", s()),
        ("parent_burn_block_time", int()),
        ("parent_burn_block_time_iso", s()),
        ("canonical", b()),
        ("tx_index", int()),
        (
            "tx_status",
            one_of(&["success", "abort_by_response", "abort_by_post_condition", "problematic_skipped"]),
        ),
        ("tx_result", hex_repr()),
        ("event_count", int()),
        ("parent_block_hash", s()),
        ("is_unanchored", b()),
        ("microblock_hash", s()),
        ("microblock_sequence", int()),
        ("microblock_canonical", b()),
        ("events", arr(r("TransactionEvent"))),
        ("?vm_error", nullable(s())),
    ]);
    props.extend(execution_costs());
    obj(&props)
}

fn mempool_transaction() -> Value {
    let mut props = tx_base();
    props.extend([
        (
            "tx_status",
            one_of(&[
                "pending",
                "dropped_replace_by_fee",
                "dropped_replace_across_fork",
                "dropped_too_expensive",
                "dropped_stale_garbage_collect",
                "dropped_problematic",
            ]),
        ),
        ("?replaced_by_tx_id", nullable(s())),
        ("receipt_time", int()),
        ("receipt_time_iso", s()),
    ]);
    obj(&props)
}

fn transaction_event() -> Value {
    obj(&[
        ("event_index", int()),
        (
            "event_type",
            one_of(&[
                "smart_contract_log",
                "stx_lock",
                "stx_asset",
                "fungible_token_asset",
                "non_fungible_token_asset",
            ]),
        ),
        ("tx_id", s()),
        ("?contract_log", obj(&[("contract_id", s()), ("topic", s()), ("value", hex_repr())])),
        (
            "?stx_lock_event",
            obj(&[("locked_amount", s()), ("unlock_height", int()), ("locked_address", s())]),
        ),
        (
            "?asset",
            obj(&[
                ("asset_event_type", one_of(&["transfer", "mint", "burn"])),
                ("?asset_id", s()),
                ("sender", s()),
                ("recipient", s()),
                ("?amount", s()),
                ("?value", hex_repr()),
                ("?memo", s()),
            ]),
        ),
    ])
}

fn block_base() -> Vec<(&'static str, Value)> {
    let mut props = vec![
        ("canonical", b()),
        ("height", int()),
        ("hash", s()),
        ("block_time", int()),
        ("block_time_iso", s()),
        ("tenure_height", int()),
        ("index_block_hash", s()),
        ("parent_block_hash", s()),
        ("burn_block_time", int()),
        ("burn_block_time_iso", s()),
        ("burn_block_hash", s()),
        ("burn_block_height", int()),
        ("miner_txid", s()),
    ];
    props.extend(execution_costs());
    props
}

fn block_v1() -> Value {
    let mut props = block_base();
    props.extend([
        ("parent_microblock_hash", s()),
        ("parent_microblock_sequence", int()),
        ("txs", arr(s())),
        ("microblocks_accepted", arr(s())),
        ("microblocks_streamed", arr(s())),
        ("microblock_tx_count", map_of(int())),
    ]);
    obj(&props)
}

fn nakamoto_block() -> Value {
    let mut props = block_base();
    props.extend([("parent_index_block_hash", s()), ("tx_count", int())]);
    obj(&props)
}

fn post_condition() -> Value {
    obj(&[
        ("type", one_of(&["stx", "fungible", "non_fungible", "staking", "pox"])),
        ("condition_code", s()),
        ("principal", obj(&[("type_id", s()), ("?address", s()), ("?contract_name", s())])),
        ("?amount", s()),
        ("?asset", obj(&[("contract_address", s()), ("contract_name", s()), ("asset_name", s())])),
        ("?asset_value", hex_repr()),
    ])
}

fn stx_balance_v1() -> Value {
    obj(&[
        ("balance", s()),
        ("?estimated_balance", s()),
        ("?pending_balance_inbound", s()),
        ("?pending_balance_outbound", s()),
        ("total_sent", s()),
        ("total_received", s()),
        ("total_fees_sent", s()),
        ("total_miner_rewards_received", s()),
        ("lock_tx_id", s()),
        ("locked", s()),
        ("lock_height", int()),
        ("burnchain_lock_height", int()),
        ("burnchain_unlock_height", int()),
        (
            "?token_offering_locked",
            obj(&[
                ("total_locked", s()),
                ("total_unlocked", s()),
                ("unlock_schedule", arr(obj(&[("amount", s()), ("block_height", int())]))),
            ]),
        ),
    ])
}

fn microblock() -> Value {
    obj(&[
        ("canonical", b()),
        ("microblock_canonical", b()),
        ("microblock_hash", s()),
        ("microblock_sequence", int()),
        ("microblock_parent_hash", s()),
        ("block_height", int()),
        ("parent_block_height", int()),
        ("parent_block_hash", s()),
        ("parent_burn_block_hash", s()),
        ("parent_burn_block_time", int()),
        ("parent_burn_block_time_iso", s()),
        ("parent_burn_block_height", int()),
        ("block_hash", s()),
        ("txs", arr(s())),
    ])
}

fn fees() -> Value {
    obj(&[
        ("no_priority", num()),
        ("low_priority", num()),
        ("medium_priority", num()),
        ("high_priority", num()),
    ])
}

fn stats_by_type() -> Value {
    // `{token_transfer: {p25, p50, p75, p95}, ...}`: per tx type, per percentile (null when none).
    map_of(map_of(nullable(num())))
}

/// Every component schema, by name.
pub fn components() -> Value {
    let transfers = obj(&[("amount", s()), ("sender", s()), ("recipient", s())]);
    let entries: Vec<(&str, Value)> = vec![
        (
            "ServerStatus",
            obj(&[
                ("server_version", s()),
                ("status", s()),
                (
                    "?chain_tip",
                    obj(&[
                        ("block_height", int()),
                        ("block_hash", s()),
                        ("index_block_hash", s()),
                        ("?microblock_hash", s()),
                        ("?microblock_sequence", int()),
                        ("burn_block_height", int()),
                    ]),
                ),
            ]),
        ),
        (
            "OpenApiDocument",
            obj(&[
                ("openapi", s()),
                ("info", json!({"type": "object"})),
                ("paths", json!({"type": "object"})),
            ]),
        ),
        (
            "Error",
            obj(&[
                ("error", s()),
                ("?message", s()),
                ("?statusCode", int()),
                ("?code", s()),
                ("?reference", s()),
                ("?stack", s()),
                ("?errorTag", s()),
            ]),
        ),
        ("PostCondition", post_condition()),
        ("Transaction", transaction()),
        ("MempoolTransaction", mempool_transaction()),
        ("AnyTransaction", any_of(&["Transaction", "MempoolTransaction"])),
        ("TransactionEvent", transaction_event()),
        ("TransactionList", paged(r("Transaction"))),
        ("MempoolTransactionList", paged(r("MempoolTransaction"))),
        (
            "TransactionEventList",
            obj(&[("limit", int()), ("offset", int()), ("events", arr(r("TransactionEvent")))]),
        ),
        ("TransactionEventPage", paged(r("TransactionEvent"))),
        ("TransactionMultiple", map_of(obj(&[("found", b()), ("result", json!({"type": "object"}))]))),
        ("RawTransaction", obj(&[("raw_tx", s())])),
        (
            "MempoolStats",
            obj(&[
                ("tx_type_counts", map_of(int())),
                ("tx_simple_fee_averages", stats_by_type()),
                ("tx_ages", stats_by_type()),
                ("tx_byte_sizes", stats_by_type()),
            ]),
        ),
        (
            "MempoolFees",
            obj(&[
                ("all", fees()),
                ("?token_transfer", fees()),
                ("?contract_call", fees()),
                ("?smart_contract", fees()),
            ]),
        ),
        ("FeeRate", obj(&[("fee_rate", int())])),
        ("Block", block_v1()),
        ("BlockList", paged(r("Block"))),
        ("NakamotoBlock", nakamoto_block()),
        ("NakamotoBlockCursorList", cursor_paged(r("NakamotoBlock"))),
        ("NakamotoBlockList", paged(r("NakamotoBlock"))),
        (
            "AverageBlockTimes",
            obj(&[("last_1h", num()), ("last_24h", num()), ("last_7d", num()), ("last_30d", num())]),
        ),
        ("SignerSignatureList", paged(s())),
        (
            "BurnBlock",
            obj(&[
                ("burn_block_time", int()),
                ("burn_block_time_iso", s()),
                ("burn_block_hash", s()),
                ("burn_block_height", int()),
                ("stacks_blocks", arr(s())),
                ("avg_block_time", int()),
                ("total_tx_count", int()),
            ]),
        ),
        ("BurnBlockList", paged(r("BurnBlock"))),
        (
            "RewardSlotHolderList",
            paged(obj(&[
                ("canonical", b()),
                ("burn_block_hash", s()),
                ("burn_block_height", int()),
                ("address", s()),
                ("slot_index", int()),
            ])),
        ),
        (
            "BurnchainRewardList",
            paged_untotalled(obj(&[
                ("canonical", b()),
                ("burn_block_hash", s()),
                ("burn_block_height", int()),
                ("burn_amount", s()),
                ("reward_recipient", s()),
                ("reward_amount", s()),
                ("reward_index", int()),
            ])),
        ),
        ("BurnchainRewardTotal", obj(&[("reward_recipient", s()), ("reward_amount", s())])),
        (
            "StxSupply",
            obj(&[
                ("unlocked_percent", s()),
                ("total_stx", s()),
                ("?total_stx_year_2050", s()),
                ("unlocked_stx", s()),
                ("block_height", int()),
            ]),
        ),
        (
            "StxSupplyLegacy",
            obj(&[
                ("unlockedPercent", s()),
                ("totalStacks", s()),
                ("totalStacksFormatted", s()),
                ("unlockedSupply", s()),
                ("unlockedSupplyFormatted", s()),
                ("blockHeight", s()),
            ]),
        ),
        (
            "NetworkBlockTimes",
            obj(&[
                ("mainnet", obj(&[("target_block_time", int())])),
                ("testnet", obj(&[("target_block_time", int())])),
            ]),
        ),
        ("NetworkBlockTime", obj(&[("target_block_time", int())])),
        ("AddressStxBalance", stx_balance_v1()),
        (
            "AddressBalance",
            obj(&[
                ("stx", r("AddressStxBalance")),
                (
                    "fungible_tokens",
                    map_of(obj(&[("balance", s()), ("total_sent", s()), ("total_received", s())])),
                ),
                (
                    "non_fungible_tokens",
                    map_of(obj(&[("count", s()), ("total_sent", s()), ("total_received", s())])),
                ),
            ]),
        ),
        (
            "AddressNonces",
            obj(&[
                ("last_mempool_tx_nonce", nullable(int())),
                ("last_executed_tx_nonce", nullable(int())),
                ("possible_next_nonce", int()),
                ("?detected_missing_nonces", arr(int())),
                ("?detected_mempool_nonces", arr(int())),
            ]),
        ),
        (
            "AddressTransactionWithTransfers",
            obj(&[
                ("tx", r("Transaction")),
                ("stx_sent", s()),
                ("stx_received", s()),
                ("stx_transfers", arr(transfers.clone())),
                ("?ft_transfers", arr(json!({"type": "object"}))),
                ("?nft_transfers", arr(json!({"type": "object"}))),
            ]),
        ),
        ("AddressTransactionsWithTransfersList", paged(r("AddressTransactionWithTransfers"))),
        (
            "InboundStxTransferList",
            paged(obj(&[
                ("sender", s()),
                ("amount", s()),
                ("memo", s()),
                ("block_height", int()),
                ("tx_id", s()),
                ("transfer_type", one_of(&["bulk-send", "stx-transfer", "stx-transfer-memo"])),
                ("tx_index", int()),
            ])),
        ),
        (
            "AddressTransactionList",
            paged(obj(&[
                ("tx", r("Transaction")),
                ("stx_sent", s()),
                ("stx_received", s()),
                ("events", json!({"type": "object"})),
            ])),
        ),
        (
            "AddressTransactionEventList",
            paged(obj(&[
                ("type", one_of(&["stx", "ft", "nft"])),
                ("event_index", int()),
                ("data", obj(&[("type", one_of(&["transfer", "mint", "burn"]))])),
            ])),
        ),
        (
            "StxBalance",
            obj(&[
                ("balance", s()),
                ("total_miner_rewards_received", s()),
                ("lock_tx_id", s()),
                ("locked", s()),
                ("lock_height", int()),
                ("burnchain_lock_height", int()),
                ("burnchain_unlock_height", int()),
                ("?estimated_balance", s()),
                ("?pending_balance_inbound", s()),
                ("?pending_balance_outbound", s()),
            ]),
        ),
        ("FtBalanceList", paged(obj(&[("token", s()), ("balance", s())]))),
        ("FtBalance", obj(&[("balance", s())])),
        (
            "FtHolderList",
            obj(&[
                ("limit", int()),
                ("offset", int()),
                ("total", int()),
                ("total_supply", s()),
                ("results", arr(obj(&[("address", s()), ("balance", s())]))),
            ]),
        ),
        (
            "SmartContract",
            obj(&[
                ("tx_id", s()),
                ("canonical", b()),
                ("contract_id", s()),
                ("block_height", int()),
                ("clarity_version", nullable(int())),
                ("source_code", s()),
                ("abi", nullable(s())),
            ]),
        ),
        ("SmartContractList", paged_untotalled(r("SmartContract"))),
        (
            "SmartContractLogList",
            paged_untotalled(obj(&[
                ("event_index", int()),
                ("event_type", s()),
                ("tx_id", s()),
                ("contract_log", obj(&[("contract_id", s()), ("topic", s()), ("value", hex_repr())])),
            ])),
        ),
        (
            "SmartContractStatus",
            map_of(obj(&[
                ("found", b()),
                (
                    "?result",
                    obj(&[("status", s()), ("tx_id", s()), ("contract_id", s()), ("?block_height", int())]),
                ),
            ])),
        ),
        ("SmartContractLogCursorList", cursor_paged(json!({"type": "object"}))),
        ("BnsNameList", arr(s())),
        (
            "BnsNameInfo",
            obj(&[
                ("address", s()),
                ("blockchain", s()),
                ("?expire_block", int()),
                ("last_txid", s()),
                ("?resolver", s()),
                ("status", s()),
                ("?zonefile", s()),
                ("zonefile_hash", s()),
            ]),
        ),
        ("BnsZonefile", obj(&[("zonefile", s())])),
        ("BnsNamespaceList", obj(&[("namespaces", arr(s()))])),
        ("BnsNamesOwned", obj(&[("names", arr(s()))])),
        (
            "NftHoldingList",
            paged(obj(&[
                ("asset_identifier", s()),
                ("value", hex_repr()),
                ("block_height", int()),
                ("?tx_id", s()),
                ("?tx", r("Transaction")),
            ])),
        ),
        (
            "NftHistoryList",
            paged(obj(&[
                ("sender", nullable(s())),
                ("recipient", nullable(s())),
                ("event_index", int()),
                ("asset_event_type", s()),
                ("?tx_id", s()),
                ("?tx", r("Transaction")),
            ])),
        ),
        (
            "NftMintList",
            paged(obj(&[
                ("recipient", nullable(s())),
                ("event_index", int()),
                ("value", hex_repr()),
                ("?tx_id", s()),
                ("?tx", r("Transaction")),
            ])),
        ),
        ("SearchResult", obj(&[("?found", b()), ("?result", json!({"type": "object"})), ("?error", s())])),
        ("Microblock", microblock()),
        ("MicroblockList", paged(r("Microblock"))),
        ("UnanchoredTransactionList", obj(&[("total", int()), ("results", arr(r("Transaction")))])),
        ("PoxEventList", paged_untotalled(json!({"type": "object"}))),
        ("PoxEventResults", obj(&[("results", arr(json!({"type": "object"})))])),
        (
            "PoxCycle",
            obj(&[
                ("block_height", int()),
                ("index_block_hash", s()),
                ("cycle_number", int()),
                ("total_weight", int()),
                ("total_stacked_amount", s()),
                ("total_signers", int()),
            ]),
        ),
        ("PoxCycleList", paged(r("PoxCycle"))),
        (
            "PoxSigner",
            obj(&[
                ("signing_key", s()),
                ("signer_address", s()),
                ("weight", int()),
                ("stacked_amount", s()),
                ("weight_percent", num()),
                ("stacked_amount_percent", num()),
                ("solo_stacker_count", int()),
                ("pooled_stacker_count", int()),
            ]),
        ),
        ("PoxSignerList", paged(r("PoxSigner"))),
        (
            "PoolDelegationList",
            paged(obj(&[
                ("stacker", s()),
                ("?pox_addr", s()),
                ("amount_ustx", s()),
                ("?burn_block_unlock_height", int()),
                ("block_height", int()),
                ("tx_id", s()),
            ])),
        ),
        (
            "BurnBlockPoxTxList",
            paged(obj(&[
                ("burn_block_hash", s()),
                ("burn_block_height", int()),
                ("tx_id", s()),
                ("recipient", s()),
                ("utxo_idx", int()),
                ("amount", s()),
            ])),
        ),
        (
            "PoxStackerList",
            paged(obj(&[
                ("stacker_address", s()),
                ("stacked_amount", s()),
                ("pox_address", s()),
                ("stacker_type", one_of(&["solo", "pooled"])),
            ])),
        ),
    ];
    let mut out = Map::new();
    for (name, schema) in entries.into_iter().chain(v3::entries()) {
        out.insert(name.to_string(), schema);
    }
    Value::Object(out)
}
