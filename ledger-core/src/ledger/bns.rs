//! BNS (the `bns` boot contract): namespaces and names from a block's `print` events and
//! contract calls, zonefiles and subdomains from `/attachments/new`. Pure: the store writes
//! what this returns, and looks up only what depends on earlier blocks (a name's expiry, the
//! zonefile a renewal keeps).
//!
//! The incumbent's rules, kept as it applies them:
//! * only successful transactions count; a print of either network's `bns` contract is read;
//! * a `name-transfer` print names the sender, the new owner is the recipient of the
//!   `bns::names` NFT transfer of the same name in the same transaction;
//! * a `name-renewal` called without a zonefile prints nothing: it is read from the call's
//!   arguments (owner: the caller, zonefile: the name's last one);
//! * a `namespace-ready` print (`status: "ready"`) is the namespace as served;
//! * a zonefile of a `name-update` lists subdomains as TXT records (`owner=`, `seqn=`,
//!   `parts=`, `zf0=`...; base64 zonefile), the resolver in a URI record named `*resolver*`.

use stacks_codec::clarity::Value;
use stacks_codec::decode_hex;
use stacks_codec::hash::sha256;
use stacks_codec::tx::{Payload, Transaction};

use super::block::DerivedBlock;
use super::Network;

pub const MAINNET_CONTRACT: &str = "SP000000000000000000002Q6VF78.bns";
pub const TESTNET_CONTRACT: &str = "ST000000000000000000002AMW42H.bns";

/// The `bns` contract of `network`.
pub fn contract_of(network: Network) -> &'static str {
    if network.is_mainnet() {
        MAINNET_CONTRACT
    } else {
        TESTNET_CONTRACT
    }
}

/// The asset identifier of BNS names (an NFT).
pub fn names_asset(network: Network) -> String {
    format!("{}::names", contract_of(network))
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamespaceRow {
    pub namespace_id: String,
    pub address: String,
    pub launched_at: i64,
    pub reveal_block: i64,
    pub ready_block: i64,
    /// Comma-separated, as the incumbent stores them.
    pub buckets: String,
    pub base: String,
    pub coeff: String,
    pub nonalpha_discount: String,
    pub no_vowel_discount: String,
    pub lifetime: i64,
    pub status: String,
    pub tx_id: String,
    pub tx_index: i64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameRow {
    /// `name.namespace`.
    pub name: String,
    pub namespace_id: String,
    pub address: String,
    pub registered_at: i64,
    /// Without `0x`; empty for a renewal without one (the store keeps the last zonefile).
    pub zonefile_hash: String,
    pub tx_id: String,
    pub tx_index: i64,
    /// `None` for a renewal read from the call.
    pub event_index: Option<i64>,
    /// The BNS operation (`name-register`, `name-transfer`, ...).
    pub status: String,
    pub microblock_hash: String,
    pub microblock_sequence: Option<i64>,
}

/// A block's BNS rows, in execution order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BnsRows {
    pub namespaces: Vec<NamespaceRow>,
    pub names: Vec<NameRow>,
}

fn utf8(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn field<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    match v {
        Value::Tuple(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
        _ => None,
    }
}

fn buffer(v: Option<&Value>) -> Option<&[u8]> {
    match v? {
        Value::Buffer(b) => Some(b),
        _ => None,
    }
}

fn ascii(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::StringAscii(b) => Some(utf8(b)),
        _ => None,
    }
}

fn uint(v: Option<&Value>) -> Option<u128> {
    match v? {
        Value::UInt(n) => Some(*n),
        _ => None,
    }
}

fn decode(hex: &str) -> Option<Value> {
    Value::deserialize(&decode_hex(hex).ok()?).ok()
}

/// The consensus hex of the `bns::names` token of `name.namespace`.
pub fn name_token_hex(name: &str, namespace: &str) -> String {
    let v = Value::Tuple(vec![
        ("name".into(), Value::Buffer(name.as_bytes().to_vec())),
        ("namespace".into(), Value::Buffer(namespace.as_bytes().to_vec())),
    ]);
    stacks_codec::to_hex_prefixed(&v.serialize())
}

/// `name.namespace` of a `bns::names` token.
pub fn name_of_token(hex: &str) -> Option<String> {
    let v = decode(hex)?;
    Some(format!("{}.{}", utf8(buffer(field(&v, "name"))?), utf8(buffer(field(&v, "namespace"))?)))
}

/// A name print: `{attachment: {hash, metadata: {name, namespace, op, tx-sender}}}`.
struct NamePrint {
    hash: String,
    name: String,
    namespace: String,
    op: String,
    sender: String,
}

fn name_print(v: &Value) -> Option<NamePrint> {
    let attachment = field(v, "attachment")?;
    let meta = field(attachment, "metadata")?;
    let sender = match field(meta, "tx-sender")? {
        Value::Principal(p) => p.to_string(),
        _ => return None,
    };
    Some(NamePrint {
        hash: hex::encode(buffer(field(attachment, "hash"))?),
        name: utf8(buffer(field(meta, "name"))?),
        namespace: utf8(buffer(field(meta, "namespace"))?),
        op: ascii(field(meta, "op"))?,
        sender,
    })
}

fn namespace_print(v: &Value, ready_block: i64, tx_id: &str, tx_index: i64) -> Option<NamespaceRow> {
    let status = ascii(field(v, "status"))?;
    if status != "ready" {
        return None;
    }
    let props = field(v, "properties")?;
    let price = field(props, "price-function")?;
    let launched_at = match field(props, "launched-at")? {
        Value::OptionalSome(n) => uint(Some(n)).unwrap_or(0),
        _ => 0,
    };
    let address = match field(props, "namespace-import")? {
        Value::Principal(p) => p.to_string(),
        _ => return None,
    };
    let buckets = match field(price, "buckets")? {
        Value::List(items) => {
            items.iter().filter_map(|i| uint(Some(i))).map(|n| n.to_string()).collect::<Vec<_>>().join(",")
        }
        _ => return None,
    };
    let n = |k: &str| uint(field(price, k)).map(|n| n.to_string());
    Some(NamespaceRow {
        namespace_id: utf8(buffer(field(v, "namespace"))?),
        address,
        launched_at: launched_at as i64,
        reveal_block: uint(field(props, "revealed-at"))? as i64,
        ready_block,
        buckets,
        base: n("base")?,
        coeff: n("coeff")?,
        nonalpha_discount: n("nonalpha-discount")?,
        no_vowel_discount: n("no-vowel-discount")?,
        lifetime: uint(field(props, "lifetime"))? as i64,
        status,
        tx_id: tx_id.to_string(),
        tx_index,
    })
}

/// A `name-renewal` call of `network`'s contract without a zonefile (its fifth argument
/// `none`): `(namespace, name)`.
fn renewal_without_zonefile(raw_tx: &str, network: Network) -> Option<(String, String)> {
    let tx = Transaction::deserialize(&decode_hex(raw_tx).ok()?).ok()?;
    let Payload::ContractCall { contract, function_name, function_args } = tx.payload else { return None };
    if function_name != "name-renewal" || contract.to_string() != contract_of(network) {
        return None;
    }
    match function_args.as_slice() {
        [Value::Buffer(ns), Value::Buffer(name), _, _, Value::OptionalNone] => Some((utf8(ns), utf8(name))),
        _ => None,
    }
}

/// The BNS rows of a block (`d`, derived from its `/new_block`).
pub fn derive(d: &DerivedBlock, network: Network) -> BnsRows {
    let mut out = BnsRows::default();
    let height = d.block.block_height;
    let asset = names_asset(network);
    for tx in d.txs.iter().filter(|t| t.status == "success") {
        if tx.tx_type == "contract_call" {
            if let Some((namespace, name)) = renewal_without_zonefile(&tx.raw_tx, network) {
                out.names.push(NameRow {
                    name: format!("{name}.{namespace}"),
                    namespace_id: namespace,
                    address: tx.sender_address.clone(),
                    registered_at: height,
                    zonefile_hash: String::new(),
                    tx_id: tx.tx_id.clone(),
                    tx_index: tx.tx_index,
                    event_index: None,
                    status: "name-renewal".into(),
                    microblock_hash: tx.microblock_hash.clone(),
                    microblock_sequence: tx.microblock_sequence,
                });
            }
        }
        let events = d.events.iter().filter(|e| e.tx_id == tx.tx_id);
        for e in events.clone() {
            let bns = matches!(e.contract_identifier.as_deref(), Some(MAINNET_CONTRACT | TESTNET_CONTRACT));
            if e.kind != "contract_log" || e.topic.as_deref() != Some("print") || !bns {
                continue;
            }
            let Some(v) = e.value_hex.as_deref().and_then(decode) else { continue };
            if let Some(p) = name_print(&v) {
                let mut address = p.sender;
                if p.op == "name-transfer" {
                    let token = name_token_hex(&p.name, &p.namespace);
                    if let Some(t) = events.clone().find(|t| {
                        t.kind == "nft_transfer"
                            && t.asset_identifier.as_deref() == Some(asset.as_str())
                            && t.value_hex.as_deref() == Some(token.as_str())
                    }) {
                        address = t.recipient.clone().unwrap_or(address);
                    }
                }
                out.names.push(NameRow {
                    name: format!("{}.{}", p.name, p.namespace),
                    namespace_id: p.namespace,
                    address,
                    registered_at: height,
                    zonefile_hash: p.hash,
                    tx_id: tx.tx_id.clone(),
                    tx_index: tx.tx_index,
                    event_index: Some(e.event_index),
                    status: p.op,
                    microblock_hash: tx.microblock_hash.clone(),
                    microblock_sequence: tx.microblock_sequence,
                });
            }
            if let Some(ns) = namespace_print(&v, height, &tx.tx_id, tx.tx_index) {
                out.namespaces.push(ns);
            }
        }
    }
    out
}

/// A BNS zonefile attachment (`/attachments/new`), decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZonefileAttachment {
    pub op: String,
    pub name: String,
    pub namespace: String,
    /// The zonefile's text.
    pub zonefile: String,
    /// Without `0x`.
    pub zonefile_hash: String,
    pub tx_id: String,
    pub index_block_hash: String,
    pub block_height: i64,
}

/// The attachment of a `bns` contract, or `None` (another contract's, or malformed metadata).
pub fn attachment(a: &crate::events::payload::Attachment) -> Option<ZonefileAttachment> {
    if a.contract_id != MAINNET_CONTRACT && a.contract_id != TESTNET_CONTRACT {
        return None;
    }
    let meta = decode(&a.metadata)?;
    let content = decode_hex(&a.content).unwrap_or_default();
    Some(ZonefileAttachment {
        op: ascii(field(&meta, "op"))?,
        name: utf8(buffer(field(&meta, "name"))?),
        namespace: utf8(buffer(field(&meta, "namespace"))?),
        zonefile: utf8(&content),
        zonefile_hash: strip_0x(&a.content_hash).to_string(),
        tx_id: super::normalize_hex(&a.tx_id),
        index_block_hash: super::normalize_hex(&a.index_block_hash),
        block_height: i64::try_from(a.block_height).unwrap_or(i64::MAX),
    })
}

/// The incumbent's zonefile hashes have no `0x`.
pub fn strip_0x(h: &str) -> &str {
    h.strip_prefix("0x").unwrap_or(h)
}

/// A subdomain listed in a name's zonefile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubdomainEntry {
    /// The first label (`alice` of `alice.name.btc`).
    pub label: String,
    pub owner: String,
    pub zonefile: String,
    pub zonefile_hash: String,
    pub resolver: String,
}

/// One record of a zonefile: its owner name, type and data (quoted strings unquoted).
struct Record {
    name: String,
    kind: String,
    data: Vec<String>,
}

/// Splits a line into tokens; a quoted string is one token (without its quotes).
fn tokens(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = line.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c == ';' {
            break;
        } else if c == '"' {
            chars.next();
            let mut s = String::new();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => s.extend(chars.next()),
                    '"' => break,
                    c => s.push(c),
                }
            }
            out.push(s);
        } else {
            let mut s = String::new();
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() {
                    break;
                }
                s.push(c);
                chars.next();
            }
            out.push(s);
        }
    }
    out
}

/// The TXT and URI records of a zonefile (`$` directives and other types are skipped).
fn records(zonefile: &str) -> Vec<Record> {
    let mut out = Vec::new();
    for line in zonefile.lines() {
        let t = tokens(line);
        let Some(first) = t.first() else { continue };
        if first.starts_with('$') {
            continue;
        }
        let Some(at) = t.iter().position(|x| x == "TXT" || x == "URI") else { continue };
        if at == 0 {
            continue;
        }
        out.push(Record { name: first.clone(), kind: t[at].clone(), data: t[at + 1..].to_vec() });
    }
    out
}

/// Node's lenient base64: characters outside the alphabet are skipped, decoding stops at `=`.
fn base64_lenient(s: &str) -> Vec<u8> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' | b'-' => Some(62),
        b'/' | b'_' => Some(63),
        _ => None,
    };
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in s.bytes().take_while(|c| *c != b'=') {
        let Some(v) = val(c) else { continue };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}

/// The subdomains of a name's zonefile, as the incumbent reads them: TXT records with an
/// `owner`; each entry's value is what follows its first `=` up to the next one; the
/// zonefile's hash is the last 16 bytes of the SHA-256 of the decoded `zf*` parts.
pub fn subdomains(zonefile: &str) -> Vec<SubdomainEntry> {
    let recs = records(zonefile);
    // The last resolver record wins, as in the incumbent's loop.
    let resolver = recs
        .iter()
        .rev()
        .filter(|r| r.kind == "URI" && r.name.contains("resolver"))
        .find_map(|r| r.data.last().cloned())
        .unwrap_or_default();
    let mut out = Vec::new();
    for r in recs.iter().filter(|r| r.kind == "TXT") {
        let (mut owner, mut encoded) = (String::new(), String::new());
        for entry in &r.data {
            let mut parts = entry.split('=');
            let key = parts.next().unwrap_or_default();
            let value = parts.next().unwrap_or_default();
            if key == "owner" {
                owner = value.to_string();
            } else if key.starts_with("zf") {
                encoded.push_str(value);
            }
        }
        if owner.is_empty() {
            continue;
        }
        let bytes = base64_lenient(&encoded);
        out.push(SubdomainEntry {
            label: r.name.clone(),
            owner,
            // Node's `ascii` decoding drops each byte's high bit.
            zonefile: bytes.iter().map(|b| char::from(b & 0x7f)).collect(),
            zonefile_hash: hex::encode(&sha256(&bytes)[16..]),
            resolver: resolver.clone(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_tokens_round_trip() {
        let hex = name_token_hex("lett", "btc");
        assert_eq!(hex, "0x0c00000002046e616d6502000000046c657474096e616d6573706163650200000003627463");
        assert_eq!(name_of_token(&hex).as_deref(), Some("lett.btc"));
    }

    #[test]
    fn subdomains_are_the_txt_records_with_an_owner() {
        // zf0 = base64("$ORIGIN alice\n"), padded: the padding is dropped as the incumbent does.
        let zf = "$ORIGIN alice.id\n$TTL 3600\n_resolver IN URI 10 1 \"https://r.example\"\n\
                  alice TXT \"owner=SP2ZNGJ85ENDY6QRHQ5P2D4FXKGZWCKTB2T0Z55KS\" \"seqn=0\" \"parts=1\" \"zf0=JE9SSUdJTiBhbGljZQo=\"\n\
                  nobody TXT \"seqn=0\"\n";
        let subs = subdomains(zf);
        assert_eq!(subs.len(), 1);
        let s = &subs[0];
        assert_eq!(s.label, "alice");
        assert_eq!(s.owner, "SP2ZNGJ85ENDY6QRHQ5P2D4FXKGZWCKTB2T0Z55KS");
        assert_eq!(s.zonefile, "$ORIGIN alice\n");
        assert_eq!(s.zonefile_hash, hex::encode(&sha256(b"$ORIGIN alice\n")[16..]));
        assert_eq!(s.resolver, "https://r.example");
    }

    fn print(op: &str, name: &str, sender: &str) -> String {
        let meta = Value::Tuple(vec![
            ("name".into(), Value::Buffer(name.as_bytes().to_vec())),
            ("namespace".into(), Value::Buffer(b"btc".to_vec())),
            ("op".into(), Value::StringAscii(op.as_bytes().to_vec())),
            ("tx-sender".into(), Value::Principal(sender.parse().unwrap())),
        ]);
        let v = Value::Tuple(vec![(
            "attachment".into(),
            Value::Tuple(vec![("hash".into(), Value::Buffer(vec![0xab; 20])), ("metadata".into(), meta)]),
        )]);
        stacks_codec::to_hex_prefixed(&v.serialize())
    }

    #[test]
    fn a_transfer_takes_its_owner_from_the_nft_transfer() {
        use crate::ledger::rows::{EventRow, TxRow};
        let (a, b) =
            ("SP2ZNGJ85ENDY6QRHQ5P2D4FXKGZWCKTB2T0Z55KS", "SP3ER778NR74PN9265E607J4X6M8ECMAT982QHC4K");
        let mut d = DerivedBlock::default();
        d.block.block_height = 7;
        d.txs = vec![
            TxRow { tx_id: "0x01".into(), tx_index: 0, status: "success".into(), ..TxRow::default() },
            TxRow {
                tx_id: "0x02".into(),
                tx_index: 1,
                status: "abort_by_response".into(),
                ..TxRow::default()
            },
        ];
        let log = |tx: &str, i, value: String| EventRow {
            tx_id: tx.into(),
            event_index: i,
            kind: "contract_log".into(),
            contract_identifier: Some(MAINNET_CONTRACT.into()),
            topic: Some("print".into()),
            value_hex: Some(value),
            ..EventRow::default()
        };
        d.events = vec![
            EventRow {
                tx_id: "0x01".into(),
                event_index: 0,
                kind: "nft_transfer".into(),
                asset_identifier: Some(names_asset(Network::Mainnet)),
                value_hex: Some(name_token_hex("lett", "btc")),
                recipient: Some(b.into()),
                ..EventRow::default()
            },
            log("0x01", 1, print("name-transfer", "lett", a)),
            log("0x02", 0, print("name-register", "fail", a)),
        ];
        let rows = derive(&d, Network::Mainnet);
        assert_eq!(rows.names.len(), 1, "a failed transaction counts for nothing");
        let n = &rows.names[0];
        assert_eq!(
            (n.name.as_str(), n.address.as_str(), n.status.as_str()),
            ("lett.btc", b, "name-transfer")
        );
        assert_eq!((n.registered_at, n.event_index, n.zonefile_hash.len()), (7, Some(1), 40));
    }

    #[test]
    fn lenient_base64_skips_junk_and_stops_at_padding() {
        assert_eq!(base64_lenient("aGk="), b"hi");
        assert_eq!(base64_lenient("aG\nk"), b"hi");
        assert_eq!(base64_lenient("aGk=aGk="), b"hi");
    }
}
