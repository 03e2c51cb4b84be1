//! BNS traffic (`DevnetConfig::bns_per_mille`): calls to the `bns` boot contract, executed the
//! way its source (stacks-core `bns.clar`) runs them, with the events a node reports and the
//! Atlas attachments it then posts to `/attachments/new`.
//!
//! A namespace goes `namespace-preorder` (burns its price) → `namespace-reveal` → any number of
//! `name-import`s → `namespace-ready` (prints the namespace); then names are
//! `name-preorder`ed (burn) and `name-register`ed in a later block, and their owners call
//! `name-update` (some zonefiles list subdomains as TXT records), `name-transfer` (with or
//! without a zonefile), `name-renewal` (with or without one; without one the contract prints
//! nothing) and `name-revoke`. A name is the NFT `bns::names` `{name, namespace}`: minted by a
//! registration or import, moved by a transfer. Each name operation prints
//! `{attachment: {attachment-index, hash, metadata: {name, namespace, op, tx-sender}}}`; the
//! node then posts the attachment: the zonefile when it has it (most of the time), an empty one
//! at once for an empty hash (a revoke, a transfer that clears the zonefile). One principal
//! holds one live name (`can-receive-name`). Some updates are sent by a non-owner: they fail
//! (`abort_by_response`, no events). Calls are made in anchored blocks only.
//!
//! The state lives in the branch's `World`, so a fork replays its own history.

use std::collections::BTreeMap;

use stacks_codec::clarity::Value;
use stacks_codec::hash::hash160;
use stacks_codec::to_hex_prefixed;

use super::config::Ctx;
use super::json::EventBody;
use super::rng::Rng;
use super::world::World;

/// `NAMESPACE_PREORDER_CLAIMABILITY_TTL` and `NAME_PREORDER_CLAIMABILITY_TTL`.
const PREORDER_TTL: u64 = 144;
/// `NAMESPACE_PRICE_TIERS` (µSTX, by namespace length).
const NAMESPACE_PRICE_TIERS: [u128; 20] = [
    640_000_000_000,
    64_000_000_000,
    64_000_000_000,
    6_400_000_000,
    6_400_000_000,
    6_400_000_000,
    6_400_000_000,
    640_000_000,
    640_000_000,
    640_000_000,
    640_000_000,
    640_000_000,
    640_000_000,
    640_000_000,
    640_000_000,
    640_000_000,
    640_000_000,
    640_000_000,
    640_000_000,
    640_000_000,
];
/// The namespaces the devnet launches, in order.
const NAMESPACES: [&str; 5] = ["btc", "id", "app", "stacks", "devnet"];
const SYLLABLES: [&str; 16] =
    ["al", "bo", "ca", "de", "fi", "go", "hu", "ja", "ki", "lo", "mu", "no", "pa", "ri", "su", "ty"];
const SUBDOMAIN_LABELS: [&str; 6] = ["alice", "bob", "carol", "dave", "erin", "frank"];
/// The resolver a zonefile with subdomains names.
pub const RESOLVER: &str = "https://registrar.devnet.example";
/// `ERR_NAME_OPERATION_UNAUTHORIZED`.
const ERR_NAME_OPERATION_UNAUTHORIZED: u128 = 2006;

/// A namespace's price function (`namespace-reveal`'s arguments).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PriceFn {
    pub base: u128,
    pub coeff: u128,
    pub buckets: [u128; 16],
    pub nonalpha_discount: u128,
    pub no_vowel_discount: u128,
}

impl PriceFn {
    /// `compute-name-price`.
    fn name_price(&self, name: &str) -> u128 {
        let b = name.as_bytes();
        let exponent = self.buckets[(b.len().max(1) - 1).min(15)];
        let vowels = b.iter().any(|c| b"aeiouy".contains(c));
        let nonalpha = b.iter().any(|c| c.is_ascii_digit() || *c == b'-' || *c == b'_');
        let no_vowel = if vowels { 1 } else { self.no_vowel_discount };
        let nonalpha = if nonalpha { self.nonalpha_discount } else { 1 };
        self.coeff * self.base.pow(exponent as u32) / no_vowel.max(nonalpha) * 10
    }

    fn value(&self) -> Value {
        Value::Tuple(vec![
            ("base".into(), uint(self.base)),
            ("buckets".into(), Value::List(self.buckets.iter().map(|&b| uint(b)).collect())),
            ("coeff".into(), uint(self.coeff)),
            ("no-vowel-discount".into(), uint(self.no_vowel_discount)),
            ("nonalpha-discount".into(), uint(self.nonalpha_discount)),
        ])
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Namespace {
    pub importer: u32,
    pub revealed_at: u64,
    pub launched_at: Option<u64>,
    pub lifetime: u64,
    pub price: PriceFn,
    /// Names imported while revealed, and how many to import before it is made ready.
    pub imported: u32,
    pub import_target: u32,
}

/// A name as `name-properties` and the `names` NFT hold it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameState {
    pub owner: u32,
    pub registered_at: Option<u64>,
    pub imported_at: Option<u64>,
    pub revoked: bool,
}

/// An unclaimed preorder: of a namespace (`name` empty) or of a name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preorder {
    pub buyer: u32,
    pub namespace: String,
    pub name: String,
    pub salt: [u8; 20],
    pub created_at: u64,
}

/// What the branch has done on BNS so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BnsWorld {
    pub namespaces: BTreeMap<String, Namespace>,
    pub preorders: Vec<Preorder>,
    /// `(namespace, name)` → state.
    pub names: BTreeMap<(String, String), NameState>,
    /// `owner-name`: the name each principal was last given.
    pub owner_name: BTreeMap<u32, (String, String)>,
    /// The contract's `attachment-index`.
    pub attachment_index: u128,
    /// `(namespace, name, label)` → the subdomain's last `seqn`.
    pub subdomains: BTreeMap<(String, String, String), u64>,
    /// Numbers fresh labels and salts.
    pub serial: u64,
}

/// An Atlas attachment, as `/attachments/new` reports it (block fields set by the block).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    pub attachment_index: u128,
    /// All zeros for an empty hash (`Hash160::empty()`).
    pub content_hash: [u8; 20],
    /// 0x hex of the print's `metadata` tuple.
    pub metadata: String,
    pub content: Vec<u8>,
}

/// One `bns` call, decided and executed against the state.
#[derive(Debug, Clone)]
pub struct BnsCall {
    pub origin: u32,
    pub function: &'static str,
    pub args: Vec<Value>,
    /// `success`, or `abort_by_response` (then no events and the state is unchanged).
    pub status: &'static str,
    pub result: Value,
    pub events: Vec<EventBody>,
    /// µSTX the call burns (`stx-burn?`).
    pub burn: u128,
    pub attachment: Option<Attachment>,
    pub after: BnsWorld,
}

fn uint(v: impl Into<u128>) -> Value {
    Value::UInt(v.into())
}

fn buff(b: &[u8]) -> Value {
    Value::Buffer(b.to_vec())
}

fn ok(v: Value) -> Value {
    Value::ResponseOk(Box::new(v))
}

fn hex(v: &Value) -> String {
    to_hex_prefixed(&v.serialize())
}

/// The `bns::names` token of `name.namespace`.
pub fn name_token(name: &str, namespace: &str) -> Value {
    Value::Tuple(vec![
        ("name".into(), buff(name.as_bytes())),
        ("namespace".into(), buff(namespace.as_bytes())),
    ])
}

/// Standard base64 with padding (what a subdomain registrar writes in `zf0=`).
pub fn base64(data: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in data.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |acc, (i, b)| acc | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(A[(n >> (18 - 6 * i) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

impl BnsWorld {
    fn namespace_launched(&self, ns: &str) -> bool {
        self.namespaces.get(ns).is_some_and(|n| n.launched_at.is_some())
    }

    /// When the name's lease started (`name-lease-started-at?`).
    fn lease_started(ns: &Namespace, n: &NameState) -> u64 {
        match (ns.launched_at, n.registered_at, n.imported_at) {
            (None, _, imported) => imported.unwrap_or(0),
            (Some(_), Some(r), _) => r,
            (Some(l), None, Some(i)) if i >= ns.revealed_at && i <= l => l,
            _ => 0,
        }
    }

    /// `is-name-lease-expired`.
    fn expired(&self, key: &(String, String), height: u64) -> bool {
        let (Some(ns), Some(n)) = (self.namespaces.get(&key.0), self.names.get(key)) else { return true };
        ns.lifetime > 0 && height > ns.lifetime + Self::lease_started(ns, n)
    }

    /// `can-receive-name`: no name, or one that is revoked or expired.
    fn can_receive(&self, account: u32, height: u64) -> bool {
        match self.owner_name.get(&account) {
            None => true,
            Some(key) => self.names.get(key).is_none_or(|n| n.revoked) || self.expired(key, height),
        }
    }

    /// Names `check-name-ops-preconditions` lets their owner operate on at `height`.
    fn operable(&self, height: u64) -> Vec<(String, String)> {
        self.names
            .iter()
            .filter(|(k, n)| !n.revoked && self.namespace_launched(&k.0) && !self.expired(k, height))
            .map(|(k, _)| k.clone())
            .collect()
    }

    fn fresh_label(&mut self, rng: &mut Rng, ns: &str) -> String {
        self.serial += 1;
        let mut label: String = (0..rng.range(2, 3)).map(|_| SYLLABLES[rng.index(SYLLABLES.len())]).collect();
        if rng.chance(300) || self.names.contains_key(&(ns.to_string(), label.clone())) {
            label = format!("{label}{}", self.serial);
        }
        label
    }

    fn salt(&mut self) -> [u8; 20] {
        self.serial += 1;
        hash160(format!("devnet bns salt {}", self.serial).as_bytes())
    }
}

/// A name's zonefile: its profile URI, and for an update with subdomains the resolver and one
/// TXT record per subdomain (its own zonefile base64 in `zf0`).
fn zonefile(origin: &str, owner: &str, revision: u128, subdomains: &[(String, String, u64)]) -> String {
    let mut z = format!(
        "$ORIGIN {origin}.\n$TTL 3600\n_http._tcp\tIN\tURI\t10\t1\t\"https://gaia.devnet.example/hub/{owner}/{revision}/profile.json\"\n"
    );
    if !subdomains.is_empty() {
        z.push_str(&format!("_resolver\tIN\tURI\t10\t1\t\"{RESOLVER}\"\n"));
    }
    for (label, sub_owner, seqn) in subdomains {
        let sub = subdomain_zonefile(label, sub_owner, *seqn);
        z.push_str(&format!(
            "{label}\tTXT\t\"owner={sub_owner}\" \"seqn={seqn}\" \"parts=1\" \"zf0={}\"\n",
            base64(sub.as_bytes())
        ));
    }
    z.push('\n');
    z
}

/// A subdomain's own zonefile.
pub fn subdomain_zonefile(label: &str, owner: &str, seqn: u64) -> String {
    format!("$ORIGIN {label}\n$TTL 3600\n_https._tcp\tURI\t10\t1\t\"https://gaia.devnet.example/hub/{owner}/{seqn}/profile.json\"\n")
}

/// Draws the next `bns` call the branch's state allows at Stacks height `height`, by an
/// account that can pay `fee` (and what the call burns).
pub fn plan(ctx: &Ctx, rng: &mut Rng, world: &World, height: u64, fee: u128) -> Option<BnsCall> {
    // Height 1 carries the contract deploys; names registered there would read as imported
    // at genesis (the incumbent's `registered_at = 1` rule), which they are not.
    if height < 2 {
        return None;
    }
    let users = ctx.user_accounts();
    let affords = |i: u32, burn: u128| world.account(i).spendable() >= fee + burn;
    let mut s = world.bns.clone();
    s.preorders.retain(|p| height < p.created_at + PREORDER_TTL);
    let b = Builder { ctx, height };
    let kind = rng.below(100);

    // A namespace in the making comes first: its reveal, imports, then launch.
    if let Some(i) = s.preorders.iter().position(|p| p.name.is_empty()) {
        if kind < 60 {
            let p = s.preorders.remove(i);
            return b.reveal(rng, s, p).filter(|c| affords(c.origin, 0));
        }
    }
    let revealed =
        s.namespaces.iter().find(|(_, n)| n.launched_at.is_none()).map(|(k, n)| (k.clone(), n.clone()));
    if let Some((ns, n)) = revealed {
        if n.imported >= n.import_target || kind >= 90 {
            return b.ready(s, &ns).filter(|c| affords(c.origin, 0));
        }
        if kind < 75 {
            let start = rng.below(u64::from(users)) as u32;
            let beneficiary = (0..users).map(|k| (start + k) % users).find(|&a| s.can_receive(a, height))?;
            return b.import(rng, s, &ns, beneficiary).filter(|c| affords(c.origin, 0));
        }
    }
    let pending_namespace = s.preorders.iter().any(|p| p.name.is_empty())
        || s.namespaces.values().any(|n| n.launched_at.is_none());
    let launched = s.namespaces.values().filter(|n| n.launched_at.is_some()).count();
    if !pending_namespace && s.namespaces.len() < NAMESPACES.len() && (launched == 0 || kind < 6) {
        let ns = NAMESPACES[s.namespaces.len()];
        let price = NAMESPACE_PRICE_TIERS[(ns.len() - 1).min(19)];
        let buyer = (0..8).map(|_| rng.below(u64::from(users)) as u32).find(|&a| affords(a, price))?;
        return Some(b.preorder(s, ns, "", buyer, price));
    }
    let live: Vec<String> = s
        .namespaces
        .iter()
        .filter(|(_, n)| n.launched_at.is_some_and(|l| height > l))
        .map(|(k, _)| k.clone())
        .collect();
    if live.is_empty() {
        return None;
    }
    let operable = s.operable(height);
    let pick_name =
        |rng: &mut Rng| (!operable.is_empty()).then(|| operable[rng.index(operable.len())].clone());
    match kind {
        0..=29 => {
            let ns = live[rng.index(live.len())].clone();
            let buyer = (0..8)
                .map(|_| rng.below(u64::from(users)) as u32)
                .find(|&a| s.can_receive(a, height) && !s.preorders.iter().any(|p| p.buyer == a))?;
            let label = s.fresh_label(rng, &ns);
            let price = s.namespaces[&ns].price.name_price(&label);
            affords(buyer, price).then(|| b.preorder(s, &ns, &label, buyer, price))
        }
        30..=49 => {
            let i = s.preorders.iter().position(|p| !p.name.is_empty() && p.created_at < height)?;
            let p = s.preorders.remove(i);
            let key = (p.namespace.clone(), p.name.clone());
            if !s.can_receive(p.buyer, height) || (s.names.contains_key(&key) && !s.expired(&key, height)) {
                return None;
            }
            b.register(rng, s, p).filter(|c| affords(c.origin, 0))
        }
        50..=69 => {
            let key = pick_name(rng)?;
            let owner = s.names[&key].owner;
            if rng.chance(60) {
                // Someone else tries: `check-name-ops-preconditions` refuses.
                let other = (owner + 1 + rng.below(u64::from(users - 1)) as u32) % users;
                return affords(other, 0).then(|| b.unauthorized_update(s, &key, other));
            }
            b.update(rng, s, &key).filter(|c| affords(c.origin, 0))
        }
        70..=79 => {
            let key = pick_name(rng)?;
            let to =
                (0..8).map(|_| rng.below(u64::from(users)) as u32).find(|&a| s.can_receive(a, height))?;
            b.transfer(rng, s, &key, to).filter(|c| affords(c.origin, 0))
        }
        80..=89 => {
            let key = pick_name(rng)?;
            if s.namespaces[&key.0].lifetime == 0 {
                return None;
            }
            b.renewal(rng, s, &key).filter(|c| affords(c.origin, 0))
        }
        90..=92 => {
            let key = pick_name(rng)?;
            b.revoke(s, &key).filter(|c| affords(c.origin, 0))
        }
        _ => None,
    }
}

struct Builder<'a> {
    ctx: &'a Ctx,
    height: u64,
}

impl Builder<'_> {
    fn principal(&self, i: u32) -> Value {
        self.ctx.key(i).principal.clone()
    }

    fn c32(&self, i: u32) -> String {
        self.ctx.key(i).c32.clone()
    }

    fn call(
        &self,
        origin: u32,
        function: &'static str,
        args: Vec<Value>,
        result: Value,
        after: BnsWorld,
    ) -> BnsCall {
        BnsCall {
            origin,
            function,
            args,
            status: "success",
            result,
            events: Vec::new(),
            burn: 0,
            attachment: None,
            after,
        }
    }

    fn burn(&self, mut c: BnsCall, amount: u128) -> BnsCall {
        c.burn = amount;
        c.events.push(EventBody::StxBurn { sender: self.c32(c.origin), amount });
        c
    }

    /// A preorder of the namespace `ns` (`label` empty) or of the name `label.ns`: bns.clar
    /// takes the hash160 of `ns ‖ salt`, or of `label.ns ‖ salt`, and burns the price.
    fn preorder(&self, mut s: BnsWorld, ns: &str, label: &str, buyer: u32, price: u128) -> BnsCall {
        let (function, preimage) = if label.is_empty() {
            ("namespace-preorder", ns.to_string())
        } else {
            ("name-preorder", format!("{label}.{ns}"))
        };
        let salt = s.salt();
        let hashed = hash160(&[preimage.as_bytes(), &salt].concat());
        s.preorders.push(Preorder {
            buyer,
            namespace: ns.to_string(),
            name: label.to_string(),
            salt,
            created_at: self.height,
        });
        let args = vec![buff(&hashed), uint(price)];
        let c = self.call(buyer, function, args, ok(uint(self.height + PREORDER_TTL)), s);
        self.burn(c, price)
    }

    fn reveal(&self, rng: &mut Rng, mut s: BnsWorld, p: Preorder) -> Option<BnsCall> {
        let mut buckets = [1u128; 16];
        for (i, b) in buckets.iter_mut().enumerate().take(6) {
            *b = 6 - i as u128;
        }
        let price = PriceFn {
            base: rng.range(2, 4).into(),
            coeff: rng.range(1, 5).into(),
            buckets,
            nonalpha_discount: rng.range(1, 4).into(),
            no_vowel_discount: rng.range(1, 4).into(),
        };
        // Names live for good in a few namespaces (renewals are refused there).
        let lifetime = if rng.chance(200) { 0 } else { rng.range(2_000, 6_000) };
        let users = self.ctx.user_accounts();
        let import_target = rng.range(u64::from(users / 3), u64::from(users)) as u32;
        let mut args = vec![buff(p.namespace.as_bytes()), buff(&p.salt), uint(price.base), uint(price.coeff)];
        args.extend(price.buckets.iter().map(|&b| uint(b)));
        args.extend([
            uint(price.nonalpha_discount),
            uint(price.no_vowel_discount),
            uint(lifetime),
            self.principal(p.buyer),
        ]);
        s.namespaces.insert(
            p.namespace.clone(),
            Namespace {
                importer: p.buyer,
                revealed_at: self.height,
                launched_at: None,
                lifetime,
                price,
                imported: 0,
                import_target,
            },
        );
        Some(self.call(p.buyer, "namespace-reveal", args, ok(Value::Bool(true)), s))
    }

    fn ready(&self, mut s: BnsWorld, ns: &str) -> Option<BnsCall> {
        let n = s.namespaces.get_mut(ns)?;
        n.launched_at = Some(self.height);
        let n = n.clone();
        let print = Value::Tuple(vec![
            ("namespace".into(), buff(ns.as_bytes())),
            (
                "properties".into(),
                Value::Tuple(vec![
                    ("can-update-price-function".into(), Value::Bool(true)),
                    ("launched-at".into(), Value::OptionalSome(Box::new(uint(self.height)))),
                    ("lifetime".into(), uint(n.lifetime)),
                    ("namespace-import".into(), self.principal(n.importer)),
                    ("price-function".into(), n.price.value()),
                    ("revealed-at".into(), uint(n.revealed_at)),
                ]),
            ),
            ("status".into(), Value::StringAscii(b"ready".to_vec())),
        ]);
        let mut c =
            self.call(n.importer, "namespace-ready", vec![buff(ns.as_bytes())], ok(Value::Bool(true)), s);
        c.events.push(self.print(&print));
        Some(c)
    }

    fn print(&self, v: &Value) -> EventBody {
        EventBody::Print { contract_identifier: self.ctx.bns_contract_id.clone(), raw_value: hex(v) }
    }

    /// `update-zonefile-and-props`: the print, and the attachment the node posts (`zonefile`
    /// `None`: an empty hash; `delivered` false: the node never got the zonefile).
    fn name_op(
        &self,
        c: &mut BnsCall,
        key: &(String, String),
        op: &str,
        zonefile: Option<String>,
        delivered: bool,
    ) {
        let hash = zonefile.as_ref().map(|z| hash160(z.as_bytes()).to_vec()).unwrap_or_default();
        let index = c.after.attachment_index;
        c.after.attachment_index += 1;
        let metadata = Value::Tuple(vec![
            ("name".into(), buff(key.1.as_bytes())),
            ("namespace".into(), buff(key.0.as_bytes())),
            ("op".into(), Value::StringAscii(op.as_bytes().to_vec())),
            ("tx-sender".into(), self.principal(c.origin)),
        ]);
        let print = Value::Tuple(vec![(
            "attachment".into(),
            Value::Tuple(vec![
                ("attachment-index".into(), uint(index)),
                ("hash".into(), buff(&hash)),
                ("metadata".into(), metadata.clone()),
            ]),
        )]);
        c.events.push(self.print(&print));
        if delivered || zonefile.is_none() {
            let mut content_hash = [0u8; 20];
            content_hash[..hash.len()].copy_from_slice(&hash);
            c.attachment = Some(Attachment {
                attachment_index: index,
                content_hash,
                metadata: hex(&metadata),
                content: zonefile.map(String::into_bytes).unwrap_or_default(),
            });
        }
    }

    fn nft(&self, sender: Option<u32>, recipient: u32, key: &(String, String)) -> EventBody {
        let asset = self.ctx.bns_asset.clone();
        let raw_value = hex(&name_token(&key.1, &key.0));
        match sender {
            None => EventBody::NftMint { asset, recipient: self.c32(recipient), raw_value },
            Some(s) => EventBody::NftTransfer {
                asset,
                sender: self.c32(s),
                recipient: self.c32(recipient),
                raw_value,
            },
        }
    }

    fn own(&self, s: &mut BnsWorld, key: &(String, String), from: Option<u32>, to: u32) {
        if let Some(f) = from {
            s.owner_name.remove(&f);
        }
        s.owner_name.insert(to, key.clone());
    }

    fn zonefile_for(
        &self,
        s: &BnsWorld,
        key: &(String, String),
        owner: u32,
        subs: &[(String, String, u64)],
    ) -> String {
        zonefile(&format!("{}.{}", key.1, key.0), &self.c32(owner), s.attachment_index, subs)
    }

    fn import(&self, rng: &mut Rng, mut s: BnsWorld, ns: &str, beneficiary: u32) -> Option<BnsCall> {
        let importer = s.namespaces[ns].importer;
        let label = s.fresh_label(rng, ns);
        let key = (ns.to_string(), label.clone());
        let z = self.zonefile_for(&s, &key, beneficiary, &[]);
        s.namespaces.get_mut(ns)?.imported += 1;
        s.names.insert(
            key.clone(),
            NameState {
                owner: beneficiary,
                registered_at: None,
                imported_at: Some(self.height),
                revoked: false,
            },
        );
        self.own(&mut s, &key, None, beneficiary);
        let args = vec![
            buff(ns.as_bytes()),
            buff(label.as_bytes()),
            self.principal(beneficiary),
            buff(&hash160(z.as_bytes())),
        ];
        let mut c = self.call(importer, "name-import", args, ok(Value::Bool(true)), s);
        c.events.push(self.nft(None, beneficiary, &key));
        self.name_op(&mut c, &key, "name-import", Some(z), rng.chance(900));
        Some(c)
    }

    fn register(&self, rng: &mut Rng, mut s: BnsWorld, p: Preorder) -> Option<BnsCall> {
        let key = (p.namespace.clone(), p.name.clone());
        let z = self.zonefile_for(&s, &key, p.buyer, &[]);
        s.names.insert(
            key.clone(),
            NameState { owner: p.buyer, registered_at: Some(self.height), imported_at: None, revoked: false },
        );
        self.own(&mut s, &key, None, p.buyer);
        let args = vec![
            buff(p.namespace.as_bytes()),
            buff(p.name.as_bytes()),
            buff(&p.salt),
            buff(&hash160(z.as_bytes())),
        ];
        let mut c = self.call(p.buyer, "name-register", args, ok(Value::Bool(true)), s);
        c.events.push(self.nft(None, p.buyer, &key));
        self.name_op(&mut c, &key, "name-register", Some(z), rng.chance(900));
        Some(c)
    }

    fn update(&self, rng: &mut Rng, mut s: BnsWorld, key: &(String, String)) -> Option<BnsCall> {
        let owner = s.names[key].owner;
        let mut subs = Vec::new();
        if rng.chance(450) {
            let users = self.ctx.user_accounts();
            let mut labels: Vec<&str> = SUBDOMAIN_LABELS.to_vec();
            for _ in 0..rng.range(1, 3) {
                let label = labels.remove(rng.index(labels.len())).to_string();
                let seqn = s.subdomains.entry((key.0.clone(), key.1.clone(), label.clone())).or_insert(0);
                *seqn += 1;
                let sub_owner = self.c32(rng.below(u64::from(users)) as u32);
                subs.push((label, sub_owner, *seqn - 1));
            }
            subs.sort();
        }
        let z = self.zonefile_for(&s, key, owner, &subs);
        let args = vec![buff(key.0.as_bytes()), buff(key.1.as_bytes()), buff(&hash160(z.as_bytes()))];
        let mut c = self.call(owner, "name-update", args, ok(Value::Bool(true)), s);
        // A zonefile listing subdomains always reaches the node here, so they can be checked.
        let delivered = !subs.is_empty() || rng.chance(900);
        self.name_op(&mut c, key, "name-update", Some(z), delivered);
        Some(c)
    }

    fn unauthorized_update(&self, s: BnsWorld, key: &(String, String), sender: u32) -> BnsCall {
        let z = self.zonefile_for(&s, key, sender, &[]);
        let args = vec![buff(key.0.as_bytes()), buff(key.1.as_bytes()), buff(&hash160(z.as_bytes()))];
        let err = Value::ResponseErr(Box::new(Value::Int(ERR_NAME_OPERATION_UNAUTHORIZED as i128)));
        let state = s.clone();
        BnsCall { status: "abort_by_response", ..self.call(sender, "name-update", args, err, state) }
    }

    fn transfer(&self, rng: &mut Rng, mut s: BnsWorld, key: &(String, String), to: u32) -> Option<BnsCall> {
        let owner = s.names[key].owner;
        if to == owner {
            return None;
        }
        let z = rng.chance(500).then(|| self.zonefile_for(&s, key, to, &[]));
        s.names.get_mut(key)?.owner = to;
        self.own(&mut s, key, Some(owner), to);
        let zarg = match &z {
            Some(z) => Value::OptionalSome(Box::new(buff(&hash160(z.as_bytes())))),
            None => Value::OptionalNone,
        };
        let args = vec![buff(key.0.as_bytes()), buff(key.1.as_bytes()), self.principal(to), zarg];
        let mut c = self.call(owner, "name-transfer", args, ok(Value::Bool(true)), s);
        c.events.push(self.nft(Some(owner), to, key));
        self.name_op(&mut c, key, "name-transfer", z, rng.chance(900));
        Some(c)
    }

    fn renewal(&self, rng: &mut Rng, mut s: BnsWorld, key: &(String, String)) -> Option<BnsCall> {
        let owner = s.names[key].owner;
        let price = s.namespaces[&key.0].price.name_price(&key.1);
        let z = rng.chance(500).then(|| self.zonefile_for(&s, key, owner, &[]));
        let n = s.names.get_mut(key)?;
        n.registered_at = Some(self.height);
        n.imported_at = None;
        let zarg = match &z {
            Some(z) => Value::OptionalSome(Box::new(buff(&hash160(z.as_bytes())))),
            None => Value::OptionalNone,
        };
        let args =
            vec![buff(key.0.as_bytes()), buff(key.1.as_bytes()), uint(price), Value::OptionalNone, zarg];
        let mut c = self.call(owner, "name-renewal", args, ok(Value::Bool(true)), s);
        if z.is_some() {
            self.name_op(&mut c, key, "name-renewal", z, rng.chance(900));
        }
        Some(c)
    }

    fn revoke(&self, mut s: BnsWorld, key: &(String, String)) -> Option<BnsCall> {
        let owner = s.names[key].owner;
        s.names.get_mut(key)?.revoked = true;
        let args = vec![buff(key.0.as_bytes()), buff(key.1.as_bytes())];
        let mut c = self.call(owner, "name-revoke", args, ok(Value::Bool(true)), s);
        self.name_op(&mut c, key, "name-revoke", None, true);
        Some(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_is_the_standard_alphabet_with_padding() {
        assert_eq!(base64(b"hi"), "aGk=");
        assert_eq!(base64(b"$ORIGIN alice\n"), "JE9SSUdJTiBhbGljZQo=");
        assert_eq!(base64(b"abc"), "YWJj");
        assert_eq!(base64(b"a"), "YQ==");
    }

    #[test]
    fn name_prices_follow_the_contract() {
        let p = PriceFn {
            base: 2,
            coeff: 3,
            buckets: [6, 5, 4, 3, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1],
            nonalpha_discount: 2,
            no_vowel_discount: 4,
        };
        // "ab": bucket 5, vowel, alpha: 3 * 2^5 * 10.
        assert_eq!(p.name_price("ab"), 960);
        // "b1": no vowel (4) and non-alpha (2): the larger discount.
        assert_eq!(p.name_price("b1"), 3 * 32 / 4 * 10);
    }
}
