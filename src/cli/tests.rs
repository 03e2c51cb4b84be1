//! The ledger commands end to end: arguments parsed as the binary parses them, then the command
//! run against a `MemorySink` (import/export semantics) or a real SQLite store (`serve`).

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::Parser;
use stacks_ledger::config::{BindAddr, Config, ConfigArgs, Network};
use stacks_ledger::events::{EventPath, RawEvent, TsvReader};
use stacks_ledger::ingest::error_chain;
use stacks_ledger::ingest::import::ImportSummary;
use stacks_ledger::ingest::memory::{FailKind, MemorySink};
use stacks_ledger::ingest::progress::ProgressMode;
use stacks_ledger::ingest::{EventSink, IncomingEvent};
use stacks_ledger::store::Store;

use super::ledger::{self, ExportArgs, ImportArgs};
use super::{Cli, Command, LedgerCommand};

/// A shared fixture, or `None` outside CI when the shared data is absent.
fn fixture(name: &str) -> Option<PathBuf> {
    test_support::shared_path(&format!("fixtures/{name}"))
}

fn read_tsv(path: &Path) -> Vec<RawEvent> {
    TsvReader::new(BufReader::new(File::open(path).unwrap())).collect::<Result<_, _>>().unwrap()
}

fn parse(args: &[&str]) -> Cli {
    Cli::try_parse_from(std::iter::once("stacks-ledger").chain(args.iter().copied()))
        .unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

fn import_args(args: &[&str]) -> ImportArgs {
    match parse(args).command {
        Command::Ledger(LedgerCommand::ImportEvents(a)) => a,
        other => panic!("{other:?}"),
    }
}

fn export_args(args: &[&str]) -> ExportArgs {
    match parse(args).command {
        Command::Ledger(LedgerCommand::ExportEvents(a)) => a,
        other => panic!("{other:?}"),
    }
}

/// `import-events --file FILE EXTRA…`, the error rendered as `main` prints it.
async fn import(sink: &MemorySink, file: &Path, extra: &[&str]) -> Result<ImportSummary, String> {
    let file = file.to_str().unwrap();
    let args = import_args(&[&["import-events", "--file", file], extra].concat());
    ledger::import(sink, &args, ProgressMode::Hidden).await.map_err(|e| error_chain(e.as_ref()))
}

async fn export(sink: &MemorySink, file: &Path, extra: &[&str]) -> Result<u64, String> {
    let file = file.to_str().unwrap();
    let args = export_args(&[&["export-events", "--file", file], extra].concat());
    ledger::export(sink, &args).await.map(|s| s.events).map_err(|e| error_chain(e.as_ref()))
}

fn write_lines(dir: &Path, name: &str, lines: &[String]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, lines.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
    path
}

fn lines_of(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path).unwrap().lines().map(str::to_owned).collect()
}

#[tokio::test]
async fn imports_a_fixture_with_its_ids_and_timestamps() {
    let Some(path) = fixture("epoch-3-transition.tsv") else { return };
    let sink = MemorySink::new();
    let summary = import(&sink, &path, &[]).await.unwrap();
    let expected = read_tsv(&path);
    assert_eq!(summary.counts.applied, 238);
    assert_eq!(summary.counts.skipped, 0);
    assert_eq!(summary.counts.blocks, 52);
    assert_eq!(summary.lines, 238);
    assert_eq!(summary.resumed_after, None);
    assert_eq!(sink.events(), expected);
    assert!(summary.to_string().starts_with("238 events applied, 0 skipped, 52 blocks in "), "{summary}");
}

#[tokio::test]
async fn importing_the_same_file_twice_adds_nothing() {
    for name in ["mainnet-block0.tsv", "poisonmicroblock.tsv"] {
        let Some(path) = fixture(name) else { return };
        let sink = MemorySink::new();
        let first = import(&sink, &path, &[]).await.unwrap();
        let stored = sink.events();
        let again = import(&sink, &path, &[]).await.unwrap();
        assert_eq!(sink.events(), stored, "{name}");
        assert_eq!(again.counts.applied, 0, "{name}");
        assert_eq!(again.counts.skipped, first.lines, "{name}");
        assert_eq!(again.resumed_after, stored.last().map(|e| e.id), "{name}");
    }
}

#[tokio::test]
async fn duplicate_ids_in_a_file_are_stored_once() {
    let Some(path) = fixture("poisonmicroblock.tsv") else { return };
    let sink = MemorySink::new();
    let summary = import(&sink, &path, &[]).await.unwrap();
    assert_eq!((summary.counts.applied, summary.counts.skipped, summary.counts.blocks), (1, 1, 1));
    assert_eq!(sink.event_count(), 1);
}

#[tokio::test]
async fn resumes_after_a_partial_import() {
    let Some(path) = fixture("epoch-3-transition.tsv") else { return };
    let sink = MemorySink::new();
    sink.fail_after(100, FailKind::Store);
    let err = import(&sink, &path, &[]).await.unwrap_err();
    let id_101 = read_tsv(&path)[100].id;
    assert!(err.starts_with(&format!("line 101: event {id_101} (")), "{err}");
    assert!(err.ends_with("was not applied: store error: simulated store failure"), "{err}");
    assert_eq!(sink.event_count(), 100, "what came before stays");

    sink.heal();
    let resumed = import(&sink, &path, &[]).await.unwrap();
    assert_eq!(resumed.resumed_after, Some(read_tsv(&path)[99].id));
    assert_eq!((resumed.counts.skipped, resumed.counts.applied), (100, 138));
    assert_eq!(sink.events(), read_tsv(&path));
}

#[tokio::test]
async fn a_malformed_line_stops_the_import_at_its_line_number() {
    let Some(path) = fixture("mainnet-block0.tsv") else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut lines = lines_of(&path);
    lines.insert(5, "x6\t2024-01-01 00:00:00+00\t/new_block\t{}".into());
    let bad = write_lines(dir.path(), "bad.tsv", &lines);
    let sink = MemorySink::new();
    let err = import(&sink, &bad, &[]).await.unwrap_err();
    assert_eq!(err, "line 6: invalid id `x6`");
    assert_eq!(sink.events(), read_tsv(&path)[..5], "the five lines before it stay, none after");

    // An unknown path and a payload the store refuses stop it the same way.
    lines[5] = "6\tts\t/new_thing\t{}".into();
    let bad = write_lines(dir.path(), "bad-path.tsv", &lines);
    let err = import(&MemorySink::new(), &bad, &[]).await.unwrap_err();
    assert_eq!(err, "line 6: unknown event path `/new_thing`");
    lines[5] = "6\tts\t/new_block\t{\"a\":".into();
    let bad = write_lines(dir.path(), "bad-json.tsv", &lines);
    let err = import(&MemorySink::new(), &bad, &[]).await.unwrap_err();
    assert!(err.starts_with("line 6: payload is not valid JSON: EOF while parsing"), "{err}");
}

#[tokio::test]
async fn export_then_import_gives_identical_raw_events() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["mainnet-block0.tsv", "epoch-3-transition.tsv", "mocknet.tsv"] {
        let Some(path) = fixture(name) else { return };
        let original = MemorySink::new();
        import(&original, &path, &[]).await.unwrap();
        let exported = dir.path().join(name);
        assert_eq!(export(&original, &exported, &[]).await.unwrap(), original.event_count() as u64);
        assert!(std::fs::read(&exported).unwrap() == std::fs::read(&path).unwrap(), "{name}: bytes differ");

        let copy = MemorySink::new();
        import(&copy, &exported, &[]).await.unwrap();
        assert_eq!(copy.events(), original.events(), "{name}");
    }
}

#[tokio::test]
async fn export_refuses_to_overwrite_without_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("events.tsv");
    std::fs::write(&file, "keep me").unwrap();
    let sink = MemorySink::new();
    let live = IncomingEvent {
        id: None,
        receive_timestamp: None,
        path: EventPath::NewBurnBlock,
        payload: "{}".into(),
    };
    sink.ingest(live).await.unwrap();
    let err = export(&sink, &file, &[]).await.unwrap_err();
    assert_eq!(err, format!("{} already exists; add --overwrite-file to replace it", file.display()));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep me");
    assert_eq!(export(&sink, &file, &["--overwrite-file"]).await.unwrap(), 1);
    let written = read_tsv(&file);
    assert_eq!(written, sink.events());
    assert_eq!(export(&MemorySink::new(), &file, &["--overwrite-file"]).await.unwrap(), 0);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "", "an empty store exports an empty file");
    let err = export(&sink, Path::new("local:/tmp/x.tsv"), &[]).await.unwrap_err();
    assert!(err.starts_with("`local:` paths"), "{err}");
}

#[tokio::test]
async fn refuses_a_store_the_file_does_not_continue() {
    let Some(path) = fixture("mainnet-block0.tsv") else { return };
    let file_events = read_tsv(&path);
    let replayed = |id, payload: &str| IncomingEvent {
        id: Some(id),
        receive_timestamp: Some("2024-01-01 00:00:00+00".into()),
        path: EventPath::NewBlock,
        payload: payload.into(),
    };

    // The store's last id is in the file, with another payload.
    let sink = MemorySink::new();
    sink.ingest(replayed(5, "{\"other\":true}")).await.unwrap();
    let err = import(&sink, &path, &[]).await.unwrap_err();
    assert_eq!(
        err,
        "the store is not empty (last event id 5) and the file does not continue it (line 5 has that id with \
         another path or payload); add --wipe-db to replace its contents, or --force to import the lines after \
         its last id anyway"
    );
    assert_eq!(sink.event_count(), 1, "nothing was applied");

    // --force imports what comes after the store's last id.
    let forced = import(&sink, &path, &["--force"]).await.unwrap();
    assert_eq!((forced.counts.skipped, forced.counts.applied), (5, 5));
    assert_eq!(sink.events()[1..], file_events[5..]);

    // The store's last id is not in the file at all.
    let sink = MemorySink::new();
    sink.ingest(replayed(99, "{}")).await.unwrap();
    let err = import(&sink, &path, &[]).await.unwrap_err();
    assert!(err.contains("(last event id 99)") && err.contains("(no line of the file has that id)"), "{err}");

    // --wipe-db starts over.
    let wiped = import(&sink, &path, &["--wipe-db"]).await.unwrap();
    assert!(wiped.wiped);
    assert_eq!(wiped.counts.applied, 10);
    assert_eq!(sink.events(), file_events);
}

#[tokio::test]
async fn a_missing_file_is_a_clear_error() {
    let err = import(&MemorySink::new(), Path::new("/nonexistent/events.tsv"), &[]).await.unwrap_err();
    assert_eq!(err, "cannot open /nonexistent/events.tsv: No such file or directory (os error 2)");
}

#[test]
fn flags_parse_before_or_after_the_subcommand() {
    let cli = parse(&[
        "--network",
        "mainnet",
        "import-events",
        "--file",
        "f.tsv",
        "--db",
        "sqlite://x.db",
        "--wipe-db",
    ]);
    assert_eq!(cli.config.network, Some(Network::Mainnet));
    assert_eq!(cli.config.db.as_deref(), Some("sqlite://x.db"));
    let Command::Ledger(LedgerCommand::ImportEvents(args)) = cli.command else { panic!() };
    assert!(args.wipe_db && !args.force);
    assert!(matches!(
        parse(&["serve", "--events-bind", "0.0.0.0:3700"]).command,
        Command::Ledger(LedgerCommand::Serve(_))
    ));
    assert!(matches!(parse(&["decode-clarity", "0x0100"]).command, Command::DecodeClarity { .. }));
    assert!(
        Cli::try_parse_from(["stacks-ledger", "import-events", "--file", "f", "--mode", "pruned"]).is_err()
    );
    assert!(Cli::try_parse_from(["stacks-ledger", "import-events"]).is_err(), "--file is required");
}

fn test_config(port: u16) -> Config {
    let args = ConfigArgs {
        events_bind: Some(format!("127.0.0.1:{port}")),
        metrics_bind: Some("off".into()),
        ..ConfigArgs::default()
    };
    Config::resolve(&args, |_| None).unwrap()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

async fn sqlite_store(dir: &tempfile::TempDir, network: Network) -> Arc<Store> {
    let url = format!("sqlite://{}", dir.path().join("ledger.db").display());
    Arc::new(Store::open(&url, network, stacks_ledger::compose::tx_render()).await.unwrap())
}

/// A node posts the mocknet fixture to the observer; the API then serves its chain tip.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_feeds_the_api_from_the_observer_until_shutdown() {
    let Some(path) = fixture("mocknet.tsv") else { return };
    let dir = tempfile::tempdir().unwrap();
    let (events_port, api_port) = (free_port(), free_port());
    let args = ConfigArgs {
        events_bind: Some(format!("127.0.0.1:{events_port}")),
        api_bind: Some(format!("127.0.0.1:{api_port}")),
        metrics_bind: Some("127.0.0.1:0".into()),
        ..ConfigArgs::default()
    };
    let config = Config::resolve(&args, |_| None).unwrap();
    let store = sqlite_store(&dir, Network::Testnet).await;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        ledger::serve(&config, store, async {
            let _ = stopped.await;
        })
        .await
    });

    let client = reqwest::Client::new();
    let api = format!("http://127.0.0.1:{api_port}/extended");
    let mut up = false;
    for _ in 0..100 {
        if client.get(&api).send().await.is_ok() {
            up = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(up, "the API did not come up");
    for event in TsvReader::new(BufReader::new(File::open(path).unwrap())) {
        let event = event.unwrap();
        let res = client
            .post(format!("http://127.0.0.1:{events_port}{}", event.path))
            .header("content-type", "application/json")
            .body(event.payload)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 200, "event {} refused: {}", event.id, res.text().await.unwrap());
    }
    let status: serde_json::Value = client.get(&api).send().await.unwrap().json().await.unwrap();
    assert_eq!(status["chain_tip"]["block_height"], 28, "{status}");
    assert_eq!(status["chain_tip"]["microblock_sequence"], 1, "{status}");

    stop.send(()).unwrap();
    tokio::time::timeout(std::time::Duration::from_secs(10), server).await.unwrap().unwrap().unwrap();
    // The store was closed: SQLite's last connection checkpointed the WAL into the database.
    let wal = dir.path().join("ledger.db-wal");
    assert!(std::fs::metadata(&wal).map_or(true, |m| m.len() == 0), "{wal:?} left behind");
}

#[tokio::test]
async fn serve_reports_a_busy_port() {
    let taken = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = taken.local_addr().unwrap().port();
    let dir = tempfile::tempdir().unwrap();
    let store = sqlite_store(&dir, Network::Testnet).await;
    let err = ledger::serve(&test_config(port), store, std::future::pending()).await.unwrap_err();
    let message = error_chain(err.as_ref());
    assert!(
        message.starts_with(&format!("cannot listen for node events on 127.0.0.1:{port}: ")),
        "{message}"
    );
    assert_eq!(test_config(port).events_bind, BindAddr { host: "127.0.0.1".into(), port });
}

/// `stacks-ledger demo`: the tip height rises block after block, and a WebSocket subscriber
/// receives the new blocks; `config` and `demo` parse.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demo_serves_a_living_chain() {
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;

    assert!(matches!(parse(&["config"]).command, Command::Config));
    assert!(matches!(parse(&["demo", "--block-time-ms", "500"]).command, Command::Demo(_)));
    let args = ConfigArgs {
        events_bind: Some("127.0.0.1:0".into()),
        api_bind: Some("127.0.0.1:0".into()),
        metrics_bind: Some("off".into()),
        ..ConfigArgs::default()
    };
    let config = Config::resolve(&args, |_| None).unwrap();
    let demo = super::demo::DemoArgs { seed: 3, history_blocks: 3, block_time_ms: 300, txs_per_block: 3 };
    let (bound_tx, bound_rx) = tokio::sync::oneshot::channel();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(super::demo::run(
        config,
        demo,
        async {
            let _ = stopped.await;
        },
        move |bound| {
            let _ = bound_tx.send(bound);
        },
    ));
    let api = bound_rx.await.expect("the demo binds").api;
    // The URLs the demo prints answer.
    let printed = super::demo::urls(api).join(" ");
    let url = |start: &str, end: &str| {
        let word = printed
            .split_whitespace()
            .map(|w| w.trim_end_matches(')'))
            .find(|w| w.starts_with(start) && w.ends_with(end));
        word.unwrap_or_else(|| panic!("no {start}…{end} in {printed}")).to_owned()
    };
    let http = reqwest::Client::new();
    let list = http
        .post(url("http://", "/rosetta/v1/network/list"))
        .json(&serde_json::json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(list.status(), 200, "Rosetta");
    let docs = http.get(url("http://", "/extended/docs")).send().await.unwrap();
    assert_eq!(docs.status(), 200, "the API reference");
    let (mut ws, _) = tokio_tungstenite::connect_async(url("ws://", "/extended/v1/ws")).await.unwrap();
    let sub =
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "subscribe", "params": {"event": "block"}});
    ws.send(Message::text(sub.to_string())).await.unwrap();

    let height = || {
        let http = http.clone();
        async move {
            let v: serde_json::Value =
                http.get(format!("http://{api}/extended")).send().await.unwrap().json().await.unwrap();
            v["chain_tip"]["block_height"].as_u64().unwrap_or(0)
        }
    };
    let mut first = 0;
    for _ in 0..100 {
        first = height().await;
        if first >= 3 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(first >= 3, "the history is in: {first}");
    // Notifications of the history may come first; wait for two blocks made after it.
    let mut blocks = Vec::new();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    while blocks.iter().filter(|h| **h > first).count() < 2 {
        let msg = tokio::time::timeout_at(deadline, ws.next()).await.expect("block notifications");
        let Some(Ok(Message::Text(text))) = msg else { continue };
        let v: serde_json::Value = serde_json::from_str(text.as_str()).unwrap();
        if v["method"] == "block" {
            blocks.push(v["params"]["height"].as_u64().unwrap());
        }
    }
    assert!(height().await > first, "the tip rose");
    stop.send(()).unwrap();
    tokio::time::timeout(std::time::Duration::from_secs(20), server).await.unwrap().unwrap().unwrap();
}

/// A writer that records each write it is handed, the first one only after a pause.
#[derive(Clone, Default)]
struct SlowRecorder(Arc<std::sync::Mutex<Vec<Vec<u8>>>>);

impl std::io::Write for SlowRecorder {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut writes = self.0.lock().unwrap();
        if writes.is_empty() {
            std::thread::sleep(std::time::Duration::from_millis(300));
        }
        writes.push(buf.to_vec());
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn log_lines_are_written_whole_in_batches_and_none_is_lost() {
    use std::io::Write as _;
    use tracing_subscriber::fmt::MakeWriter as _;

    let out = SlowRecorder::default();
    let (writer, guard) = super::log_writer(out.clone());
    // Four threads log 5,000 lines each while the first write is held up.
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let writer = writer.clone();
            std::thread::spawn(move || {
                for i in 0..5_000 {
                    writer.make_writer().write_all(format!("thread {t} line {i}\n").as_bytes()).unwrap();
                }
            })
        })
        .collect();
    threads.into_iter().for_each(|t| t.join().unwrap());
    drop(guard);

    let writes = out.0.lock().unwrap();
    let text = String::from_utf8(writes.concat()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 20_000, "every line arrives once the guard is dropped");
    for t in 0..4 {
        let own: Vec<&str> =
            lines.iter().copied().filter(|l| l.starts_with(&format!("thread {t} "))).collect();
        let expected: Vec<String> = (0..5_000).map(|i| format!("thread {t} line {i}")).collect();
        assert_eq!(own, expected, "thread {t}'s lines whole and in order");
    }
    // The lines queued behind the slow first write reach the writer as 64 KiB batches, not
    // one write each.
    assert!(writes.len() < 100, "{} writes for 20,000 lines", writes.len());
}
