//! `GET /metrics` on the metrics address: the recorder's text, after sampling what is read at
//! scrape time rather than recorded as it happens (`crate::metrics` records the rest).

use std::sync::Arc;

use metrics::{counter, gauge};
use metrics_exporter_prometheus::PrometheusHandle;
use warp::{Filter, Rejection, Reply};

use super::{Admission, Readiness, ResponseCache};
use crate::metrics::{ledger_tip_height, node_tip_height};
use crate::store::Store;

/// What `/metrics` samples at scrape time rather than as it happens: the tips (the ledger's
/// from the store, so it is right whichever process ingests; the node's through the
/// readiness probe's cache, at most one `/v2/info` a second), the pool and the cache size.
pub struct Sampled {
    pub store: Arc<Store>,
    pub cache: Arc<ResponseCache>,
    pub admission: Arc<Admission>,
    pub readiness: Arc<Readiness>,
    /// The live-update hub (`None`: no live updates).
    pub hub: Option<Arc<stacks_live::Hub>>,
}

/// `GET /metrics`: the Prometheus text format.
pub fn routes(
    handle: PrometheusHandle,
    sampled: Arc<Sampled>,
) -> impl Filter<Extract = (impl Reply,), Error = Rejection> + Clone {
    warp::get().and(warp::path!("metrics")).then(move || {
        let (handle, sampled) = (handle.clone(), Arc::clone(&sampled));
        async move {
            sample(&sampled).await;
            warp::reply::with_header(
                handle.render(),
                "content-type",
                "text/plain; version=0.0.4; charset=utf-8",
            )
        }
    })
}

async fn sample(s: &Sampled) {
    let (ledger, node) = s.readiness.heights().await;
    s.readiness.sample_replica().await;
    if let Some(h) = ledger {
        ledger_tip_height(h);
    }
    if let Some(h) = node {
        node_tip_height(h);
    }
    let pool = s.store.pool_stats();
    gauge!("stacks_ledger_db_pool_connections").set(pool.size as f64);
    gauge!("stacks_ledger_db_pool_in_use").set(pool.size.saturating_sub(pool.idle) as f64);
    gauge!("stacks_ledger_db_pool_idle").set(pool.idle as f64);
    gauge!("stacks_ledger_db_pool_max").set(pool.max as f64);
    gauge!("stacks_ledger_response_cache_bytes").set(s.cache.bytes() as f64);
    // Counted by the cache itself (atomics beside its lock), copied here at each scrape
    // rather than looked up in the recorder on every request.
    counter!("stacks_ledger_response_cache_hits_total").absolute(s.cache.hits());
    counter!("stacks_ledger_response_cache_misses_total").absolute(s.cache.misses());
    gauge!("stacks_ledger_response_cache_waiting").set(s.cache.waiting() as f64);
    let (in_flight, queued) = s.admission.load();
    gauge!("stacks_ledger_admission_in_flight").set(in_flight as f64);
    gauge!("stacks_ledger_admission_queued").set(queued as f64);
    if let Some(hub) = &s.hub {
        let counts = hub.subscriptions_by_transport();
        // Every series, zeros included, so a topic whose last subscriber left reads 0.
        for transport in ["ws", "socketio"] {
            for topic in stacks_live::Topic::METHODS {
                let n = counts.get(&(transport, topic)).copied().unwrap_or(0);
                gauge!("stacks_ledger_live_subscribers", "transport" => transport, "topic" => topic)
                    .set(n as f64);
            }
        }
    }
}
