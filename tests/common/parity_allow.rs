//! THE list of answer fields allowed to differ from the incumbent's recordings, each with its
//! reason (mirrored in docs/extended-deviations.md, "Allowed differences"). Everything else the
//! parity tests compare: status always (modulo the spec's error rules in `parity::compare`), the
//! JSON body of every 2xx answer, the `Location` of redirects.
//!
//! Not listed because the harness never compares them: header values (ETags are hashes of our
//! own cache keys; `x-api-version` names our server) and the bodies of error answers (the spec
//! governs them: an unknown URL is 404 with `reference`, an invalid value is 500 with `error`,
//! `stack` and a fresh `errorTag`).

use serde_json::Value;
use test_support::oracle::OracleEntry;

/// Object keys (at any depth) ignored in the answers of the route whose path template is
/// `route` (`""`: every route).
pub struct Allowed {
    pub route: &'static str,
    pub keys: &'static [&'static str],
    pub reason: &'static str,
}

pub const ALLOWED: &[Allowed] = &[
    Allowed {
        route: "/extended",
        keys: &["server_version"],
        reason: "names the server that answers (the incumbent's release tag and commit, ours)",
    },
    Allowed {
        route: "",
        keys: &["receipt_time", "receipt_time_iso"],
        reason: "when this server's mempool first saw the transaction: the wall clock of the ingest run",
    },
    Allowed {
        route: "/extended/v1/microblock/unanchored/txs",
        keys: &["block_time", "block_time_iso"],
        reason: "the incumbent gives a streamed, not yet anchored transaction the wall-clock time of \
                 the request (the recording day); we serve 0 and \"\" until its anchor block gives it a time",
    },
];

/// The keys ignored for answers of the route template `template`.
pub fn ignored_keys(template: &str) -> Vec<&'static str> {
    ALLOWED
        .iter()
        .filter(|a| a.route.is_empty() || a.route == template)
        .flat_map(|a| a.keys.iter().copied())
        .collect()
}

/// Row orders the incumbent leaves undefined, sorted on both sides by the documented key before
/// comparing (docs/extended-deviations.md, ext-addr): v1 `address/{p}/transactions` and
/// `transactions_with_transfers` (the incumbent's default page comes back in join order on the
/// reorg and microblock fixtures), `stx_inbound` (a token transfer with a memo is listed twice,
/// as `stx-transfer` and `stx-transfer-memo`, in either order) and the FT holders of equal
/// balance ([`mask_tied_holders`]).
pub fn normalize_order(template: &str, body: &mut Value) {
    let Some(results) = body.get_mut("results").and_then(Value::as_array_mut) else { return };
    match template {
        "/extended/v1/address/{principal}/transactions" => {
            results.sort_by_key(|r| std::cmp::Reverse(tx_key(r)))
        }
        "/extended/v1/address/{principal}/transactions_with_transfers" => {
            results.sort_by_key(|r| std::cmp::Reverse(tx_key(&r["tx"])))
        }
        "/extended/v1/tokens/ft/{token}/holders" => mask_tied_holders(results),
        "/extended/v1/address/{principal}/stx_inbound" => results.sort_by_key(|r| {
            let n = |k: &str| r[k].as_i64().unwrap_or(0);
            (std::cmp::Reverse((n("block_height"), n("tx_index"))), r["transfer_type"].to_string())
        }),
        _ => {}
    }
}

/// FT holders with equal balances: the incumbent sorts by balance only and PostgreSQL returns
/// ties in plan order, so the same recording lists them differently in the full list and in an
/// offset page (mocknet, regtest: `?limit=2&offset=1` starts with another holder of the same
/// balance than the full list's second row). The address of a holder whose balance another row
/// of the page shares is not compared; balances, their order and every other address are.
fn mask_tied_holders(results: &mut [Value]) {
    let balances: Vec<Value> = results.iter().map(|r| r["balance"].clone()).collect();
    for r in results.iter_mut() {
        if balances.iter().filter(|b| **b == r["balance"]).count() > 1 {
            r["address"] = Value::String("(tied balance)".into());
        }
    }
}

/// [`normalize_order`] for a recorded request (its route template from the OpenAPI registry).
pub fn normalize_entry(e: &OracleEntry, body: &mut Value) {
    if let Some(route) = stacks_extended::openapi::route_for(&e.method, &e.path) {
        normalize_order(route.path, body);
    }
}

fn tx_key(tx: &Value) -> (i64, i64, i64) {
    let n = |k: &str, d: i64| tx[k].as_i64().unwrap_or(d);
    (n("block_height", 0), n("microblock_sequence", i64::from(i32::MAX)), n("tx_index", 0))
}
