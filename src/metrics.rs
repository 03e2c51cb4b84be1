//! Prometheus metrics: recorded through the `metrics` facade from wherever the thing happens
//! (ingestion, the HTTP layer, live updates, faucets), rendered as the Prometheus text format
//! by `metrics-exporter-prometheus` and served by warp at `/metrics` on the metrics address
//! (`api::scrape`, which samples the API's parts at each scrape: this module, recorded into from
//! every layer, names none above it). Every metric is listed in docs/operability.md.
//!
//! The recorder is process-wide: [`install`] is idempotent, and recording before it (or in a
//! process that never installs it, such as `import-events`) costs next to nothing.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

use metrics::{counter, gauge, histogram, Counter, Histogram, Label};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

/// Latency buckets, seconds: 1 ms to 10 s.
const LATENCY_BUCKETS: &[f64] =
    &[0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
/// Whether [`install`] made its recorder the process's: only then are metric handles worth
/// keeping (before, the facade hands out handles that record nothing, and always would).
static INSTALLED: AtomicBool = AtomicBool::new(false);
/// The last tip heights seen, for the lag gauge (0: not known yet).
static LEDGER_TIP: AtomicU64 = AtomicU64::new(0);
static NODE_TIP: AtomicU64 = AtomicU64::new(0);

/// Installs the process-wide recorder (once) and returns the handle that renders it.
pub fn install() -> PrometheusHandle {
    HANDLE
        .get_or_init(|| {
            let builder = PrometheusBuilder::new()
                .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), LATENCY_BUCKETS)
                .expect("the latency buckets are not empty");
            let recorder = builder.build_recorder();
            let handle = recorder.handle();
            // Another recorder already installed (a test binary that made its own) keeps its
            // place; this handle then renders nothing, which the tests would show.
            match metrics::set_global_recorder(recorder) {
                Ok(()) => {
                    INSTALLED.store(true, Ordering::Release);
                    keep_up(handle.clone());
                }
                Err(e) => tracing::warn!("metrics recorder not installed: {e}"),
            }
            handle
        })
        .clone()
}

/// How often the recorder folds the histogram samples recorded since into their buckets.
pub const UPKEEP_EVERY: Duration = Duration::from_secs(5);

/// Folds pending histogram samples every [`UPKEEP_EVERY`], on a thread of its own for the
/// life of the process. The recorder keeps each sample until it is folded, which it does only
/// at a scrape or an upkeep (`build_recorder` starts no upkeep of its own): with nobody
/// scraping `/metrics`, `serve` grew by ~20 bytes a request (5.4 MB every 10 s at 26,000
/// cached answers a second; `docs/operability.md`, "Metrics").
fn keep_up(handle: PrometheusHandle) {
    let started = std::thread::Builder::new().name("metrics-upkeep".into()).spawn(move || loop {
        std::thread::sleep(UPKEEP_EVERY);
        handle.run_upkeep();
    });
    if let Err(e) = started {
        tracing::warn!("metrics upkeep thread not started (histogram samples wait for scrapes): {e}");
    }
}

/// One node event POSTed (`outcome`: `applied`, `logged`, `duplicate`, `failed`).
pub fn event(path: &'static str, outcome: &'static str, took: Duration) {
    counter!("stacks_ledger_events_total", "path" => path, "outcome" => outcome).increment(1);
    histogram!("stacks_ledger_event_apply_seconds", "path" => path).record(took.as_secs_f64());
}

/// A `readonly` process's replica against its primary (sampled with readiness): blocks behind,
/// and WAL bytes not replayed yet.
pub fn replica_lag(blocks_behind: u64, replay_lag_bytes: u64) {
    gauge!("stacks_ledger_replica_lag_blocks").set(blocks_behind as f64);
    gauge!("stacks_ledger_replica_replay_lag_bytes").set(replay_lag_bytes as f64);
}

pub fn ledger_tip_height(height: u64) {
    LEDGER_TIP.store(height, Ordering::Relaxed);
    gauge!("stacks_ledger_tip_height").set(height as f64);
    lag();
}

pub fn node_tip_height(height: u64) {
    NODE_TIP.store(height, Ordering::Relaxed);
    gauge!("stacks_ledger_node_tip_height").set(height as f64);
    lag();
}

fn lag() {
    let node = NODE_TIP.load(Ordering::Relaxed);
    if node > 0 {
        let ledger = LEDGER_TIP.load(Ordering::Relaxed);
        gauge!("stacks_ledger_lag_blocks").set(node.saturating_sub(ledger) as f64);
    }
}

/// The handles of one route's HTTP metrics: (surface, status, requests, duration).
type RouteHandles = Vec<(&'static str, u16, Counter, Histogram)>;

thread_local! {
    /// This thread's handles of the HTTP metrics, by route template. Asking the recorder for
    /// them builds three labels (two strings allocated) and looks them up in its registry on
    /// every request: with this map (and the template built without a vector), a kept answer
    /// takes 4.8–5.1 µs through the route table instead of 5.9–6.8 (in process, one core).
    /// As many entries as the recorder holds label sets.
    static HTTP: RefCell<HashMap<String, RouteHandles>> = RefCell::new(HashMap::new());
}

/// One answered HTTP request.
pub fn http_request(surface: &'static str, route: &str, status: u16, took: Duration) {
    let took = took.as_secs_f64();
    if !INSTALLED.load(Ordering::Acquire) {
        let (requests, duration) = http_handles(surface, route, status);
        requests.increment(1);
        duration.record(took);
        return;
    }
    HTTP.with(|routes| {
        let mut routes = routes.borrow_mut();
        let kept = match routes.get_mut(route) {
            Some(kept) => kept,
            None => routes.entry(route.to_owned()).or_default(),
        };
        let i = match kept.iter().position(|(s, st, ..)| *s == surface && *st == status) {
            Some(i) => i,
            None => {
                let (requests, duration) = http_handles(surface, route, status);
                kept.push((surface, status, requests, duration));
                kept.len() - 1
            }
        };
        let (_, _, requests, duration) = &kept[i];
        requests.increment(1);
        duration.record(took);
    });
}

fn http_handles(surface: &'static str, route: &str, status: u16) -> (Counter, Histogram) {
    let labels = vec![
        Label::new("surface", surface),
        Label::new("route", route.to_owned()),
        Label::new("status", status.to_string()),
    ];
    (
        counter!("stacks_ledger_http_requests_total", labels.clone()),
        histogram!("stacks_ledger_http_request_duration_seconds", labels),
    )
}

/// A request answered with another request's computation: `coalesced` (it waited for the
/// answer at its generation) or `stale` (the previous one's, while the new one is computed).
pub fn cache_shared(kind: &'static str) {
    counter!("stacks_ledger_response_cache_shared_total", "kind" => kind).increment(1);
}

/// An answer recomputed ahead when its generation was left (`api::cache`).
pub fn cache_refreshed() {
    counter!("stacks_ledger_response_cache_refreshed_total").increment(1);
}

/// A request shed by admission control (`503`): `reason` `queue_full` or `timeout`.
pub fn admission_shed(reason: &'static str) {
    counter!("stacks_ledger_admission_shed_total", "reason" => reason).increment(1);
}

/// One faucet request: `currency` (`stx`, `btc`), `outcome` (`sent`, `rate_limited`,
/// `invalid`, `unavailable`, `failed`).
pub fn faucet_request(currency: &'static str, outcome: &'static str) {
    counter!("stacks_ledger_faucet_requests_total", "currency" => currency, "outcome" => outcome)
        .increment(1);
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// The recorder folds histogram samples only at a scrape or an upkeep: installing it starts
    /// the thread that runs the upkeep, so that nobody scraping does not mean memory kept.
    #[test]
    fn installing_the_recorder_starts_its_upkeep() {
        let _ = install();
        let upkeep_threads = || {
            std::fs::read_dir("/proc/self/task")
                .expect("/proc/self/task")
                .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
                .filter(|name| name.trim() == "metrics-upkeep")
                .count()
        };
        // The thread names itself once running.
        let started = std::time::Instant::now();
        while upkeep_threads() == 0 && started.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(upkeep_threads(), 1);
        // Installing again (as every `serve` in one test process does) starts no other.
        let _ = install();
        assert_eq!(upkeep_threads(), 1);
    }

    #[test]
    fn http_requests_counted_through_kept_handles_land_in_one_series() {
        let handle = install();
        // Each thread keeps its handles: requests counted on two threads, some before and some
        // after the handles were kept, all land in the one series.
        let record = || {
            for status in [201, 201, 404] {
                http_request("other", "/unit/metrics", status, Duration::from_millis(3));
            }
        };
        record();
        std::thread::spawn(record).join().unwrap();
        handle.run_upkeep();
        let text = handle.render();
        let value = |metric: &str, status: u16| {
            let labels = format!("{{surface=\"other\",route=\"/unit/metrics\",status=\"{status}\"}} ");
            text.lines()
                .find_map(|l| l.strip_prefix(metric)?.strip_prefix(labels.as_str()))
                .unwrap_or_else(|| panic!("{metric} {labels} not in:\n{text}"))
                .to_owned()
        };
        assert_eq!(value("stacks_ledger_http_requests_total", 201), "4");
        assert_eq!(value("stacks_ledger_http_requests_total", 404), "2");
        assert_eq!(value("stacks_ledger_http_request_duration_seconds_count", 201), "4");
    }
}
