//! `../shared/vectors/addresses.json`: every case, checked against our address code.

use std::collections::BTreeMap;

use serde_json::Value;
use stacks_codec::address::{
    address_from_public_keys, single_sig_address, version, ContractId, Principal, PublicKeyBytes,
    PublicKeyError, StacksAddress,
};
use stacks_codec::tx::HashMode;

const VECTORS: &str = "vectors/addresses.json";

fn str_field<'a>(case: &'a Value, key: &str) -> &'a str {
    case[key].as_str().unwrap_or_else(|| panic!("case has no string {key}: {case}"))
}

fn hash_field(case: &Value, key: &str) -> [u8; 20] {
    let text = str_field(case, key);
    let bytes = hex::decode(text.trim_start_matches("0x")).unwrap();
    bytes.try_into().unwrap_or_else(|_| panic!("{key} is not 20 bytes: {text}"))
}

fn version_field(case: &Value) -> u8 {
    u8::try_from(case["version"].as_u64().unwrap()).unwrap()
}

fn hash_mode(name: &str) -> HashMode {
    match name {
        "P2PKH" => HashMode::P2PKH,
        "P2SH" => HashMode::P2SH,
        "P2WPKH" => HashMode::P2WPKH,
        "P2WSH" => HashMode::P2WSH,
        "P2SHNonSequential" => HashMode::P2SHNonSequential,
        "P2WSHNonSequential" => HashMode::P2WSHNonSequential,
        other => panic!("unknown hash mode {other}"),
    }
}

/// Per kind: (passed, total), and the failure messages.
#[derive(Default)]
struct Tally {
    counts: BTreeMap<&'static str, (usize, usize)>,
    failures: Vec<String>,
}

impl Tally {
    fn record(&mut self, kind: &'static str, name: &str, result: Result<(), String>) {
        let entry = self.counts.entry(kind).or_default();
        entry.1 += 1;
        match result {
            Ok(()) => entry.0 += 1,
            Err(e) => self.failures.push(format!("{kind} {name}: {e}")),
        }
    }
}

fn check(cond: bool, what: impl FnOnce() -> String) -> Result<(), String> {
    if cond {
        Ok(())
    } else {
        Err(what())
    }
}

fn version_hash(case: &Value) -> Result<(), String> {
    let (v, hash) = (version_field(case), hash_field(case, "hash160"));
    let addr = StacksAddress::try_new(v, hash).map_err(|e| e.to_string())?;
    let text = str_field(case, "address");
    check(str_field(case, "native_address") == text, || "references disagree on the address".into())?;
    check(addr.to_c32() == text, || format!("encoded {} want {text}", addr.to_c32()))?;
    let parsed: StacksAddress = text.parse().map_err(|e: stacks_codec::CodecError| e.to_string())?;
    check(parsed == addr, || format!("decoded {parsed:?}"))?;
    let decoded = &case["checks"]["c32check_decode"];
    check(decoded["ok"] == true && decoded["version"].as_u64() == Some(u64::from(v)), || {
        format!("c32check decode differs: {decoded}")
    })?;
    check(hash_field(decoded, "hash160") == hash, || "c32check hash differs".into())?;
    check(hash_field(&case["checks"]["native_decode"], "hash160") == hash, || "native hash differs".into())?;

    let b58 = str_field(case, "b58_address");
    check(str_field(case, "native_b58_address") == b58, || "references disagree on b58".into())?;
    check(addr.to_b58() == b58, || format!("b58 {} want {b58}", addr.to_b58()))?;
    // Back from b58: standard versions round-trip; 0 comes back as 22 (shared Bitcoin version 0).
    let back = StacksAddress::from_b58(b58).map_err(|e| e.to_string())?;
    let want_version = if v == 0 { version::MAINNET_SINGLE_SIG } else { v };
    check(back == StacksAddress::new(want_version, hash), || format!("from_b58 gave {back:?}"))
}

fn contract_id(case: &Value) -> Result<(), String> {
    let full = str_field(case, "contract_id");
    let id: ContractId = full.parse().map_err(|e: stacks_codec::CodecError| e.to_string())?;
    let want = StacksAddress::new(version_field(case), hash_field(case, "hash160"));
    check(id.address == want, || format!("address {:?}", id.address))?;
    check(id.address.to_c32() == str_field(case, "address"), || "address text".into())?;
    check(id.name == str_field(case, "contract_name"), || format!("name {}", id.name))?;
    check(id.to_string() == full, || format!("printed {id}"))?;
    check(full.parse::<Principal>() == Ok(Principal::Contract(id.clone())), || "as principal".into())?;
    let checks = &case["checks_on_full_id"];
    let all_reject = checks["c32check_decode"]["ok"] == false
        && checks["native_is_valid"] == false
        && checks["native_decode"]["ok"] == false
        && checks["stacks_js_validate"] == false;
    check(all_reject, || "a reference accepted the full id as an address".into())?;
    check(full.parse::<StacksAddress>().is_err(), || "full id accepted as a plain address".into())
}

/// Our rule: accept exactly when all three references accept, and then decode the same.
fn invalid(case: &Value, disagreements: &mut Vec<String>) -> Result<(), String> {
    let text = str_field(case, "address");
    let checks = &case["checks"];
    let c32 = checks["c32check_decode"]["ok"] == true;
    let native = checks["native_decode"]["ok"] == true;
    let native_valid = checks["native_is_valid"] == true;
    let js = checks["stacks_js_validate"] == true;
    let ours = text.parse::<StacksAddress>();
    let all_accept = c32 && native && native_valid && js;
    if c32 != native || native != js || native != native_valid || all_accept {
        disagreements.push(format!(
            "{:<28} c32check={} native={} stacks.js={} -> ours={}",
            str_field(case, "name"),
            ok_word(c32),
            ok_word(native),
            ok_word(js),
            if ours.is_ok() { "accept" } else { "reject" }
        ));
    }
    match ours {
        Ok(addr) => {
            check(all_accept, || format!("we accept {text:?} as {addr:?}, a reference rejects it"))?;
            let d = &checks["c32check_decode"];
            check(d["version"].as_u64() == Some(u64::from(addr.version)), || "version differs".into())?;
            check(hash_field(d, "hash160") == addr.hash160, || "hash differs".into())?;
            check(hash_field(&checks["native_decode"], "hash160") == addr.hash160, || "native hash".into())
        }
        Err(_) => check(!all_accept, || format!("we reject {text:?}, every reference accepts it")),
    }
}

fn ok_word(b: bool) -> &'static str {
    if b {
        "ok"
    } else {
        "reject"
    }
}

fn pubkey_single_sig(case: &Value) -> Result<(), String> {
    let key: PublicKeyBytes =
        str_field(case, "public_key").parse().map_err(|e: PublicKeyError| e.to_string())?;
    check(key.is_compressed() == (case["compressed"] == true), || "compression flag".into())?;
    let mode = hash_mode(str_field(case, "hash_mode"));
    let mainnet = str_field(case, "network") == "mainnet";
    let v = version_field(case);
    check(version::for_hash_mode(mode, mainnet) == v, || format!("version {v} for {mode:?}"))?;
    let addr = single_sig_address(mainnet, mode, &key).map_err(|e| e.to_string())?;
    check(addr == address_from_public_keys(v, mode, 1, &[key]).map_err(|e| e.to_string())?, || {
        "single_sig_address and address_from_public_keys differ".into()
    })?;
    check(addr.hash160 == hash_field(case, "hash160"), || format!("hash {}", hex::encode(addr.hash160)))?;
    check(addr.to_c32() == str_field(case, "address"), || format!("address {addr}"))?;
    if mode == HashMode::P2PKH {
        check(key.hash160() == addr.hash160, || "P2PKH hash is hash160 of the key".into())?;
    }
    // P2WPKH cases carry no Bitcoin address; P2PKH ones must carry both.
    match (case.get("b58_address").and_then(Value::as_str), mode) {
        (Some(b58), _) => {
            check(addr.to_b58() == b58, || format!("b58 {}", addr.to_b58()))?;
            let native = str_field(case, "native_btc_to_stx");
            let back = StacksAddress::from_b58(b58).map_err(|e| e.to_string())?;
            check(back.to_c32() == native, || format!("from_b58 gave {back}, native {native}"))?;
            check(native == addr.to_c32(), || "native_btc_to_stx differs from the address".into())
        }
        (None, HashMode::P2WPKH) => Ok(()),
        (None, _) => Err("missing b58_address".into()),
    }
}

fn multisig(case: &Value) -> Result<(), String> {
    let mode = hash_mode(str_field(case, "hash_mode"));
    check(case["hash_mode_id"].as_u64() == Some(mode as u64), || "hash_mode_id".into())?;
    let sigs = u16::try_from(case["signatures_required"].as_u64().unwrap()).unwrap();
    let keys = case["public_keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap().parse::<PublicKeyBytes>().map_err(|e| e.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    let mainnet = str_field(case, "network") == "mainnet";
    let v = version::multi_sig(mainnet);
    let ours = address_from_public_keys(v, mode, sigs, &keys);
    if let Some(error) = case.get("error").and_then(Value::as_str) {
        let want = match error {
            "Public keys must be compressed for segwit" => PublicKeyError::UncompressedSegwit,
            other => return Err(format!("no mapping for reference error {other:?}")),
        };
        return check(ours == Err(want.clone().into()), || format!("got {ours:?}, want {want:?}"));
    }
    let addr = ours.map_err(|e| e.to_string())?;
    check(version_field(case) == v, || "version".into())?;
    check(addr.hash160 == hash_field(case, "hash160"), || format!("hash {}", hex::encode(addr.hash160)))?;
    check(addr.to_c32() == str_field(case, "address"), || format!("address {addr}"))
}

#[test]
fn address_vectors() {
    let Some(doc) = test_support::load_json(VECTORS) else { return };
    let cases = doc["cases"].as_array().expect("cases array");
    let mut tally = Tally::default();
    let mut disagreements = Vec::new();
    for case in cases {
        let name =
            case.get("name").and_then(Value::as_str).or_else(|| case["address"].as_str()).unwrap_or("?");
        let name = case.get("contract_id").and_then(Value::as_str).unwrap_or(name).to_string();
        let (kind, result) = match str_field(case, "kind") {
            "version_hash" => ("version_hash", version_hash(case)),
            "contract_id" => ("contract_id", contract_id(case)),
            "invalid" => ("invalid", invalid(case, &mut disagreements)),
            "pubkey_single_sig" => ("pubkey_single_sig", pubkey_single_sig(case)),
            "multisig" => ("multisig", multisig(case)),
            other => ("unknown kind", Err(format!("unknown kind {other}"))),
        };
        tally.record(kind, &name, result);
    }

    println!("invalid cases where the references disagree or all accept, and our decision:");
    for d in &disagreements {
        println!("  {d}");
    }
    let (mut passed, mut total) = (0, 0);
    for (kind, (p, t)) in &tally.counts {
        println!("addresses.json {kind}: {p}/{t} cases passed");
        passed += p;
        total += t;
    }
    println!("addresses.json: {passed}/{total} cases passed");
    assert!(tally.failures.is_empty(), "failures:\n{}", tally.failures.join("\n"));
    assert_eq!(total, cases.len());
    // The file's own counts, so a truncated or regenerated file is noticed.
    let want_total = doc["meta"]["counts"]["total"].as_u64().expect("meta.counts.total");
    assert_eq!(total as u64, want_total, "case count differs from meta.counts.total");
    for (kind, (_, t)) in &tally.counts {
        assert_eq!(Some(*t as u64), doc["meta"]["counts"][kind].as_u64(), "count for {kind}");
    }
}
