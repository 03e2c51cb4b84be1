//! `import-bns` on the incumbent's own small genesis set (`../shared/fixtures/bns-import`), over
//! a store holding mainnet's first blocks: its names then answer as the incumbent's v1-import
//! test expects (the genesis transaction as `last_txid`); a run stopped after its first batch
//! of subdomains resumes after it; a second run writes nothing; a file that does not match its
//! `.sha256` is refused before anything is written (both engines).

mod common;

use std::ops::ControlFlow;
use std::path::Path;
use std::sync::Arc;

use common::{replay, shared_file, Db, TestStore};
use serde_json::{json, Value};
use stacks_ledger::ledger::Network;
use stacks_ledger::store::bns_genesis::{import_bns, import_bns_with, BnsImportError};

async fn get(
    api: &(impl warp::Filter<Extract = (impl warp::Reply,), Error = std::convert::Infallible> + Clone + 'static),
    path: &str,
) -> (u16, Value) {
    let res = warp::test::request().path(path).reply(api).await;
    (res.status().as_u16(), serde_json::from_slice(res.body()).unwrap_or(Value::Null))
}

fn sorted(v: &Value) -> Vec<String> {
    let mut out: Vec<String> =
        v.as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_string()).collect();
    out.sort();
    out
}

const ZUMRAI_ZONEFILE: &str = "$ORIGIN zumrai.id\n$TTL 3600\n_http._tcp\tIN\tURI\t10\t1\t\"https://gaia.blockstack.org/hub/1EPno1VcdGx89ukN2we4iVpnFtkHzw8i5d/profile.json\"\n\n";
const FLUSHRESET_ZONEFILE: &str = "$ORIGIN flushreset.id.blockstack\n$TTL 3600\n_http._tcp\tIN\tURI\t10\t1\t\"https://gaia.blockstack.org/hub/1HEznKZ7mK5fmibweM7eAk8SwRgJ1bWY92/profile.json\"\n\n";

async fn genesis_names_answer_as_the_incumbent_expects(db: Db) {
    let (Some(dir), Some(tsv)) =
        (shared_file("fixtures/bns-import"), shared_file("fixtures/mainnet-block0.tsv"))
    else {
        return;
    };
    let Some(ts) = TestStore::new(db, "bns_import", Network::Mainnet).await else { return };
    replay(&ts.store, &tsv, &[]).await;
    let genesis = ts.store.bns_genesis().await.unwrap().expect("block 1 has the genesis transfer");

    // A corrupted copy is refused before anything is written.
    let bad = tempfile::tempdir().unwrap();
    for f in std::fs::read_dir(&dir).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, bad.path().join(f.file_name().unwrap())).unwrap();
    }
    let names = bad.path().join("chainstate.txt");
    let text = std::fs::read_to_string(&names).unwrap().replace("zumrai.id", "zumrei.id");
    std::fs::write(&names, text).unwrap();
    let err = import_bns(&ts.store, bad.path()).await.unwrap_err();
    assert!(matches!(err, BnsImportError::Checksum { .. }), "{err}");
    let api = common::routes(Arc::clone(&ts.store));
    assert_eq!(get(&api, "/v1/namespaces").await.1, json!({ "namespaces": [] }));

    // Interrupted after its first committed batch of 20 subdomains (of 50).
    let mut batches = Vec::new();
    let first = import_bns_with(&ts.store, Path::new(&dir), 20, |rows, total| {
        batches.push((rows, total));
        ControlFlow::Break(())
    })
    .await
    .unwrap();
    assert_eq!(batches, [(20, 50)]);
    assert_eq!((first.namespaces, first.names, first.subdomains, first.complete), (5, 12, 20, false));
    assert_eq!(first.subdomains_total, 50);
    let (status, subs) = get(&api, "/v1/names/id.blockstack/subdomains").await;
    assert_eq!((status, subs.as_array().unwrap().len()), (200, 20), "{subs}");
    // The next run resumes after that batch: the names are not redone, 30 subdomains are added.
    let mut batches = Vec::new();
    let resumed = import_bns_with(&ts.store, Path::new(&dir), 20, |rows, _| {
        batches.push(rows);
        ControlFlow::Continue(())
    })
    .await
    .unwrap();
    assert_eq!(batches, [40, 50]);
    assert_eq!((resumed.names, resumed.subdomains, resumed.complete), (0, 30, true), "{resumed:?}");
    assert_eq!(resumed.already_done, ["names"]);
    let again = import_bns(&ts.store, Path::new(&dir)).await.unwrap();
    assert_eq!((again.names, again.subdomains, again.complete), (0, 0, true));
    assert_eq!(again.already_done, ["names", "subdomains"]);

    let (status, body) = get(&api, "/v1/names/zumrai.id").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body,
        json!({
            "address": "SP29EJ0SVM2TRZ3XGVTZPVTKF4SV1VMD8C0GA5SK5",
            "blockchain": "stacks",
            "expire_block": 52596,
            "last_txid": genesis.tx_id,
            "status": "name-register",
            "zonefile": ZUMRAI_ZONEFILE,
            "zonefile_hash": "853cd126478237bc7392e65091f7ffa5a1556a33",
        })
    );
    let zonefile = json!({ "zonefile": ZUMRAI_ZONEFILE });
    assert_eq!(
        get(&api, "/v1/names/zumrai.id/zonefile/853cd126478237bc7392e65091f7ffa5a1556a33").await.1,
        zonefile
    );
    assert_eq!(get(&api, "/v1/names/zumrai.id/zonefile").await.1, zonefile);

    let (status, subs) = get(&api, "/v1/names/id.blockstack/subdomains").await;
    assert_eq!(status, 200);
    let subs = sorted(&subs);
    assert_eq!(subs.len(), 50);
    for s in ["12312313231.id.blockstack", "flushreset.id.blockstack", "zachgaming.id.blockstack"] {
        assert!(subs.contains(&s.to_string()), "{s}");
    }
    let all = [
        "id.blockstack",
        "1.id",
        "10.id",
        "10x.id",
        "111111111.id",
        "123.id",
        "zinai.id",
        "zlh.id",
        "zone117x.id",
        "zumminer_crux.id",
        "zumminer_dev_crux.id",
        "zumrai.id",
    ];
    let mut expected: Vec<String> = all.iter().map(|s| s.to_string()).collect();
    expected.sort();
    assert_eq!(sorted(&get(&api, "/v1/names").await.1), expected);
    assert_eq!(
        get(&api, "/v1/namespaces").await.1,
        json!({ "namespaces": ["blockstack", "graphite", "helloworld", "id", "podcast"] })
    );
    let ids: Vec<String> = expected.iter().filter(|n| n.ends_with(".id")).cloned().collect();
    assert_eq!(sorted(&get(&api, "/v1/namespaces/id/names").await.1), ids);
    assert_eq!(
        get(&api, "/v1/addresses/stacks/SP1HPCXTGV31W5659M3WTBEFP5AN55HV4B1Q9T31F").await.1,
        json!({ "names": ["id.blockstack"] })
    );
    let (status, sub) = get(&api, "/v1/names/flushreset.id.blockstack").await;
    assert_eq!(status, 200, "{sub}");
    assert_eq!(
        sub,
        json!({
            "address": "SP2S2F9TCAT43KEJT02YTG2NXVCPZXS1426T63D9H",
            "blockchain": "stacks",
            "last_txid": genesis.tx_id,
            "resolver": "https://registrar.blockstack.org",
            "status": "registered_subdomain",
            "zonefile": FLUSHRESET_ZONEFILE,
            "zonefile_hash": "14dc091ebce8ea117e1276d802ee903cc0fdde81",
        })
    );
    let zonefile = json!({ "zonefile": FLUSHRESET_ZONEFILE });
    assert_eq!(
        get(&api, "/v1/names/flushreset.id.blockstack/zonefile/14dc091ebce8ea117e1276d802ee903cc0fdde81")
            .await
            .1,
        zonefile
    );
    assert_eq!(get(&api, "/v1/names/flushreset.id.blockstack/zonefile").await.1, zonefile);
    ts.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_import_bns() {
    genesis_names_answer_as_the_incumbent_expects(Db::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_import_bns() {
    genesis_names_answer_as_the_incumbent_expects(Db::Postgres).await;
}
