//! Rosetta operations ⇄ [`Intent`]. Operations carry what the caller means (who pays, who
//! receives, how much, the PoX arguments); what only the chain knows (the nonce, the burn
//! height a stacking call starts at, a suggested fee) comes from `/construction/metadata`, as a
//! [`Completion`].

use rosetta_spec::models::{AccountIdentifier, Amount, Currency, Metadata, Operation, OperationIdentifier};
use serde_json::{json, Value as Json};
use stacks_codec::address::{ContractId, Principal, PublicKeyBytes, StacksAddress};
use stacks_codec::tx::HashMode;

use super::error::{ConstructionError as E, Result};
use super::intent::*;
use crate::ledger::btc::{parse_pox_address, pox_address_text, pox_version};
use crate::ledger::Network;

pub const SYMBOL: &str = "STX";
pub const DECIMALS: i32 = 6;

pub fn stx() -> Currency {
    Currency::new(SYMBOL, DECIMALS)
}

/// The chain-side values an intent needs besides its operations.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Completion {
    pub nonce: Option<u64>,
    /// Used only when the operations have no `fee` operation.
    pub fee: Option<u64>,
    /// The burn height a `stack_stx` starts at, unless its operation names one.
    pub start_burn_height: Option<u128>,
    /// The PoX contract, unless the operation names one; else the boot `pox-4`.
    pub pox_contract: Option<ContractId>,
    /// A memo given in the request metadata rather than in the operations.
    pub memo: Option<String>,
    /// `sponsored: true`: the fee is the sponsor's, paid by `sponsor_address` (or the fee
    /// operation's account) at `sponsor_nonce`.
    pub sponsored: bool,
    pub sponsor_address: Option<StacksAddress>,
    pub sponsor_nonce: Option<u64>,
    /// `hash_mode` + `signatures_required`: the origin is a multisig account.
    pub multisig: Option<Multisig>,
    /// Member keys given in metadata (`/preprocess` has no `public_keys` field), hex.
    pub public_keys: Option<Vec<PublicKeyBytes>>,
}

impl Completion {
    /// Reads `/construction/payloads` metadata: `account_sequence` (or `nonce`), `fee`,
    /// `start_burn_height` (or `burn_block_height`), `contract_address` + `contract_name`, `memo`.
    pub fn from_metadata(meta: &Metadata) -> Result<Completion> {
        let nonce = match meta.get("account_sequence").or_else(|| meta.get("nonce")) {
            Some(v) => Some(u64_of(v).ok_or_else(|| bad("account_sequence", "not a non-negative integer"))?),
            None => None,
        };
        let fee = match meta.get("fee") {
            Some(v) => Some(fee_of(v)?),
            None => None,
        };
        let start_burn_height = match meta.get("start_burn_height").or_else(|| meta.get("burn_block_height"))
        {
            Some(v) => {
                Some(u128_of(v).ok_or_else(|| bad("start_burn_height", "not a non-negative integer"))?)
            }
            None => None,
        };
        let pox_contract = match (meta.get("contract_address"), meta.get("contract_name")) {
            (Some(Json::String(a)), Some(Json::String(n))) => {
                Some(format!("{a}.{n}").parse().map_err(|e| bad("contract_address", format!("{e}")))?)
            }
            (None, None) => None,
            _ => return Err(bad("contract_address", "contract_address and contract_name go together")),
        };
        let memo = match meta.get("memo") {
            Some(Json::String(s)) => Some(s.clone()),
            Some(Json::Null) | None => None,
            Some(_) => return Err(bad("memo", "not a string")),
        };
        let sponsored = match meta.get("sponsored") {
            Some(Json::Bool(b)) => *b,
            Some(Json::Null) | None => false,
            Some(_) => return Err(bad("sponsored", "not a boolean")),
        };
        let sponsor_address = match meta.get("sponsor_address") {
            Some(Json::String(a)) => {
                Some(a.parse().map_err(|e| bad("sponsor_address", format!("{a}: {e}")))?)
            }
            Some(Json::Null) | None => None,
            Some(_) => return Err(bad("sponsor_address", "not a string")),
        };
        let sponsor_nonce = match meta.get("sponsor_account_sequence").or_else(|| meta.get("sponsor_nonce")) {
            Some(v) => {
                Some(u64_of(v).ok_or_else(|| bad("sponsor_account_sequence", "not a non-negative integer"))?)
            }
            None => None,
        };
        let multisig = multisig_of(meta)?;
        let public_keys = public_keys_of(meta)?;
        Ok(Completion {
            nonce,
            fee,
            start_burn_height,
            pox_contract,
            memo,
            sponsored,
            sponsor_address,
            sponsor_nonce,
            multisig,
            public_keys,
        })
    }

    /// What `/preprocess` options and `/metadata` carry through to `/payloads` about the auth.
    pub fn auth_metadata(&self) -> Metadata {
        let mut out = Metadata::new();
        if self.sponsored {
            out.insert("sponsored".into(), true.into());
        }
        if let Some(a) = &self.sponsor_address {
            out.insert("sponsor_address".into(), a.to_c32().into());
        }
        if let Some(m) = &self.multisig {
            out.insert("hash_mode".into(), hash_mode_name(m.hash_mode).into());
            out.insert("signatures_required".into(), m.signatures_required.into());
        }
        if let Some(keys) = &self.public_keys {
            out.insert("public_keys".into(), keys.iter().map(|k| Json::from(k.to_string())).collect());
        }
        out
    }
}

/// `metadata.public_keys`: hex strings or Rosetta `PublicKey` objects, in member order.
pub fn public_keys_of(meta: &Metadata) -> Result<Option<Vec<PublicKeyBytes>>> {
    match meta.get("public_keys") {
        Some(Json::Array(keys)) => keys
            .iter()
            .map(|k| {
                let text = k.as_str().or_else(|| k.get("hex_bytes").and_then(Json::as_str));
                let text = text.ok_or_else(|| bad("public_keys", "not hex strings"))?;
                let bytes = stacks_codec::decode_hex(text).map_err(|e| bad("public_keys", e.to_string()))?;
                PublicKeyBytes::from_slice(&bytes).map_err(|e| E::InvalidPublicKey(e.to_string()))
            })
            .collect::<Result<Vec<_>>>()
            .map(Some),
        Some(Json::Null) | None => Ok(None),
        Some(_) => Err(bad("public_keys", "not a list")),
    }
}

/// `hash_mode` (default `p2sh` when `signatures_required` is given) and `signatures_required`.
pub fn multisig_of(meta: &Metadata) -> Result<Option<Multisig>> {
    let mode = match meta.get("hash_mode") {
        Some(Json::String(name)) if name == "p2pkh" => return Ok(None),
        Some(Json::String(name)) => {
            Some(HASH_MODES.iter().find(|(n, _)| n == name).map(|(_, m)| *m).ok_or_else(|| {
                bad(
                    "hash_mode",
                    format!("{name:?} is not one of p2sh, p2wsh, p2sh-non-sequential, p2wsh-non-sequential"),
                )
            })?)
        }
        Some(Json::Null) | None => None,
        Some(_) => return Err(bad("hash_mode", "not a string")),
    };
    let required = match meta.get("signatures_required") {
        Some(v) => Some(
            u64_of(v)
                .and_then(|n| u16::try_from(n).ok())
                .filter(|n| *n > 0)
                .ok_or_else(|| bad("signatures_required", "not an integer in 1..=65535"))?,
        ),
        None => None,
    };
    match (mode, required) {
        (None, None) => Ok(None),
        (_, None) => Err(bad("signatures_required", "a multisig hash_mode needs signatures_required")),
        (mode, Some(signatures_required)) => {
            Ok(Some(Multisig { hash_mode: mode.unwrap_or(HashMode::P2SH), signatures_required }))
        }
    }
}

pub fn bad(field: &'static str, reason: impl Into<String>) -> E {
    E::InvalidMetadata { field, reason: reason.into() }
}

/// The intent the operations describe, completed by `completion`.
pub fn to_intent(ops: &[Operation], completion: &Completion, network: Network) -> Result<Intent> {
    let mut fee: Option<(StacksAddress, u64)> = None;
    let mut main: Vec<&Operation> = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        if op.operation_identifier.index != i as i64 {
            return Err(E::InvalidOperation(format!(
                "operation {i} has index {}",
                op.operation_identifier.index
            )));
        }
        if !op.status.is_empty() {
            return Err(E::InvalidOperation(format!(
                "operation {i} has a status; construction operations have none"
            )));
        }
        match op.r#type.as_str() {
            FEE => {
                if fee.is_some() {
                    return Err(E::InvalidOperation("more than one fee operation".into()));
                }
                let sender = account(op, i)?;
                let value =
                    amount(op, i)?.ok_or_else(|| E::InvalidFee("the fee operation has no amount".into()))?;
                if value > 0 {
                    return Err(E::InvalidFee(format!(
                        "fee amount {value} is positive; the payer's side is negative"
                    )));
                }
                let fee_value =
                    u64::try_from(-value).map_err(|_| E::InvalidFee(format!("{value} is out of range")))?;
                fee = Some((sender, fee_value));
            }
            TOKEN_TRANSFER | STACK_STX | DELEGATE_STX | REVOKE_DELEGATE_STX => main.push(op),
            other => {
                return Err(E::InvalidOperation(format!("operation type {other:?} cannot be constructed")))
            }
        }
    }
    let kind = match main.first() {
        Some(op) => op.r#type.as_str(),
        None => return Err(E::InvalidOperation("no token_transfer or stacking operation".into())),
    };
    if main.iter().any(|op| op.r#type != kind) {
        return Err(E::InvalidOperation("operations of more than one kind".into()));
    }
    let (sender, intent_fn): (StacksAddress, Box<dyn FnOnce(Origin) -> Result<Intent>>) = match kind {
        TOKEN_TRANSFER => token_transfer(&main, completion, network)?,
        _ => {
            let [op] = main.as_slice() else {
                return Err(E::InvalidOperation(format!(
                    "exactly one {kind} operation is needed, got {}",
                    main.len()
                )));
            };
            stacking(op, kind, completion, network)?
        }
    };
    let nonce = completion.nonce.ok_or(E::MissingNonce)?;
    if completion.sponsored {
        // The sponsor pays: the fee operation (if any) is the sponsor's, the origin's fee is 0.
        let address =
            match (fee, completion.sponsor_address) {
                (Some((payer, _)), Some(named)) if payer != named => {
                    return Err(E::InvalidFee(format!("the fee is paid by {payer}, not the sponsor {named}")))
                }
                (Some((payer, _)), _) => payer,
                (None, Some(named)) => named,
                (None, None) => return Err(bad(
                    "sponsor_address",
                    "a sponsored transaction needs the sponsor: a fee operation or metadata.sponsor_address",
                )),
            };
        let fee = match fee {
            Some((_, value)) => value,
            None => completion.fee.ok_or(E::MissingFee)?,
        };
        let sponsor_nonce = completion
            .sponsor_nonce
            .ok_or_else(|| bad("sponsor_account_sequence", "the sponsor's nonce is required"))?;
        let sponsor = Sponsor { address, fee, nonce: sponsor_nonce };
        return intent_fn(Origin { sender, fee: 0, nonce, sponsor: Some(sponsor) });
    }
    let fee = match fee {
        Some((payer, value)) => {
            if payer != sender {
                return Err(E::InvalidFee(format!("the fee is paid by {payer}, not the sender {sender}")));
            }
            value
        }
        None => completion.fee.ok_or(E::MissingFee)?,
    };
    intent_fn(Origin { sender, fee, nonce, sponsor: None })
}

type Partial = (StacksAddress, Box<dyn FnOnce(Origin) -> Result<Intent>>);

fn token_transfer(main: &[&Operation], completion: &Completion, network: Network) -> Result<Partial> {
    let [a, b] = main else {
        return Err(E::InvalidOperation(format!(
            "a token transfer is two token_transfer operations, got {}",
            main.len()
        )));
    };
    let index = |op: &Operation| op.operation_identifier.index as usize;
    let (va, vb) = (
        amount(a, index(a))?.ok_or_else(|| E::InvalidAmount("token_transfer without amount".into()))?,
        amount(b, index(b))?.ok_or_else(|| E::InvalidAmount("token_transfer without amount".into()))?,
    );
    let ((debit, dv), (credit, cv)) = if va < 0 { ((a, va), (b, vb)) } else { ((b, vb), (a, va)) };
    if dv >= 0 || cv <= 0 || dv != -cv {
        return Err(E::InvalidAmount(format!(
            "a transfer debits and credits the same amount, got {va} and {vb}"
        )));
    }
    let amount = u64::try_from(cv).map_err(|_| E::InvalidAmount(format!("{cv} does not fit 64 bits")))?;
    let sender = account(debit, index(debit))?;
    let recipient_text = &credit.account.as_ref().map(|a| a.address.clone()).unwrap_or_default();
    let recipient: Principal =
        recipient_text.parse().map_err(|e| E::InvalidRecipient(format!("{recipient_text}: {e}")))?;
    if !super::build::check_network(&recipient, network) {
        return Err(E::InvalidRecipient(format!("{recipient_text} is not a {network} address")));
    }
    let mut memo = completion.memo.clone();
    for op in [debit, credit] {
        if let Some(m) = op.metadata.as_ref().and_then(|m| m.get("memo")) {
            match m {
                Json::Null => {}
                Json::String(s) if memo.as_ref().none_or_eq(s) => memo = Some(s.clone()),
                Json::String(_) => return Err(E::InvalidOperation("two different memos".into())),
                _ => return Err(E::InvalidOperation("memo is not a string".into())),
            }
        }
    }
    let memo = memo.filter(|m| !m.is_empty());
    Ok((sender, Box::new(move |origin| Ok(Intent::TokenTransfer { origin, recipient, amount, memo }))))
}

trait OptEq {
    fn none_or_eq(self, s: &str) -> bool;
}

impl OptEq for Option<&String> {
    fn none_or_eq(self, s: &str) -> bool {
        self.is_none_or(|m| m == s)
    }
}

fn stacking(op: &Operation, kind: &str, completion: &Completion, network: Network) -> Result<Partial> {
    let i = op.operation_identifier.index as usize;
    let sender = account(op, i)?;
    let meta = op.metadata.clone().unwrap_or_default();
    let contract = match meta.get("contract") {
        Some(Json::String(id)) => {
            id.parse().map_err(|e| E::InvalidOperation(format!("contract {id}: {e}")))?
        }
        Some(_) => return Err(E::InvalidOperation("contract is not a string".into())),
        None => completion.pox_contract.clone().unwrap_or_else(|| default_pox_contract(network)),
    };
    if kind == REVOKE_DELEGATE_STX {
        if op.amount.is_some() {
            return Err(E::InvalidOperation("revoke_delegate_stx takes no amount".into()));
        }
        return Ok((sender, Box::new(move |origin| Ok(Intent::RevokeDelegateStx { origin, contract }))));
    }
    let value = amount(op, i)?.ok_or_else(|| E::InvalidAmount(format!("{kind} needs an amount")))?;
    if value >= 0 {
        return Err(E::InvalidAmount(format!("{kind} amount {value} must be negative (the stacker's side)")));
    }
    let amount_ustx = value.unsigned_abs();
    let field = |k: &'static str| meta.get(k).filter(|v| !v.is_null());
    let uint = |k: &'static str| -> Result<Option<u128>> {
        field(k)
            .map(|v| {
                u128_of(v).ok_or_else(|| E::InvalidOperation(format!("{k} is not a non-negative integer")))
            })
            .transpose()
    };
    if kind == STACK_STX {
        let lock_period = uint("number_of_cycles")?
            .or(uint("lock_period")?)
            .ok_or_else(|| E::InvalidOperation("stack_stx needs number_of_cycles".into()))?;
        let pox_addr = pox_addr_of(
            field("pox_addr").ok_or_else(|| E::InvalidOperation("stack_stx needs pox_addr".into()))?,
        )?;
        let signer_key = hex_field(field("signer_key"), "signer_key")?
            .ok_or_else(|| E::InvalidOperation("stack_stx needs signer_key (pox-4)".into()))?;
        if signer_key.len() != 33 {
            return Err(E::InvalidOperation(format!("signer_key is {} bytes, not 33", signer_key.len())));
        }
        let signer_sig = hex_field(field("signer_signature"), "signer_signature")?;
        if signer_sig.as_ref().is_some_and(|s| s.len() != 65) {
            return Err(E::InvalidOperation("signer_signature is not 65 bytes".into()));
        }
        let start_burn_height = match uint("start_burn_height")? {
            Some(h) => h,
            None => completion.start_burn_height.ok_or_else(|| {
                bad("start_burn_height", "stack_stx needs the burn height from /construction/metadata")
            })?,
        };
        let max_amount = uint("pox_max_amount")?.unwrap_or(amount_ustx);
        let auth_id = uint("pox_auth_id")?.unwrap_or(0);
        let args = StackStx {
            contract,
            amount_ustx,
            pox_addr,
            start_burn_height,
            lock_period,
            signer_sig,
            signer_key,
            max_amount,
            auth_id,
        };
        return Ok((sender, Box::new(move |origin| Ok(Intent::StackStx { origin, args }))));
    }
    let delegate_text = match field("delegate_to") {
        Some(Json::String(s)) => s.clone(),
        _ => return Err(E::InvalidOperation("delegate_stx needs delegate_to".into())),
    };
    let delegate_to: Principal = delegate_text
        .parse()
        .map_err(|e| E::InvalidOperation(format!("delegate_to {delegate_text}: {e}")))?;
    let until_burn_height = uint("until_burn_height")?;
    let pox_addr = field("pox_addr").map(pox_addr_of).transpose()?;
    let args = DelegateStx { contract, amount_ustx, delegate_to, until_burn_height, pox_addr };
    Ok((sender, Box::new(move |origin| Ok(Intent::DelegateStx { origin, args }))))
}

/// The operation's account as a standard address.
fn account(op: &Operation, i: usize) -> Result<StacksAddress> {
    let a =
        op.account.as_ref().ok_or_else(|| E::InvalidOperation(format!("operation {i} has no account")))?;
    if a.sub_account.is_some() {
        return Err(E::InvalidOperation(format!("operation {i}: sub-accounts cannot sign")));
    }
    a.address.parse().map_err(|e| E::InvalidSender(format!("{}: {e}", a.address)))
}

/// The signed amount of an operation, in µSTX, after checking the currency.
fn amount(op: &Operation, i: usize) -> Result<Option<i128>> {
    let Some(amount) = &op.amount else { return Ok(None) };
    if amount.currency.symbol != SYMBOL {
        return Err(E::InvalidSymbol(amount.currency.symbol.clone()));
    }
    if amount.currency.decimals != DECIMALS {
        return Err(E::InvalidDecimals(amount.currency.decimals));
    }
    let v = &amount.value;
    let digits = v.strip_prefix('-').unwrap_or(v);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(E::InvalidAmount(format!("operation {i}: {v:?} is not an integer")));
    }
    v.parse().map(Some).map_err(|_| E::InvalidAmount(format!("operation {i}: {v} is out of range")))
}

fn u128_of(v: &Json) -> Option<u128> {
    match v {
        Json::Number(n) => n.as_u64().map(u128::from),
        Json::String(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => s.parse().ok(),
        _ => None,
    }
}

fn u64_of(v: &Json) -> Option<u64> {
    u128_of(v).and_then(|n| u64::try_from(n).ok())
}

/// A fee from metadata: µSTX as a number or string; a leading minus (the operation's sign) is
/// accepted, as the incumbent's options carry it.
fn fee_of(v: &Json) -> Result<u64> {
    let text = match v {
        Json::String(s) => s.trim_start_matches('-').to_owned(),
        Json::Number(n) => n.to_string().trim_start_matches('-').to_owned(),
        _ => return Err(E::InvalidFee("fee is not a number".into())),
    };
    text.parse().map_err(|_| E::InvalidFee(format!("{text:?} is not an amount of µSTX")))
}

fn hex_field(v: Option<&Json>, name: &'static str) -> Result<Option<Vec<u8>>> {
    match v {
        None => Ok(None),
        Some(Json::String(s)) => {
            stacks_codec::decode_hex(s).map(Some).map_err(|e| E::InvalidOperation(format!("{name}: {e}")))
        }
        Some(_) => Err(E::InvalidOperation(format!("{name} is not a hex string"))),
    }
}

/// A Bitcoin address (base58check or bech32/bech32m), or `{version, hashbytes}` for the
/// versions an address cannot tell apart (p2sh-p2wpkh, p2sh-p2wsh share the P2SH form).
pub fn pox_addr_of(v: &Json) -> Result<PoxAddr> {
    let (version, hashbytes) = match v {
        Json::String(s) => parse_pox_address(s)
            .ok_or_else(|| E::InvalidOperation(format!("pox_addr {s:?} is not a Bitcoin address")))?,
        Json::Object(o) => {
            let version = match o.get("version") {
                Some(Json::Number(n)) => n.as_u64().and_then(|n| u8::try_from(n).ok()),
                Some(Json::String(s)) => {
                    stacks_codec::decode_hex(s).ok().and_then(|b| <[u8; 1]>::try_from(b).ok()).map(|[b]| b)
                }
                _ => None,
            }
            .ok_or_else(|| E::InvalidOperation("pox_addr.version is not a byte".into()))?;
            let hashbytes = hex_field(o.get("hashbytes"), "pox_addr.hashbytes")?
                .ok_or_else(|| E::InvalidOperation("pox_addr needs hashbytes".into()))?;
            (version, hashbytes)
        }
        _ => {
            return Err(E::InvalidOperation("pox_addr is neither an address nor {version, hashbytes}".into()))
        }
    };
    let want = match version {
        pox_version::P2PKH..=pox_version::P2WPKH => 20,
        pox_version::P2WSH | pox_version::P2TR => 32,
        _ => return Err(E::InvalidOperation(format!("pox_addr version {version} is not 0..=6"))),
    };
    if hashbytes.len() != want {
        return Err(E::InvalidOperation(format!(
            "pox_addr version {version} takes {want} hash bytes, got {}",
            hashbytes.len()
        )));
    }
    Ok(PoxAddr { version, hashbytes })
}

/// The address text when it names the version unambiguously, else `{version, hashbytes}`.
pub fn pox_addr_json(addr: &PoxAddr, network: Network) -> Json {
    let ambiguous = matches!(addr.version, pox_version::P2SH_P2WPKH | pox_version::P2SH_P2WSH);
    match pox_address_text(addr.version, &addr.hashbytes, network.is_mainnet()) {
        Some(text) if !ambiguous => Json::String(text),
        _ => json!({"version": addr.version, "hashbytes": stacks_codec::to_hex_prefixed(&addr.hashbytes)}),
    }
}

/// The operations of an intent: the fee (index 0), then the transfer pair or the stacking call.
/// Construction operations carry no status.
pub fn from_intent(intent: &Intent, network: Network) -> Vec<Operation> {
    let origin = intent.origin();
    let sender = origin.sender.to_c32();
    let op = |index: i64, r#type: &str, address: &str, value: Option<String>| Operation {
        operation_identifier: OperationIdentifier::new(index),
        related_operations: None,
        r#type: r#type.to_owned(),
        status: String::new(),
        account: Some(AccountIdentifier::new(address)),
        amount: value.map(|v| Amount::new(v, stx())),
        coin_change: None,
        metadata: None,
    };
    let (payer, fee) = origin.fee_payer();
    let mut ops = vec![op(0, FEE, &payer.to_c32(), Some(format!("-{fee}")))];
    let with_meta = |mut o: Operation, m: Json| {
        if let Json::Object(map) = m {
            if !map.is_empty() {
                o.metadata = Some(map);
            }
        }
        o
    };
    match intent {
        Intent::TokenTransfer { recipient, amount, memo, .. } => {
            let memo_meta = || memo.as_ref().map_or(json!({}), |m| json!({ "memo": m }));
            ops.push(with_meta(op(1, TOKEN_TRANSFER, &sender, Some(format!("-{amount}"))), memo_meta()));
            let mut credit = with_meta(
                op(2, TOKEN_TRANSFER, &recipient.to_string(), Some(amount.to_string())),
                memo_meta(),
            );
            credit.related_operations = Some(vec![OperationIdentifier::new(1)]);
            ops.push(credit);
        }
        Intent::StackStx { args, .. } => {
            let mut m = json!({
                "number_of_cycles": u64::try_from(args.lock_period).map(Json::from).unwrap_or_else(|_| args.lock_period.to_string().into()),
                "pox_addr": pox_addr_json(&args.pox_addr, network),
                "start_burn_height": args.start_burn_height.to_string(),
                "signer_key": stacks_codec::to_hex_prefixed(&args.signer_key),
                "pox_max_amount": args.max_amount.to_string(),
                "pox_auth_id": args.auth_id.to_string(),
                "contract": args.contract.to_string(),
            });
            if let Some(sig) = &args.signer_sig {
                m["signer_signature"] = stacks_codec::to_hex_prefixed(sig).into();
            }
            ops.push(with_meta(op(1, STACK_STX, &sender, Some(format!("-{}", args.amount_ustx))), m));
        }
        Intent::DelegateStx { args, .. } => {
            let mut m =
                json!({ "delegate_to": args.delegate_to.to_string(), "contract": args.contract.to_string() });
            if let Some(h) = args.until_burn_height {
                m["until_burn_height"] = h.to_string().into();
            }
            if let Some(a) = &args.pox_addr {
                m["pox_addr"] = pox_addr_json(a, network);
            }
            ops.push(with_meta(op(1, DELEGATE_STX, &sender, Some(format!("-{}", args.amount_ustx))), m));
        }
        Intent::RevokeDelegateStx { contract, .. } => {
            ops.push(with_meta(
                op(1, REVOKE_DELEGATE_STX, &sender, None),
                json!({ "contract": contract.to_string() }),
            ));
        }
    }
    ops
}
