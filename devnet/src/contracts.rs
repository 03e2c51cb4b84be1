//! The Clarity contracts the devnet deploys, with the interfaces (ABIs) a node reports for them.
//!
//! The sources are ordinary Clarity 2; the generator executes their functions itself (see
//! `txgen`), so each public function's events and results there must match what this source
//! does: `transfer` emits an `ft_transfer_event`, then the memo print (if any), then the tuple
//! print; `ft-transfer?` fails with `(err u1)` on an insufficient balance, which `try!` returns.

/// Boot contract deployed in block 0 by every Stacks node: its one `print` is the genesis event.
pub const GENESIS_NAME: &str = "genesis";
pub const GENESIS_SOURCE: &str = ";; Stacks 2.0 Genesis\n(print \"``... to be a completely separate network and separate block chain, yet share CPU power with Bitcoin`` - Satoshi Nakamoto\")\n";
/// What the genesis contract prints (a `string-ascii`).
pub const GENESIS_PRINT: &str = "``... to be a completely separate network and separate block chain, yet share CPU power with Bitcoin`` - Satoshi Nakamoto";
pub const GENESIS_ABI: &str =
    r#"{"maps":[],"functions":[],"variables":[],"fungible_tokens":[],"non_fungible_tokens":[]}"#;

pub const FT_CONTRACT: &str = "devnet-token";
pub const FT_ASSET: &str = "devcoin";
pub const FT_SOURCE: &str = r#";; devnet-token: a SIP-010-style fungible token on a stacks-ledger devnet chain.
(define-fungible-token devcoin)

(define-constant contract-owner tx-sender)
(define-constant err-owner-only (err u100))
(define-constant err-not-token-owner (err u101))

(define-public (transfer (amount uint) (sender principal) (recipient principal) (memo (optional (buff 34))))
  (begin
    (asserts! (is-eq tx-sender sender) err-not-token-owner)
    (try! (ft-transfer? devcoin amount sender recipient))
    (match memo to-print (print to-print) 0x)
    (print { action: "transfer", amount: amount, sender: sender, recipient: recipient })
    (ok true)))

(define-public (mint (amount uint) (recipient principal))
  (begin
    (asserts! (is-eq tx-sender contract-owner) err-owner-only)
    (ft-mint? devcoin amount recipient)))

(define-read-only (get-name) (ok "Devnet Coin"))
(define-read-only (get-symbol) (ok "DEV"))
(define-read-only (get-decimals) (ok u6))
(define-read-only (get-balance (who principal)) (ok (ft-get-balance devcoin who)))
(define-read-only (get-total-supply) (ok (ft-get-supply devcoin)))
(define-read-only (get-token-uri) (ok (some u"https://example.com/devcoin.json")))
"#;
pub const FT_ABI: &str = r#"{"maps":[],"functions":[
{"args":[{"name":"amount","type":"uint128"},{"name":"recipient","type":"principal"}],"name":"mint","access":"public","outputs":{"type":{"response":{"ok":"bool","error":"uint128"}}}},
{"args":[{"name":"amount","type":"uint128"},{"name":"sender","type":"principal"},{"name":"recipient","type":"principal"},{"name":"memo","type":{"optional":{"buffer":{"length":34}}}}],"name":"transfer","access":"public","outputs":{"type":{"response":{"ok":"bool","error":"uint128"}}}},
{"args":[{"name":"who","type":"principal"}],"name":"get-balance","access":"read_only","outputs":{"type":{"response":{"ok":"uint128","error":"none"}}}},
{"args":[],"name":"get-decimals","access":"read_only","outputs":{"type":{"response":{"ok":"uint128","error":"none"}}}},
{"args":[],"name":"get-name","access":"read_only","outputs":{"type":{"response":{"ok":{"string-ascii":{"length":11}},"error":"none"}}}},
{"args":[],"name":"get-symbol","access":"read_only","outputs":{"type":{"response":{"ok":{"string-ascii":{"length":3}},"error":"none"}}}},
{"args":[],"name":"get-token-uri","access":"read_only","outputs":{"type":{"response":{"ok":{"optional":{"string-utf8":{"length":32}}},"error":"none"}}}},
{"args":[],"name":"get-total-supply","access":"read_only","outputs":{"type":{"response":{"ok":"uint128","error":"none"}}}}],
"variables":[
{"name":"contract-owner","type":"principal","access":"constant"},
{"name":"err-not-token-owner","type":{"response":{"ok":"none","error":"uint128"}},"access":"constant"},
{"name":"err-owner-only","type":{"response":{"ok":"none","error":"uint128"}},"access":"constant"}],
"fungible_tokens":[{"name":"devcoin"}],"non_fungible_tokens":[],"epoch":"Epoch25","clarity_version":"Clarity2"}"#;

pub const NFT_CONTRACT: &str = "devnet-nft";
pub const NFT_ASSET: &str = "devpunk";
pub const NFT_SOURCE: &str = r#";; devnet-nft: a SIP-009-style collectible on a stacks-ledger devnet chain. Anyone may mint.
(define-non-fungible-token devpunk uint)

(define-data-var last-token-id uint u0)
(define-constant err-not-token-owner (err u101))

(define-public (transfer (token-id uint) (sender principal) (recipient principal))
  (begin
    (asserts! (is-eq tx-sender sender) err-not-token-owner)
    (nft-transfer? devpunk token-id sender recipient)))

(define-public (mint (recipient principal))
  (let ((token-id (+ (var-get last-token-id) u1)))
    (try! (nft-mint? devpunk token-id recipient))
    (var-set last-token-id token-id)
    (print { action: "mint", token-id: token-id, recipient: recipient })
    (ok token-id)))

(define-public (burn (token-id uint))
  (begin
    (asserts! (is-eq (some tx-sender) (nft-get-owner? devpunk token-id)) err-not-token-owner)
    (nft-burn? devpunk token-id tx-sender)))

(define-read-only (get-last-token-id) (ok (var-get last-token-id)))
(define-read-only (get-owner (token-id uint)) (ok (nft-get-owner? devpunk token-id)))
(define-read-only (get-token-uri (token-id uint)) (ok (some "https://example.com/devpunk.json")))
"#;
pub const NFT_ABI: &str = r#"{"maps":[],"functions":[
{"args":[{"name":"token-id","type":"uint128"}],"name":"burn","access":"public","outputs":{"type":{"response":{"ok":"bool","error":"uint128"}}}},
{"args":[{"name":"recipient","type":"principal"}],"name":"mint","access":"public","outputs":{"type":{"response":{"ok":"uint128","error":"uint128"}}}},
{"args":[{"name":"token-id","type":"uint128"},{"name":"sender","type":"principal"},{"name":"recipient","type":"principal"}],"name":"transfer","access":"public","outputs":{"type":{"response":{"ok":"bool","error":"uint128"}}}},
{"args":[],"name":"get-last-token-id","access":"read_only","outputs":{"type":{"response":{"ok":"uint128","error":"none"}}}},
{"args":[{"name":"token-id","type":"uint128"}],"name":"get-owner","access":"read_only","outputs":{"type":{"response":{"ok":{"optional":"principal"},"error":"none"}}}},
{"args":[{"name":"token-id","type":"uint128"}],"name":"get-token-uri","access":"read_only","outputs":{"type":{"response":{"ok":{"optional":{"string-ascii":{"length":32}}},"error":"none"}}}}],
"variables":[
{"name":"err-not-token-owner","type":{"response":{"ok":"none","error":"uint128"}},"access":"constant"},
{"name":"last-token-id","type":"uint128","access":"variable"}],
"fungible_tokens":[],"non_fungible_tokens":[{"name":"devpunk","type":"uint128"}],"epoch":"Epoch25","clarity_version":"Clarity2"}"#;

/// The PoX contract stacking goes through (a boot contract: never deployed by the devnet).
pub const POX_CONTRACT: &str = "pox-4";

/// The genesis contract's interface as a current stacks-node (4.x) reports it in block 0: with
/// the epoch and Clarity version of the boot code (recorded in `bench/realnode-2`).
pub const GENESIS_ABI_NODE: &str = r#"{"clarity_version":"Clarity1","epoch":"Epoch20","functions":[],"fungible_tokens":[],"maps":[],"non_fungible_tokens":[],"variables":[]}"#;

/// The contracts of the failed-deploy cases (`DevnetConfig::failed_deploy_per_mille`). Each
/// family has a version that fails and a fixed version its sender may deploy later under the
/// same name (a failed deploy creates no contract, so the name stays free).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeployCase {
    /// `devnet-vault-N`: passes analysis, then its top-level code aborts at runtime. The node
    /// keeps the analysis: the receipt has the contract interface, `vm_error` the runtime error.
    Runtime = 0,
    /// `devnet-oracle-N`: fails type-checking. No interface; `vm_error` is the diagnostic.
    Analysis = 1,
}

impl DeployCase {
    pub fn family(self) -> &'static str {
        match self {
            DeployCase::Runtime => "devnet-vault",
            DeployCase::Analysis => "devnet-oracle",
        }
    }

    /// The source that fails, and the fixed one.
    pub fn source(self, fixed: bool) -> &'static str {
        match (self, fixed) {
            (DeployCase::Runtime, false) => VAULT_SOURCE_FAILING,
            (DeployCase::Runtime, true) => VAULT_SOURCE,
            (DeployCase::Analysis, false) => ORACLE_SOURCE_FAILING,
            (DeployCase::Analysis, true) => ORACLE_SOURCE,
        }
    }

    /// The interface of the source (`None`: analysis fails, so the node has none).
    pub fn abi(self, fixed: bool) -> Option<&'static str> {
        match (self, fixed) {
            (DeployCase::Runtime, _) => Some(VAULT_ABI),
            (DeployCase::Analysis, true) => Some(ORACLE_ABI),
            (DeployCase::Analysis, false) => None,
        }
    }

    /// What stacks-node 4.0.2 puts in the receipt's `vm_error` when the failing version is
    /// deployed. Runtime: `RuntimeError`'s Debug name (no stack trace outside developer mode).
    /// Analysis: `StacksTransactionReceipt::from_analysis_failure`'s `:line:column: message`
    /// of the static check's first span (the unresolved atom).
    pub fn vm_error(self) -> &'static str {
        match self {
            DeployCase::Runtime => "UnwrapFailure",
            DeployCase::Analysis => ":3:7: use of unresolved variable 'answer'",
        }
    }
}

pub const VAULT_SOURCE_FAILING: &str = r#";; devnet-vault: opens at an entry of its schedule. This version reads past the end of it.
(define-data-var opened uint u0)
(define-read-only (get-opened) (var-get opened))
(var-set opened (unwrap-panic (element-at? (list u10 u20) u5)))
"#;
pub const VAULT_SOURCE: &str = r#";; devnet-vault: opens at an entry of its schedule.
(define-data-var opened uint u0)
(define-read-only (get-opened) (var-get opened))
(var-set opened (unwrap-panic (element-at? (list u10 u20) u1)))
"#;
/// Both vault versions define the same things, so the interface is the same.
pub const VAULT_ABI: &str = r#"{"clarity_version":"Clarity2","epoch":"Epoch25","functions":[{"access":"read_only","args":[],"name":"get-opened","outputs":{"type":"uint128"}}],"fungible_tokens":[],"maps":[],"non_fungible_tokens":[],"variables":[{"access":"variable","name":"opened","type":"uint128"}]}"#;

pub const ORACLE_SOURCE_FAILING: &str = r#";; devnet-oracle: answers a constant. This version forgot to define it.
(define-read-only (get-answer)
  (ok answer))
"#;
pub const ORACLE_SOURCE: &str = r#";; devnet-oracle: answers a constant.
(define-constant answer u42)
(define-read-only (get-answer)
  (ok answer))
"#;
pub const ORACLE_ABI: &str = r#"{"clarity_version":"Clarity2","epoch":"Epoch25","functions":[{"access":"read_only","args":[],"name":"get-answer","outputs":{"type":{"response":{"error":"none","ok":"uint128"}}}}],"fungible_tokens":[],"maps":[],"non_fungible_tokens":[],"variables":[{"access":"constant","name":"answer","type":"uint128"}]}"#;

/// How ABI objects' keys are ordered in the events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AbiKeyOrder {
    /// PostgreSQL `jsonb` order (shorter keys first, then bytewise): the incumbent's exports,
    /// which the shared fixtures (and this generator by default) follow.
    Jsonb,
    /// Sorted bytewise at every level: stacks-node builds the payload as a `serde_json::Value`
    /// (a `BTreeMap` without `preserve_order`), so that is what a real node sends.
    Node,
}

/// `v` with every object's keys in `order`; arrays keep theirs.
pub fn order_keys(v: &serde_json::Value, order: AbiKeyOrder) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::Object(m) => {
            let mut entries: Vec<(&String, &Value)> = m.iter().collect();
            match order {
                AbiKeyOrder::Node => entries.sort_by(|a, b| a.0.cmp(b.0)),
                AbiKeyOrder::Jsonb => entries.sort_by(|a, b| (a.0.len(), a.0).cmp(&(b.0.len(), b.0))),
            }
            Value::Object(entries.into_iter().map(|(k, v)| (k.clone(), order_keys(v, order))).collect())
        }
        Value::Array(a) => Value::Array(a.iter().map(|v| order_keys(v, order)).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abis_are_json_and_name_the_assets() {
        for (abi, asset) in [(FT_ABI, FT_ASSET), (NFT_ABI, NFT_ASSET)] {
            let v: serde_json::Value = serde_json::from_str(abi).unwrap();
            assert!(v.to_string().contains(asset));
        }
        serde_json::from_str::<serde_json::Value>(GENESIS_ABI).unwrap();
        // The literal lengths the ABIs declare.
        assert_eq!("https://example.com/devcoin.json".len(), 32);
        assert_eq!("https://example.com/devpunk.json".len(), 32);
        assert_eq!("Devnet Coin".len(), 11);
        assert!(GENESIS_SOURCE.contains(GENESIS_PRINT));
    }

    fn sorted(v: &serde_json::Value) -> bool {
        match v {
            serde_json::Value::Object(m) => {
                m.keys().zip(m.keys().skip(1)).all(|(a, b)| a < b) && m.values().all(sorted)
            }
            serde_json::Value::Array(a) => a.iter().all(sorted),
            _ => true,
        }
    }

    #[test]
    fn node_key_order_is_what_a_real_node_sends() {
        let fixture: serde_json::Value = serde_json::from_str(FT_ABI).unwrap();
        let node = order_keys(&fixture, AbiKeyOrder::Node);
        assert!(sorted(&node) && !sorted(&fixture));
        assert_eq!(node, fixture, "the same ABI");
        let jsonb = order_keys(&node, AbiKeyOrder::Jsonb).to_string();
        assert!(jsonb.starts_with(r#"{"maps":[],"epoch":"Epoch25","functions":[{"args":"#), "{jsonb}");
        for abi in [GENESIS_ABI_NODE, VAULT_ABI, ORACLE_ABI] {
            let v: serde_json::Value = serde_json::from_str(abi).unwrap();
            assert!(sorted(&v), "{abi}");
        }
        // stacks-node 4.0.2 as recorded: every interface sorted, and block 0's genesis one is ours.
        let Some(path) = test_support::shared_path("bench/realnode-2/events.tsv") else { return };
        let text = std::fs::read_to_string(path).unwrap();
        let mut interfaces = 0;
        for line in text.lines().filter(|l| l.contains("\t/new_block\t")) {
            let payload: serde_json::Value =
                serde_json::from_str(line.splitn(4, '\t').nth(3).unwrap()).unwrap();
            for t in payload["transactions"].as_array().unwrap() {
                let abi = &t["contract_interface"];
                if abi.is_null() {
                    continue;
                }
                assert!(sorted(abi));
                interfaces += 1;
                if t["txid"] == "0xb3847b7e852b0d731061ff144e4467065c6e7b159a9eee2f883fdc41f261ee13" {
                    assert_eq!(abi.to_string(), GENESIS_ABI_NODE);
                }
            }
        }
        assert!(interfaces > 5, "{interfaces}");
    }

    #[test]
    fn sources_define_what_the_generator_emits() {
        assert!(FT_SOURCE.contains("(define-fungible-token devcoin)"));
        assert!(NFT_SOURCE.contains("(define-non-fungible-token devpunk uint)"));
        for f in ["(define-public (transfer", "(define-public (mint"] {
            assert!(FT_SOURCE.contains(f) && NFT_SOURCE.contains(f));
        }
        assert!(NFT_SOURCE.contains("(define-public (burn"));
    }
}
