//! Contract-call arguments rendered from the called contract's ABI, as the incumbent does:
//! each argument gets its ABI name and type, and the call its `define-…` signature.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value as Json};

/// The ABI type as Clarity source (`uint`, `(buff 32)`, `(tuple (a int) (b bool))`).
pub fn type_string(t: &Json) -> Option<String> {
    if let Some(s) = t.as_str() {
        return Some(
            match s {
                "int128" => "int",
                "uint128" => "uint",
                other => other,
            }
            .to_string(),
        );
    }
    let o = t.as_object()?;
    let (key, inner) = o.iter().next()?;
    Some(match key.as_str() {
        "buffer" => format!("(buff {})", inner["length"]),
        "string-ascii" => format!("(string-ascii {})", inner["length"]),
        "string-utf8" => format!("(string-utf8 {})", inner["length"]),
        "response" => format!("(response {} {})", type_string(&inner["ok"])?, type_string(&inner["error"])?),
        "optional" => format!("(optional {})", type_string(inner)?),
        "list" => format!("(list {} {})", inner["length"], type_string(&inner["type"])?),
        "tuple" => {
            let fields = inner
                .as_array()?
                .iter()
                .map(|f| Some(format!("({} {})", f["name"].as_str()?, type_string(&f["type"])?)))
                .collect::<Option<Vec<_>>>()?;
            format!("(tuple {})", fields.join(" "))
        }
        _ => return None,
    })
}

/// A function's rendering from its ABI: the `define-…` signature and each argument's name and
/// type.
#[derive(Debug)]
pub(crate) struct Signature {
    pub(crate) text: String,
    pub(crate) params: Vec<(String, String)>,
    /// `text` and `params` as JSON string tokens (quoted, escaped): written as they are for
    /// every call of a page (`entity::write_call_tail`) rather than escaped again each time.
    pub(crate) text_json: String,
    pub(crate) params_json: Vec<(String, String)>,
}

/// A JSON string token of `s`.
fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| String::from("\"\""))
}

/// One parsed ABI: its text (compared on every hit, so a hash collision can never serve another
/// contract's names) and its functions, the first of each name as the incumbent finds it.
struct Parsed {
    abi: String,
    functions: HashMap<String, Option<Arc<Signature>>>,
}

/// Parsed ABIs by the hash of their text. A page of 50 transactions calls the same few
/// contracts again and again, and parsing the ABI JSON (kilobytes) per transaction was most of
/// a list's rendering time. Bounded: emptied when it holds [`ABI_CACHE_BYTES`] of ABI text.
static ABI_CACHE: Mutex<Option<AbiCache>> = Mutex::new(None);
/// Parsed ABIs by text hash, and the bytes of ABI text they hold.
type AbiCache = (HashMap<u64, Arc<Parsed>>, usize);
const ABI_CACHE_BYTES: usize = 16 << 20;

fn parse(abi: &str) -> Parsed {
    let mut functions = HashMap::new();
    let json = serde_json::from_str::<Json>(abi).unwrap_or(Json::Null);
    for f in json["functions"].as_array().into_iter().flatten() {
        let Some(name) = f["name"].as_str() else { continue };
        functions.entry(name.to_owned()).or_insert_with(|| signature(name, f).map(Arc::new));
    }
    Parsed { abi: abi.to_owned(), functions }
}

fn signature(name: &str, func: &Json) -> Option<Signature> {
    let params = func["args"]
        .as_array()?
        .iter()
        .map(|p| Some((p["name"].as_str()?.to_string(), type_string(&p["type"])?)))
        .collect::<Option<Vec<_>>>()?;
    let access = func["access"].as_str().unwrap_or("public").replace('_', "-");
    let args = params.iter().map(|(n, t)| format!("({n} {t})")).collect::<Vec<_>>().join(" ");
    let text = format!("(define-{access} ({name} {args}))");
    let text_json = json_string(&text);
    let params_json = params.iter().map(|(n, t)| (json_string(n), json_string(t))).collect();
    Some(Signature { text, params, text_json, params_json })
}

/// The parsed `abi`, from the cache or parsed now (and kept).
fn parsed(abi: &str) -> Arc<Parsed> {
    // The key hashes the length and both ends, not the whole text (kilobytes, hashed for every
    // call of a page): a collision only costs a parse, as the full comparison below catches it.
    const ENDS: usize = 256;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    abi.len().hash(&mut h);
    let b = abi.as_bytes();
    b[..b.len().min(ENDS)].hash(&mut h);
    b[b.len().saturating_sub(ENDS)..].hash(&mut h);
    let key = h.finish();
    let mut guard = ABI_CACHE.lock().unwrap_or_else(|e| e.into_inner());
    let (map, bytes) = guard.get_or_insert_with(|| (HashMap::new(), 0));
    if let Some(p) = map.get(&key).filter(|p| p.abi == abi) {
        return Arc::clone(p);
    }
    let p = Arc::new(parse(abi));
    if *bytes + abi.len() > ABI_CACHE_BYTES {
        map.clear();
        *bytes = 0;
    }
    if let Some(old) = map.insert(key, Arc::clone(&p)) {
        *bytes -= old.abi.len();
    }
    *bytes += abi.len();
    p
}

/// The rendering of function `name` from `abi` (the contract's ABI JSON), if the ABI describes
/// it ([`apply_abi`] leaves the payload as it is otherwise).
pub(crate) fn function_signature(abi: &str, name: &str) -> Option<Arc<Signature>> {
    parsed(abi).functions.get(name).cloned().flatten()
}

/// [`function_signature`] of an ABI shared by the rows of a page (the store reads each called
/// contract's ABI once per page, as one `Arc` for all its calls): the thread remembers the last
/// one, so the rows after the first find it by pointer. The cache's lookup hashes the ABI's
/// ends and compares its whole text (kilobytes), which was ~4 % of a contract's page.
pub(crate) fn shared_function_signature(abi: &Arc<str>, name: &str) -> Option<Arc<Signature>> {
    thread_local! {
        // The `Arc` kept here keeps its text alive, so an equal pointer is the same text.
        static LAST: std::cell::RefCell<Option<(Arc<str>, Arc<Parsed>)>> = const { std::cell::RefCell::new(None) };
    }
    let p = LAST.with(|last| {
        let mut last = last.borrow_mut();
        match &*last {
            Some((a, p)) if Arc::ptr_eq(a, abi) => Arc::clone(p),
            _ => {
                let p = parsed(abi);
                *last = Some((Arc::clone(abi), Arc::clone(&p)));
                p
            }
        }
    });
    p.functions.get(name).cloned().flatten()
}

/// Fills `function_signature` and each argument's `name`/`type` of a `contract_call` payload
/// from `abi` (the contract's ABI JSON). Leaves the payload as it is when the ABI does not
/// describe the function.
pub fn apply_abi(call: &mut Map<String, Json>, abi: &str) {
    let Some(name) = call.get("function_name").and_then(Json::as_str) else { return };
    let Some(sig) = function_signature(abi, name) else { return };
    call.insert("function_signature".into(), sig.text.clone().into());
    if let Some(Json::Array(values)) = call.get_mut("function_args") {
        for (value, (n, t)) in values.iter_mut().zip(&sig.params) {
            value["name"] = n.clone().into();
            value["type"] = t.clone().into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shared_signatures_follow_the_abi_given() {
        let abi = |arg: &str| -> Arc<str> {
            Arc::from(format!(
                r#"{{"functions":[{{"name":"f","access":"public","args":[{{"name":"{arg}","type":"bool"}}]}}]}}"#
            ))
        };
        let (a, b) = (abi("x"), abi("y"));
        // Alternating, and an equal text in another allocation: each answers from its own text.
        for (given, want) in [(&a, "x"), (&b, "y"), (&a, "x"), (&abi("y"), "y"), (&b, "y")] {
            let sig = shared_function_signature(given, "f").unwrap();
            assert_eq!(sig.text, format!("(define-public (f ({want} bool)))"));
        }
        assert!(shared_function_signature(&a, "g").is_none());
    }

    #[test]
    fn abi_types_render_as_clarity_source() {
        let t = json!({"tuple": [{"name": "hashbytes", "type": {"buffer": {"length": 32}}},
                                  {"name": "version", "type": {"buffer": {"length": 1}}}]});
        assert_eq!(type_string(&t).unwrap(), "(tuple (hashbytes (buff 32)) (version (buff 1)))");
        assert_eq!(
            type_string(&json!({"optional": {"buffer": {"length": 65}}})).unwrap(),
            "(optional (buff 65))"
        );
        assert_eq!(
            type_string(&json!({"response": {"ok": "bool", "error": "int128"}})).unwrap(),
            "(response bool int)"
        );
        assert_eq!(
            type_string(&json!({"list": {"type": "principal", "length": 200}})).unwrap(),
            "(list 200 principal)"
        );
        assert_eq!(type_string(&json!({"string-utf8": {"length": 40}})).unwrap(), "(string-utf8 40)");
        assert!(type_string(&json!({"mystery": 1})).is_none());
    }

    #[test]
    fn a_call_gets_names_types_and_signature() {
        let abi = r#"{"functions":[{"name":"stack","access":"public","args":[
            {"name":"amount-ustx","type":"uint128"},{"name":"who","type":"principal"}],
            "outputs":{"type":"bool"}}]}"#;
        let mut call = json!({"function_name": "stack", "function_signature": "",
            "function_args": [{"hex":"0x01","repr":"u1","name":"","type":"uint"},
                              {"hex":"0x05","repr":"'SP1","name":"","type":"principal"}]});
        apply_abi(call.as_object_mut().unwrap(), abi);
        assert_eq!(call["function_signature"], "(define-public (stack (amount-ustx uint) (who principal)))");
        assert_eq!(call["function_args"][0]["name"], "amount-ustx");
        assert_eq!(call["function_args"][1]["type"], "principal");
        // An unknown function keeps the ABI-less rendering.
        let mut other = json!({"function_name": "nope", "function_signature": ""});
        apply_abi(other.as_object_mut().unwrap(), abi);
        assert_eq!(other["function_signature"], "");
        // The second call comes from the cache and renders the same.
        let mut again = json!({"function_name": "stack", "function_args": [{"hex":"0x01"}]});
        apply_abi(again.as_object_mut().unwrap(), abi);
        assert_eq!(again["function_signature"], call["function_signature"]);
        assert_eq!(again["function_args"][0]["name"], "amount-ustx");
        // Another ABI with another text is parsed on its own.
        let other_abi = abi.replace("amount-ustx", "amount");
        let mut third = json!({"function_name": "stack", "function_args": [{"hex":"0x01"}]});
        apply_abi(third.as_object_mut().unwrap(), &other_abi);
        assert_eq!(third["function_args"][0]["name"], "amount");
    }
}
