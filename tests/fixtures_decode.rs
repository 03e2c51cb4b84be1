//! Every transaction and Clarity value in the recorded event-observer streams
//! (`shared/fixtures/*.tsv`, plus the real-node stream `shared/bench/realnode-2/events.tsv`)
//! must decode and re-encode to the same bytes, and transactions must hash to their `txid`.
//!
//! TSV lines are `id \t timestamp \t path \t json`, with PostgreSQL text-COPY escaping.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde_json::Value as Json;
use stacks_codec::clarity::Value;
use stacks_codec::tx::Transaction;
use stacks_codec::{decode_hex, to_hex_prefixed};
use stacks_ledger::events::TsvReader;
use test_support::shared_path;

#[derive(Default)]
struct Counts {
    txs: usize,
    burnchain_ops: usize,
    mempool_txs: usize,
    values: usize,
    failures: Vec<String>,
}

impl Counts {
    fn transaction(&mut self, line: usize, raw: &str, txid: Option<&str>) {
        let result = decode_hex(raw).and_then(|b| Transaction::deserialize(&b).map(|tx| (b, tx)));
        match result {
            Err(e) => self.failures.push(format!("line {line}: tx {txid:?}: {e}")),
            Ok((bytes, tx)) => {
                if tx.serialize() != bytes {
                    self.failures.push(format!("line {line}: tx {txid:?}: re-encoding differs"));
                }
                let ours = to_hex_prefixed(&tx.txid());
                if let Some(expected) = txid.filter(|t| *t != ours) {
                    self.failures.push(format!("line {line}: txid {ours}, expected {expected}"));
                }
            }
        }
    }

    fn clarity(&mut self, line: usize, what: &str, hex: &str) {
        self.values += 1;
        match decode_hex(hex).and_then(|b| Value::deserialize(&b).map(|v| (b, v))) {
            Err(e) => self.failures.push(format!("line {line}: {what} {hex}: {e}")),
            Ok((bytes, v)) if v.serialize() != bytes => {
                self.failures.push(format!("line {line}: {what} {hex}: re-encoding differs"))
            }
            Ok(_) => {}
        }
    }

    /// `transactions[]` and `events[]` of a `/new_block` or `/new_microblocks` payload.
    fn block(&mut self, line: usize, payload: &Json) {
        for tx in payload["transactions"].as_array().into_iter().flatten() {
            let raw = tx["raw_tx"].as_str().unwrap_or_default();
            // Burnchain operations (e.g. stack-stx sent on Bitcoin) are reported with a
            // placeholder instead of a Stacks transaction.
            if raw == "0x00" {
                self.burnchain_ops += 1;
            } else {
                self.txs += 1;
                self.transaction(line, raw, tx["txid"].as_str());
            }
            match tx["raw_result"].as_str() {
                Some(hex) => self.clarity(line, "raw_result", hex),
                None => self.failures.push(format!("line {line}: transaction without raw_result")),
            }
        }
        for event in payload["events"].as_array().into_iter().flatten() {
            for kind in ["contract_event", "nft_transfer_event", "nft_mint_event", "nft_burn_event"] {
                if let Some(body) = event.get(kind).filter(|b| b.is_object()) {
                    match body["raw_value"].as_str() {
                        Some(hex) => self.clarity(line, kind, hex),
                        None => self.failures.push(format!("line {line}: {kind} without raw_value")),
                    }
                }
            }
        }
    }

    fn payload(&mut self, line: usize, path: &str, payload: &Json) {
        match path {
            "/new_block" | "/new_microblocks" => self.block(line, payload),
            "/new_mempool_tx" => {
                for raw in payload.as_array().into_iter().flatten() {
                    self.mempool_txs += 1;
                    match raw.as_str() {
                        Some(raw) => self.transaction(line, raw, None),
                        None => self.failures.push(format!("line {line}: mempool entry is not a string")),
                    }
                }
            }
            _ => {}
        }
    }
}

/// One TSV line: its number, observer path and parsed payload.
struct Event {
    line: usize,
    path: String,
    payload: Json,
}

/// Parses every line of an event log with the product's own TSV reader; malformed lines
/// become failures.
fn read_tsv(path: &Path) -> (Vec<Event>, Vec<String>) {
    let file = std::fs::File::open(path).expect("open event log");
    let (mut events, mut failures) = (Vec::new(), Vec::new());
    let mut reader = TsvReader::new(std::io::BufReader::new(file));
    while let Some(item) = reader.next() {
        let line = reader.line_number() as usize;
        match item.map(|e| (serde_json::from_str(&e.payload), e.path)) {
            Ok((Ok(payload), path)) => events.push(Event { line, path, payload }),
            Ok((Err(e), _)) => failures.push(format!("line {line}: bad JSON: {e}")),
            Err(e) => failures.push(format!("line {line}: {e}")),
        }
    }
    (events, failures)
}

/// Checks one TSV file; returns its failures after printing its counts.
fn check_file(path: &Path) -> Vec<String> {
    let (events, failures) = read_tsv(path);
    let mut counts = Counts { failures, ..Counts::default() };
    for e in &events {
        counts.payload(e.line, &e.path, &e.payload);
    }
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    println!(
        "{name}: {} block/microblock txs, {} mempool txs, {} burnchain ops skipped, {} Clarity values; {} failures",
        counts.txs,
        counts.mempool_txs,
        counts.burnchain_ops,
        counts.values,
        counts.failures.len()
    );
    if counts.txs + counts.mempool_txs == 0 {
        counts.failures.push("no transactions found".into());
    }
    counts.failures.into_iter().map(|f| format!("{name} {f}")).collect()
}

#[test]
fn fixture_transactions_and_values_round_trip() {
    let Some(files) = test_support::fixture_logs() else { return };
    let failures: Vec<String> = files.iter().flat_map(|f| check_file(f)).collect();
    println!("fixtures: {} files checked", files.len());
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn realnode_stream_round_trips() {
    let Some(path) = shared_path("bench/realnode-2/events.tsv") else { return };
    let failures = check_file(&path);
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

/// The transactions of a fixture by `0x` txid: mined ones and mempool ones.
fn transactions_by_txid(events: &[Event]) -> HashMap<String, Transaction> {
    let mut out = HashMap::new();
    let mut add = |raw: &str| {
        if let Ok(tx) = decode_hex(raw).and_then(|b| Transaction::deserialize(&b)) {
            out.insert(to_hex_prefixed(&tx.txid()), tx);
        }
    };
    for e in events {
        match e.path.as_str() {
            "/new_block" | "/new_microblocks" => e.payload["transactions"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|tx| tx["raw_tx"].as_str())
                .for_each(&mut add),
            "/new_mempool_tx" => {
                e.payload.as_array().into_iter().flatten().filter_map(Json::as_str).for_each(&mut add)
            }
            _ => {}
        }
    }
    out
}

fn is_tx_route(path: &str) -> bool {
    path.strip_prefix("/extended/v1/tx/0x")
        .is_some_and(|id| id.len() == 64 && id.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Compares `api_tx_fields()` with one recorded response; `abi` counts contract calls whose
/// arguments the API rendered from the contract ABI (only `hex`/`repr` are comparable there).
fn compare_api_fields(tx: &Transaction, resp: &Json, abi: &mut usize) -> Vec<String> {
    let mut diffs = Vec::new();
    for (key, ours) in tx.api_tx_fields() {
        let theirs = &resp[&key];
        let with_abi =
            key == "contract_call" && theirs["function_signature"].as_str().is_some_and(|s| !s.is_empty());
        if !with_abi {
            if &ours != theirs {
                diffs.push(format!("{key}: ours {ours}, API {theirs}"));
            }
            continue;
        }
        *abi += 1;
        for field in ["contract_id", "function_name"] {
            if ours[field] != theirs[field] {
                diffs.push(format!("contract_call.{field}: ours {}, API {}", ours[field], theirs[field]));
            }
        }
        let strip = |args: &Json| -> Vec<(Json, Json)> {
            args.as_array().into_iter().flatten().map(|a| (a["hex"].clone(), a["repr"].clone())).collect()
        };
        if strip(&ours["function_args"]) != strip(&theirs["function_args"]) {
            diffs.push("contract_call.function_args: hex/repr differ".into());
        }
    }
    for key in ["sponsor_nonce", "sponsor_address"] {
        if resp.get(key).is_some() && !tx.is_sponsored() {
            diffs.push(format!("API has {key} for an unsponsored transaction"));
        }
    }
    diffs
}

/// The raw-transaction fields of the API's transaction entity, checked against every recorded
/// `/extended/v1/tx/{id}` response of the Hiro API (`shared/oracle/<fixture>/`).
#[test]
fn api_tx_fields_match_the_recorded_api() {
    let Some(files) = test_support::fixture_logs() else { return };
    let Some(oracle) = shared_path("oracle") else { return };
    let (mut failures, mut per_type, mut abi) = (Vec::new(), BTreeMap::<String, usize>::new(), 0);
    for file in &files {
        let stem = file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let dir = oracle.join(&stem);
        let Ok(manifest) = std::fs::read_to_string(dir.join("manifest.jsonl")) else {
            failures.push(format!("{stem}: no oracle manifest"));
            continue;
        };
        let txs = transactions_by_txid(&read_tsv(file).0);
        for entry in manifest.lines().filter_map(|l| serde_json::from_str::<Json>(l).ok()) {
            let path = entry["path"].as_str().unwrap_or_default();
            if entry["method"] != "GET"
                || entry["status"] != 200
                || entry["query"] != ""
                || !is_tx_route(path)
            {
                continue;
            }
            let file_name = entry["file"].as_str().unwrap_or_default();
            let resp: Json =
                match std::fs::read_to_string(dir.join(file_name)).map(|t| serde_json::from_str(&t)) {
                    Ok(Ok(r)) => r,
                    _ => {
                        failures.push(format!("{stem}/{file_name}: unreadable response"));
                        continue;
                    }
                };
            let txid = resp["tx_id"].as_str().unwrap_or_default();
            let Some(tx) = txs.get(txid) else {
                failures.push(format!("{stem}/{file_name}: {txid} not in the fixture"));
                continue;
            };
            *per_type.entry(tx.tx_type_name().to_string()).or_default() += 1;
            for d in compare_api_fields(tx, &resp, &mut abi) {
                failures.push(format!("{stem}/{file_name} {txid}: {d}"));
            }
        }
    }
    let total: usize = per_type.values().sum();
    println!("oracle: {total} /extended/v1/tx responses compared {per_type:?}; {abi} contract calls with ABI-rendered args (hex/repr compared)");
    for t in [
        "token_transfer",
        "smart_contract",
        "contract_call",
        "poison_microblock",
        "coinbase",
        "tenure_change",
    ] {
        if !per_type.contains_key(t) {
            failures.push(format!("no recorded response for tx_type {t}"));
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}
