//! Every `/extended` route we serve, declared once: method, path template, parameters (with the
//! handlers' own paging constants) and the response schema. The OpenAPI document, the docs page
//! check and the parity table's route templates all come from here.

use serde_json::{json, Value};

use crate::params::LimitRule;
use crate::{address, chain, contract, microblock, pox, tokens, tx};

mod v3;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamType {
    String,
    Integer,
    Boolean,
    /// Repeated (`?a=1&a=2`) or comma-separated.
    StringList,
}

#[derive(Debug, Clone)]
pub struct Param {
    pub name: &'static str,
    pub in_path: bool,
    pub ty: ParamType,
    pub required: bool,
    pub description: &'static str,
    pub default: Option<Value>,
    pub minimum: Option<i64>,
    pub maximum: Option<u64>,
    /// The pattern a string must match (v3 cursors).
    pub pattern: Option<&'static str>,
    pub enum_values: &'static [&'static str],
}

/// What a route answers on success.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Response {
    /// `200 application/json` of the named component schema.
    Json(&'static str),
    /// `200 text/plain`.
    Text,
    /// `200 text/html`.
    Html,
    /// `301`/`302` to another URL.
    Redirect,
}

#[derive(Debug, Clone)]
pub struct Route {
    /// Lower case, as OpenAPI keys operations.
    pub method: &'static str,
    pub path: &'static str,
    pub operation_id: &'static str,
    pub tag: &'static str,
    pub summary: &'static str,
    pub params: Vec<Param>,
    pub response: Response,
    pub deprecated: bool,
}

fn route(
    method: &'static str,
    path: &'static str,
    id: &'static str,
    tag: &'static str,
    summary: &'static str,
    response: Response,
) -> Route {
    let params = path
        .split('/')
        .filter_map(|s| s.strip_prefix('{')?.strip_suffix('}'))
        .map(|name| Param {
            name,
            in_path: true,
            ty: ParamType::String,
            required: true,
            description: "",
            default: None,
            minimum: None,
            maximum: None,
            pattern: None,
            enum_values: &[],
        })
        .collect();
    Route { method, path, operation_id: id, tag, summary, params, response, deprecated: false }
}

fn get(
    path: &'static str,
    id: &'static str,
    tag: &'static str,
    summary: &'static str,
    schema: &'static str,
) -> Route {
    route("get", path, id, tag, summary, Response::Json(schema))
}

impl Route {
    fn param_mut(&mut self, name: &str) -> &mut Param {
        self.params
            .iter_mut()
            .find(|p| p.name == name)
            .unwrap_or_else(|| panic!("{}: no param {name}", self.path))
    }

    /// Declares the path parameter `name` an integer.
    fn int_path(mut self, name: &str) -> Self {
        self.param_mut(name).ty = ParamType::Integer;
        self
    }

    /// Restricts the path parameter `name` to `values`.
    fn path_enum(mut self, name: &str, values: &'static [&'static str]) -> Self {
        self.param_mut(name).enum_values = values;
        self
    }

    fn q(mut self, name: &'static str, ty: ParamType, description: &'static str) -> Self {
        self.params.push(Param {
            name,
            in_path: false,
            ty,
            required: false,
            description,
            default: None,
            minimum: None,
            maximum: None,
            pattern: None,
            enum_values: &[],
        });
        self
    }

    fn required(mut self, name: &str) -> Self {
        self.param_mut(name).required = true;
        self
    }

    fn default(mut self, name: &str, v: Value) -> Self {
        self.param_mut(name).default = Some(v);
        self
    }

    /// `limit` and `offset` with the handler's `rule`.
    fn paged(mut self, rule: LimitRule) -> Self {
        self = self.q("limit", ParamType::Integer, "Results per page").q(
            "offset",
            ParamType::Integer,
            "Results to skip",
        );
        let limit = self.param_mut("limit");
        limit.default = Some(json!(rule.default));
        limit.minimum = Some(0);
        limit.maximum = Some(u64::from(rule.max));
        self.param_mut("offset").default = Some(json!(0));
        self
    }

    fn unanchored(self) -> Self {
        self.q("unanchored", ParamType::Boolean, "Include unanchored (microblock) data")
            .default("unanchored", json!(false))
    }

    fn exclude_args(self) -> Self {
        self.q("exclude_function_args", ParamType::Boolean, "Leave `function_args` out of contract calls")
            .default("exclude_function_args", json!(false))
    }

    fn until_block(self) -> Self {
        self.q("until_block", ParamType::String, "Only data up to this block height or hash")
    }

    fn deprecated(mut self) -> Self {
        self.deprecated = true;
        self
    }

    /// Whether the path segments `segs` (split on `/`, from the leading empty one) match the
    /// template. A parameter matches any segment, even one outside its enum: the handlers answer
    /// a malformed or empty one with a validation error, not the fallback.
    pub fn matches(&self, segs: &[&str]) -> bool {
        let template: Vec<&str> = self.path.split('/').collect();
        template.len() == segs.len() && template.iter().zip(segs).all(|(t, s)| t.starts_with('{') || t == s)
    }

    /// The OpenAPI operation object.
    pub fn operation(&self) -> Value {
        let params: Vec<Value> = self.params.iter().map(Param::openapi).collect();
        let json_body = |schema: &str| json!({"application/json": {"schema": {"$ref": format!("#/components/schemas/{schema}")}}});
        let ok = match self.response {
            Response::Json(schema) => {
                json!({"200": {"description": "Success", "content": json_body(schema)}})
            }
            Response::Text => {
                json!({"200": {"description": "Success", "content": {"text/plain": {"schema": {"type": "string"}}}}})
            }
            Response::Html => {
                json!({"200": {"description": "Success", "content": {"text/html": {"schema": {"type": "string"}}}}})
            }
            Response::Redirect => json!({"301": {"description": "Moved permanently"}}),
        };
        let mut responses = ok;
        if self.response != Response::Redirect {
            responses["404"] = json!({"description": "Not found", "content": json_body("Error")});
            responses["500"] = json!({"description": "Invalid input value, or a server error", "content": json_body("Error")});
        }
        let mut op = json!({
            "operationId": self.operation_id,
            "tags": [self.tag],
            "summary": self.summary,
            "parameters": params,
            "responses": responses,
        });
        if self.deprecated {
            op["deprecated"] = json!(true);
        }
        op
    }
}

impl Param {
    fn openapi(&self) -> Value {
        let mut schema = match self.ty {
            ParamType::String => json!({"type": "string"}),
            ParamType::Integer => json!({"type": "integer"}),
            ParamType::Boolean => json!({"type": "boolean"}),
            ParamType::StringList => json!({"type": "array", "items": {"type": "string"}}),
        };
        if let Some(d) = &self.default {
            schema["default"] = d.clone();
        }
        if let Some(m) = self.minimum {
            schema["minimum"] = json!(m);
        }
        if let Some(m) = self.maximum {
            schema["maximum"] = json!(m);
        }
        if let Some(p) = self.pattern {
            schema["pattern"] = json!(p);
        }
        if !self.enum_values.is_empty() {
            schema["enum"] = json!(self.enum_values);
        }
        let mut p = json!({
            "name": self.name,
            "in": if self.in_path { "path" } else { "query" },
            "required": self.required,
            "schema": schema,
        });
        if !self.description.is_empty() {
            p["description"] = json!(self.description);
        }
        if self.ty == ParamType::StringList {
            p["style"] = json!("form");
            p["explode"] = json!(true);
        }
        p
    }
}

use ParamType::String as Str;
use ParamType::{Boolean, Integer, StringList};

const POX: &[&str] = &["pox2", "pox3", "pox4"];

/// Every route of `/extended` (v1, v2, status) we serve, in the incumbent's order.
pub fn registry() -> Vec<Route> {
    let mut routes = vec![
        // Status.
        get("/extended", "get_status", "Info", "Server status and chain tip", "ServerStatus"),
        route("get", "/", "get_root", "Info", "Redirects to /extended", Response::Redirect),
        route(
            "get",
            "/extended/v1/status",
            "get_v1_status",
            "Info",
            "Redirects to /extended",
            Response::Redirect,
        ),
        get("/extended/openapi.json", "get_openapi_json", "Info", "This document (JSON)", "OpenApiDocument"),
        route(
            "get",
            "/extended/openapi.yaml",
            "get_openapi_yaml",
            "Info",
            "This document (YAML)",
            Response::Text,
        ),
        route(
            "get",
            "/extended/docs",
            "get_api_docs",
            "Info",
            "This document as a browsable page (HTML)",
            Response::Html,
        ),
        // Transactions.
        get(
            "/extended/v1/tx",
            "get_transaction_list",
            "Transactions",
            "Recent mined transactions",
            "TransactionList",
        )
        .paged(tx::lists::TX_LIMIT)
        .q("type", StringList, "Transaction types")
        .q("order", Str, "asc or desc")
        .q("sort_by", Str, "block_height (default), burn_block_time or fee")
        .q("from_address", Str, "Sender address")
        .q("to_address", Str, "Recipient address")
        .q("start_time", Integer, "Unix seconds")
        .q("end_time", Integer, "Unix seconds")
        .q("contract_id", Str, "Contract called or deployed")
        .q("function_name", Str, "Function called")
        .q("nonce", Integer, "Sender nonce")
        .unanchored()
        .exclude_args()
        .deprecated(),
        get(
            "/extended/v1/tx/multiple",
            "get_tx_list_details",
            "Transactions",
            "Several transactions by id",
            "TransactionMultiple",
        )
        .q("tx_id", StringList, "Transaction ids")
        .required("tx_id")
        .q("event_limit", Integer, "Events per transaction")
        .default("event_limit", json!(tx::params::EVENT_LIMIT.default))
        .q("event_offset", Integer, "Events to skip")
        .unanchored()
        .exclude_args(),
        get(
            "/extended/v1/tx/mempool",
            "get_mempool_transaction_list",
            "Transactions",
            "Pending transactions",
            "MempoolTransactionList",
        )
        .paged(tx::lists::TX_LIMIT)
        .q("sender_address", Str, "Sender")
        .q("recipient_address", Str, "Recipient")
        .q("address", Str, "Sender or recipient (not with the other two)")
        .q("order_by", Str, "age, size or fee")
        .q("order", Str, "asc or desc")
        .unanchored()
        .exclude_args()
        .deprecated(),
        get(
            "/extended/v1/tx/mempool/stats",
            "get_mempool_transaction_stats",
            "Transactions",
            "Mempool statistics",
            "MempoolStats",
        ),
        get(
            "/extended/v1/tx/events",
            "get_filtered_events",
            "Transactions",
            "Transaction events by tx or address",
            "TransactionEventList",
        )
        .paged(tx::events::TX_EVENTS_LIMIT)
        .q("tx_id", Str, "Transaction id (or address)")
        .q("address", Str, "Principal (or tx_id)")
        .q("type", StringList, "Event types")
        .deprecated(),
        get(
            "/extended/v1/tx/{tx_id}",
            "get_transaction_by_id",
            "Transactions",
            "One transaction, mined or pending",
            "AnyTransaction",
        )
        .q("event_limit", Integer, "Events to include")
        .default("event_limit", json!(tx::params::EVENT_LIMIT.default))
        .q("event_offset", Integer, "Events to skip")
        .unanchored()
        .exclude_args()
        .deprecated(),
        get(
            "/extended/v1/tx/{tx_id}/raw",
            "get_raw_transaction_by_id",
            "Transactions",
            "A transaction's raw bytes",
            "RawTransaction",
        )
        .deprecated(),
        get(
            "/extended/v1/tx/block/{block_hash}",
            "get_transactions_by_block_hash",
            "Transactions",
            "Transactions of a block",
            "TransactionList",
        )
        .paged(tx::lists::BLOCK_TX_LIMIT)
        .exclude_args()
        .deprecated(),
        get(
            "/extended/v1/tx/block_height/{height}",
            "get_transactions_by_block_height",
            "Transactions",
            "Transactions of a block by height",
            "TransactionList",
        )
        .int_path("height")
        .paged(tx::lists::TX_LIMIT)
        .unanchored()
        .exclude_args()
        .deprecated(),
        route(
            "post",
            "/extended/v1/fee_rate",
            "fetch_fee_rate",
            "Fees",
            "Fee rate (a constant, as the incumbent)",
            Response::Json("FeeRate"),
        )
        .deprecated(),
        get(
            "/extended/v2/mempool/fees",
            "get_mempool_fee_priorities",
            "Mempool",
            "Mempool fee percentiles",
            "MempoolFees",
        ),
        // Blocks (v1).
        get("/extended/v1/block", "get_block_list", "Blocks", "Recent blocks", "BlockList")
            .paged(chain::blocks::BLOCK_LIMIT)
            .deprecated(),
        get(
            "/extended/v1/block/by_height/{height}",
            "get_block_by_height",
            "Blocks",
            "Block by height",
            "Block",
        )
        .int_path("height")
        .deprecated(),
        get(
            "/extended/v1/block/by_burn_block_height/{burn_block_height}",
            "get_block_by_burn_block_height",
            "Blocks",
            "Block by burn block height",
            "Block",
        )
        .int_path("burn_block_height")
        .deprecated(),
        get(
            "/extended/v1/block/by_burn_block_hash/{burn_block_hash}",
            "get_block_by_burn_block_hash",
            "Blocks",
            "Block by burn block hash",
            "Block",
        )
        .deprecated(),
        get("/extended/v1/block/{hash}", "get_block_by_hash", "Blocks", "Block by hash", "Block")
            .deprecated(),
        // Blocks (v2).
        get(
            "/extended/v2/blocks",
            "get_blocks",
            "Blocks",
            "Recent blocks (cursor paging)",
            "NakamotoBlockCursorList",
        )
        .paged(chain::blocks::BLOCK_LIMIT)
        .q("cursor", Str, "index_block_hash to page from"),
        get(
            "/extended/v2/blocks/average-times",
            "get_average_block_times",
            "Blocks",
            "Average block times",
            "AverageBlockTimes",
        ),
        get(
            "/extended/v2/blocks/by-block-time/{timestamp}",
            "get_block_by_block_time",
            "Blocks",
            "Latest block at or before a time",
            "NakamotoBlock",
        )
        .int_path("timestamp"),
        get(
            "/extended/v2/blocks/{height_or_hash}",
            "get_block",
            "Blocks",
            "Block by height, hash or `latest`",
            "NakamotoBlock",
        ),
        get(
            "/extended/v2/blocks/{height_or_hash}/transactions",
            "get_transactions_by_block",
            "Transactions",
            "Transactions of a block",
            "TransactionList",
        )
        .paged(chain::blocks::TX_LIMIT)
        .deprecated(),
        get(
            "/extended/v2/blocks/{height_or_hash}/signer-signatures",
            "get_signer_signatures_for_block",
            "Signers",
            "Signer signatures of a block",
            "SignerSignatureList",
        )
        .paged(chain::blocks::SIGNATURE_LIMIT),
        get(
            "/extended/v2/block-tenures/{tenure_height}/blocks",
            "get_tenure_blocks",
            "Blocks",
            "Blocks of a tenure (cursor paging)",
            "NakamotoBlockCursorList",
        )
        .int_path("tenure_height")
        .paged(chain::blocks::BLOCK_LIMIT)
        .q("cursor", Str, "index_block_hash to page from"),
        // Burn blocks.
        get(
            "/extended/v2/burn-blocks",
            "get_burn_blocks",
            "Burn Blocks",
            "Recent burn blocks",
            "BurnBlockList",
        )
        .paged(chain::burn::BURN_BLOCK_LIMIT),
        get(
            "/extended/v2/burn-blocks/{height_or_hash}",
            "get_burn_block",
            "Burn Blocks",
            "Burn block by height or hash",
            "BurnBlock",
        ),
        get(
            "/extended/v2/burn-blocks/{height_or_hash}/blocks",
            "get_blocks_by_burn_block",
            "Blocks",
            "Stacks blocks of a burn block",
            "NakamotoBlockList",
        )
        .paged(chain::burn::BURN_BLOCK_LIMIT),
        get(
            "/extended/v2/burn-blocks/{height_or_hash}/pox-transactions",
            "get_burn_block_pox_transactions",
            "Burn Blocks",
            "PoX payout transactions of a burn block",
            "BurnBlockPoxTxList",
        )
        .paged(chain::burn::BURN_BLOCK_LIMIT),
        get(
            "/extended/v2/addresses/{address}/pox-transactions",
            "get_address_pox_transactions",
            "Burn Blocks",
            "PoX payout transactions to a Bitcoin address",
            "BurnBlockPoxTxList",
        )
        .paged(chain::burn::BURN_BLOCK_LIMIT),
        // Burnchain.
        get(
            "/extended/v1/burnchain/reward_slot_holders",
            "get_burnchain_reward_slot_holders",
            "Stacking Rewards",
            "Reward slot holders",
            "RewardSlotHolderList",
        )
        .paged(chain::burn::BURNCHAIN_LIMIT),
        get(
            "/extended/v1/burnchain/reward_slot_holders/{address}",
            "get_burnchain_reward_slot_holders_by_address",
            "Stacking Rewards",
            "Reward slot holders of an address",
            "RewardSlotHolderList",
        )
        .paged(chain::burn::BURNCHAIN_LIMIT),
        get(
            "/extended/v1/burnchain/rewards",
            "get_burnchain_reward_list",
            "Stacking Rewards",
            "Burnchain rewards",
            "BurnchainRewardList",
        )
        .paged(chain::burn::BURNCHAIN_LIMIT),
        get(
            "/extended/v1/burnchain/rewards/{address}",
            "get_burnchain_reward_list_by_address",
            "Stacking Rewards",
            "Burnchain rewards of an address",
            "BurnchainRewardList",
        )
        .paged(chain::burn::BURNCHAIN_LIMIT),
        get(
            "/extended/v1/burnchain/rewards/{address}/total",
            "get_burnchain_rewards_total_by_address",
            "Stacking Rewards",
            "Total burnchain rewards of an address",
            "BurnchainRewardTotal",
        ),
        // Supply and info.
        get("/extended/v1/stx_supply", "get_stx_supply", "Info", "STX supply", "StxSupply")
            .q("height", Integer, "Block height")
            .unanchored()
            .deprecated(),
        route(
            "get",
            "/extended/v1/stx_supply/total/plain",
            "get_stx_supply_total_supply_plain",
            "Info",
            "Total STX supply",
            Response::Text,
        )
        .deprecated(),
        route(
            "get",
            "/extended/v1/stx_supply/circulating/plain",
            "get_stx_supply_circulating_plain",
            "Info",
            "Circulating STX supply",
            Response::Text,
        )
        .deprecated(),
        get(
            "/extended/v1/stx_supply/legacy_format",
            "get_total_stx_supply_legacy_format",
            "Info",
            "STX supply (legacy shape)",
            "StxSupplyLegacy",
        )
        .q("height", Integer, "Block height")
        .unanchored()
        .deprecated(),
        get(
            "/extended/v1/info/network_block_times",
            "get_network_block_times",
            "Info",
            "Target block times",
            "NetworkBlockTimes",
        ),
        get(
            "/extended/v1/info/network_block_time/{network}",
            "get_network_block_time_by_network",
            "Info",
            "Target block time of a network",
            "NetworkBlockTime",
        )
        .path_enum("network", &["mainnet", "testnet"]),
        // Accounts (v1).
        get(
            "/extended/v1/address/{principal}/stx",
            "get_account_stx_balance",
            "Accounts",
            "STX balance",
            "AddressStxBalance",
        )
        .unanchored()
        .until_block()
        .deprecated(),
        get(
            "/extended/v1/address/{principal}/balances",
            "get_account_balance",
            "Accounts",
            "STX, FT and NFT balances",
            "AddressBalance",
        )
        .unanchored()
        .until_block()
        .deprecated(),
        get(
            "/extended/v1/address/{principal}/transactions",
            "get_account_transactions",
            "Accounts",
            "Transactions of a principal",
            "TransactionList",
        )
        .paged(address::txs::ADDRESS_TXS)
        .q("height", Integer, "Block height")
        .unanchored()
        .until_block()
        .exclude_args()
        .deprecated(),
        get(
            "/extended/v1/address/{principal}/{tx_id}/with_transfers",
            "get_single_transaction_with_transfers",
            "Accounts",
            "One transaction with its STX transfers",
            "AddressTransactionWithTransfers",
        )
        .deprecated(),
        get(
            "/extended/v1/address/{principal}/transactions_with_transfers",
            "get_account_transactions_with_transfers",
            "Accounts",
            "Transactions with transfers",
            "AddressTransactionsWithTransfersList",
        )
        .paged(address::transfers::TXS)
        .q("height", Integer, "Block height")
        .unanchored()
        .until_block()
        .deprecated(),
        get(
            "/extended/v1/address/{principal}/assets",
            "get_account_assets",
            "Accounts",
            "Asset events of a principal",
            "TransactionEventPage",
        )
        .paged(address::transfers::EVENTS)
        .unanchored()
        .until_block()
        .deprecated(),
        get(
            "/extended/v1/address/{principal}/stx_inbound",
            "get_account_inbound",
            "Accounts",
            "Inbound STX transfers",
            "InboundStxTransferList",
        )
        .paged(address::transfers::INBOUND)
        .q("height", Integer, "Block height")
        .unanchored()
        .until_block()
        .deprecated(),
        get(
            "/extended/v1/address/{principal}/mempool",
            "get_address_mempool_transactions",
            "Transactions",
            "Pending transactions of a principal",
            "MempoolTransactionList",
        )
        .paged(address::transfers::MEMPOOL)
        .unanchored()
        .exclude_args()
        .deprecated(),
        get(
            "/extended/v1/address/{principal}/nonces",
            "get_account_nonces",
            "Accounts",
            "Nonces of a principal",
            "AddressNonces",
        )
        .q("block_height", Integer, "Nonce at this block height")
        .q("block_hash", Str, "Nonce at this block")
        .deprecated(),
        // Accounts (v2).
        get(
            "/extended/v2/addresses/{address}/transactions",
            "get_address_transactions",
            "Transactions",
            "Transactions of an address with its transfers",
            "AddressTransactionList",
        )
        .paged(address::txs::ADDRESS_TXS)
        .exclude_args()
        .deprecated(),
        get(
            "/extended/v2/addresses/{address}/transactions/{tx_id}/events",
            "get_address_transaction_events",
            "Transactions",
            "Events of a transaction for an address",
            "AddressTransactionEventList",
        )
        .paged(address::transfers::TX_EVENTS)
        .deprecated(),
        get(
            "/extended/v2/addresses/{principal}/balances/stx",
            "get_principal_stx_balance",
            "Accounts",
            "STX balance",
            "StxBalance",
        )
        .q("include_mempool", Boolean, "Add the pending mempool balance")
        .default("include_mempool", json!(false))
        .deprecated(),
        get(
            "/extended/v2/addresses/{principal}/balances/ft",
            "get_principal_ft_balances",
            "Accounts",
            "FT balances",
            "FtBalanceList",
        )
        .paged(address::balances::FT_BALANCES)
        .deprecated(),
        get(
            "/extended/v2/addresses/{principal}/balances/ft/{token}",
            "get_principal_ft_balance",
            "Accounts",
            "One FT balance",
            "FtBalance",
        )
        .deprecated(),
        // Tokens.
        get(
            "/extended/v1/tokens/ft/{token}/holders",
            "get_ft_holders",
            "Fungible Tokens",
            "Holders of a fungible token (or `stx`)",
            "FtHolderList",
        )
        .paged(address::balances::TOKEN_HOLDERS),
        get(
            "/extended/v1/tokens/nft/holdings",
            "get_nft_holdings",
            "Non-Fungible Tokens",
            "NFTs held by a principal",
            "NftHoldingList",
        )
        .q("principal", Str, "Holder")
        .required("principal")
        .q("asset_identifiers", StringList, "Only these assets")
        .paged(tokens::TOKENS)
        .unanchored()
        .q("tx_metadata", Boolean, "Include the whole transaction")
        .default("tx_metadata", json!(false))
        .deprecated(),
        get(
            "/extended/v1/tokens/nft/history",
            "get_nft_history",
            "Non-Fungible Tokens",
            "History of one NFT",
            "NftHistoryList",
        )
        .q("asset_identifier", Str, "Asset")
        .required("asset_identifier")
        .q("value", Str, "Clarity hex of the token")
        .required("value")
        .paged(tokens::TOKENS)
        .unanchored()
        .q("tx_metadata", Boolean, "Include the whole transaction")
        .default("tx_metadata", json!(false)),
        get(
            "/extended/v1/tokens/nft/mints",
            "get_nft_mints",
            "Non-Fungible Tokens",
            "Mints of an NFT asset",
            "NftMintList",
        )
        .q("asset_identifier", Str, "Asset")
        .required("asset_identifier")
        .paged(tokens::TOKENS)
        .unanchored()
        .q("tx_metadata", Boolean, "Include the whole transaction")
        .default("tx_metadata", json!(false)),
        // Smart contracts.
        get(
            "/extended/v1/contract/by_trait",
            "get_contracts_by_trait",
            "Smart Contracts",
            "Contracts implementing a trait",
            "SmartContractList",
        )
        .q("trait_abi", Str, "Trait ABI (JSON)")
        .required("trait_abi")
        .paged(contract::CONTRACTS),
        get(
            "/extended/v1/contract/{contract_id}",
            "get_contract_by_id",
            "Smart Contracts",
            "A contract",
            "SmartContract",
        ),
        get(
            "/extended/v1/contract/{contract_id}/events",
            "get_contract_events_by_id",
            "Smart Contracts",
            "Log events of a contract",
            "SmartContractLogList",
        )
        .paged(contract::CONTRACT_EVENTS)
        .deprecated(),
        get(
            "/extended/v2/smart-contracts/status",
            "get_smart_contracts_status",
            "Smart Contracts",
            "Deployment status of contracts",
            "SmartContractStatus",
        )
        .q("contract_id", StringList, "Contract ids")
        .required("contract_id"),
        get(
            "/extended/v2/smart-contracts/{contract_id}/logs",
            "get_smart_contract_logs",
            "Smart Contracts",
            "Log events of a contract (cursor paging)",
            "SmartContractLogCursorList",
        )
        .paged(contract::LOGS)
        .q("cursor", Str, "block_height:microblock_sequence:tx_index:event_index"),
        // Search.
        get(
            "/extended/v1/search/{id}",
            "search_by_id",
            "Search",
            "A block, transaction, contract or address by id",
            "SearchResult",
        )
        .q("include_metadata", Boolean, "Include the entity found")
        .default("include_metadata", json!(false)),
        // Microblocks.
        get(
            "/extended/v1/microblock",
            "get_microblock_list",
            "Microblocks",
            "Recent microblocks",
            "MicroblockList",
        )
        .paged(microblock::MICROBLOCK_LIMIT)
        .deprecated(),
        get(
            "/extended/v1/microblock/unanchored/txs",
            "get_unanchored_txs",
            "Microblocks",
            "Transactions of unanchored microblocks",
            "UnanchoredTransactionList",
        )
        .deprecated(),
        get(
            "/extended/v1/microblock/{hash}",
            "get_microblock_by_hash",
            "Microblocks",
            "A microblock",
            "Microblock",
        )
        .deprecated(),
        // PoX.
        get("/extended/v1/{pox}/events", "get_pox_events", "Stacking", "PoX contract events", "PoxEventList")
            .path_enum("pox", POX)
            .paged(pox::POX_EVENT_LIMIT),
        get(
            "/extended/v1/{pox}/tx/{tx_id}",
            "get_pox_events_by_tx",
            "Stacking",
            "PoX events of a transaction",
            "PoxEventResults",
        )
        .path_enum("pox", POX),
        get(
            "/extended/v1/{pox}/stacker/{principal}",
            "get_pox_events_by_stacker",
            "Stacking",
            "PoX events of a stacker",
            "PoxEventResults",
        )
        .path_enum("pox", POX),
        get(
            "/extended/v1/{pox}/{pool_principal}/delegations",
            "get_pool_delegations",
            "Stacking",
            "Stackers delegating to a pool",
            "PoolDelegationList",
        )
        .path_enum("pox", POX)
        .paged(pox::STACKER_LIMIT)
        .q("after_block", Integer, "Only delegations made in blocks above this height")
        .q("height", Integer, "Answer as of this block height")
        .q("unanchored", Boolean, "Include the microblock stream (answered from the anchored tip)"),
        get("/extended/v2/pox/cycles", "get_pox_cycles", "Proof of Transfer", "PoX cycles", "PoxCycleList")
            .paged(pox::cycles::CYCLE_LIMIT),
        get(
            "/extended/v2/pox/cycles/{cycle_number}",
            "get_pox_cycle",
            "Proof of Transfer",
            "A PoX cycle",
            "PoxCycle",
        )
        .int_path("cycle_number"),
        get(
            "/extended/v2/pox/cycles/{cycle_number}/signers",
            "get_pox_cycle_signers",
            "Proof of Transfer",
            "Signers of a cycle",
            "PoxSignerList",
        )
        .int_path("cycle_number")
        .paged(pox::cycles::SIGNER_LIMIT),
        get(
            "/extended/v2/pox/cycles/{cycle_number}/signers/{signer_key}",
            "get_pox_cycle_signer",
            "Proof of Transfer",
            "A signer of a cycle",
            "PoxSigner",
        )
        .int_path("cycle_number"),
        get(
            "/extended/v2/pox/cycles/{cycle_number}/signers/{signer_key}/stackers",
            "get_pox_cycle_signer_stackers",
            "Proof of Transfer",
            "Stackers of a signer in a cycle",
            "PoxStackerList",
        )
        .int_path("cycle_number")
        .paged(pox::cycles::STACKER_LIMIT),
        // BNS (the incumbent's `/v1` names API).
        get("/v1/names", "get_all_names", "Names", "Names, 100 per page", "BnsNameList")
            .q("page", Integer, "Zero-based page of 100 names")
            .unanchored(),
        get("/v1/names/{name}", "get_name_info", "Names", "A name or subdomain", "BnsNameInfo").unanchored(),
        get(
            "/v1/names/{name}/subdomains",
            "fetch_subdomains_list_for_name",
            "Names",
            "Subdomains of a name",
            "BnsNameList",
        )
        .unanchored(),
        get("/v1/names/{name}/zonefile", "fetch_zone_file", "Names", "A name's zonefile", "BnsZonefile")
            .unanchored(),
        get(
            "/v1/names/{name}/zonefile/{zoneFileHash}",
            "get_historical_zone_file",
            "Names",
            "A name's zonefile with this hash",
            "BnsZonefile",
        )
        .unanchored(),
        get("/v1/namespaces", "get_all_namespaces", "Names", "Namespaces", "BnsNamespaceList").unanchored(),
        get(
            "/v1/namespaces/{tld}/names",
            "get_namespace_names",
            "Names",
            "Names of a namespace",
            "BnsNameList",
        )
        .q("page", Integer, "Zero-based page of 100 names")
        .unanchored(),
        get(
            "/v1/addresses/{blockchain}/{address}",
            "get_names_owned_by_address",
            "Names",
            "Names and subdomains an address owns",
            "BnsNamesOwned",
        )
        .path_enum("blockchain", &["stacks"])
        .unanchored(),
    ];
    routes.extend(v3::routes());
    // Integers in the path are still strings on the wire; a malformed one is the handlers'
    // validation error, so the template keeps matching it.
    for r in &mut routes {
        r.params.sort_by_key(|p| !p.in_path);
    }
    routes
}
