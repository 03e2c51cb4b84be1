//! A 64 MiB node answer streams through the `/v2` proxy without being held in memory: the
//! process's resident memory is sampled while the client reads, and its peak growth must stay far
//! below the body size. Alone in its own test binary so that no other test's allocations blur
//! the measurement.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{serve, Db, TestStore};
use futures_util::StreamExt;
use stacks_ledger::ledger::Network;
use stacks_ledger::v2::{V2Policy, V2Settings, SOURCE_HEADER};
use stacks_node_proxy::{ProxyConfig, Url};
use warp::Filter;

const CHUNK: usize = 64 * 1024;
const BODY: usize = 64 * 1024 * 1024;

/// A `/proc/self/status` field in KiB (`VmRSS`, `VmHWM`).
fn status_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_64_mib_body_streams_through_without_being_buffered() {
    // Only meaningful where /proc reports memory (Linux).
    let Some(_) = status_kib("VmRSS:") else { return };
    let Some(ts) = TestStore::new(Db::Sqlite, "v2_stream_memory", Network::Testnet).await else { return };

    // The node makes each chunk only when the proxy asks for it.
    let big = warp::path!("v2" / "big").map(|| {
        let chunks = (0..BODY / CHUNK)
            .map(|i| Ok::<_, std::io::Error>(bytes::Bytes::from(vec![(i % 251) as u8; CHUNK])));
        warp::reply::stream(futures_util::stream::iter(chunks))
    });
    let node = serve(big).await;
    let mut config = ProxyConfig::new(Url::parse(&format!("http://{node}")).unwrap());
    config.request_timeout = Duration::from_secs(30);
    let settings = V2Settings { node: Some(Arc::new(config)), policy: V2Policy::Proxy, transfer_fee: 1 };
    let api = serve(stacks_ledger::api::routes_with(
        Arc::clone(&ts.store),
        settings,
        common::faucets(&ts.store),
        &common::env_config(),
    ))
    .await;

    let client = reqwest::Client::new();
    // Warm up the connections and the allocator with a first small exchange.
    let _ = client.get(format!("http://{api}/v2/info")).send().await.unwrap().bytes().await;
    // Reset the peak (VmHWM) where the kernel allows it; the samples below do not depend on it.
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let baseline = status_kib("VmRSS:").unwrap();

    let res = client.get(format!("http://{api}/v2/big")).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()[SOURCE_HEADER], "node");
    let mut stream = res.bytes_stream();
    let (mut total, mut largest, mut peak, mut chunks) = (0usize, 0usize, baseline, 0usize);
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.unwrap();
        // Every byte is the one the node sent at that offset.
        for (offset, byte) in chunk.iter().enumerate() {
            let at = total + offset;
            assert_eq!(*byte, ((at / CHUNK) % 251) as u8, "byte {at}");
        }
        total += chunk.len();
        largest = largest.max(chunk.len());
        chunks += 1;
        if chunks % 16 == 0 {
            peak = peak.max(status_kib("VmRSS:").unwrap());
        }
    }
    peak = peak.max(status_kib("VmRSS:").unwrap());
    let hwm = status_kib("VmHWM:").unwrap_or(peak);
    let growth_kib = peak.saturating_sub(baseline);
    println!(
        "streamed {} MiB in {chunks} chunks (largest {largest} bytes); RSS baseline {baseline} KiB, \
         sampled peak {peak} KiB (+{growth_kib} KiB), VmHWM {hwm} KiB",
        total / (1024 * 1024)
    );
    assert_eq!(total, BODY);
    // Far below the body: a buffered body would add at least 64 MiB.
    assert!(growth_kib < 16 * 1024, "RSS grew {growth_kib} KiB while streaming {BODY} bytes");
    // hyper's read buffer bounds a chunk (at most ~400 KiB); nothing near the body size.
    assert!(largest <= 1024 * 1024, "a chunk of {largest} bytes was held at once");
    ts.finish().await;
}
