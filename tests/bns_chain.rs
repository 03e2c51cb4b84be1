//! BNS end to end over a real mainnet block with name registrations and a transfer (the
//! `poisonmicroblock` fixture), a zonefile attachment listing a subdomain, then a reorg that
//! orphans the registrations and one that restores them. Expected values are recomputed from
//! the block's own event JSON (its decoded `value` trees, not the hex the store decodes).

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;

use common::{ingest_all, read_tsv, shared_file, Db, TestStore};
use serde_json::{json, Value};
use stacks_codec::clarity::Value as Cv;
use stacks_ledger::events::tsv::RawEvent;
use stacks_ledger::ledger::Network;

async fn get(
    api: &(impl warp::Filter<Extract = (impl warp::Reply,), Error = std::convert::Infallible> + Clone + 'static),
    path: &str,
) -> (u16, Option<String>, Value) {
    let res = warp::test::request().path(path).reply(api).await;
    let location = res.headers().get("location").map(|v| v.to_str().unwrap().to_string());
    (res.status().as_u16(), location, serde_json::from_slice(res.body()).unwrap_or(Value::Null))
}

fn bytes(v: &Value) -> String {
    let data =
        v["Sequence"]["Buffer"]["data"].as_array().or(v["Sequence"]["String"]["ASCII"]["data"].as_array());
    String::from_utf8(data.unwrap().iter().map(|b| b.as_u64().unwrap() as u8).collect()).unwrap()
}

/// `name -> (owner, status, zonefile hash, tx)` by the incumbent's rules, from the block JSON.
fn expected_names(block: &Value) -> BTreeMap<String, (String, String, String, String)> {
    let events = block["events"].as_array().unwrap();
    let mut out = BTreeMap::new();
    for e in events {
        let Some(c) = e.get("contract_event") else { continue };
        if c["contract_identifier"] != "SP000000000000000000002Q6VF78.bns" || c["topic"] != "print" {
            continue;
        }
        let a = &c["value"]["Tuple"]["data_map"]["attachment"]["Tuple"]["data_map"];
        let meta = &a["metadata"]["Tuple"]["data_map"];
        let name = format!("{}.{}", bytes(&meta["name"]), bytes(&meta["namespace"]));
        let op = bytes(&meta["op"]);
        let hash: String = a["hash"]["Sequence"]["Buffer"]["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| format!("{:02x}", b.as_u64().unwrap()))
            .collect();
        let sender = &meta["tx-sender"]["Principal"]["Standard"];
        let hash160: Vec<u8> =
            sender[1].as_array().unwrap().iter().map(|b| b.as_u64().unwrap() as u8).collect();
        let mut owner = stacks_codec::address::StacksAddress::new(
            sender[0].as_u64().unwrap() as u8,
            hash160.try_into().unwrap(),
        )
        .to_c32();
        if op == "name-transfer" {
            let t = events
                .iter()
                .find(|t| {
                    t["txid"] == e["txid"]
                        && t["type"] == "nft_transfer_event"
                        && bytes(&t["nft_transfer_event"]["value"]["Tuple"]["data_map"]["name"])
                            == bytes(&meta["name"])
                })
                .expect("a transfer moves the name's NFT");
            owner = t["nft_transfer_event"]["recipient"].as_str().unwrap().to_string();
        }
        out.insert(name, (owner, op, hash, e["txid"].as_str().unwrap().to_string()));
    }
    out
}

/// A block on `parent` at `height`, with no transactions, derived from `template`.
fn empty_block(
    template: &Value,
    height: u64,
    tag: u8,
    parent: &(String, String),
) -> (Value, (String, String)) {
    let mut b = template.clone();
    let ibh = format!("0x{}", hex::encode([tag; 32]));
    let hash = format!("0x{}", hex::encode([tag ^ 0x55; 32]));
    b["index_block_hash"] = json!(ibh);
    b["block_hash"] = json!(hash);
    b["block_height"] = json!(height);
    b["parent_index_block_hash"] = json!(parent.0);
    b["parent_block_hash"] = json!(parent.1);
    b["parent_microblock"] = json!(format!("0x{}", "00".repeat(32)));
    b["parent_microblock_sequence"] = json!(0);
    b["burn_block_height"] = json!(template["burn_block_height"].as_u64().unwrap() + height);
    b["burn_block_hash"] = json!(format!("0x{}", hex::encode([tag ^ 0x33; 32])));
    b["transactions"] = json!([]);
    b["events"] = json!([]);
    b["matured_miner_rewards"] = json!([]);
    (b, (ibh, hash))
}

fn event(id: i64, path: &str, payload: &Value) -> RawEvent {
    RawEvent {
        id,
        receive_timestamp: "2023-03-04 20:14:06.044706+00".into(),
        path: path.into(),
        payload: payload.to_string(),
    }
}

async fn names_follow_the_chain(db: Db) {
    let Some(tsv) = shared_file("fixtures/poisonmicroblock.tsv") else { return };
    let events = read_tsv(&tsv);
    let block: Value =
        serde_json::from_str(&events.iter().find(|e| e.path == "/new_block").unwrap().payload).unwrap();
    let names = expected_names(&block);
    assert_eq!(names.len(), 3, "{names:?}");
    let Some(ts) = TestStore::new(db, "bns_chain", Network::Mainnet).await else { return };
    ingest_all(&ts.store, events.clone(), &[], "poisonmicroblock").await;
    let api = common::routes(Arc::clone(&ts.store));
    let listed: Vec<&String> = names.keys().collect();
    assert_eq!(get(&api, "/v1/names").await.2, json!(listed));
    for (name, (owner, status, hash, tx)) in &names {
        let (code, _, body) = get(&api, &format!("/v1/names/{name}")).await;
        assert_eq!(code, 200, "{name}: {body}");
        assert_eq!(
            body,
            json!({
                "address": owner, "blockchain": "stacks", "expire_block": 0, "last_txid": tx,
                "status": status, "zonefile": "", "zonefile_hash": hash,
            }),
            "{name}"
        );
        let owned = get(&api, &format!("/v1/addresses/stacks/{owner}")).await.2;
        assert!(owned["names"].as_array().unwrap().contains(&json!(name)), "{owner}: {owned}");
    }

    // A name-update attachment of lett.btc listing one subdomain, with a resolver.
    let (owner, _, hash, tx) = &names["lett.btc"];
    let sub_zonefile = "$ORIGIN alice.lett.btc\n$TTL 3600\n";
    let b64 = "JE9SSUdJTiBhbGljZS5sZXR0LmJ0YwokVFRMIDM2MDAK"; // base64 of `sub_zonefile`
    let zonefile = format!(
        "$ORIGIN lett.btc\n$TTL 3600\n_resolver IN URI 10 1 \"https://resolver.example\"\n\
         alice TXT \"owner={owner}\" \"seqn=0\" \"parts=1\" \"zf0={b64}\"\n"
    );
    let meta = Cv::Tuple(vec![
        ("op".into(), Cv::StringAscii(b"name-update".to_vec())),
        ("name".into(), Cv::Buffer(b"lett".to_vec())),
        ("namespace".into(), Cv::Buffer(b"btc".to_vec())),
    ]);
    let attachment = json!([{
        "attachment_index": 1, "index_block_hash": block["index_block_hash"], "block_height": 1,
        "content_hash": format!("0x{hash}"), "contract_id": "SP000000000000000000002Q6VF78.bns",
        "metadata": stacks_codec::to_hex_prefixed(&meta.serialize()), "tx_id": tx,
        "content": format!("0x{}", hex::encode(&zonefile)),
    }]);
    ingest_all(&ts.store, [event(900_001, "/attachments/new", &attachment)], &[], "attachment").await;
    assert_eq!(get(&api, "/v1/names/lett.btc/zonefile").await.2, json!({ "zonefile": zonefile }));
    assert_eq!(get(&api, "/v1/names/lett.btc/subdomains").await.2, json!(["alice.lett.btc"]));
    let sub_hash = hex::encode(&stacks_codec::hash::sha256(sub_zonefile.as_bytes())[16..]);
    assert_eq!(
        get(&api, "/v1/names/alice.lett.btc").await.2,
        json!({
            "address": owner, "blockchain": "stacks", "last_txid": tx, "resolver": "https://resolver.example",
            "status": "registered_subdomain", "zonefile": sub_zonefile, "zonefile_hash": sub_hash,
        })
    );
    assert_eq!(
        get(&api, &format!("/v1/names/alice.lett.btc/zonefile/{sub_hash}")).await.2,
        json!({ "zonefile": sub_zonefile })
    );
    let (code, location, _) = get(&api, "/v1/names/bob.lett.btc?x=1").await;
    assert_eq!(
        (code, location.as_deref()),
        (302, Some("https://resolver.example/v1/names/bob.lett.btc?x=1"))
    );
    assert!(get(&api, &format!("/v1/addresses/stacks/{owner}")).await.2["names"]
        .as_array()
        .unwrap()
        .contains(&json!("alice.lett.btc")));

    // A fork at height 1 without the registrations overtakes: every BNS answer forgets them.
    let genesis = (
        block["parent_index_block_hash"].as_str().unwrap().into(),
        block["parent_block_hash"].as_str().unwrap().into(),
    );
    let (fork1, f1) = empty_block(&block, 1, 0xa1, &genesis);
    let (fork2, _) = empty_block(&block, 2, 0xa2, &f1);
    ingest_all(
        &ts.store,
        [event(900_002, "/new_block", &fork1), event(900_003, "/new_block", &fork2)],
        &[],
        "fork",
    )
    .await;
    assert_eq!(get(&api, "/v1/names").await.2, json!([]));
    assert_eq!(get(&api, "/v1/names/lett.btc").await.0, 404);
    assert_eq!(get(&api, "/v1/names/lett.btc/subdomains").await.2, json!([]));
    assert_eq!(get(&api, "/v1/names/alice.lett.btc").await.0, 404);
    assert_eq!(get(&api, &format!("/v1/addresses/stacks/{owner}")).await.2, json!({ "names": [] }));

    // The original block's fork grows longer: the names come back as they were.
    let original =
        (block["index_block_hash"].as_str().unwrap().into(), block["block_hash"].as_str().unwrap().into());
    let (back2, b2) = empty_block(&block, 2, 0xb2, &original);
    let (back3, _) = empty_block(&block, 3, 0xb3, &b2);
    ingest_all(
        &ts.store,
        [event(900_004, "/new_block", &back2), event(900_005, "/new_block", &back3)],
        &[],
        "back",
    )
    .await;
    assert_eq!(get(&api, "/v1/names").await.2, json!(listed));
    assert_eq!(get(&api, "/v1/names/lett.btc/subdomains").await.2, json!(["alice.lett.btc"]));
    assert_eq!(get(&api, "/v1/names/wemusic.btc").await.2["address"], json!(names["wemusic.btc"].0));
    ts.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_bns_names_follow_the_chain() {
    names_follow_the_chain(Db::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_bns_names_follow_the_chain() {
    names_follow_the_chain(Db::Postgres).await;
}
