//! The incumbent's `Transaction`, `MempoolTransaction` and `TransactionEvent` JSON, built from
//! stored rows. The one renderer every route family uses for transactions: the decoded part
//! comes from `stacks_codec`'s `api_tx_fields`, the rest from the block and the receipt.

use serde_json::{json, Map, Value as Json};
use stacks_codec::clarity::Value as Clarity;
use stacks_codec::tx::Transaction;

use std::sync::Arc;

use super::abi::{apply_abi, shared_function_signature};
use super::model::{AnyTx, ListedTx, MempoolTx, MinedTx, PageTx, TxEvent};
use crate::text::EXECUTION_COST_NAMES;
use crate::time::{iso8601, iso8601_into};

/// What a route asks of the renderer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RenderOptions {
    /// Drop `contract_call.function_args` (`exclude_function_args=true`).
    pub exclude_function_args: bool,
}

/// The stored transaction does not decode: the store holds only transactions it decoded, so
/// this means corrupted data.
#[derive(Debug, thiserror::Error)]
#[error("stored transaction {tx_id} does not decode: {reason}")]
pub struct RenderError {
    pub tx_id: String,
    pub reason: String,
}

impl From<RenderError> for crate::ApiError {
    fn from(e: RenderError) -> Self {
        crate::ApiError::Internal(Box::new(e))
    }
}

type JsonMap = Map<String, Json>;

/// Splits a transaction's decoded fields where the mined or mempool fields go (after
/// `anchor_mode`), with the stored id as `tx_id` (a burnchain operation's synthesized bytes do
/// not hash to it).
fn split_fields(mut fields: JsonMap, tx_id: &str) -> (JsonMap, JsonMap) {
    fields.insert("tx_id".into(), tx_id.into());
    let mut head = Map::new();
    let mut tail = Map::new();
    let mut after = false;
    for (k, v) in fields {
        if after {
            tail.insert(k, v);
        } else {
            after = k == "anchor_mode";
            head.insert(k, v);
        }
    }
    (head, tail)
}

/// Applies the called contract's ABI and the route's options to the fields after the block's.
fn finish_tail(tail: &mut JsonMap, abi: Option<&str>, opts: RenderOptions) {
    if let Some(Json::Object(call)) = tail.get_mut("contract_call") {
        if let Some(abi) = abi {
            apply_abi(call, abi);
        }
        if opts.exclude_function_args {
            call.remove("function_args");
        }
    }
}

fn decode_tx(tx_id: &str, raw_tx: &str) -> Result<Transaction, RenderError> {
    let err = |reason: String| RenderError { tx_id: tx_id.to_string(), reason };
    let bytes = stacks_codec::decode_hex(raw_tx).map_err(|e| err(e.to_string()))?;
    Transaction::deserialize(&bytes).map_err(|e| err(e.to_string()))
}

/// The decoded fields of a mempool transaction, split as [`split_fields`] does.
fn decoded(
    tx_id: &str,
    raw_tx: &str,
    abi: Option<&str>,
    opts: RenderOptions,
) -> Result<(JsonMap, JsonMap), RenderError> {
    let (head, mut tail) = split_fields(decode_tx(tx_id, raw_tx)?.api_tx_fields(), tx_id);
    finish_tail(&mut tail, abi, opts);
    Ok((head, tail))
}

/// The members of a JSON object's text, without its braces.
fn members(m: &JsonMap) -> String {
    let text = serde_json::to_string(m).unwrap_or_default();
    text[1..text.len() - 1].to_string()
}

/// What never changes about a mined transaction's JSON, derived once when its block is applied
/// (docs/store.md "Transactions materialized at ingest", column `txs.api_json`): the members
/// of the decoded fields before the block's (up to `anchor_mode`, with the stored id and a
/// burnchain operation's nonce and fee served as 0), the `tx_result` object, and the members
/// after (the payload, without the called contract's ABI, which is applied when served).
/// Three parts separated by `\n`, which compact JSON text never contains.
pub fn materialized_json(tx: &Transaction, tx_id: &str, is_burnchain_op: bool, raw_result: &str) -> String {
    let (mut head, tail) = split_fields(tx.api_tx_fields(), tx_id);
    if is_burnchain_op {
        head.insert("nonce".into(), 0.into());
        head.insert("fee_rate".into(), "0".into());
    }
    let result = serde_json::to_string(&clarity_json(raw_result)).unwrap_or_default();
    format!("{}\n{result}\n{}", members(&head), members(&tail))
}

/// [`materialized_json`] from the stored row (for rows stored before `api_json` existed: the
/// store's backfill).
pub fn materialized_from_raw(
    tx_id: &str,
    raw_tx: &str,
    is_burnchain_op: bool,
    raw_result: &str,
) -> Result<String, RenderError> {
    Ok(materialized_json(&decode_tx(tx_id, raw_tx)?, tx_id, is_burnchain_op, raw_result))
}

pub fn clarity_json(hex: &str) -> Json {
    let repr = stacks_codec::decode_hex(hex)
        .ok()
        .and_then(|b| Clarity::deserialize(&b).ok())
        .map(|v| v.repr())
        .unwrap_or_default();
    json!({ "hex": hex, "repr": repr })
}

/// The time as the incumbent serves block `*_iso` fields: `""` when unknown (0).
fn iso(t: u64) -> String {
    if t == 0 {
        String::new()
    } else {
        // Stored times come from BIGINT columns, so they fit an i64.
        iso8601(t as i64)
    }
}

/// The three materialized parts of a stored row's JSON ([`materialized_json`]): the members
/// before the block's, the `tx_result` object and the members after; `None` for a row not
/// materialized (or malformed), which renders through [`mined_tx_text`]. A row's stored
/// [`row_text`] holds the same three parts among its six.
pub fn materialized_parts(tx: &MinedTx) -> Option<(&str, &str, &str)> {
    stored_parts(tx.api_json.as_deref()?)
}

/// The head, result and tail of a stored text: the three parts of [`materialized_json`], or
/// the first (without its `{`), fourth and sixth of a [`row_text`].
fn stored_parts(stored: &str) -> Option<(&str, &str, &str)> {
    if let Some(p) = row_parts(stored) {
        return Some((p[0].strip_prefix('{')?, p[3], p[5]));
    }
    let mut parts = stored.splitn(3, '\n');
    let found = (parts.next()?, parts.next()?, parts.next()?);
    (!found.2.contains('\n')).then_some(found)
}

/// The six parts of a [`row_text`], or `None` for another text (a [`materialized_json`]).
fn row_parts(stored: &str) -> Option<[&str; 6]> {
    if !is_row_text(stored) {
        return None;
    }
    let mut cuts = memchr::memchr_iter(b'\n', stored.as_bytes());
    let mut parts = [""; 6];
    let mut from = 0;
    for part in parts.iter_mut().take(5) {
        let at = cuts.next()?;
        *part = &stored[from..at];
        from = at + 1;
    }
    parts[5] = &stored[from..];
    cuts.next().is_none().then_some(parts)
}

/// Whether `stored` is a row's whole text ([`row_text`]), which [`listed_tx_text`] serves: it
/// starts with `{`, which the three parts of [`materialized_json`] never do (their first is
/// members without braces), nor the empty text of a row that did not decode. (Its six parts are
/// checked when it is served.)
pub fn is_row_text(stored: &str) -> bool {
    stored.starts_with('{')
}

/// A transaction's head, result and tail ([`stored_parts`]) in its stored text, or in the
/// text derived from its raw bytes when it has none (a row built outside the store).
struct Parts<'a> {
    text: std::borrow::Cow<'a, str>,
    head: std::ops::Range<usize>,
    result: std::ops::Range<usize>,
    tail: std::ops::Range<usize>,
}

impl<'a> Parts<'a> {
    fn of(tx: &'a MinedTx) -> Result<Parts<'a>, RenderError> {
        let text = match &tx.api_json {
            Some(s) => std::borrow::Cow::Borrowed(s.as_str()),
            None => std::borrow::Cow::Owned(materialized_from_raw(
                &tx.tx_id,
                &tx.raw_tx,
                tx.is_burnchain_op,
                &tx.raw_result,
            )?),
        };
        let bad = || RenderError { tx_id: tx.tx_id.clone(), reason: "malformed stored api_json".into() };
        let (head, result, tail) = stored_parts(&text).ok_or_else(bad)?;
        // Offsets into the text, so that an owned text can move into the struct.
        let range = |p: &str| {
            let at = p.as_ptr() as usize - text.as_ptr() as usize;
            at..at + p.len()
        };
        let (head, result, tail) = (range(head), range(result), range(tail));
        Ok(Parts { text, head, result, tail })
    }

    fn head(&self) -> &str {
        &self.text[self.head.clone()]
    }

    fn result(&self) -> &str {
        &self.text[self.result.clone()]
    }

    fn tail(&self) -> &str {
        &self.text[self.tail.clone()]
    }
}

/// Where the values that can change go: served (the values), or stored (a `\n` each).
#[derive(Clone, Copy)]
enum Slots<'a> {
    Served { canonical: bool, events: Option<&'a [TxEvent]> },
    Stored,
}

/// Writes a mined transaction's JSON from `{` to the `events` member, in the incumbent's key
/// order, with `head` and `result` from its stored parts. Stored ([`row_text`]), a `\n` is
/// written after `head`, before and after `result`, and in place of the values of `canonical`
/// and `events`.
fn write_row(m: &mut Members, tx: &MinedTx, head: &str, result: &str, slots: Slots<'_>) {
    let stored = matches!(slots, Slots::Stored);
    m.0.push(b'{');
    m.text(head);
    if stored {
        m.0.push(b'\n');
    }
    m.member("block_hash", &tx.block_hash);
    m.member("block_height", tx.block_height);
    m.member("block_time", tx.block_time);
    m.iso_member("block_time_iso", tx.block_time);
    if tx.block_hash == "0x" {
        // A streamed microblock transaction: no burn block yet, which the incumbent shows as -1.
        m.member("burn_block_time", -1);
        m.member("burn_block_height", -1);
        m.member("burn_block_time_iso", "");
    } else {
        m.member("burn_block_time", tx.burn_block_time);
        m.member("burn_block_height", tx.burn_block_height);
        m.iso_member("burn_block_time_iso", tx.burn_block_time);
    }
    m.member("parent_burn_block_time", tx.parent_burn_block_time);
    m.iso_member("parent_burn_block_time_iso", tx.parent_burn_block_time);
    m.key("canonical");
    match slots {
        Slots::Served { canonical, .. } => m.value(canonical),
        Slots::Stored => m.0.push(b'\n'),
    }
    m.member("tx_index", tx.tx_index);
    m.member("tx_status", &tx.status);
    m.key("tx_result");
    if stored {
        m.0.push(b'\n');
    }
    m.0.extend_from_slice(result.as_bytes());
    if stored {
        m.0.push(b'\n');
    }
    m.member("event_count", tx.event_count);
    m.member("parent_block_hash", &tx.parent_block_hash);
    m.member("is_unanchored", tx.block_hash == "0x");
    let micro_hash = if tx.microblock_hash.is_empty() { "0x" } else { &tx.microblock_hash };
    m.member("microblock_hash", micro_hash);
    m.member("microblock_sequence", tx.microblock_sequence.unwrap_or(i32::MAX as u32));
    m.member("microblock_canonical", tx.microblock_canonical);
    for (name, v) in EXECUTION_COST_NAMES.iter().zip(tx.execution_cost) {
        m.member(name, v);
    }
    m.member("vm_error", &tx.vm_error);
    m.key("events");
    match slots {
        Slots::Served { events: Some(events), .. } if !events.is_empty() => {
            let events: Vec<Json> = events.iter().map(event_json).collect();
            m.value(events);
        }
        Slots::Served { .. } => m.0.extend_from_slice(b"[]"),
        Slots::Stored => m.0.push(b'\n'),
    }
}

/// Appends the members after the block's (`tail`, stored), with the called contract's `abi`
/// and the route's options applied to a contract call's.
fn write_tail(
    m: &mut Members,
    tail: &str,
    abi: Option<&Arc<str>>,
    opts: RenderOptions,
    tx_id: &str,
) -> Result<(), RenderError> {
    // Only a contract call's tail changes when served (its ABI, the route's options).
    let call = tail.starts_with("\"tx_type\":\"contract_call\"");
    let applied = abi.filter(|_| call && !opts.exclude_function_args);
    if applied.is_some_and(|abi| m.call_tail(tail, abi)) {
        // Written from the stored text.
    } else if call && (abi.is_some() || opts.exclude_function_args) {
        let mut t: JsonMap = serde_json::from_str(&format!("{{{tail}}}"))
            .map_err(|e| RenderError { tx_id: tx_id.to_string(), reason: e.to_string() })?;
        finish_tail(&mut t, abi.map(|a| &**a), opts);
        m.text(&members(&t));
    } else {
        m.text(tail);
    }
    Ok(())
}

/// A mined transaction as JSON text: the materialized parts ([`materialized_json`]) with what
/// can change (block, canonical and microblock fields) spliced in. `events` is `None` in lists
/// (served as `[]`) and the page of events on single-transaction lookups.
pub fn mined_tx_text(
    tx: &MinedTx,
    events: Option<&[TxEvent]>,
    opts: RenderOptions,
) -> Result<String, RenderError> {
    let p = Parts::of(tx)?;
    // Written as bytes (`serde_json` writes each value straight in, no String per member).
    let mut m = Members(Vec::with_capacity(p.text.len() + 1024));
    write_row(&mut m, tx, p.head(), p.result(), Slots::Served { canonical: tx.canonical, events });
    write_tail(&mut m, p.tail(), tx.contract_abi.as_ref(), opts, &tx.tx_id)?;
    m.0.push(b'}');
    // Every piece is UTF-8 (`str`s and `serde_json`'s output).
    String::from_utf8(m.0).map_err(|e| RenderError { tx_id: tx.tx_id.clone(), reason: e.to_string() })
}

/// What a mined transaction's row stores when its block is applied (docs/store.md,
/// "Transactions materialized at ingest"): its whole list JSON but for what can change, in six
/// parts separated by `\n` (compact JSON text has none): `{` and the members before the
/// block's; the block's fields up to `"canonical":`; `tx_index` … `"tx_result":`; the result;
/// `event_count` … `"events":`; the members after (the payload without the called contract's
/// ABI). [`listed_tx_text`] serves it with `canonical`, the ABI and the route's options, the
/// same bytes as [`mined_tx_text`] of the row's fields. A block's fields never change, and a
/// row is stored once per block it is in.
pub fn row_text(tx: &MinedTx) -> Result<String, RenderError> {
    let p = Parts::of(tx)?;
    let mut m = Members(Vec::with_capacity(p.text.len() + 768));
    write_row(&mut m, tx, p.head(), p.result(), Slots::Stored);
    m.0.extend_from_slice(p.tail().as_bytes());
    String::from_utf8(m.0).map_err(|e| RenderError { tx_id: tx.tx_id.clone(), reason: e.to_string() })
}

/// A listed transaction as JSON text: its stored [`row_text`] with `canonical`, no events
/// (`[]`, as lists show them), and its tail as [`mined_tx_text`] writes it.
pub fn listed_tx_text(tx: &ListedTx, opts: RenderOptions) -> Result<String, RenderError> {
    let p = row_parts(&tx.api_json)
        .ok_or_else(|| RenderError { tx_id: tx.tx_id.clone(), reason: "not a stored row text".into() })?;
    let mut m = Members(Vec::with_capacity(tx.api_json.len() + 64));
    for (i, part) in p[..5].iter().enumerate() {
        m.0.extend_from_slice(part.as_bytes());
        match i {
            1 => m.value(tx.canonical),
            4 => m.0.extend_from_slice(b"[]"),
            _ => {}
        }
    }
    write_tail(&mut m, p[5], tx.contract_abi.as_ref(), opts, &tx.tx_id)?;
    m.0.push(b'}');
    String::from_utf8(m.0).map_err(|e| RenderError { tx_id: tx.tx_id.clone(), reason: e.to_string() })
}

/// A page's transaction as JSON text ([`listed_tx_text`] or [`mined_tx_text`] without events).
pub fn page_tx_text(tx: &PageTx, opts: RenderOptions) -> Result<String, RenderError> {
    match tx {
        PageTx::Listed(t) => listed_tx_text(t, opts),
        PageTx::Mined(t) => mined_tx_text(t, None, opts),
    }
}

/// A JSON object's text being written: members appended with their commas.
struct Members(Vec<u8>);

impl Members {
    /// Appends `"key":value` (and a comma before it unless first in the object).
    fn member(&mut self, key: &str, value: impl serde::Serialize) {
        self.key(key);
        self.value(value);
    }

    /// Appends `"key":` (and a comma before it unless first in the object).
    fn key(&mut self, key: &str) {
        if self.0.last() != Some(&b'{') {
            self.0.push(b',');
        }
        self.0.push(b'"');
        self.0.extend_from_slice(key.as_bytes());
        self.0.extend_from_slice(b"\":");
    }

    fn value(&mut self, value: impl serde::Serialize) {
        // Serializing a string, number, bool, option or JSON value into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut self.0, &value);
    }

    /// [`Members::member`] of an `*_iso` time ([`iso`]) written as [`iso`] serializes (its
    /// text needs no escapes), without a `String`.
    fn iso_member(&mut self, key: &str, t: u64) {
        match i64::try_from(t).ok().filter(|t| *t > 0) {
            Some(t) => {
                if self.0.last() != Some(&b'{') {
                    self.0.push(b',');
                }
                self.0.push(b'"');
                self.0.extend_from_slice(key.as_bytes());
                self.0.extend_from_slice(b"\":\"");
                iso8601_into(t, &mut self.0);
                self.0.push(b'"');
            }
            None => self.member(key, iso(t)),
        }
    }

    /// Appends a contract call's stored `tail` with `abi` applied ([`finish_tail`] without
    /// options), written from the stored text: the same bytes as parsing it into a tree,
    /// applying the ABI and serializing it (a parse and a serialization per contract call were
    /// ~10 % of a transaction list's CPU). `false`, with nothing appended, when the text is
    /// not in the shape materialization writes (the caller then takes the tree path).
    fn call_tail(&mut self, tail: &str, abi: &Arc<str>) -> bool {
        let mark = self.0.len();
        if self.0.last() != Some(&b'{') {
            self.0.push(b',');
        }
        let done = write_call_tail(tail, abi, &mut self.0).is_some();
        if !done {
            self.0.truncate(mark);
        }
        done
    }

    /// Appends members' text (`"a":1,"b":2`), if any.
    fn text(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        if self.0.last() != Some(&b'{') {
            self.0.push(b',');
        }
        self.0.extend_from_slice(text.as_bytes());
    }
}

/// A JSON string token at the start of `s` (its quotes included) and the text after it.
fn string_token(s: &str) -> Option<(&str, &str)> {
    let b = s.as_bytes();
    if b.first() != Some(&b'"') {
        return None;
    }
    let mut i = 1;
    // Hex arguments run to hundreds of bytes: found by `memchr`, not byte by byte.
    while let Some(k) = memchr::memchr2(b'"', b'\\', &b[i..]) {
        i += k;
        match b[i] {
            // An escape's next byte is ASCII (`\"`, `\\`, `\n`, `\u…`): never the closing quote.
            b'\\' => i += 2,
            _ => return Some((&s[..=i], &s[i + 1..])),
        }
        if i >= b.len() {
            return None;
        }
    }
    None
}

/// [`Members::call_tail`]'s writer: the stored payload `"tx_type":"contract_call",
/// "contract_call":{"contract_id":…,"function_name":…,"function_signature":"",
/// "function_args":[{"hex":…,"repr":…,"name":…,"type":…},…]}…` with the signature and each
/// argument's name and type from the ABI (as [`apply_abi`] sets them, in place), the rest
/// copied. `None` (part written) when the text has another shape.
fn write_call_tail(tail: &str, abi: &Arc<str>, out: &mut Vec<u8>) -> Option<()> {
    const CALL: &str = "\"tx_type\":\"contract_call\",\"contract_call\":{\"contract_id\":";
    let (_, rest) = string_token(tail.strip_prefix(CALL)?)?;
    let (name, rest) = string_token(rest.strip_prefix(",\"function_name\":")?)?;
    let name = &name[1..name.len() - 1];
    if name.contains('\\') {
        return None;
    }
    let Some(sig) = shared_function_signature(abi, name) else {
        // The ABI does not describe the function: the payload as stored.
        out.extend_from_slice(tail.as_bytes());
        return Some(());
    };
    let mut args = rest.strip_prefix(",\"function_signature\":\"\",\"function_args\":[")?;
    out.extend_from_slice(&tail.as_bytes()[..tail.len() - rest.len()]);
    out.extend_from_slice(b",\"function_signature\":");
    out.extend_from_slice(sig.text_json.as_bytes());
    out.extend_from_slice(b",\"function_args\":[");
    let mut params = sig.params_json.iter();
    let mut first = true;
    while !args.starts_with(']') {
        if !first {
            args = args.strip_prefix(',')?;
            out.push(b',');
        }
        first = false;
        let (hex, r) = string_token(args.strip_prefix("{\"hex\":")?)?;
        let (repr, r) = string_token(r.strip_prefix(",\"repr\":")?)?;
        let (arg_name, r) = string_token(r.strip_prefix(",\"name\":")?)?;
        let (arg_type, r) = string_token(r.strip_prefix(",\"type\":")?)?;
        args = r.strip_prefix('}')?;
        out.extend_from_slice(b"{\"hex\":");
        out.extend_from_slice(hex.as_bytes());
        out.extend_from_slice(b",\"repr\":");
        out.extend_from_slice(repr.as_bytes());
        out.extend_from_slice(b",\"name\":");
        match params.next() {
            Some((n, t)) => {
                out.extend_from_slice(n.as_bytes());
                out.extend_from_slice(b",\"type\":");
                out.extend_from_slice(t.as_bytes());
            }
            // More arguments than the ABI's parameters: the rest as stored.
            None => {
                out.extend_from_slice(arg_name.as_bytes());
                out.extend_from_slice(b",\"type\":");
                out.extend_from_slice(arg_type.as_bytes());
            }
        }
        out.push(b'}');
    }
    out.extend_from_slice(args.as_bytes());
    Some(())
}

/// A mined transaction ([`mined_tx_text`]) as a `Value`, for the routes that add to it.
pub fn mined_tx_json(
    tx: &MinedTx,
    events: Option<&[TxEvent]>,
    opts: RenderOptions,
) -> Result<Json, RenderError> {
    let text = mined_tx_text(tx, events, opts)?;
    serde_json::from_str(&text).map_err(|e| RenderError { tx_id: tx.tx_id.clone(), reason: e.to_string() })
}

/// A mempool transaction.
pub fn mempool_tx_json(tx: &MempoolTx, opts: RenderOptions) -> Result<Json, RenderError> {
    let (mut m, tail) = decoded(&tx.tx_id, &tx.raw_tx, tx.contract_abi.as_deref(), opts)?;
    m.insert("tx_status".into(), tx.status.clone().into());
    m.insert("replaced_by_tx_id".into(), tx.replaced_by_tx_id.clone().into());
    m.insert("receipt_time".into(), tx.receipt_time.into());
    m.insert("receipt_time_iso".into(), iso8601(tx.receipt_time as i64).into());
    m.extend(tail);
    Ok(Json::Object(m))
}

/// Either kind.
pub fn any_tx_json(tx: &AnyTx, events: Option<&[TxEvent]>, opts: RenderOptions) -> Result<Json, RenderError> {
    match tx {
        AnyTx::Mined(t) => mined_tx_json(t, events, opts),
        AnyTx::Mempool(t) => mempool_tx_json(t, opts),
    }
}

/// One `TransactionEvent`.
pub fn event_json(e: &TxEvent) -> Json {
    let s = |v: &Option<String>| v.clone().unwrap_or_default();
    let mut m = Map::new();
    m.insert("event_index".into(), e.event_index.into());
    let (event_type, asset_event_type) = match e.kind.as_str() {
        "contract_log" => ("smart_contract_log", ""),
        "stx_lock" => ("stx_lock", ""),
        k => {
            let (family, action) = k.split_once('_').unwrap_or((k, ""));
            let t = match family {
                "stx" => "stx_asset",
                "ft" => "fungible_token_asset",
                _ => "non_fungible_token_asset",
            };
            (t, action)
        }
    };
    m.insert("event_type".into(), event_type.into());
    m.insert("tx_id".into(), e.tx_id.clone().into());
    match event_type {
        "smart_contract_log" => {
            m.insert(
                "contract_log".into(),
                json!({
                    "contract_id": s(&e.contract_identifier),
                    "topic": s(&e.topic),
                    "value": clarity_json(e.value_hex.as_deref().unwrap_or("0x")),
                }),
            );
        }
        "stx_lock" => {
            m.insert(
                "stx_lock_event".into(),
                json!({
                    "locked_amount": s(&e.amount),
                    "unlock_height": e.unlock_height.unwrap_or_default(),
                    "locked_address": s(&e.sender),
                }),
            );
        }
        _ => {
            let mut a = Map::new();
            a.insert("asset_event_type".into(), asset_event_type.into());
            if event_type != "stx_asset" {
                a.insert("asset_id".into(), s(&e.asset_identifier).into());
            }
            a.insert("sender".into(), s(&e.sender).into());
            a.insert("recipient".into(), s(&e.recipient).into());
            if event_type == "non_fungible_token_asset" {
                a.insert("value".into(), clarity_json(e.value_hex.as_deref().unwrap_or("0x")));
            } else {
                a.insert("amount".into(), s(&e.amount).into());
            }
            if let Some(memo) = &e.memo {
                a.insert("memo".into(), memo.clone().into());
            }
            m.insert("asset".into(), Json::Object(a));
        }
    }
    Json::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// realnode-2's `rn2-token` mint (a contract call with two arguments).
    const MINT: &str = "0x80800000000400d4b2c66daa21bf312e219aa08feeef4a25ecd986000000000000000300000000000007d00001a44b69de4c7612fa0682c2b9441c1d3f08e44ab8836ae14ba90060e0a3afa29c0fa1ac1aa364e7b0c273189cebc40a3fac51dc0a62ed3dd3b55196d2fbbebad2030100000000021ad4b2c66daa21bf312e219aa08feeef4a25ecd98609726e322d746f6b656e046d696e7400000002010000000000000000000000003b9aca00051a37c6d598eabdf3e5521ac56532d6125a5937c522";
    const ABI: &str = r#"{"functions":[{"name":"mint","access":"public","args":[
        {"name":"amount","type":"uint128"},{"name":"recipient","type":"principal"}],
        "outputs":{"type":{"response":{"ok":"bool","error":"uint128"}}}}]}"#;

    fn row() -> MinedTx {
        MinedTx {
            tx_id: "0x1ac8709782e11e6f2489b14a0d86cbf63956fd373e1f7324693790071969b1c3".into(),
            raw_tx: MINT.into(),
            block_hash: format!("0x{}", "ab".repeat(32)),
            block_height: 16,
            block_time: 1_700_000_000,
            burn_block_time: 1_700_000_000,
            canonical: true,
            status: "success".into(),
            raw_result: "0x0703".into(),
            ..MinedTx::default()
        }
    }

    #[test]
    fn materialized_parts_render_as_the_decoded_transaction() {
        let computed = row();
        let tx = decode_tx(&computed.tx_id, MINT).unwrap();
        let stored =
            MinedTx { api_json: Some(materialized_json(&tx, &computed.tx_id, false, "0x0703")), ..row() };
        for opts in [RenderOptions::default(), RenderOptions { exclude_function_args: true }] {
            for abi in [None, Some(std::sync::Arc::<str>::from(ABI))] {
                let a = MinedTx { contract_abi: abi.clone(), ..computed.clone() };
                let b = MinedTx { contract_abi: abi, ..stored.clone() };
                assert_eq!(mined_tx_text(&a, None, opts).unwrap(), mined_tx_text(&b, None, opts).unwrap());
            }
        }
        let with_abi = MinedTx { contract_abi: Some(ABI.into()), ..stored };
        let json = mined_tx_json(&with_abi, None, RenderOptions::default()).unwrap();
        // The text is what the Value serializes to: the key order is the incumbent's.
        let text = mined_tx_text(&with_abi, None, RenderOptions::default()).unwrap();
        assert_eq!(serde_json::to_string(&json).unwrap(), text);
        let keys: Vec<&str> = json.as_object().unwrap().keys().map(String::as_str).collect();
        let at = |k: &str| keys.iter().position(|x| *x == k).unwrap();
        assert_eq!(keys[0], "tx_id");
        assert!(at("anchor_mode") + 1 == at("block_hash") && at("events") + 1 == at("tx_type"));
        assert_eq!(json["tx_result"]["repr"], "(ok true)");
        assert_eq!(json["contract_call"]["function_args"][0]["name"], "amount");
        assert_eq!(
            json["contract_call"]["function_signature"],
            "(define-public (mint (amount uint) (recipient principal)))"
        );
        let bare = mined_tx_json(&with_abi, None, RenderOptions { exclude_function_args: true }).unwrap();
        assert!(bare["contract_call"].get("function_args").is_none());
    }

    #[test]
    fn stored_row_texts_serve_as_the_fields_render() {
        let tx = decode_tx("0x01", MINT).unwrap();
        let parts = materialized_json(&tx, &row().tx_id, false, "0x0703");
        let rows = [
            MinedTx { api_json: Some(parts.clone()), ..row() },
            // In a microblock, with a VM error and block fields of every kind.
            MinedTx {
                api_json: Some(parts.clone()),
                microblock_hash: format!("0x{}", "cd".repeat(32)),
                microblock_sequence: Some(3),
                vm_error: Some("x \"y\"\n".into()),
                parent_block_hash: "0x99".into(),
                parent_burn_block_time: 7,
                event_count: 4,
                execution_cost: [1, 2, 3, 4, 5],
                tx_index: 9,
                ..row()
            },
            // Not materialized: derived from the raw bytes.
            row(),
        ];
        for tx in &rows {
            let text = row_text(tx).unwrap();
            assert!(is_row_text(&text) && !is_row_text(&parts), "{text}");
            // The stored text keeps the three parts a v3 summary reads.
            let stored = MinedTx { api_json: Some(text.clone()), ..tx.clone() };
            let computed = MinedTx { api_json: Some(parts.clone()), ..tx.clone() };
            assert_eq!(materialized_parts(&stored), materialized_parts(&computed));
            for canonical in [true, false] {
                for abi in [None, Some(std::sync::Arc::<str>::from(ABI))] {
                    for opts in [RenderOptions::default(), RenderOptions { exclude_function_args: true }] {
                        let mined = MinedTx { canonical, contract_abi: abi.clone(), ..stored.clone() };
                        let listed = ListedTx {
                            tx_id: tx.tx_id.clone(),
                            canonical,
                            contract_abi: abi.clone(),
                            api_json: text.clone(),
                        };
                        let want = mined_tx_text(&mined, None, opts).unwrap();
                        assert_eq!(listed_tx_text(&listed, opts).unwrap(), want);
                        assert_eq!(page_tx_text(&PageTx::Listed(listed), opts).unwrap(), want);
                        assert_eq!(
                            mined_tx_text(&MinedTx { api_json: None, ..mined }, None, opts).unwrap(),
                            want
                        );
                        serde_json::from_str::<Json>(&want).unwrap();
                    }
                }
            }
        }
        // A three-part text is not served as a row text.
        let bad = ListedTx { tx_id: "0x01".into(), api_json: parts, ..ListedTx::default() };
        assert!(listed_tx_text(&bad, RenderOptions::default()).is_err());
    }

    #[test]
    fn string_tokens_end_at_the_unescaped_quote() {
        assert_eq!(string_token(r#""abc",x"#), Some((r#""abc""#, ",x")));
        assert_eq!(string_token(r#""a\"b",x"#), Some((r#""a\"b""#, ",x")));
        assert_eq!(string_token(r#""a\\",x"#), Some((r#""a\\""#, ",x")));
        assert_eq!(string_token(r#""\u0022\\\"""#), Some((r#""\u0022\\\"""#, "")));
        let long = format!("\"0x{}\"}}", "ab".repeat(300));
        assert_eq!(string_token(&long), Some((&long[..long.len() - 1], "}")));
        for bad in [r#"abc""#, r#""abc"#, r#""a\"#, r#""a\""#, r#"""#, ""] {
            assert_eq!(string_token(bad), None, "{bad}");
        }
    }

    #[test]
    fn call_tails_written_from_the_text_equal_the_tree_path() {
        let tree = |tail: &str, abi: &str| {
            let mut t: JsonMap = serde_json::from_str(&format!("{{{tail}}}")).unwrap();
            finish_tail(&mut t, Some(abi), RenderOptions::default());
            members(&t)
        };
        let text = |tail: &str, abi: &str| {
            let mut out = Vec::new();
            write_call_tail(tail, &Arc::from(abi), &mut out).map(|()| String::from_utf8(out).unwrap())
        };
        let tx = decode_tx("0x01", MINT).unwrap();
        let stored = materialized_json(&tx, "0x01", false, "0x0703");
        let mint_tail = stored.splitn(3, '\n').nth(2).unwrap().to_string();
        let call = |name: &str, args: &[(&str, &str)], after: &str| {
            let args: Vec<String> = args
                .iter()
                .map(|(repr, ty)| {
                    let (repr, ty) =
                        (serde_json::to_string(repr).unwrap(), serde_json::to_string(ty).unwrap());
                    format!(r#"{{"hex":"0x0100","repr":{repr},"name":"","type":{ty}}}"#)
                })
                .collect();
            format!(
                r#""tx_type":"contract_call","contract_call":{{"contract_id":"ST1.c\"q","function_name":"{name}","function_signature":"","function_args":[{}]}}{after}"#,
                args.join(",")
            )
        };
        let tricky =
            [("u\"load \\\" \\ \u{e9}\"", "(string-utf8 64)"), ("é ☃ \n\t\"", "uint"), ("]}", "int")];
        let tails = [
            mint_tail,
            call("mint", &tricky[..2], ""),
            call("mint", &tricky, r#","post":{"a":[1,"]"]}"#),
            call("mint", &tricky[..1], ""),
            call("mint", &[], ""),
            call("burn", &tricky, ""),
            call("other", &tricky, ""),
        ];
        let abis = [
            ABI.to_string(),
            // Fewer parameters than arguments, odd names, and `burn` with three.
            r#"{"functions":[{"name":"mint","access":"read_only","args":[{"name":"a \"b\" \\ é","type":{"buffer":{"length":32}}}]},
                {"name":"burn","access":"private","args":[{"name":"x","type":"int128"},{"name":"y","type":"bool"},
                {"name":"z","type":{"list":{"type":"principal","length":5}}}]}]}"#
                .to_string(),
            "not json".to_string(),
        ];
        for tail in &tails {
            for abi in &abis {
                assert_eq!(text(tail, abi).as_deref(), Some(tree(tail, abi).as_str()), "{tail} / {abi}");
            }
        }
        assert!(text(&tails[0], &abis[0]).unwrap().contains(r#""name":"amount","type":"uint""#));
        assert!(text(&tails[5], &abis[1])
            .unwrap()
            .contains(r#""function_signature":"(define-private (burn"#));
        // Other shapes are left to the tree path.
        let signed = tails[1].replace(r#""function_signature":"""#, r#""function_signature":"x""#);
        assert_eq!(text(&signed, &abis[0]), None);
        assert_eq!(text(&tails[1].replace(r#""repr":"#, r#""rep":"#), &abis[0]), None);
        assert_eq!(text(&tails[1][..tails[1].len() - 3], &abis[0]), None);
        assert_eq!(text(r#""tx_type":"token_transfer""#, &abis[0]), None);
    }

    #[test]
    fn a_burnchain_operation_is_served_with_nonce_and_fee_zero() {
        let tx = decode_tx("0x01", MINT).unwrap();
        let text = materialized_json(&tx, "0x01", true, "0x0703");
        let head = text.split('\n').next().unwrap();
        let m: JsonMap = serde_json::from_str(&format!("{{{head}}}")).unwrap();
        assert_eq!(
            (m["tx_id"].as_str(), m["nonce"].as_u64(), m["fee_rate"].as_str()),
            (Some("0x01"), Some(0), Some("0"))
        );
    }
}
