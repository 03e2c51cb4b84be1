//! The `/v2` routes the ledger answers: each decides ledger or node ([`Ctx::decide`]), then
//! turns the reader's rows ([`ledger_read::V2Reader`]) into the node's JSON. A request for the node is rejected with
//! [`ToNode`] so that the proxy mounted after these routes takes it.

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use serde_json::{json, Map, Value as Json};
use warp::filters::BoxedFilter;
use warp::http::HeaderValue;
use warp::reply::Response;
use warp::{Filter, Rejection, Reply};

use super::error::V2Error;
use super::params::{self, Proof};
use super::{Ctx, V2Policy, PROOF_HEADER, SOURCE_HEADER};
use crate::ledger::Network;
use ledger_read::{is_boot_address, AccountState, V2Contract, V2InfoState};

/// "Let the node answer": the proxy mounted after these routes takes the request.
#[derive(Debug)]
pub(super) struct ToNode;
impl warp::reject::Reject for ToNode {}

type Query = HashMap<String, String>;
type Answer = Result<Response, Rejection>;

/// A node's `peer_version` (stacks-core 3.1: the network's major version, epoch 3.1 marker).
const PEER_VERSION_MAINNET: u32 = 0x1800_000c;
const PEER_VERSION_TESTNET: u32 = 0xfaca_de0c;
/// stacks-core's `GENESIS_CHAINSTATE_HASH` (the same genesis data on mainnet and testnet).
const GENESIS_CHAINSTATE_HASH: &str = "74237aa39aa50a83de11a4f53e9d3bb7d43461d1de9873f402e5453ae60bc59b";
/// The burnchain's network magic, the node's `parent_network_id`.
const PARENT_NETWORK_ID_MAINNET: u32 = 0xd9b4_bef9;
const PARENT_NETWORK_ID_TESTNET: u32 = 0x0709_110b;

pub(super) fn routes(ctx: Arc<Ctx>) -> BoxedFilter<(Response,)> {
    let with_ctx = warp::any().map(move || Arc::clone(&ctx));
    let query = warp::query::<Query>().or(warp::any().map(Query::new)).unify();

    let info = warp::get()
        .and(warp::path!("v2" / "info"))
        .and(with_ctx.clone())
        .and_then(|ctx: Arc<Ctx>| async move { info(&ctx).await });
    let account =
        warp::get().and(warp::path!("v2" / "accounts" / String)).and(query).and(with_ctx.clone()).and_then(
            |principal: String, q: Query, ctx: Arc<Ctx>| async move { account(&ctx, &principal, &q).await },
        );
    let transfer_fee = warp::get()
        .and(warp::path!("v2" / "fees" / "transfer"))
        .and(with_ctx.clone())
        .and_then(|ctx: Arc<Ctx>| async move { transfer_fee(&ctx) });
    let contract = warp::get()
        .and(warp::path!("v2" / "contracts" / String / String / String))
        .and(query)
        .and(with_ctx.clone())
        .and_then(|kind: String, address: String, name: String, q: Query, ctx: Arc<Ctx>| async move {
            contract(&ctx, &kind, &address, &name, &q).await
        });
    // Without a node: validated, then a 503. With one, the proxy takes it and validates it
    // through `LedgerHook::check_call_read` before sending it (see docs/configuration.md).
    let call_read = warp::post()
        .and(warp::path!("v2" / "contracts" / "call-read" / String / String / String))
        .and(with_ctx.clone())
        .and_then(|address: String, name: String, function: String, ctx: Arc<Ctx>| async move {
            if ctx.settings.effective_policy() != V2Policy::Ledger {
                return Err(warp::reject::custom(ToNode));
            }
            Ok((address, name, function))
        })
        .untuple_one()
        .and(warp::body::bytes())
        .map(|address: String, name: String, function: String, body: Bytes| {
            call_read_without_node(&address, &name, &function, &body).into_response()
        });
    info.or(account).unify().or(transfer_fee).unify().or(contract).unify().or(call_read).unify().boxed()
}

impl Ctx {
    /// Ledger or node for a route the ledger can answer exactly. `Ok(true)`: the ledger answers
    /// (and left out the requested proofs when `proof` is `Default`); `Err(Ok(..))`: an error
    /// answer; `Err(Err(ToNode))`: the node answers.
    async fn decide(&self, proof: Proof, at_tip: bool) -> Result<(), Result<V2Error, Rejection>> {
        match self.settings.effective_policy() {
            V2Policy::Ledger => match (proof, at_tip) {
                (Proof::Explicit, _) => Err(Ok(V2Error::ProofNeedsNode)),
                (_, false) => Err(Ok(V2Error::TipNeedsNode("tip".into()))),
                _ => Ok(()),
            },
            V2Policy::Auto if proof == Proof::Off && at_tip && self.caught_up().await => Ok(()),
            _ => Err(Err(warp::reject::custom(ToNode))),
        }
    }

    /// Whether the ledger's tip is at least the node's, and the node's own block at the same
    /// height (another block there is another fork: the node's answer wins). A node that cannot
    /// tell (down, slow) leaves the ledger as the better answer.
    async fn caught_up(&self) -> bool {
        let Some(cache) = &self.node_tip else { return true };
        let Some(node) = cache.node_tip().await else { return true };
        let Ok(Some(tip)) = self.reader.tip().await else { return false };
        let Ok(ours) = u64::try_from(tip.block.block_height) else { return false };
        let same_block = || {
            node.block_hash.as_deref().is_none_or(|theirs| {
                tip.block.block_hash.trim_start_matches("0x").eq_ignore_ascii_case(theirs)
            })
        };
        ours > node.height || (ours == node.height && same_block())
    }
}

/// Turns a decision's failure into the answer (an error response, or the hand-over to the node).
fn refused(e: Result<V2Error, Rejection>) -> Answer {
    match e {
        Ok(err) => Ok(err.into_response()),
        Err(rejection) => Err(rejection),
    }
}

/// A ledger answer: the node's JSON with the common headers and the source header.
fn ledger_json(body: &Json, proofs_omitted: bool) -> Response {
    let mut response = stacks_extended::with_common_headers(warp::reply::json(body));
    let headers = response.headers_mut();
    headers.insert(SOURCE_HEADER, HeaderValue::from_static("ledger"));
    if proofs_omitted {
        headers.insert(PROOF_HEADER, HeaderValue::from_static("omitted; no Stacks node to prove against"));
    }
    response
}

async fn info(ctx: &Ctx) -> Answer {
    if let Err(e) = ctx.decide(Proof::Off, true).await {
        return refused(e);
    }
    let state = match ctx.reader.v2_info_state().await {
        Ok(Some(state)) => state,
        Ok(None) => return Ok(V2Error::NoChain.into_response()),
        Err(e) => return Ok(V2Error::Read(e).into_response()),
    };
    Ok(ledger_json(&info_json(&state, ctx.network), false))
}

/// The node's `/v2/info` (RPCPeerInfoData) from the ledger; hashes as bare hex, as the node
/// writes them. Older field names are served beside the current ones.
pub(super) fn info_json(state: &V2InfoState, network: Network) -> Json {
    let bare = |h: &str| h.trim_start_matches("0x").to_owned();
    let bare_opt = |h: &Option<String>| h.as_deref().map(bare);
    let tip = &state.tip.block;
    // The burn tip as last announced; a Stacks block can only be at or below it.
    let (burn_height, pox_consensus) = match &state.burn_tip {
        Some(b) if b.height >= tip.burn_block_height => (b.height, bare_opt(&b.consensus_hash)),
        _ => (tip.burn_block_height, bare_opt(&tip.consensus_hash)),
    };
    let stable_height = state.stable_burn.as_ref().map(|b| b.height);
    let stable_consensus = state.stable_burn.as_ref().and_then(|b| bare_opt(&b.consensus_hash));
    let (peer_version, parent_network_id) = match network {
        Network::Mainnet => (PEER_VERSION_MAINNET, PARENT_NETWORK_ID_MAINNET),
        Network::Testnet => (PEER_VERSION_TESTNET, PARENT_NETWORK_ID_TESTNET),
    };
    let (unanchored_tip, unanchored_seq) = match (&state.tip.microblock, &tip.consensus_hash) {
        (Some(mb), Some(ch)) => (Some(unanchored_index_hash(&mb.hash, ch)), Some(mb.sequence)),
        _ => (None, None),
    };
    let stacks_tip_consensus_hash = bare_opt(&tip.consensus_hash);
    let mut out = Map::new();
    out.insert("peer_version".into(), json!(peer_version));
    out.insert("pox_consensus".into(), json!(pox_consensus));
    out.insert("burn_block_height".into(), json!(burn_height));
    out.insert("stable_pox_consensus".into(), json!(stable_consensus));
    out.insert("stable_burn_block_height".into(), json!(stable_height));
    out.insert(
        "server_version".into(),
        json!(format!("{} (answered from the ledger)", stacks_extended::SERVER_VERSION)),
    );
    out.insert("network_id".into(), json!(network.chain_id()));
    out.insert("parent_network_id".into(), json!(parent_network_id));
    out.insert("stacks_tip_height".into(), json!(tip.block_height));
    out.insert("stacks_tip".into(), json!(bare(&tip.block_hash)));
    out.insert("stacks_tip_consensus_hash".into(), json!(stacks_tip_consensus_hash));
    out.insert("genesis_chainstate_hash".into(), json!(GENESIS_CHAINSTATE_HASH));
    out.insert("unanchored_tip".into(), json!(unanchored_tip));
    out.insert("unanchored_seq".into(), json!(unanchored_seq));
    if let Some(tenure_height) = tip.tenure_height {
        out.insert("tenure_height".into(), json!(tenure_height));
    }
    out.insert("exit_at_block_height".into(), Json::Null);
    // The older names, same values.
    out.insert("burn_consensus".into(), json!(pox_consensus));
    out.insert("stable_burn_consensus".into(), json!(stable_consensus));
    out.insert("stacks_tip_burn_block".into(), json!(stacks_tip_consensus_hash));
    Json::Object(out)
}

/// The node's unconfirmed-state tip: the index hash of (microblock tail, consensus hash),
/// `sha512/256(block hash ‖ consensus hash)` as for any `StacksBlockId`.
fn unanchored_index_hash(microblock_hash: &str, consensus_hash: &str) -> String {
    let mut bytes = stacks_codec::decode_hex(microblock_hash).unwrap_or_default();
    bytes.extend(stacks_codec::decode_hex(consensus_hash).unwrap_or_default());
    hex::encode(stacks_codec::hash::sha512_256(&bytes))
}

async fn account(ctx: &Ctx, principal: &str, q: &Query) -> Answer {
    let principal = match params::principal("principal", principal) {
        Ok(p) => p,
        Err(e) => return Ok(e.into_response()),
    };
    let proof = params::proof(q);
    let tip = match ctx.reader.tip().await {
        Ok(tip) => tip,
        Err(e) => return Ok(V2Error::Read(e).into_response()),
    };
    if let Err(e) =
        ctx.decide(proof, params::at_tip(q, tip.as_ref().map(|t| t.block.index_block_hash.as_str()))).await
    {
        return refused(e);
    }
    match ctx.reader.account(&principal, None).await {
        Ok(a) => Ok(ledger_json(&account_json(&principal, &a), proof == Proof::Default)),
        Err(e) => Ok(V2Error::Read(e).into_response()),
    }
}

/// `{balance, locked, unlock_height, nonce}` of `principal`: amounts as `0x` + 32 hex digits
/// (u128).
pub(super) fn account_json(principal: &str, a: &AccountState) -> Json {
    let u128_hex = |v: i64| format!("0x{:032x}", u128::try_from(v).unwrap_or(0));
    // The node runs boot code (the genesis deploys and each epoch's new boot contracts) outside
    // the transaction path, so those deploys never bump the boot address's nonce; they are its
    // only transactions (nobody holds its key). The ledger counts them, as `/extended` does;
    // the node answers 0.
    let nonce = if is_boot_address(principal) { 0 } else { a.next_nonce };
    json!({
        "balance": u128_hex(a.liquid),
        "locked": u128_hex(a.locked),
        "unlock_height": a.unlock_height,
        "nonce": nonce,
    })
}

fn transfer_fee(ctx: &Ctx) -> Answer {
    // The node's estimate is the authority when there is a node.
    if ctx.settings.effective_policy() != V2Policy::Ledger {
        return Err(warp::reject::custom(ToNode));
    }
    Ok(ledger_json(&json!(ctx.settings.transfer_fee), false))
}

async fn contract(ctx: &Ctx, kind: &str, address: &str, name: &str, q: &Query) -> Answer {
    if kind != "interface" && kind != "source" {
        // Another node route (`/v2/contracts/call-read` is a POST): the node's, if any.
        return Err(warp::reject::not_found());
    }
    let contract_id = match params::contract_id(address, name) {
        Ok(id) => id,
        Err(e) => return Ok(e.into_response()),
    };
    // The interface carries no proof; the source does unless `proof=0`.
    let proof = if kind == "interface" { Proof::Off } else { params::proof(q) };
    let tip = match ctx.reader.tip().await {
        Ok(tip) => tip,
        Err(e) => return Ok(V2Error::Read(e).into_response()),
    };
    if let Err(e) =
        ctx.decide(proof, params::at_tip(q, tip.as_ref().map(|t| t.block.index_block_hash.as_str()))).await
    {
        return refused(e);
    }
    let found = match ctx.reader.v2_contract(&contract_id).await {
        Ok(found) => found,
        Err(e) => return Ok(V2Error::Read(e).into_response()),
    };
    let Some(c) = found else {
        // Perhaps deployed above our tip: the node may know it.
        if ctx.settings.effective_policy() == V2Policy::Auto {
            return Err(warp::reject::custom(ToNode));
        }
        return Ok(
            V2Error::NotFound(format!("no contract {contract_id} on the canonical chain")).into_response()
        );
    };
    let body = if kind == "source" {
        source_json(&c)
    } else {
        match interface_json(&c) {
            Some(abi) => abi,
            None => {
                return Ok(V2Error::NotFound(format!("the node recorded no interface for {contract_id}"))
                    .into_response())
            }
        }
    };
    Ok(ledger_json(&body, kind == "source" && proof == Proof::Default))
}

pub(super) fn source_json(c: &V2Contract) -> Json {
    json!({ "source": c.source, "publish_height": c.publish_height })
}

/// The ABI the node emitted at deployment, which is the node's interface answer.
pub(super) fn interface_json(c: &V2Contract) -> Option<Json> {
    serde_json::from_str(c.abi.as_deref()?).ok()
}

fn call_read_without_node(address: &str, name: &str, function: &str, body: &[u8]) -> Response {
    match params::call_read(address, name, function, body) {
        Ok(()) => V2Error::NeedsNode(format!("POST /v2/contracts/call-read/{address}/{name}/{function}")),
        Err(e) => e,
    }
    .into_response()
}
