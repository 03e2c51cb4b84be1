//! `/rosetta/v1/construction/*`: thin handlers. Each reads its request, calls the pure modules
//! (or, when online, the ledger through `ledger_read`'s [`LedgerReader`] and [`LocalTxSink`],
//! and the node), and answers 200 with the response model or 500 with a listed Rosetta error.

use std::future::Future;
use std::sync::Arc;

use bytes::Bytes;
use rosetta_spec::models::*;
use rosetta_spec::ErrorCatalog;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value as Json};
use stacks_codec::address::{PublicKeyBytes, StacksAddress};
use stacks_codec::to_hex_prefixed;
use warp::filters::BoxedFilter;
use warp::http::StatusCode;
use warp::reply::Response;
use warp::{Filter, Rejection, Reply};

use super::build::{self, GivenSignature, OriginKeys, Signers};
use super::error::ConstructionError as E;
use super::ops::{self, Completion};
use super::{parse, signers};
use crate::ledger::Network;
use crate::rosetta::{ErrorKind, RosettaError};
use ledger_read::{LedgerReader, LocalSource, LocalTxSink};
use stacks_node_proxy::NodeClient;

/// µSTX per byte when no node is configured to ask (`/v2/fees/transfer`'s usual floor).
pub const DEFAULT_FEE_RATE: u64 = 1;

/// What the construction routes run with. `online: None` is offline mode: derive, preprocess,
/// payloads, combine, parse and hash work; metadata and submit answer [`ErrorKind::OfflineMode`].
#[derive(Clone)]
pub struct Context {
    pub network: Network,
    pub online: Option<Online>,
    pub default_fee_rate: u64,
}

#[derive(Clone)]
pub struct Online {
    /// The ledger's reads (next nonces, the tip).
    pub reader: Arc<dyn LedgerReader>,
    /// Where a submitted transaction is recorded in our mempool.
    pub local_txs: Arc<dyn LocalTxSink>,
    /// The node to broadcast through and to ask for nonces, fees and PoX info.
    pub node: Option<NodeClient>,
}

impl Context {
    pub fn offline(network: Network) -> Context {
        Context { network, online: None, default_fee_rate: DEFAULT_FEE_RATE }
    }

    /// Online on `network`: reading the ledger through `reader`, recording submissions through
    /// `local_txs` (both the store, in the server).
    pub fn online(
        network: Network,
        reader: Arc<dyn LedgerReader>,
        local_txs: Arc<dyn LocalTxSink>,
        node: Option<NodeClient>,
    ) -> Context {
        Context {
            network,
            online: Some(Online { reader, local_txs, node }),
            default_fee_rate: DEFAULT_FEE_RATE,
        }
    }

    fn online_or_err(&self) -> Result<&Online, RosettaError> {
        self.online.as_ref().ok_or_else(|| RosettaError::new(ErrorKind::OfflineMode))
    }
}

type Ctx = Arc<Context>;

/// Every construction endpoint. Their common prefix is matched once, ahead of the boxed
/// endpoints: a boxed filter allocates its future whenever it is tried, and the public API
/// tries this table first for every request, most of them for other APIs.
pub fn routes(ctx: Context) -> impl Filter<Extract = (Response,), Error = Rejection> + Clone {
    let ctx = Arc::new(ctx);
    let endpoints = endpoint("derive", &ctx, derive)
        .or(endpoint("preprocess", &ctx, preprocess))
        .unify()
        .or(endpoint("metadata", &ctx, metadata))
        .unify()
        .or(endpoint("payloads", &ctx, payloads))
        .unify()
        .or(endpoint("combine", &ctx, combine))
        .unify()
        .or(endpoint("parse", &ctx, parse_route))
        .unify()
        .or(endpoint("hash", &ctx, hash))
        .unify()
        .or(endpoint("submit", &ctx, submit))
        .unify()
        .boxed();
    warp::path("rosetta").and(warp::path("v1")).and(warp::path("construction")).and(endpoints)
}

/// `POST /rosetta/v1/construction/{name}` (under the prefix [`routes`] matched): the body is
/// checked (JSON, network identifier) before the handler sees it; every failure is a listed
/// error with HTTP 500.
fn endpoint<Req, Resp, F, Fut>(name: &'static str, ctx: &Ctx, handler: F) -> BoxedFilter<(Response,)>
where
    Req: DeserializeOwned + Send + 'static,
    Resp: Serialize,
    F: Fn(Ctx, Req) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Result<Resp, RosettaError>> + Send,
{
    let ctx = Arc::clone(ctx);
    warp::path(name)
        .and(warp::path::end())
        .and(warp::post())
        .and(warp::body::content_length_limit(4 * 1024 * 1024))
        .and(warp::body::bytes())
        .then(move |body: Bytes| {
            let (ctx, handler) = (Arc::clone(&ctx), handler.clone());
            async move {
                let result = match request::<Req>(&body, ctx.network) {
                    Ok(req) => handler(ctx, req).await,
                    Err(e) => Err(e),
                };
                match result {
                    Ok(resp) => warp::reply::json(&resp).into_response(),
                    Err(e) => {
                        tracing::debug!(route = name, code = e.code(), details = ?e.details, "construction error");
                        warp::reply::with_status(warp::reply::json(&e.to_wire()), StatusCode::INTERNAL_SERVER_ERROR)
                            .into_response()
                    }
                }
            }
        })
        .boxed()
}

fn request<Req: DeserializeOwned>(body: &[u8], network: Network) -> Result<Req, RosettaError> {
    let value: Json = serde_json::from_slice(body)
        .map_err(|e| RosettaError::with_message(ErrorKind::MalformedRequest, e.to_string()))?;
    let id: NetworkIdentifier = value
        .get("network_identifier")
        .cloned()
        .ok_or_else(|| {
            RosettaError::with_message(ErrorKind::MalformedRequest, "network_identifier is required")
        })
        .and_then(|v| {
            serde_json::from_value(v)
                .map_err(|e| RosettaError::with_message(ErrorKind::MalformedRequest, e.to_string()))
        })?;
    if id.blockchain != "stacks" {
        return Err(RosettaError::with_message(
            ErrorKind::InvalidBlockchain,
            format!("{} is not stacks", id.blockchain),
        ));
    }
    if id.network != network.as_str() {
        return Err(RosettaError::with_message(
            ErrorKind::InvalidNetwork,
            format!("this server serves {network}, not {}", id.network),
        ));
    }
    serde_json::from_value(value)
        .map_err(|e| RosettaError::with_message(ErrorKind::MalformedRequest, e.to_string()))
}

fn public_key(key: &PublicKey) -> Result<PublicKeyBytes, E> {
    if key.curve_type != CurveType::Secp256k1 {
        return Err(E::InvalidCurve(key.curve_type.as_str().to_owned()));
    }
    let bytes = stacks_codec::decode_hex(&key.hex_bytes).map_err(|e| E::InvalidPublicKey(e.to_string()))?;
    PublicKeyBytes::from_slice(&bytes).map_err(|e| E::InvalidPublicKey(e.to_string()))
}

async fn derive(
    ctx: Ctx,
    req: ConstructionDeriveRequest,
) -> Result<ConstructionDeriveResponse, RosettaError> {
    let key = public_key(&req.public_key)?;
    let meta = req.metadata.unwrap_or_default();
    let Some(shape) = ops::multisig_of(&meta)? else {
        let address = build::address_of(&key, ctx.network)?.to_c32();
        return Ok(ConstructionDeriveResponse {
            account_identifier: Some(AccountIdentifier::new(address)),
            ..Default::default()
        });
    };
    // A multisig account: its members' keys in member order, the request's key one of them.
    let keys = ops::public_keys_of(&meta)?
        .ok_or_else(|| ops::bad("public_keys", "a multisig account needs its members' public keys"))?;
    if !keys.contains(&key) {
        return Err(E::InvalidPublicKey("public_key is not one of metadata.public_keys".into()).into());
    }
    let address = build::multisig_address(&shape, &keys, ctx.network)?.to_c32();
    Ok(ConstructionDeriveResponse {
        account_identifier: Some(AccountIdentifier::new(address)),
        metadata: Some(Completion { multisig: Some(shape), ..Completion::default() }.auth_metadata()),
        ..Default::default()
    })
}

async fn preprocess(
    ctx: Ctx,
    req: ConstructionPreprocessRequest,
) -> Result<ConstructionPreprocessResponse, RosettaError> {
    let meta = req.metadata.unwrap_or_default();
    let given = Completion::from_metadata(&meta)?;
    // Placeholders stand for what /construction/metadata fills in; only the shape is checked.
    let completion = Completion {
        nonce: Some(given.nonce.unwrap_or(0)),
        fee: Some(given.fee.unwrap_or(0)),
        start_burn_height: Some(given.start_burn_height.unwrap_or(0)),
        sponsor_nonce: Some(given.sponsor_nonce.unwrap_or(0)),
        ..given.clone()
    };
    let intent = ops::to_intent(&req.operations, &completion, ctx.network)?;
    let origin = intent.origin();
    let sender = origin.sender.to_c32();
    // Members' keys given here make the sender checkable and the size exact.
    let members = match (&given.multisig, &given.public_keys) {
        (Some(shape), Some(keys)) => {
            let derived = build::multisig_address(shape, keys, ctx.network)?;
            if derived != origin.sender {
                return Err(E::PublicKeyNotSender { key_address: derived.to_c32(), sender }.into());
            }
            Some(keys.as_slice())
        }
        _ => None,
    };
    let shape = given
        .multisig
        .map(|m| (m, members.map_or(usize::from(m.signatures_required), <[PublicKeyBytes]>::len)));
    let size = build::estimated_size(&intent, shape, ctx.network)?;
    let mut options = json!({ "sender_address": sender, "type": intent.op_type(), "size": size });
    if req.operations.iter().any(|o| o.r#type == super::intent::FEE) {
        options["fee"] = origin.fee_payer().1.to_string().into();
    }
    if let Some(memo) = given.memo.clone() {
        options["memo"] = memo.into();
    }
    if let Some(m) = req.suggested_fee_multiplier {
        options["suggested_fee_multiplier"] = m.into();
    }
    if let Some(max) = req.max_fee.as_ref().and_then(|f| f.first()) {
        options["max_fee"] = max.value.trim_start_matches('-').into();
    }
    let carried = Completion { sponsor_address: origin.sponsor.as_ref().map(|s| s.address), ..given.clone() };
    for (k, v) in carried.auth_metadata() {
        options[k] = v;
    }
    let mut required: Vec<AccountIdentifier> = match (given_multisig_members(members, ctx.network))? {
        Some(accounts) => accounts,
        None => vec![AccountIdentifier::new(sender)],
    };
    if let Some(s) = &origin.sponsor {
        required.push(AccountIdentifier::new(s.address.to_c32()));
    }
    Ok(ConstructionPreprocessResponse {
        options: options.as_object().cloned(),
        required_public_keys: Some(required),
    })
}

/// The members' own accounts, which sign a multisig origin.
fn given_multisig_members(
    members: Option<&[PublicKeyBytes]>,
    network: crate::ledger::Network,
) -> Result<Option<Vec<AccountIdentifier>>, RosettaError> {
    let Some(keys) = members else { return Ok(None) };
    let accounts = keys
        .iter()
        .map(|k| Ok(AccountIdentifier::new(build::address_of(k, network)?.to_c32())))
        .collect::<Result<Vec<_>, E>>()?;
    Ok(Some(accounts))
}

/// The account's next nonce: the ledger's (counting our mempool), or the node's when higher.
async fn next_nonce(online: &Online, address: &StacksAddress) -> Result<u64, RosettaError> {
    let ledger_nonce = online.reader.next_nonce_with_mempool(&address.to_c32()).await?;
    let mut nonce = u64::try_from(ledger_nonce).unwrap_or(0);
    if let Some(node) = &online.node {
        // The node may know of transactions our mempool has not seen yet.
        nonce = nonce.max(node.account_nonce(&address.to_c32()).await?);
    }
    Ok(nonce)
}

async fn metadata(
    ctx: Ctx,
    req: ConstructionMetadataRequest,
) -> Result<ConstructionMetadataResponse, RosettaError> {
    let online = ctx.online_or_err()?;
    let options = req.options.unwrap_or_default();
    let sender_text = options
        .get("sender_address")
        .and_then(Json::as_str)
        .ok_or_else(|| RosettaError::new(ErrorKind::MissingSenderAddress))?;
    let sender: StacksAddress =
        sender_text.parse().map_err(|e| E::InvalidSender(format!("{sender_text}: {e}")))?;
    let size = options
        .get("size")
        .and_then(Json::as_u64)
        .ok_or_else(|| RosettaError::new(ErrorKind::MissingTransactionSize))?;
    // The auth fields /preprocess put into the options go on to /payloads unchanged.
    let auth = Completion::from_metadata(&options)?;
    let nonce = next_nonce(online, &sender).await?;
    let sponsor_nonce = match (auth.sponsored, &auth.sponsor_address) {
        (false, _) => None,
        (true, Some(sponsor)) => Some(next_nonce(online, sponsor).await?),
        (true, None) => {
            return Err(ops::bad("sponsor_address", "sponsored needs the sponsor's address").into())
        }
    };
    let rate = match &online.node {
        Some(node) => node.transfer_fee_rate().await?,
        None => ctx.default_fee_rate,
    };
    let multiplier = options.get("suggested_fee_multiplier").and_then(Json::as_f64).unwrap_or(1.0);
    let suggested = ((rate * size) as f64 * multiplier).ceil() as u64;
    if let Some(max) = options.get("max_fee").and_then(Json::as_str).and_then(|m| m.parse::<u64>().ok()) {
        if suggested > max {
            return Err(RosettaError::with_message(
                ErrorKind::InvalidFee,
                format!("the suggested fee {suggested} is above max_fee {max}"),
            ));
        }
    }
    let mut out = json!({ "account_sequence": nonce, "fee": suggested.to_string() });
    if let Some(n) = sponsor_nonce {
        out["sponsor_account_sequence"] = n.into();
    }
    for (k, v) in auth.auth_metadata() {
        out[k] = v;
    }
    let kind = options.get("type").and_then(Json::as_str).unwrap_or_default();
    if [super::intent::STACK_STX, super::intent::DELEGATE_STX, super::intent::REVOKE_DELEGATE_STX]
        .contains(&kind)
    {
        // The node's PoX contract and burn height (what stacks.js uses for start-burn-ht),
        // else the boot pox-4 and the burn height of the ledger's tip.
        let (contract, burn_height) = match &online.node {
            Some(node) => {
                let pox = node.pox().await?;
                let unusable = |field: &str| {
                    RosettaError::with_message(
                        ErrorKind::NodeUnavailable,
                        format!("the node's /v2/pox has no {field}"),
                    )
                };
                let contract = pox.contract_id.ok_or_else(|| unusable("contract_id"))?;
                let height = pox
                    .current_burnchain_block_height
                    .ok_or_else(|| unusable("current_burnchain_block_height"))?;
                (Some(contract), height)
            }
            None => {
                let tip = online.reader.tip().await?;
                (None, tip.map_or(0, |t| u64::try_from(t.block.burn_block_height).unwrap_or(0)))
            }
        };
        if let Some((address, name)) = contract.as_deref().and_then(|c| c.split_once('.')) {
            out["contract_address"] = address.into();
            out["contract_name"] = name.into();
        }
        if kind == super::intent::STACK_STX {
            out["start_burn_height"] = burn_height.into();
        }
    }
    if let Some(memo) = options.get("memo") {
        out["memo"] = memo.clone();
    }
    Ok(ConstructionMetadataResponse {
        metadata: out.as_object().cloned().unwrap_or_default(),
        suggested_fee: Some(vec![Amount::new(suggested.to_string(), ops::stx())]),
    })
}

/// The request's `public_keys` as signers: the origin's (one, or every member in member order),
/// then the sponsor's when sponsored.
fn signers_of(keys: &[PublicKeyBytes], completion: &Completion) -> Result<Signers, E> {
    let sponsors = usize::from(completion.sponsored);
    let (origin_keys, sponsor) = match completion.multisig {
        None => {
            if keys.len() != 1 + sponsors {
                return Err(E::PublicKeyCount { expected: 1 + sponsors, got: keys.len() });
            }
            (OriginKeys::Single(keys[0]), keys.get(1).copied())
        }
        Some(shape) => {
            let members = keys.len().saturating_sub(sponsors);
            if members < usize::from(shape.signatures_required) {
                let expected =
                    completion.public_keys.as_ref().map_or(usize::from(shape.signatures_required), Vec::len);
                return Err(E::PublicKeyCount { expected: expected + sponsors, got: keys.len() });
            }
            let member_keys = keys[..members].to_vec();
            if completion.public_keys.as_ref().is_some_and(|given| *given != member_keys) {
                return Err(E::InvalidPublicKey(
                    "public_keys are not metadata.public_keys (in member order)".into(),
                ));
            }
            (OriginKeys::Multi { shape, keys: member_keys }, keys.get(members).copied())
        }
    };
    Ok(Signers { origin: origin_keys, sponsor })
}

/// `/construction/payloads`. The first round builds the unsigned transaction from the
/// operations; a later round (`metadata.partially_signed_transaction`, what `/combine` returned)
/// checks that transaction is the one the same request builds and hands out the signatures it
/// waits for next (a sequential multisig member's, or the sponsor's).
async fn payloads(
    ctx: Ctx,
    req: ConstructionPayloadsRequest,
) -> Result<ConstructionPayloadsResponse, RosettaError> {
    let keys = req.public_keys.unwrap_or_default().iter().map(public_key).collect::<Result<Vec<_>, E>>()?;
    let meta = req.metadata.unwrap_or_default();
    let completion = Completion::from_metadata(&meta)?;
    let intent = ops::to_intent(&req.operations, &completion, ctx.network)?;
    let unsigned = build::unsigned(&intent, &signers_of(&keys, &completion)?, ctx.network)?;
    let (tx, wanted) = match meta.get(PARTIALLY_SIGNED) {
        None | Some(Json::Null) => (unsigned.tx, unsigned.payloads),
        Some(Json::String(text)) => {
            let tx = parse::decode_partially_signed(text, ctx.network)?;
            if signers::unsigned_of(&tx)? != unsigned.tx {
                return Err(E::InvalidTransaction(format!(
                    "{PARTIALLY_SIGNED} is not the transaction these operations, metadata and keys build"
                ))
                .into());
            }
            let wanted = signers::next_signatures(&tx, ctx.network)?;
            if wanted.is_empty() {
                return Err(E::InvalidTransaction(
                    "the transaction is signed: go on to /construction/hash".into(),
                )
                .into());
            }
            (tx, wanted)
        }
        Some(_) => return Err(ops::bad(PARTIALLY_SIGNED, "not a hex string").into()),
    };
    Ok(ConstructionPayloadsResponse {
        unsigned_transaction: to_hex_prefixed(&tx.serialize()),
        payloads: wanted
            .iter()
            .map(|w| SigningPayload {
                address: Some(w.account.to_c32()),
                account_identifier: Some(AccountIdentifier::new(w.account.to_c32())),
                hex_bytes: hex::encode(w.presign),
                signature_type: Some(SignatureType::EcdsaRecovery),
            })
            .collect(),
    })
}

/// The `/payloads` metadata field that continues a signing round.
pub const PARTIALLY_SIGNED: &str = "partially_signed_transaction";

/// `/construction/combine`: any number of signatures; the result is signed, or partially signed
/// when more rounds follow (see `signers`).
async fn combine(
    ctx: Ctx,
    req: ConstructionCombineRequest,
) -> Result<ConstructionCombineResponse, RosettaError> {
    let tx = parse::decode_partially_signed(&req.unsigned_transaction, ctx.network)?;
    if req.signatures.is_empty() {
        return Err(E::NoSignature.into());
    }
    let mut decoded = Vec::with_capacity(req.signatures.len());
    for sig in &req.signatures {
        for t in std::iter::once(&sig.signature_type).chain(sig.signing_payload.signature_type.as_ref()) {
            if *t != SignatureType::EcdsaRecovery {
                return Err(E::SignatureType(t.as_str().to_owned()).into());
            }
        }
        let key = public_key(&sig.public_key)?;
        let bytes =
            stacks_codec::decode_hex(&sig.hex_bytes).map_err(|e| E::InvalidSignature(e.to_string()))?;
        let rsv: [u8; 65] = bytes.as_slice().try_into().map_err(|_| {
            E::InvalidSignature(format!("{} bytes; ecdsa_recovery is 65 (r‖s‖v)", bytes.len()))
        })?;
        let payload = stacks_codec::decode_hex(&sig.signing_payload.hex_bytes)
            .map_err(|e| E::InvalidSignature(e.to_string()))?;
        decoded.push((payload, key, rsv));
    }
    let given: Vec<GivenSignature<'_>> = decoded
        .iter()
        .map(|(payload, key, rsv)| GivenSignature {
            signing_payload: payload,
            public_key: *key,
            signature_rsv: *rsv,
        })
        .collect();
    let signed = build::combine(tx, &given, ctx.network)?;
    Ok(ConstructionCombineResponse { signed_transaction: to_hex_prefixed(&signed.serialize()) })
}

async fn parse_route(
    ctx: Ctx,
    req: ConstructionParseRequest,
) -> Result<ConstructionParseResponse, RosettaError> {
    let tx = parse::decode_partially_signed(&req.transaction, ctx.network)?;
    let parsed = parse::parse(&tx, req.signed, ctx.network)?;
    let intent = &parsed.intent;
    let mut meta = Completion {
        sponsored: intent.origin().sponsor.is_some(),
        multisig: parsed.multisig,
        ..Completion::default()
    }
    .auth_metadata();
    if let Some(m) = intent.memo() {
        meta.insert("memo".to_owned(), Json::from(m));
    }
    Ok(ConstructionParseResponse {
        operations: ops::from_intent(intent, ctx.network),
        signers: None,
        account_identifier_signers: parsed
            .signers
            .map(|s| s.iter().map(|a| AccountIdentifier::new(a.to_c32())).collect()),
        metadata: (!meta.is_empty()).then_some(meta),
    })
}

async fn hash(ctx: Ctx, req: ConstructionHashRequest) -> Result<TransactionIdentifierResponse, RosettaError> {
    // Decoded leniently so that a partially signed multisig transaction is "not signed" (629).
    let tx = parse::decode_partially_signed(&req.signed_transaction, ctx.network)?;
    if !build::is_signed(&tx) {
        return Err(E::NotSigned.into());
    }
    Ok(TransactionIdentifierResponse {
        transaction_identifier: TransactionIdentifier::new(to_hex_prefixed(&tx.txid())),
        metadata: None,
    })
}

/// Broadcasts through the node, then records the transaction in our mempool (the one write
/// path for local transactions, [`LocalTxSink`]), so `/mempool` and live subscribers
/// see it at once.
async fn submit(
    ctx: Ctx,
    req: ConstructionSubmitRequest,
) -> Result<TransactionIdentifierResponse, RosettaError> {
    let online = ctx.online_or_err()?;
    let tx = parse::decode_partially_signed(&req.signed_transaction, ctx.network)?;
    if !build::is_signed(&tx) {
        return Err(E::NotSigned.into());
    }
    let node = online.node.as_ref().ok_or_else(|| {
        RosettaError::with_message(ErrorKind::NodeUnavailable, "no node is configured (--node-rpc)")
    })?;
    let raw = tx.serialize();
    let txid = to_hex_prefixed(&tx.txid());
    let node_txid = node.broadcast(raw.clone()).await?;
    if crate::ledger::normalize_hex(&node_txid) != crate::ledger::normalize_hex(&txid) {
        tracing::warn!(%txid, %node_txid, "the node names the submitted transaction differently");
    }
    // The node has the transaction now: a failure to record it here is logged, not returned,
    // because a retry would only broadcast it again (the node's own event records it later).
    if let Err(e) = online.local_txs.record(&raw, LocalSource::RosettaSubmit).await {
        tracing::warn!(%txid, error = %e, "submitted transaction not recorded in the mempool");
    }
    Ok(TransactionIdentifierResponse {
        transaction_identifier: TransactionIdentifier::new(txid),
        metadata: None,
    })
}
