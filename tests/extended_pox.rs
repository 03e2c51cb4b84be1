//! End to end: ingest every oracle fixture, then replay every recorded request of the PoX
//! routes (`/extended/v1/{pox2,pox3,pox4}/*`, the old `/poxN_events` forms and v2
//! `/pox/cycles/*`) through the
//! public route table and compare with what the incumbent answered, on SQLite and PostgreSQL.

mod common;

use std::sync::Arc;

use common::{replay, shared_file, Db, TestStore};
use serde_json::Value;
use test_support::oracle::OracleEntry;
use warp::{Filter, Reply};

use common::ORACLE_FIXTURES as FIXTURES;

/// `/extended/v1/pox2/...`, `/pox9/events`, `/pox4_events` and `/extended/v2/pox/cycles/...`.
fn is_pox(e: &OracleEntry) -> bool {
    let v1 = e
        .path
        .strip_prefix("/extended/v1/pox")
        .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()));
    e.method == "GET" && (v1 || e.path.starts_with("/extended/v2/pox/"))
}

async fn pox_matches_oracle(db: Db) {
    let mut totals = (0, 0, 0);
    for (fixture, network) in FIXTURES {
        let Some(tsv) = shared_file(&format!("fixtures/{fixture}.tsv")) else { return };
        let Some(ts) = TestStore::new(db, "extended_pox", network).await else { return };
        replay(&ts.store, &tsv, &[]).await;
        let api = common::routes(Arc::clone(&ts.store));
        let Some(report) = common::parity::check_parity(&api, fixture, is_pox, &[]).await else { return };
        report.print(&format!("{db:?} {fixture}"));
        totals.0 += report.matched();
        totals.1 += report.compared;
        report.assert_all_match();
        totals.2 += past_the_end_totals_are_0(&api, fixture).await;
        ts.finish().await;
    }
    println!("{db:?} pox: {}/{} recorded answers matched", totals.0, totals.1);
    // epoch-3-transition and the pox-4 regtest have cycles, signers and stackers.
    assert!(totals.2 >= 3, "{db:?}: only {} non-empty cycle lists were paged past the end", totals.2);
}

async fn get<F, R>(api: &F, path: &str) -> Value
where
    F: Filter<Extract = (R,), Error = std::convert::Infallible> + Clone + Send + Sync + 'static,
    R: Reply + Send,
{
    let res = warp::test::request().path(path).reply(api).await;
    assert_eq!(res.status(), 200, "{path}");
    serde_json::from_slice(res.body()).unwrap()
}

/// The incumbent reads a page's `total` from its first row, so a page past the end of the
/// cycles, a cycle's signers or a signer's stackers has `total` 0. Pages each
/// non-empty list of the fixture at its own `total` (the offset just past its last row) and
/// returns how many lists it paged.
async fn past_the_end_totals_are_0<F, R>(api: &F, fixture: &str) -> usize
where
    F: Filter<Extract = (R,), Error = std::convert::Infallible> + Clone + Send + Sync + 'static,
    R: Reply + Send,
{
    let mut paged = 0;
    let mut check = |url: &str, first: &Value, past: &Value| {
        let total = first["total"].as_u64().unwrap_or(0);
        if total > 0 {
            assert_eq!(past["total"], 0, "{fixture} {url}?offset={total}");
            assert_eq!(past["results"], Value::Array(vec![]), "{fixture} {url}?offset={total}");
            paged += 1;
        }
    };
    let url = "/extended/v2/pox/cycles";
    let cycles = get(api, url).await;
    let n = cycles["total"].as_u64().unwrap_or(0);
    check(url, &cycles, &get(api, &format!("{url}?offset={n}")).await);
    for c in cycles["results"].as_array().into_iter().flatten() {
        let url = format!("/extended/v2/pox/cycles/{}/signers", c["cycle_number"]);
        let signers = get(api, &url).await;
        let n = signers["total"].as_u64().unwrap_or(0);
        check(&url, &signers, &get(api, &format!("{url}?offset={n}")).await);
        for s in signers["results"].as_array().into_iter().flatten() {
            let url = format!("{url}/{}/stackers", s["signing_key"].as_str().unwrap_or_default());
            let stackers = get(api, &url).await;
            let n = stackers["total"].as_u64().unwrap_or(0);
            check(&url, &stackers, &get(api, &format!("{url}?offset={n}")).await);
        }
    }
    paged
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_pox_events_match_the_oracle() {
    pox_matches_oracle(Db::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_pox_events_match_the_oracle() {
    pox_matches_oracle(Db::Postgres).await;
}
