//! The eight BNS routes end to end over a generated chain with BNS traffic (`--bns-per-mille`)
//! and forks: namespaces launched with imports, names registered, updated (zonefiles listing
//! subdomains), transferred, renewed and revoked, each followed by the `/attachments/new` the
//! node posts. Ingested one event at a time; just before each reorg and once it is complete
//! (its attachments in), and at the tip, every route's answer — each name, subdomain, zonefile
//! (latest and by hash), namespace, page and owner, the 404s, a redirect — is compared with the
//! state recomputed here from the generated chain's own record: the `/new_block` payloads and
//! attachments as they arrived, by the incumbent's rules (its `updateNames`,
//! `updateAttachments` and BNS queries), never from the store. A registration orphaned by a
//! reorg must answer before the reorg and 404 after it. On SQLite and PostgreSQL.

mod common;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::convert::Infallible;
use std::sync::Arc;

use common::{devnet_events, Db, TestStore};
use serde_json::{json, Value};
use stacks_codec::clarity::Value as Cv;
use stacks_codec::decode_hex;
use stacks_codec::tx::{Payload, Transaction};
use stacks_devnet::DevnetConfig;
use stacks_ledger::events::RawEvent;
use stacks_ledger::ledger::Network;
use warp::{Filter, Reply};

const BNS: &str = "ST000000000000000000002AMW42H.bns";
const NAMES_ASSET: &str = "ST000000000000000000002AMW42H.bns::names";

async fn get<F, R>(api: &F, path: &str) -> (u16, Option<String>, Value)
where
    F: Filter<Extract = (R,), Error = Infallible> + Clone + Send + Sync + 'static,
    R: Reply + Send,
{
    let res = warp::test::request().path(path).reply(api).await;
    let location = res.headers().get("location").map(|v| v.to_str().unwrap().to_string());
    (res.status().as_u16(), location, serde_json::from_slice(res.body()).unwrap_or(Value::Null))
}

fn clarity(hex: &str) -> Cv {
    Cv::deserialize(&decode_hex(hex).unwrap()).unwrap()
}

fn field<'a>(v: &'a Cv, k: &str) -> &'a Cv {
    match v {
        Cv::Tuple(f) => &f.iter().find(|(n, _)| n == k).unwrap_or_else(|| panic!("no {k}")).1,
        other => panic!("not a tuple: {other:?}"),
    }
}

fn text(v: &Cv) -> String {
    match v {
        Cv::Buffer(b) | Cv::StringAscii(b) => String::from_utf8(b.clone()).unwrap(),
        other => panic!("not bytes: {other:?}"),
    }
}

fn uint(v: &Cv) -> u64 {
    match v {
        Cv::UInt(n) => *n as u64,
        other => panic!("not a uint: {other:?}"),
    }
}

/// Minimal standard base64 decoding (the subdomain `zf0` values).
fn unbase64(s: &str) -> Vec<u8> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("base64 {c}"),
    };
    let (mut out, mut acc, mut bits) = (Vec::new(), 0u32, 0);
    for c in s.bytes().take_while(|c| *c != b'=') {
        acc = acc << 6 | u32::from(val(c));
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}

#[derive(Debug, Clone)]
struct NameRow {
    name: String,
    namespace: String,
    address: String,
    registered_at: u64,
    expire_block: u64,
    hash: String,
    tx_id: String,
    tx_index: u64,
    event_index: i64,
    status: String,
    ibh: String,
}

impl NameRow {
    fn order(&self) -> (u64, u64, i64) {
        (self.registered_at, self.tx_index, self.event_index)
    }
}

#[derive(Debug, Clone)]
struct NamespaceRow {
    namespace: String,
    lifetime: u64,
    ready_block: u64,
    tx_index: u64,
    ibh: String,
}

#[derive(Debug, Clone)]
struct SubRow {
    fqs: String,
    parent: String,
    owner: String,
    hash: String,
    block_height: u64,
    tx_index: u64,
    resolver: String,
    tx_id: String,
    ibh: String,
}

/// The blocks and BNS rows seen so far, as the incumbent's tables would hold them.
#[derive(Default)]
struct Model {
    blocks: HashMap<String, Value>,
    tip: Option<(u64, String)>,
    names: Vec<NameRow>,
    namespaces: Vec<NamespaceRow>,
    subs: Vec<SubRow>,
    /// `(name, zonefile hash, tx, block)` → zonefile.
    zonefiles: BTreeMap<(String, String, String, String), String>,
}

impl Model {
    fn chain_from(&self, tip: Option<&str>) -> Vec<&Value> {
        let mut out = Vec::new();
        let mut at = tip.map(String::from);
        while let Some(b) = at.and_then(|h| self.blocks.get(&h)) {
            out.push(b);
            at = b["parent_index_block_hash"].as_str().map(String::from);
        }
        out.reverse();
        out
    }

    fn canonical_set(&self, tip: Option<&str>) -> BTreeSet<String> {
        self.chain_from(tip).iter().map(|b| b["index_block_hash"].as_str().unwrap().to_string()).collect()
    }

    fn canonical(&self) -> BTreeSet<String> {
        self.canonical_set(self.tip.as_ref().map(|t| t.1.as_str()))
    }

    /// Whether `b` reorganizes: it overtakes the tip from another branch.
    fn reorgs(&self, b: &Value) -> bool {
        let height = b["block_height"].as_u64().unwrap();
        match &self.tip {
            Some((h, t)) => height > *h && b["parent_index_block_hash"].as_str() != Some(t),
            None => false,
        }
    }

    /// A `/new_block`: its BNS rows as the store writes them, lookups seeing the rows canonical
    /// at that moment (for an overtaking block, its own branch restored first).
    fn add_block(&mut self, b: Value) {
        let ibh = b["index_block_hash"].as_str().unwrap().to_string();
        let height = b["block_height"].as_u64().unwrap();
        let parent = b["parent_index_block_hash"].as_str().unwrap().to_string();
        let canonical_now = self.tip.as_ref().is_none_or(|t| height > t.0);
        let mut visible = if canonical_now { self.canonical_set(Some(&parent)) } else { self.canonical() };
        if canonical_now {
            visible.insert(ibh.clone());
        }
        self.blocks.insert(ibh.clone(), b.clone());
        if canonical_now {
            self.tip = Some((height, ibh.clone()));
        }
        if height == 0 {
            return;
        }
        let (namespaces, names) = derive(&b);
        self.namespaces.extend(namespaces);
        for mut n in names {
            let lifetime = self
                .namespaces
                .iter()
                .filter(|r| r.namespace == n.namespace && visible.contains(&r.ibh))
                .max_by_key(|r| (r.ready_block, r.tx_index))
                .map(|r| r.lifetime);
            n.expire_block = lifetime.map_or(0, |l| n.registered_at + l);
            let last = self
                .names
                .iter()
                .filter(|r| r.name == n.name && visible.contains(&r.ibh))
                .max_by_key(|r| r.order())
                .cloned();
            if n.status == "name-transfer" {
                if let Some(l) = &last {
                    n.expire_block = l.expire_block;
                }
            }
            let mut zonefile = String::new();
            if n.hash.is_empty() {
                if let Some(l) = &last {
                    zonefile = self.zonefiles
                        [&(l.name.clone(), l.hash.clone(), l.tx_id.clone(), l.ibh.clone())]
                        .clone();
                    n.hash = l.hash.clone();
                }
            }
            self.zonefiles.insert((n.name.clone(), n.hash.clone(), n.tx_id.clone(), ibh.clone()), zonefile);
            self.names.push(n);
        }
    }

    /// An `/attachments/new`: the zonefiles, and the subdomains of an update's zonefile.
    fn add_attachments(&mut self, list: &Value) {
        for a in list.as_array().unwrap() {
            assert_eq!(a["contract_id"], BNS);
            let meta = clarity(a["metadata"].as_str().unwrap());
            let fqn = format!("{}.{}", text(field(&meta, "name")), text(field(&meta, "namespace")));
            let content = String::from_utf8(decode_hex(a["content"].as_str().unwrap()).unwrap()).unwrap();
            let hash = a["content_hash"].as_str().unwrap().trim_start_matches("0x").to_string();
            let (tx_id, ibh) = (
                a["tx_id"].as_str().unwrap().to_string(),
                a["index_block_hash"].as_str().unwrap().to_string(),
            );
            if text(field(&meta, "op")) == "name-update" {
                let block = &self.blocks[&ibh];
                let tx_index = block["transactions"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|t| t["txid"] == tx_id.as_str())
                    .unwrap()["tx_index"]
                    .as_u64()
                    .unwrap();
                let resolver = content
                    .lines()
                    .find(|l| l.starts_with("_resolver"))
                    .map(|l| l.split('"').nth(1).unwrap().to_string())
                    .unwrap_or_default();
                for line in content.lines().filter(|l| l.contains("\tTXT\t")) {
                    let label = line.split('\t').next().unwrap();
                    let value = |k: &str| {
                        line.split('"').find_map(|p| p.strip_prefix(&format!("{k}="))).unwrap().to_string()
                    };
                    let sub_zonefile = unbase64(&value("zf0"));
                    let fqs = format!("{label}.{fqn}");
                    let sub_hash = hex::encode(&stacks_codec::hash::sha256(&sub_zonefile)[16..]);
                    self.zonefiles.insert(
                        (fqs.clone(), sub_hash.clone(), tx_id.clone(), ibh.clone()),
                        String::from_utf8(sub_zonefile).unwrap(),
                    );
                    self.subs.push(SubRow {
                        fqs,
                        parent: fqn.clone(),
                        owner: value("owner"),
                        hash: sub_hash,
                        block_height: a["block_height"].as_u64().unwrap(),
                        tx_index,
                        resolver: resolver.clone(),
                        tx_id: tx_id.clone(),
                        ibh: ibh.clone(),
                    });
                }
            }
            self.zonefiles.insert((fqn, hash, tx_id, ibh), content);
        }
    }
}

/// A block's namespace and name rows (expiry and carried zonefiles left to the model).
fn derive(b: &Value) -> (Vec<NamespaceRow>, Vec<NameRow>) {
    let ibh = b["index_block_hash"].as_str().unwrap().to_string();
    let height = b["block_height"].as_u64().unwrap();
    let (mut namespaces, mut names) = (Vec::new(), Vec::new());
    for t in b["transactions"].as_array().unwrap().iter().filter(|t| t["status"] == "success") {
        let tx_id = t["txid"].as_str().unwrap().to_string();
        let tx_index = t["tx_index"].as_u64().unwrap();
        let tx = Transaction::deserialize(&decode_hex(t["raw_tx"].as_str().unwrap()).unwrap()).unwrap();
        if let Payload::ContractCall { contract, function_name, function_args } = &tx.payload {
            if contract.to_string() == BNS
                && function_name == "name-renewal"
                && function_args[4] == Cv::OptionalNone
            {
                let (ns, name) = (text(&function_args[0]), text(&function_args[1]));
                names.push(NameRow {
                    name: format!("{name}.{ns}"),
                    namespace: ns,
                    address: tx.origin_address().to_c32(),
                    registered_at: height,
                    expire_block: 0,
                    hash: String::new(),
                    tx_id: tx_id.clone(),
                    tx_index,
                    event_index: -1,
                    status: "name-renewal".into(),
                    ibh: ibh.clone(),
                });
            }
        }
        let events: Vec<&Value> =
            b["events"].as_array().unwrap().iter().filter(|e| e["txid"] == tx_id.as_str()).collect();
        for e in &events {
            let c = &e["contract_event"];
            if e["type"] != "contract_event" || c["contract_identifier"] != BNS {
                continue;
            }
            let v = clarity(c["raw_value"].as_str().unwrap());
            let Cv::Tuple(top) = &v else { panic!() };
            if top.iter().any(|(k, _)| k == "status") {
                let props = field(&v, "properties");
                namespaces.push(NamespaceRow {
                    namespace: text(field(&v, "namespace")),
                    lifetime: uint(field(props, "lifetime")),
                    ready_block: height,
                    tx_index,
                    ibh: ibh.clone(),
                });
                continue;
            }
            let a = field(&v, "attachment");
            let meta = field(a, "metadata");
            let (name, ns, op) =
                (text(field(meta, "name")), text(field(meta, "namespace")), text(field(meta, "op")));
            let Cv::Principal(sender) = field(meta, "tx-sender") else { panic!() };
            let mut address = sender.to_string();
            if op == "name-transfer" {
                let token = stacks_codec::to_hex_prefixed(
                    &Cv::Tuple(vec![
                        ("name".into(), Cv::Buffer(name.clone().into_bytes())),
                        ("namespace".into(), Cv::Buffer(ns.clone().into_bytes())),
                    ])
                    .serialize(),
                );
                let moved = events
                    .iter()
                    .find(|t| {
                        t["type"] == "nft_transfer_event"
                            && t["nft_transfer_event"]["asset_identifier"] == NAMES_ASSET
                            && t["nft_transfer_event"]["raw_value"] == token.as_str()
                    })
                    .expect("a transfer moves the name's NFT");
                address = moved["nft_transfer_event"]["recipient"].as_str().unwrap().to_string();
            }
            let Cv::Buffer(hash) = field(a, "hash") else { panic!() };
            names.push(NameRow {
                name: format!("{name}.{ns}"),
                namespace: ns,
                address,
                registered_at: height,
                expire_block: 0,
                hash: hex::encode(hash),
                tx_id: tx_id.clone(),
                tx_index,
                event_index: e["event_index"].as_i64().unwrap(),
                status: op,
                ibh: ibh.clone(),
            });
        }
    }
    (namespaces, names)
}

/// The answers the routes must give, from the model's canonical rows.
struct Expected<'a> {
    m: &'a Model,
    canonical: BTreeSet<String>,
}

impl Expected<'_> {
    fn latest(&self, name: &str) -> Option<&NameRow> {
        self.m
            .names
            .iter()
            .filter(|r| r.name == name && self.canonical.contains(&r.ibh))
            .max_by_key(|r| r.order())
    }

    fn live(&self, name: &str) -> bool {
        self.latest(name).is_some_and(|r| r.status != "name-revoke")
    }

    fn all_names(&self) -> BTreeSet<String> {
        self.m.names.iter().filter(|r| self.canonical.contains(&r.ibh)).map(|r| r.name.clone()).collect()
    }

    fn sub_rows(&self, fqs: &str) -> Vec<&SubRow> {
        let mut rows: Vec<&SubRow> =
            self.m.subs.iter().filter(|s| s.fqs == fqs && self.canonical.contains(&s.ibh)).collect();
        rows.sort_by_key(|s| std::cmp::Reverse((s.block_height, s.tx_index)));
        rows
    }

    fn subdomains_of(&self, name: &str) -> Vec<String> {
        if !self.live(name) {
            return Vec::new();
        }
        let set: BTreeSet<String> = self
            .m
            .subs
            .iter()
            .filter(|s| s.parent == name && self.canonical.contains(&s.ibh))
            .map(|s| s.fqs.clone())
            .collect();
        set.into_iter().collect()
    }

    fn zonefile(&self, key: (&str, &str, &str, &str)) -> Option<&String> {
        self.m.zonefiles.get(&(key.0.to_string(), key.1.to_string(), key.2.to_string(), key.3.to_string()))
    }

    /// `bns::names` owners on the canonical chain.
    fn name_owners(&self) -> BTreeMap<String, String> {
        let mut owners = BTreeMap::new();
        for b in self.m.chain_from(self.m.tip.as_ref().map(|t| t.1.as_str())) {
            let ok: BTreeSet<&str> = b["transactions"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|t| t["status"] == "success")
                .map(|t| t["txid"].as_str().unwrap())
                .collect();
            for e in b["events"].as_array().unwrap() {
                if !ok.contains(e["txid"].as_str().unwrap()) || e["committed"] != true {
                    continue;
                }
                for kind in ["nft_mint_event", "nft_transfer_event"] {
                    let n = &e[kind];
                    if e["type"] == kind && n["asset_identifier"] == NAMES_ASSET {
                        let v = clarity(n["raw_value"].as_str().unwrap());
                        let name = format!("{}.{}", text(field(&v, "name")), text(field(&v, "namespace")));
                        owners.insert(name, n["recipient"].as_str().unwrap().to_string());
                    }
                }
            }
        }
        owners
    }
}

/// Checks every route against the model; returns how many answers were compared.
async fn check<F, R>(api: &F, m: &Model, label: &str) -> usize
where
    F: Filter<Extract = (R,), Error = Infallible> + Clone + Send + Sync + 'static,
    R: Reply + Send,
{
    let x = Expected { m, canonical: m.canonical() };
    let mut n = 0;
    let all = x.all_names();
    assert!(
        all.iter().all(|name| x.latest(name).unwrap().registered_at != 1),
        "nothing reads as a genesis import"
    );

    // /v1/names and its pages.
    let live: Vec<String> = all.iter().filter(|k| x.live(k)).cloned().collect();
    for page in 0..=live.len() / 100 + 1 {
        let want: Vec<&String> = live.iter().skip(page * 100).take(100).collect();
        let got = get(api, &format!("/v1/names?page={page}")).await;
        if want.is_empty() && page > 0 {
            assert_eq!(
                (got.0, got.2["error"].as_str()),
                (500, Some("Invalid page")),
                "{label} names page {page}"
            );
        } else {
            assert_eq!((got.0, got.2), (200, json!(want)), "{label} names page {page}");
        }
        n += 1;
    }

    for name in &all {
        let r = x.latest(name).unwrap();
        let (code, _, body) = get(api, &format!("/v1/names/{name}")).await;
        if !x.live(name) {
            assert_eq!(
                (code, body),
                (404, json!({ "error": format!("cannot find name {name}") })),
                "{label}"
            );
            let (code, _, _) = get(api, &format!("/v1/names/{name}/zonefile")).await;
            assert_eq!(code, 404, "{label} {name}");
            assert_eq!(
                get(api, &format!("/v1/names/{name}/subdomains")).await.2,
                json!([]),
                "{label} {name}"
            );
            n += 3;
            continue;
        }
        let zonefile =
            x.zonefile((name, &r.hash, &r.tx_id, &r.ibh)).expect("every name row has its zonefile row");
        let want = json!({
            "address": r.address, "blockchain": "stacks", "expire_block": r.expire_block,
            "last_txid": r.tx_id, "status": r.status, "zonefile": zonefile, "zonefile_hash": r.hash,
        });
        assert_eq!((code, body), (200, want), "{label} {name}");
        // The latest zonefile is the latest row's; each historical one by its hash.
        let got = get(api, &format!("/v1/names/{name}/zonefile")).await;
        assert_eq!((got.0, got.2), (200, json!({ "zonefile": zonefile })), "{label} {name} zonefile");
        let mut by_hash: BTreeMap<&str, (u64, u64, &str)> = BTreeMap::new();
        for row in m.names.iter().filter(|w| &w.name == name && x.canonical.contains(&w.ibh)) {
            for ((zn, zh, zt, zb), text) in &m.zonefiles {
                if zn == name && *zt == row.tx_id && *zb == row.ibh {
                    let e = by_hash.entry(zh.as_str()).or_insert((0, 0, text.as_str()));
                    if (row.registered_at, row.tx_index) >= (e.0, e.1) {
                        *e = (row.registered_at, row.tx_index, text.as_str());
                    }
                }
            }
        }
        for (hash, (_, _, text)) in &by_hash {
            let got = get(api, &format!("/v1/names/{name}/zonefile/{hash}")).await;
            assert_eq!((got.0, got.2), (200, json!({ "zonefile": text })), "{label} {name} zonefile {hash}");
        }
        let got = get(api, &format!("/v1/names/{name}/zonefile/{}", "ab".repeat(20))).await;
        assert_eq!((got.0, got.2), (404, json!({ "error": "No such name or zonefile" })), "{label} {name}");
        let subs = x.subdomains_of(name);
        assert_eq!(get(api, &format!("/v1/names/{name}/subdomains")).await.2, json!(subs), "{label} {name}");
        n += 5 + by_hash.len();
        for fqs in &subs {
            let s = x.sub_rows(fqs)[0];
            let zf = x.zonefile((fqs, &s.hash, &s.tx_id, &s.ibh)).unwrap();
            let want = json!({
                "address": s.owner, "blockchain": "stacks", "last_txid": s.tx_id, "resolver": s.resolver,
                "status": "registered_subdomain", "zonefile": zf, "zonefile_hash": s.hash,
            });
            assert_eq!(get(api, &format!("/v1/names/{fqs}")).await.2, want, "{label} {fqs}");
            let got = get(api, &format!("/v1/names/{fqs}/zonefile")).await;
            assert_eq!((got.0, got.2), (200, json!({ "zonefile": zf })), "{label} {fqs} zonefile");
            let got = get(api, &format!("/v1/names/{fqs}/zonefile/{}", s.hash)).await;
            assert_eq!((got.0, got.2), (200, json!({ "zonefile": zf })), "{label} {fqs} zonefile by hash");
            n += 3;
        }
        // An unknown subdomain of a name with a resolver is redirected to it.
        let resolver = m
            .subs
            .iter()
            .filter(|s| &s.parent == name && x.canonical.contains(&s.ibh))
            .max_by_key(|s| (s.block_height, s.tx_index))
            .map(|s| s.resolver.clone());
        let (code, location, body) = get(api, &format!("/v1/names/nobody.{name}?q=1")).await;
        match resolver {
            Some(r) => assert_eq!(
                (code, location),
                (302, Some(format!("{r}/v1/names/nobody.{name}?q=1"))),
                "{label}"
            ),
            None => assert_eq!(
                (code, body),
                (404, json!({ "error": format!("cannot find subdomain nobody.{name}") })),
                "{label}"
            ),
        }
        n += 1;
    }
    assert_eq!(get(api, "/v1/names/nothing.btc").await.0, 404);

    // Namespaces and their names, page by page (a page is cut before revoked names leave it).
    let namespaces: BTreeSet<String> =
        m.namespaces.iter().filter(|r| x.canonical.contains(&r.ibh)).map(|r| r.namespace.clone()).collect();
    assert_eq!(get(api, "/v1/namespaces").await.2, json!({ "namespaces": namespaces }), "{label}");
    for ns in &namespaces {
        let in_ns: Vec<&String> = all.iter().filter(|k| x.latest(k).unwrap().namespace == *ns).collect();
        for page in 0..=in_ns.len() / 100 + 1 {
            let want: Vec<&&String> = in_ns.iter().skip(page * 100).take(100).filter(|k| x.live(k)).collect();
            let got = get(api, &format!("/v1/namespaces/{ns}/names?page={page}")).await;
            if want.is_empty() && page > 0 {
                assert_eq!(
                    (got.0, got.2["error"].as_str()),
                    (500, Some("Invalid page")),
                    "{label} {ns} {page}"
                );
            } else {
                assert_eq!((got.0, got.2), (200, json!(want)), "{label} {ns} page {page}");
            }
            n += 1;
        }
    }
    let got = get(api, "/v1/namespaces/nosuch/names").await;
    assert_eq!((got.0, got.2["error"].as_str()), (500, Some("No such namespace")), "{label}");

    // Names and subdomains by owner.
    let owners = x.name_owners();
    let mut by_owner: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (name, owner) in &owners {
        if x.live(name) {
            by_owner.entry(owner.clone()).or_default().insert(name.clone());
        }
    }
    for s in m.subs.iter().filter(|s| x.canonical.contains(&s.ibh) && x.live(&s.parent)) {
        by_owner.entry(s.owner.clone()).or_default().insert(s.fqs.clone());
    }
    let addresses: BTreeSet<String> =
        owners.values().cloned().chain(m.subs.iter().map(|s| s.owner.clone())).collect();
    for a in &addresses {
        let want: Vec<String> = by_owner.get(a).cloned().unwrap_or_default().into_iter().collect();
        assert_eq!(
            get(api, &format!("/v1/addresses/stacks/{a}")).await.2,
            json!({ "names": want }),
            "{label} {a}"
        );
        n += 1;
    }
    n
}

async fn bns_routes_follow_the_chain(db: Db) {
    let cfg = DevnetConfig {
        seed: 3,
        blocks: 70,
        txs_per_block: 10,
        accounts: 150,
        reward_maturity: 10,
        forks: true,
        bns_per_mille: 600,
        ..DevnetConfig::default()
    };
    let (events, _) = devnet_events(cfg);
    let Some(ts) = TestStore::new(db, "bns_devnet", Network::Testnet).await else { return };
    let api = common::routes(Arc::clone(&ts.store));
    let mut m = Model::default();
    let (mut checked, mut orphaned_registrations) = (0, 0);
    let mut after_reorg: Option<Vec<String>> = None;
    for (i, ev) in events.iter().enumerate() {
        let payload: Value = serde_json::from_str(&ev.payload).unwrap();
        let mut before_reorg = None;
        if ev.path == "/new_block" && m.reorgs(&payload) {
            checked += check(&api, &m, "before a reorg").await;
            let x = Expected { m: &m, canonical: m.canonical() };
            before_reorg = Some(x.all_names().into_iter().filter(|k| x.live(k)).collect::<Vec<_>>());
        }
        ingest(&ts, ev).await;
        match ev.path.as_str() {
            "/new_block" => m.add_block(payload),
            "/attachments/new" => m.add_attachments(&payload),
            _ => {}
        }
        if let Some(live) = before_reorg {
            after_reorg = Some(live);
        }
        // Once the overtaking block's attachments are in, the reorg is complete.
        let next_is_attachment = events.get(i + 1).is_some_and(|e| e.path == "/attachments/new");
        if let Some(live_before) = after_reorg.as_ref().filter(|_| !next_is_attachment) {
            checked += check(&api, &m, "after a reorg").await;
            let x = Expected { m: &m, canonical: m.canonical() };
            for name in live_before.iter().filter(|k| !x.live(k)) {
                if x.latest(name).is_none() {
                    // Registered only on the orphaned branch: it answered before, not now.
                    assert_eq!(get(&api, &format!("/v1/names/{name}")).await.0, 404);
                    orphaned_registrations += 1;
                }
            }
            after_reorg = None;
        }
    }
    checked += check(&api, &m, "at the tip").await;

    let x = Expected { m: &m, canonical: m.canonical() };
    let live = x.all_names().into_iter().filter(|k| x.live(k)).count();
    let statuses: BTreeSet<&str> = m.names.iter().map(|r| r.status.as_str()).collect();
    let canonical_subs = m.subs.iter().filter(|s| x.canonical.contains(&s.ibh)).count();
    println!(
        "{db:?}: {checked} answers match; {live} live names, statuses {statuses:?}, {canonical_subs} subdomain rows, \
         {orphaned_registrations} registrations orphaned"
    );
    // Fewer than 100 names are live, so a second page is checked to be refused ("Invalid page");
    // a full second page is not reached by this chain.
    assert!(live > 20, "names: {live}");
    for s in ["name-import", "name-register", "name-update", "name-transfer", "name-renewal", "name-revoke"] {
        assert!(statuses.contains(s), "{s}: {statuses:?}");
    }
    assert!(
        m.names.iter().any(|r| r.status == "name-renewal" && r.event_index == -1),
        "a renewal without zonefile"
    );
    assert!(canonical_subs > 0, "subdomains");
    assert!(orphaned_registrations > 0, "a reorg orphaned a registration");
    ts.finish().await;
}

async fn ingest(ts: &TestStore, ev: &RawEvent) {
    common::ingest_all(&ts.store, [ev.clone()], &[], "devnet").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_bns_routes_follow_the_generated_chain() {
    bns_routes_follow_the_chain(Db::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_bns_routes_follow_the_generated_chain() {
    bns_routes_follow_the_chain(Db::Postgres).await;
}
