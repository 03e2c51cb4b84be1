//! `serve --event-ack logged` (`ingest::inbox`): the node gets its `200` once the event is
//! logged, and the ledger applies the events after, in batches. On SQLite and PostgreSQL:
//! - the ledger it builds is the one a replay of its own raw log builds, row for row;
//! - a POST with an invalid body is refused and takes no id;
//! - a stop (SIGTERM) applies what is queued and empties the inbox;
//! - a process killed with events logged and not applied loses none: the next start applies
//!   them, in order, under their ids;
//! - the store's inbox itself: logged events survive a reopen and [`recover`] applies them.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::server::{free_port, Server, WAIT};
use common::{devnet_config, devnet_events, digest_diff, Db, TestDb, TestStore};
use stacks_ledger::events::{EventPath, RawEvent};
use stacks_ledger::ingest::inbox::recover;
use stacks_ledger::ingest::{EventInbox, EventSink, IncomingEvent, RawEventLog};
use stacks_ledger::ledger::Network;
use stacks_ledger::store::Store;

fn logged_serve(db: &str, events_port: u16, api_port: u16, ack: &str, log: &Path) -> Server {
    let args = vec![
        "--db".into(),
        db.into(),
        "--events-bind".into(),
        format!("127.0.0.1:{events_port}"),
        "--api-bind".into(),
        format!("127.0.0.1:{api_port}"),
        "--event-ack".into(),
        ack.into(),
    ];
    Server::start(&args, events_port, log)
}

async fn post(client: &reqwest::Client, port: u16, path: &str, body: &str) -> (u16, String) {
    let res = client
        .post(format!("http://127.0.0.1:{port}{path}"))
        .header("content-type", "application/json")
        .body(body.to_owned())
        .send()
        .await
        .unwrap();
    (res.status().as_u16(), res.text().await.unwrap())
}

/// SIGTERM, then waits for the exit (a stop applies what is queued first).
fn stop(server: &mut Server) {
    let pid = rustix::process::Pid::from_raw(server.child.id() as i32).expect("a child's pid");
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).expect("SIGTERM to the server");
    let started = Instant::now();
    while server.child.try_wait().unwrap().is_none() {
        assert!(started.elapsed() < WAIT, "serve did not stop:\n{}", server.log());
        std::thread::sleep(Duration::from_millis(50));
    }
}

async fn raw_log(store: &Store) -> Vec<RawEvent> {
    store.raw_events_after(None, usize::MAX).await.unwrap()
}

/// The store a replay of `log` (ids and receive times as logged) builds, one event at a time,
/// must equal `store` in every row.
async fn assert_same_as_replay(store: &Store, log: &[RawEvent], db: Db, label: &str) {
    let Some(reference) = TestStore::new(db, "inbox_reference", Network::Testnet).await else { return };
    let replay = common::ingest_all(&reference.store, log.iter().cloned(), &[], label).await;
    assert_eq!(replay.applied, log.len(), "{label}: the replay applies every event");
    let (a, b) = (store.ledger_digest().await.unwrap(), reference.store.ledger_digest().await.unwrap());
    assert!(a == b, "{label}: differs from a replay of its raw log: {:#?}", digest_diff(&a, &b));
    reference.finish().await;
}

fn payloads(events: &[RawEvent]) -> Vec<(&str, &str)> {
    events.iter().map(|e| (e.path.as_str(), e.payload.as_str())).collect()
}

async fn logged_acks_build_the_ledger_a_replay_builds(db: Db) {
    let Some(test) = TestDb::new(db, "inbox_logged").await else { return };
    let (events, _) = devnet_events(devnet_config(11, 40, 3));
    let dir = tempfile::tempdir().unwrap();
    let (events_port, api_port) = (free_port(), free_port());
    let mut server = logged_serve(&test.url, events_port, api_port, "logged", &dir.path().join("serve.log"));
    server.wait_listening().await;
    let client = reqwest::Client::new();

    let (status, body) = post(&client, events_port, "/new_mempool_tx", "{not json").await;
    assert_eq!(status, 400, "an invalid body is refused: {body}");
    let (status, body) = post(&client, events_port, "/new_block", "{}").await;
    assert_eq!(status, 500, "a body that is not a block is refused: {body}");
    for ev in &events {
        let (status, body) = post(&client, events_port, &ev.path, &ev.payload).await;
        assert_eq!((status, body.as_str()), (200, r#"{"result":"ok"}"#), "event {}", ev.id);
    }
    stop(&mut server);
    assert!(server.log().contains("events are acknowledged once logged"), "{}", server.log());
    // The life sign: a line per block, though blocks are applied in batches.
    let blocks = events.iter().filter(|e| e.path == EventPath::NewBlock.as_str()).count();
    assert_eq!(server.log().matches("block applied").count(), blocks, "{}", server.log());

    let store = Store::open(&test.url, Network::Testnet, stacks_ledger::compose::tx_render()).await.unwrap();
    let log = raw_log(&store).await;
    assert_eq!(
        log.iter().map(|e| e.id).collect::<Vec<_>>(),
        (1..=events.len() as i64).collect::<Vec<_>>(),
        "the refused bodies took no id"
    );
    assert_eq!(payloads(&log), payloads(&events), "every event, in order");
    assert!(store.inbox_pending().await.unwrap().is_empty());
    assert_same_as_replay(&store, &log, db, "logged serve").await;
    store.close().await;
    test.drop_db().await;
}

async fn a_killed_process_loses_no_logged_event(db: Db) {
    let Some(test) = TestDb::new(db, "inbox_killed").await else { return };
    let (events, _) = devnet_events(devnet_config(12, 40, 3));
    let dir = tempfile::tempdir().unwrap();
    let client = reqwest::Client::new();
    let (events_port, api_port) = (free_port(), free_port());
    let mut server = logged_serve(&test.url, events_port, api_port, "logged", &dir.path().join("serve.log"));
    server.wait_listening().await;
    for ev in &events {
        let (status, body) = post(&client, events_port, &ev.path, &ev.payload).await;
        assert_eq!(status, 200, "event {}: {body}", ev.id);
    }
    // SIGKILL right after the last 200: no drain.
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    let pending = {
        let store =
            Store::open(&test.url, Network::Testnet, stacks_ledger::compose::tx_render()).await.unwrap();
        let applied = raw_log(&store).await.len();
        let pending = store.inbox_pending().await.unwrap();
        store.close().await;
        println!("{db:?}: at the kill, {applied} applied and {} logged only", pending.len());
        assert_eq!(applied + pending.len(), events.len(), "every acknowledged event is applied or logged");
        pending.len()
    };

    // The next start (acknowledging after the apply, this time) applies them first.
    let mut server =
        logged_serve(&test.url, events_port, api_port, "applied", &dir.path().join("serve2.log"));
    server.wait_listening().await;
    stop(&mut server);
    if pending > 0 {
        assert!(server.log().contains("applied the events logged before this start"), "{}", server.log());
    }
    let store = Store::open(&test.url, Network::Testnet, stacks_ledger::compose::tx_render()).await.unwrap();
    let log = raw_log(&store).await;
    assert_eq!(payloads(&log), payloads(&events), "every event, in order");
    assert_same_as_replay(&store, &log, db, "after the kill").await;
    store.close().await;
    test.drop_db().await;
}

/// The store's inbox on its own: what is logged survives a reopen and is applied by `recover`
/// under its ids and receive times; the applied rows are then deleted.
async fn the_inbox_survives_a_reopen(db: Db) {
    let Some(test) = TestDb::new(db, "inbox_store").await else { return };
    let (events, _) = devnet_events(devnet_config(13, 20, 2));
    let store = Store::open(&test.url, Network::Testnet, stacks_ledger::compose::tx_render()).await.unwrap();
    let half = events.len() / 2;
    for ev in &events[..half] {
        store.ingest(common::incoming(ev)).await.unwrap();
    }
    assert_eq!(store.inbox_next_id().await.unwrap(), half as i64 + 1);
    // What `serve --event-ack applied` does at start: nothing to apply, and on SQLite no
    // inbox file made to find that out.
    assert_eq!(recover(&store, &store, 7).await.unwrap(), 0);
    let inbox_file = test.sqlite_path().map(|p| format!("{}-inbox", p.display()));
    if let Some(f) = &inbox_file {
        assert!(!Path::new(f).exists(), "{f} made without a logged event");
    }
    let mut logged = Vec::new();
    for (i, ev) in events[half..].iter().enumerate() {
        let incoming = IncomingEvent {
            id: Some((half + 1 + i) as i64),
            receive_timestamp: Some(format!("2026-11-29 12:00:{:02}+00", i % 60)),
            path: EventPath::from_path(&ev.path).unwrap(),
            payload: ev.payload.clone(),
        };
        store.inbox_put(&incoming).await.unwrap();
        logged.push(incoming);
    }
    let invalid = IncomingEvent { id: Some(9_999), payload: "{}".into(), ..logged[0].clone() };
    let invalid = IncomingEvent { path: EventPath::NewBlock, ..invalid };
    assert!(store.inbox_put(&invalid).await.is_err(), "an invalid body is not logged");
    assert_eq!(store.inbox_next_id().await.unwrap(), events.len() as i64 + 1);
    if let Some(f) = &inbox_file {
        assert!(Path::new(f).exists(), "{f}: the SQLite inbox is a file of its own");
    }
    store.close().await;

    let store = Store::open(&test.url, Network::Testnet, stacks_ledger::compose::tx_render()).await.unwrap();
    assert_eq!(store.inbox_pending().await.unwrap(), logged, "logged events survive the reopen");
    assert_eq!(recover(&store, &store, 7).await.unwrap(), logged.len());
    assert!(store.inbox_pending().await.unwrap().is_empty());
    let log = raw_log(&store).await;
    assert_eq!(payloads(&log), payloads(&events));
    assert_eq!(log[half].receive_timestamp, "2026-11-29 12:00:00+00", "the logged receive time is kept");
    assert_same_as_replay(&store, &log, db, "recovered").await;
    store.close().await;
    test.drop_db().await;
}

#[tokio::test]
async fn sqlite_logged_acks_build_the_ledger_a_replay_builds() {
    logged_acks_build_the_ledger_a_replay_builds(Db::Sqlite).await;
}

#[tokio::test]
async fn postgres_logged_acks_build_the_ledger_a_replay_builds() {
    logged_acks_build_the_ledger_a_replay_builds(Db::Postgres).await;
}

#[tokio::test]
async fn sqlite_a_killed_process_loses_no_logged_event() {
    a_killed_process_loses_no_logged_event(Db::Sqlite).await;
}

#[tokio::test]
async fn postgres_a_killed_process_loses_no_logged_event() {
    a_killed_process_loses_no_logged_event(Db::Postgres).await;
}

#[tokio::test]
async fn sqlite_the_inbox_survives_a_reopen() {
    the_inbox_survives_a_reopen(Db::Sqlite).await;
}

#[tokio::test]
async fn postgres_the_inbox_survives_a_reopen() {
    the_inbox_survives_a_reopen(Db::Postgres).await;
}
