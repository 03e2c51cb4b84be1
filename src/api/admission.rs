//! Admission control: a bound on the requests doing database work at once. Past the bound a
//! request waits in a short FIFO queue; when the queue is full, or its wait runs out, it is
//! shed with `503` and `Retry-After` instead of joining a queue that only grows (every waiter
//! would otherwise hold a connection's worth of memory and add its wait to everyone's p99).
//!
//! Ingestion first: while the event observer applies an event ([`IngestFirst`]), the bound
//! drops to a smaller one, so that readers leave the writer (which has its own connection, see
//! `Store`) the CPU it needs and the node's POST is answered in bounded time.
//!
//! Cache hits never pass through here: only the computations behind a miss do (see
//! `cache::cached`).

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::oneshot;
use warp::http::header::{HeaderValue, RETRY_AFTER};
use warp::http::StatusCode;
use warp::reply::{Reply, Response};

// The bounds are settings, read with the rest of the configuration.
pub use crate::config::AdmissionConfig;
use crate::ingest::{EventSink, IncomingEvent, IngestError, IngestOutcome};

/// What a shed client is told to wait before retrying, in seconds.
pub const RETRY_AFTER_SECS: u64 = 1;

/// A test's hook, run by every admitted request while it holds its slot, before its work.
pub type Hook = Arc<dyn Fn() -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

#[derive(Default)]
struct State {
    in_flight: usize,
    waiters: VecDeque<oneshot::Sender<Permit>>,
}

/// The gate, shared by every connection of one API process.
pub struct Admission {
    /// 0: no bound.
    limit: usize,
    ingest_limit: usize,
    queue: usize,
    wait: Duration,
    state: Mutex<State>,
    /// Events being applied now.
    ingesting: AtomicUsize,
    shed: AtomicU64,
    hook: Mutex<Option<Hook>>,
}

/// Why a request was shed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shed {
    QueueFull,
    Timeout,
}

impl Shed {
    fn label(self) -> &'static str {
        match self {
            Shed::QueueFull => "queue_full",
            Shed::Timeout => "timeout",
        }
    }

    /// `503`, `Retry-After`, and the API's error body (`error`, `message`, `statusCode`).
    pub fn into_response(self) -> Response {
        let body = serde_json::json!({
            "error": "The server is busy",
            "message": format!(
                "too many requests are being answered; retry after {RETRY_AFTER_SECS} s ({})",
                self.label()
            ),
            "statusCode": 503,
        });
        let reply = warp::reply::with_status(warp::reply::json(&body), StatusCode::SERVICE_UNAVAILABLE);
        let mut res = stacks_extended::with_common_headers(reply).into_response();
        res.headers_mut().insert(RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS));
        res
    }
}

impl warp::reject::Reject for Shed {}

/// A slot: held while the request works, given back (to the next waiter) when dropped.
pub struct Permit {
    admission: Option<Arc<Admission>>,
}

impl Drop for Permit {
    fn drop(&mut self) {
        if let Some(a) = self.admission.take() {
            let mut state = a.lock();
            state.in_flight -= 1;
            a.hand_over(&mut state);
        }
    }
}

impl Admission {
    /// A gate over a store whose pool holds `pool_max` connections.
    pub fn new(config: &AdmissionConfig, pool_max: usize) -> Arc<Admission> {
        let limit = config.limit.unwrap_or(pool_max.max(1));
        let ingest_limit = config.ingest_limit.unwrap_or((limit / 4).max(1)).min(limit);
        Arc::new(Admission {
            limit,
            ingest_limit,
            queue: config.queue,
            wait: config.wait,
            state: Mutex::new(State::default()),
            ingesting: AtomicUsize::new(0),
            shed: AtomicU64::new(0),
            hook: Mutex::new(None),
        })
    }

    /// No bound at all (what the route tables without a configuration get).
    pub fn unbounded() -> Arc<Admission> {
        Admission::new(&AdmissionConfig { limit: Some(0), ..AdmissionConfig::default() }, 0)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The bound now: smaller while an event is being applied.
    fn capacity(&self) -> usize {
        if self.ingesting.load(Ordering::Acquire) > 0 {
            self.ingest_limit
        } else {
            self.limit
        }
    }

    /// Gives free slots to the oldest waiters still waiting (under the state's lock).
    fn hand_over(self: &Arc<Self>, state: &mut State) {
        while state.in_flight < self.capacity() {
            let Some(waiter) = state.waiters.pop_front() else { break };
            state.in_flight += 1;
            let permit = Permit { admission: Some(Arc::clone(self)) };
            if let Err(mut unwanted) = waiter.send(permit) {
                // The waiter gave up (shed, or its client left): the slot goes to the next.
                unwanted.admission = None;
                state.in_flight -= 1;
            }
        }
    }

    /// A slot, at once, after a wait in the queue, or `Err` (shed, counted).
    pub async fn admit(self: &Arc<Self>) -> Result<Permit, Shed> {
        if self.limit == 0 {
            return Ok(Permit { admission: None });
        }
        let permit = self.acquire().await;
        if let Err(shed) = &permit {
            self.shed.fetch_add(1, Ordering::Relaxed);
            crate::metrics::admission_shed(shed.label());
        }
        let permit = permit?;
        let hook = self.hook.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if let Some(hook) = hook {
            hook().await;
        }
        Ok(permit)
    }

    async fn acquire(self: &Arc<Self>) -> Result<Permit, Shed> {
        let mut rx = {
            let mut state = self.lock();
            if state.in_flight < self.capacity() && state.waiters.is_empty() {
                state.in_flight += 1;
                return Ok(Permit { admission: Some(Arc::clone(self)) });
            }
            if state.waiters.len() >= self.queue {
                return Err(Shed::QueueFull);
            }
            let (tx, rx) = oneshot::channel();
            state.waiters.push_back(tx);
            rx
        };
        match tokio::time::timeout(self.wait, &mut rx).await {
            Ok(Ok(permit)) => Ok(permit),
            // The sender is only dropped with the gate itself.
            Ok(Err(_)) => Err(Shed::Timeout),
            Err(_) => {
                // Slots are handed over under the lock: once it is held, either a permit is
                // in the channel (taken: it came just in time) or none will ever come (the
                // closed receiver makes a later hand-over skip this waiter).
                let mut state = self.lock();
                rx.close();
                state.waiters.retain(|w| !w.is_closed());
                rx.try_recv().map_err(|_| Shed::Timeout)
            }
        }
    }

    /// Requests shed so far.
    pub fn shed(&self) -> u64 {
        self.shed.load(Ordering::Relaxed)
    }

    /// Requests working now, and waiting.
    pub fn load(&self) -> (usize, usize) {
        let state = self.lock();
        (state.in_flight, state.waiters.len())
    }

    /// Tests: `hook` runs in every admitted request, holding its slot, before its work.
    pub fn set_hook(&self, hook: Option<Hook>) {
        *self.hook.lock().unwrap_or_else(|e| e.into_inner()) = hook;
    }

    /// Marks an event being applied until the guard is dropped.
    pub fn ingesting(self: &Arc<Self>) -> IngestGuard {
        self.ingesting.fetch_add(1, Ordering::AcqRel);
        IngestGuard(Arc::clone(self))
    }
}

/// An event being applied (see [`Admission::ingesting`]).
pub struct IngestGuard(Arc<Admission>);

impl Drop for IngestGuard {
    fn drop(&mut self) {
        self.0.ingesting.fetch_sub(1, Ordering::AcqRel);
        // The full bound is back: waiters may go.
        let mut state = self.0.lock();
        self.0.hand_over(&mut state);
    }
}

/// The event observer's sink with the readers held back while it applies an event.
pub struct IngestFirst<S> {
    inner: Arc<S>,
    admission: Arc<Admission>,
}

impl<S> IngestFirst<S> {
    pub fn new(inner: Arc<S>, admission: Arc<Admission>) -> IngestFirst<S> {
        IngestFirst { inner, admission }
    }
}

impl<S: EventSink> EventSink for IngestFirst<S> {
    async fn ingest(&self, event: IncomingEvent) -> Result<IngestOutcome, IngestError> {
        let _guard = self.admission.ingesting();
        self.inner.ingest(event).await
    }

    async fn ingest_many(
        &self,
        events: Vec<IncomingEvent>,
    ) -> Result<Vec<Result<IngestOutcome, IngestError>>, IngestError> {
        let _guard = self.admission.ingesting();
        self.inner.ingest_many(events).await
    }

    async fn last_event_id(&self) -> Result<Option<i64>, IngestError> {
        self.inner.last_event_id().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate(limit: usize, queue: usize, wait_ms: u64) -> Arc<Admission> {
        let config = AdmissionConfig {
            limit: Some(limit),
            ingest_limit: Some(1),
            queue,
            wait: Duration::from_millis(wait_ms),
        };
        Admission::new(&config, 4)
    }

    #[tokio::test]
    async fn bounded_then_queued_then_shed() {
        let a = gate(2, 1, 60_000);
        let (p1, p2) = (a.admit().await.unwrap(), a.admit().await.unwrap());
        assert_eq!(a.load(), (2, 0));
        // The third waits; the fourth finds the queue full.
        let waiting = tokio::spawn({
            let a = Arc::clone(&a);
            async move { a.admit().await.map(|_| ()) }
        });
        while a.load().1 == 0 {
            tokio::task::yield_now().await;
        }
        assert_eq!(a.admit().await.err(), Some(Shed::QueueFull));
        assert_eq!(a.shed(), 1);
        // A slot freed goes to the waiter.
        drop(p1);
        assert_eq!(waiting.await.unwrap(), Ok(()));
        drop(p2);
        assert_eq!(a.load(), (0, 0));
    }

    #[tokio::test]
    async fn a_wait_that_runs_out_is_shed_and_gives_nothing_away() {
        let a = gate(1, 4, 1);
        let held = a.admit().await.unwrap();
        assert_eq!(a.admit().await.err(), Some(Shed::Timeout));
        drop(held);
        assert_eq!(a.load(), (0, 0));
        assert!(a.admit().await.is_ok());
        assert_eq!(a.load(), (0, 0));
    }

    #[tokio::test]
    async fn readers_get_the_smaller_bound_while_an_event_is_applied() {
        let a = gate(3, 8, 60_000);
        let ingest = a.ingesting();
        let one = a.admit().await.unwrap();
        let second = tokio::spawn({
            let a = Arc::clone(&a);
            async move { a.admit().await.map(|_| ()) }
        });
        while a.load().1 == 0 {
            tokio::task::yield_now().await;
        }
        assert_eq!(a.load(), (1, 1), "a second reader waits while the event is applied");
        drop(ingest);
        assert_eq!(second.await.unwrap(), Ok(()));
        drop(one);
        assert_eq!(a.load(), (0, 0));
    }

    #[tokio::test]
    async fn no_bound_when_the_limit_is_zero() {
        let a = Admission::unbounded();
        let permits: Vec<_> = futures_util::future::join_all((0..100).map(|_| a.admit())).await;
        assert!(permits.iter().all(Result::is_ok));
        assert_eq!(a.shed(), 0);
    }
}
