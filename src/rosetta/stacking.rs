//! Operation metadata parsed from a transaction's payload: the arguments and result of direct
//! PoX stacking calls (`stack-stx`, `delegate-stx`, `revoke-delegate-stx`) and the fields of a
//! tenure change, as the incumbent served them (api-inventory §g "Block → operations").
//!
//! Pure: Clarity values in, JSON metadata out. Arguments come from whoever signed the call, so
//! any shape (wrong types, missing arguments, bad PoX address tuples, failed calls) must render;
//! a value that does not fit is left out (or `"Invalid"` for an undecodable PoX address, as the
//! incumbent did) instead of failing the block.

use rosetta_spec::Metadata;
use serde_json::Value as Json;
use stacks_codec::clarity::{sorted_tuple_entries, Value};
use stacks_codec::to_hex_prefixed;
use stacks_codec::tx::{Payload, Transaction, TransactionVersion};

use crate::ledger::btc::pox_address_text;
use crate::ledger::pox::principal;

/// The Rosetta operation type of a direct call to `function` of a PoX contract, if retyped.
pub fn stacking_op_type(function: &str) -> Option<&'static str> {
    match function {
        "stack-stx" => Some("stack_stx"),
        "delegate-stx" => Some("delegate_stx"),
        "revoke-delegate-stx" => Some("revoke_delegate_stx"),
        _ => None,
    }
}

/// The metadata of a stacking call's operation. `result` is the transaction's result (`None`
/// for a pending transaction); `mainnet` picks the Bitcoin network of `pox_addr`.
pub fn stacking_metadata(function: &str, args: &[Value], result: Option<&Value>, mainnet: bool) -> Metadata {
    let mut m = Metadata::new();
    match function {
        "stack-stx" => {
            // (stack-stx amount-ustx pox-addr start-burn-ht lock-period ...)
            put(&mut m, "lock_period", args.get(3).and_then(number));
            put(&mut m, "amount_ustx", args.first().and_then(number));
            put(&mut m, "start_burn_height", args.get(2).and_then(number));
            if let Some(Value::ResponseOk(ok)) = result {
                if let Value::Tuple(entries) = ok.as_ref() {
                    let field = |k: &str| {
                        sorted_tuple_entries(entries).into_iter().find(|(n, _)| *n == k).map(|e| e.1)
                    };
                    put(&mut m, "unlock_burn_height", field("unlock-burn-height").and_then(number));
                    put(&mut m, "stacker_address", field("stacker").and_then(principal));
                }
            }
            if let Some(Value::Tuple(entries)) = args.get(1) {
                let addr = pox_address(entries, mainnet).unwrap_or_else(|| "Invalid".to_owned());
                m.insert("pox_addr".into(), addr.into());
            }
        }
        "delegate-stx" => {
            // (delegate-stx amount-ustx delegate-to until-burn-ht pox-addr)
            put(&mut m, "amount_ustx", args.first().and_then(number));
            put(&mut m, "delegate_to", args.get(1).and_then(principal));
            let until = match args.get(2) {
                Some(Value::OptionalNone) => Some("none".to_owned()),
                Some(Value::OptionalSome(v)) => number(v),
                Some(v) => number(v),
                None => None,
            };
            put(&mut m, "until_burn_height", until);
            let pox = match args.get(3) {
                None | Some(Value::OptionalNone) => Some("none".to_owned()),
                Some(Value::OptionalSome(v)) => Some(to_hex_prefixed(&v.serialize())),
                Some(_) => None,
            };
            put(&mut m, "pox_addr", pox);
            put(&mut m, "result", result.map(call_result));
        }
        "revoke-delegate-stx" => put(&mut m, "result", result.map(call_result)),
        _ => {}
    }
    m
}

/// The operation metadata a transaction's payload gives, if any: stacking calls to a PoX
/// contract and tenure changes. `raw_result` is the stored result (hex), absent when pending.
pub fn payload_metadata(tx: &Transaction, raw_result: Option<&str>) -> Option<Metadata> {
    match &tx.payload {
        Payload::ContractCall { contract, function_name, function_args } => {
            if !is_pox_contract(&contract.to_string()) || stacking_op_type(function_name).is_none() {
                return None;
            }
            let result = raw_result
                .and_then(|h| stacks_codec::decode_hex(h).ok())
                .and_then(|b| Value::deserialize(&b).ok());
            let mainnet = tx.version == TransactionVersion::Mainnet;
            Some(stacking_metadata(function_name, function_args, result.as_ref(), mainnet))
        }
        Payload::TenureChange(_) => match tx.api_payload() {
            (_, Json::Object(m)) => Some(m),
            _ => None,
        },
        _ => None,
    }
}

/// Whether `contract_id` is a boot PoX contract (`pox`, `pox-2`, `pox-3`, `pox-4`).
pub fn is_pox_contract(contract_id: &str) -> bool {
    let Some((addr, name)) = contract_id.split_once('.') else { return false };
    let boot = addr == "SP000000000000000000002Q6VF78" || addr == "ST000000000000000000002AMW42H";
    boot && (name == "pox" || name.strip_prefix("pox-").is_some_and(|v| v.parse::<u8>().is_ok()))
}

fn put(m: &mut Metadata, key: &str, value: Option<String>) {
    if let Some(v) = value {
        m.insert(key.into(), v.into());
    }
}

/// An integer argument as a decimal string (the incumbent's repr without the `u`).
fn number(v: &Value) -> Option<String> {
    match v {
        Value::UInt(n) => Some(n.to_string()),
        Value::Int(n) => Some(n.to_string()),
        _ => None,
    }
}

/// `"true"` when the call succeeded with a true-ish value: `(ok true)`, `(ok (some …))`, or the
/// `(some true)` the incumbent tested for; `"false"` otherwise (errors, `(ok false)`, `(ok none)`).
fn call_result(v: &Value) -> String {
    let ok = match v {
        Value::ResponseOk(inner) => !matches!(inner.as_ref(), Value::Bool(false) | Value::OptionalNone),
        Value::OptionalSome(inner) => matches!(inner.as_ref(), Value::Bool(true)),
        _ => false,
    };
    ok.to_string()
}

/// The Bitcoin address of a `{version: (buff 1), hashbytes: (buff 20|32)}` tuple.
fn pox_address(entries: &[(String, Value)], mainnet: bool) -> Option<String> {
    let sorted = sorted_tuple_entries(entries);
    let buf = |k: &str| match sorted.iter().find(|(n, _)| *n == k) {
        Some((_, Value::Buffer(b))) => Some(b.as_slice()),
        _ => None,
    };
    let version = *buf("version")?.first()?;
    pox_address_text(version, buf("hashbytes")?, mainnet)
}

#[cfg(test)]
mod tests {
    use super::*;
    use stacks_codec::address::{ContractId, Principal, StacksAddress};

    fn addr() -> StacksAddress {
        "STRYYQQ9M8KAF4NS7WNZQYY59X93XEKR31JP64CP".parse().unwrap()
    }

    fn pox_tuple(version: Vec<u8>, hash: Vec<u8>) -> Value {
        Value::Tuple(vec![
            ("version".into(), Value::Buffer(version)),
            ("hashbytes".into(), Value::Buffer(hash)),
        ])
    }

    fn stack_args() -> Vec<Value> {
        vec![
            Value::UInt(686_251_350_000_000_000),
            pox_tuple(vec![0], hex::decode("2f8b3b3ab1ccb0c1b8da5d4c7a4a2b6f9aa3b7d1").unwrap()),
            Value::UInt(110),
            Value::UInt(1),
        ]
    }

    #[test]
    fn stack_stx_takes_args_and_the_ok_tuple() {
        let result = Value::ResponseOk(Box::new(Value::Tuple(vec![
            ("stacker".into(), Value::Principal(Principal::Standard(addr()))),
            ("lock-amount".into(), Value::UInt(5)),
            ("unlock-burn-height".into(), Value::UInt(130)),
        ])));
        let m = stacking_metadata("stack-stx", &stack_args(), Some(&result), false);
        assert_eq!(m["lock_period"], "1");
        assert_eq!(m["amount_ustx"], "686251350000000000");
        assert_eq!(m["start_burn_height"], "110");
        assert_eq!(m["unlock_burn_height"], "130");
        assert_eq!(m["stacker_address"], "STRYYQQ9M8KAF4NS7WNZQYY59X93XEKR31JP64CP");
        assert!(m["pox_addr"].as_str().unwrap().starts_with(['m', 'n']), "{m:?}");
        // A failed call has no result tuple: no unlock height, no stacker.
        let err = Value::ResponseErr(Box::new(Value::Int(3)));
        let m = stacking_metadata("stack-stx", &stack_args(), Some(&err), true);
        assert!(!m.contains_key("unlock_burn_height") && !m.contains_key("stacker_address"));
        assert!(m["pox_addr"].as_str().unwrap().starts_with('1'));
    }

    #[test]
    fn bad_pox_addresses_are_invalid() {
        let mut args = stack_args();
        for bad in [
            pox_tuple(vec![], vec![0; 20]),
            pox_tuple(vec![9], vec![0; 20]),
            pox_tuple(vec![0], vec![0; 19]),
            pox_tuple(vec![4], vec![0; 32]),
            Value::Tuple(vec![("version".into(), Value::UInt(0))]),
        ] {
            args[1] = bad;
            assert_eq!(stacking_metadata("stack-stx", &args, None, true)["pox_addr"], "Invalid");
        }
        args[1] = Value::UInt(1);
        assert!(!stacking_metadata("stack-stx", &args, None, true).contains_key("pox_addr"));
    }

    #[test]
    fn delegate_and_revoke() {
        let to = Value::Principal(Principal::Contract(ContractId::new(addr(), "pool").unwrap()));
        let pox = pox_tuple(vec![4], vec![7; 20]);
        let args = vec![
            Value::UInt(10),
            to,
            Value::OptionalSome(Box::new(Value::UInt(99))),
            Value::OptionalSome(Box::new(pox.clone())),
        ];
        let ok = Value::ResponseOk(Box::new(Value::Bool(true)));
        let m = stacking_metadata("delegate-stx", &args, Some(&ok), false);
        assert_eq!(m["amount_ustx"], "10");
        assert_eq!(m["delegate_to"], "STRYYQQ9M8KAF4NS7WNZQYY59X93XEKR31JP64CP.pool");
        assert_eq!(m["until_burn_height"], "99");
        assert_eq!(m["pox_addr"], to_hex_prefixed(&pox.serialize()));
        assert_eq!(m["result"], "true");
        let none = [Value::UInt(10), Value::UInt(1), Value::OptionalNone, Value::OptionalNone];
        let err = Value::ResponseErr(Box::new(Value::Int(20)));
        let m = stacking_metadata("delegate-stx", &none, Some(&err), false);
        assert_eq!((m["until_burn_height"].as_str(), m["pox_addr"].as_str()), (Some("none"), Some("none")));
        assert_eq!(m["result"], "false");
        assert!(!m.contains_key("delegate_to"));
        let revoked = Value::ResponseOk(Box::new(Value::OptionalSome(Box::new(Value::Tuple(vec![])))));
        assert_eq!(stacking_metadata("revoke-delegate-stx", &[], Some(&revoked), false)["result"], "true");
        let nothing = Value::ResponseOk(Box::new(Value::OptionalNone));
        assert_eq!(stacking_metadata("revoke-delegate-stx", &[], Some(&nothing), false)["result"], "false");
        assert!(stacking_metadata("revoke-delegate-stx", &[], None, false).is_empty());
    }

    /// A small deterministic generator (xorshift) so the fuzz loop needs no dependency.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    /// A random Clarity value of every kind, nested up to `depth`.
    fn random_value(r: &mut Rng, depth: u32) -> Value {
        let kinds = if depth == 0 { 8 } else { 13 };
        match r.below(kinds) {
            0 => Value::UInt(u128::from(r.next()) << r.below(64)),
            1 => Value::Int(i128::from(r.next() as i64)),
            2 => Value::Bool(r.below(2) == 0),
            3 => Value::Buffer((0..r.below(40)).map(|_| r.next() as u8).collect()),
            4 => Value::Principal(Principal::Standard(addr())),
            5 => Value::OptionalNone,
            6 => Value::StringAscii(b"x".to_vec()),
            7 => pox_tuple(
                (0..r.below(3)).map(|_| r.below(9) as u8).collect(),
                (0..r.below(40)).map(|_| r.next() as u8).collect(),
            ),
            8 => Value::OptionalSome(Box::new(random_value(r, depth - 1))),
            9 => Value::ResponseOk(Box::new(random_value(r, depth - 1))),
            10 => Value::ResponseErr(Box::new(random_value(r, depth - 1))),
            11 => Value::List((0..r.below(3)).map(|_| random_value(r, depth - 1)).collect()),
            _ => {
                let mut entries = Vec::new();
                for k in ["stacker", "unlock-burn-height", "version", "hashbytes"] {
                    if r.below(2) == 0 {
                        entries.push((k.to_string(), random_value(r, depth - 1)));
                    }
                }
                Value::Tuple(entries)
            }
        }
    }

    #[test]
    fn any_argument_shape_renders() {
        let mut r = Rng(0x9e37_79b9_7f4a_7c15);
        let mut rendered = 0;
        for i in 0..20_000 {
            let function = ["stack-stx", "delegate-stx", "revoke-delegate-stx"][i % 3];
            // Start from valid arguments and mutate some: replace, drop, or append.
            let mut args = stack_args();
            for _ in 0..r.below(4) {
                let at = r.below(args.len() as u64 + 1) as usize;
                match r.below(3) {
                    0 if at < args.len() => args[at] = random_value(&mut r, 3),
                    1 if at < args.len() => {
                        args.remove(at);
                    }
                    _ => args.push(random_value(&mut r, 3)),
                }
            }
            let result = (r.below(4) != 0).then(|| random_value(&mut r, 3));
            let m = stacking_metadata(function, &args, result.as_ref(), r.below(2) == 0);
            // Every value is a string, whatever went in.
            assert!(m.values().all(Json::is_string), "{function} {args:?} {result:?} → {m:?}");
            rendered += usize::from(!m.is_empty());
        }
        assert!(rendered > 10_000, "only {rendered} non-empty");
    }

    #[test]
    fn only_boot_pox_contracts() {
        assert!(is_pox_contract("SP000000000000000000002Q6VF78.pox"));
        assert!(is_pox_contract("ST000000000000000000002AMW42H.pox-4"));
        assert!(!is_pox_contract("ST000000000000000000002AMW42H.pox-x"));
        assert!(!is_pox_contract("ST1.pox-4"));
        assert!(!is_pox_contract("no-dot"));
    }
}
