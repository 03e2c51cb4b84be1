//! The public API's HTTP server beside ingestion: connections on single-threaded
//! event loops; every request the response cache cannot answer at once handed to the API's
//! multi-threaded runtime ([`super::runtime::ApiRuntime`]).
//!
//! Why not `warp::serve` on that runtime: there each connection with a request waiting is a
//! runnable task, and a worker's own queue holds 256 of them. With a thousand connections the
//! rest overflow to the runtime's global queue, which a worker only looks at now and then, so
//! some connections are answered again and again while others wait: under the mixed benchmark
//! the hot route's p50 was ~33 ms and its p99 ~130 ms for a mean of ~43 ms. A loop on one
//! thread runs its connections first come, first served (the same load, this server: p50
//! 36-52 ms, p99 69-94 ms in 15 of 16 runs, for more requests per second). It answers kept
//! answers itself (a few microseconds each, most of an explorer's load) and hands anything
//! else to the runtime: misses, Rosetta, `/v2`, faucets, WebSocket upgrades run the whole
//! route table there, on every core, as under `warp::serve`.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;
use tower_service::Service as _;
use warp::filters::BoxedFilter;
use warp::http::Request;
use warp::reply::Response;
use warp::{Filter, Reply};

use super::cache::ResponseCache;
use super::runtime::ApiRuntime;
use crate::faucet::ClientAddr;

/// The default number of event loops on a machine with `cores` cores: one per four (at least
/// one). A loop's own work is small (reading requests, writing answers, kept answers), and
/// with fewer loops each holds more connections in one queue: fairer, and no loop left
/// waiting for a core the others have.
pub fn default_loops(cores: usize) -> usize {
    (cores / 4).max(1)
}

/// Serves `routes` on `listener` from `loops` event loops, each on a thread of its own at
/// `runtime`'s priority, until `shutdown` completes; then lets the requests in flight finish.
/// `cache`: the response cache the route table was built over (its kept answers are answered
/// on the loops). The returned future ends when every loop has.
pub fn serve<F, R>(
    listener: TcpListener,
    routes: F,
    cache: Arc<ResponseCache>,
    runtime: &ApiRuntime,
    loops: usize,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<impl Future<Output = ()>>
where
    F: Filter<Extract = (R,), Error = Infallible> + Clone + Send + Sync + 'static,
    R: Reply + 'static,
{
    let listener = listener.into_std()?;
    // Boxed: one type for the handler, and a `Send` future to spawn on the runtime.
    let routes = routes.map(Reply::into_response).boxed();
    let (stop, stopped) = watch::channel(false);
    let handler = Handler { routes, cache, compute: runtime.handle().clone(), client: None };
    let mut ended = Vec::with_capacity(loops.max(1));
    for i in 0..loops.max(1) {
        // A connection whose request was computed on the runtime is woken from there, into the
        // loop's queue of other threads' wakeups, which a loop otherwise visits once in 31
        // tasks. Under the mixed benchmark (a block every ~15 ms, after which the hot address's
        // 200 readers wait for its new answer) that put the p99 of both routes at 0.5-0.9 s.
        // Visited first, they are answered in the order their answers came.
        let rt =
            tokio::runtime::Builder::new_current_thread().enable_all().global_queue_interval(1).build()?;
        let (listener, handler, stopped, nice) =
            (listener.try_clone()?, handler.clone(), stopped.clone(), runtime.nice());
        let (done, end) = oneshot::channel::<()>();
        std::thread::Builder::new().name(format!("api-loop-{i}")).spawn(move || {
            super::runtime::lower_priority(nice);
            rt.block_on(accept(listener, handler, stopped));
            drop(done);
        })?;
        ended.push(end);
    }
    runtime.spawn(async move {
        shutdown.await;
        let _ = stop.send(true);
    });
    Ok(async move {
        for end in ended {
            let _ = end.await;
        }
    })
}

/// One loop: accepts connections on `listener` and serves them on this thread until stopped.
async fn accept(listener: std::net::TcpListener, handler: Handler, mut stopped: watch::Receiver<bool>) {
    let listener = match TcpListener::from_std(listener) {
        Ok(listener) => listener,
        Err(e) => {
            tracing::error!("the API's event loop cannot use its listener: {e}");
            return;
        }
    };
    let graceful = GracefulShutdown::new();
    loop {
        let (io, addr) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                Err(e) => {
                    accept_error(e).await;
                    continue;
                }
            },
            _ = stopped.wait_for(|s| *s) => break,
        };
        let handler = Handler { client: Some(addr), ..handler.clone() };
        let watcher = graceful.watcher();
        tokio::spawn(async move {
            let builder = auto::Builder::new(TokioExecutor::new());
            let conn = builder.serve_connection_with_upgrades(TokioIo::new(io), handler);
            if let Err(e) = watcher.watch(conn).await {
                tracing::debug!("API connection from {addr}: {e}");
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
}

/// After a failed accept: a connection reset before it was accepted is nothing; anything else
/// (out of file descriptors) is logged and waited out briefly rather than spun on.
async fn accept_error(e: std::io::Error) {
    use std::io::ErrorKind::*;
    if matches!(e.kind(), ConnectionRefused | ConnectionAborted | ConnectionReset) {
        return;
    }
    tracing::error!("the API cannot accept connections: {e}");
    tokio::time::sleep(Duration::from_millis(100)).await;
}

/// A connection's requests: kept answers at once, the rest on the runtime.
#[derive(Clone)]
struct Handler {
    routes: BoxedFilter<(Response,)>,
    cache: Arc<ResponseCache>,
    compute: tokio::runtime::Handle,
    client: Option<SocketAddr>,
}

impl hyper::service::Service<Request<Incoming>> for Handler {
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn call(&self, mut req: Request<Incoming>) -> Self::Future {
        let this = self.clone();
        Box::pin(async move {
            let start = Instant::now();
            if let Some(res) = this.cache.kept_answer(req.method(), req.uri(), req.headers()).await {
                return Ok(super::observe::observed_outside(start, req.method(), req.uri().path(), res));
            }
            if let Some(addr) = this.client {
                req.extensions_mut().insert(ClientAddr(addr));
            }
            let mut routes = warp::service(this.routes);
            // Dropped with the connection, the request's computation is dropped too, as it is
            // under `warp::serve`.
            let mut task = AbortOnDrop(this.compute.spawn(routes.call(req)));
            match (&mut task.0).await {
                Ok(Ok(res)) => Ok(res),
                Ok(Err(never)) => match never {},
                Err(e) => Ok(stacks_extended::ApiError::Internal(Box::new(e)).into_response()),
            }
        })
    }
}

struct AbortOnDrop<T>(JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::api::admission::{Admission, AdmissionConfig};
    use crate::store::Store;

    #[test]
    fn one_loop_per_four_cores() {
        assert_eq!(default_loops(1), 1);
        assert_eq!(default_loops(2), 1);
        assert_eq!(default_loops(8), 2);
        assert_eq!(default_loops(16), 4);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn kept_answers_on_the_loops_the_rest_through_the_table_on_the_runtime() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}/s.db", dir.path().display());
        let store = Arc::new(
            Store::open(&url, crate::ledger::Network::Testnet, crate::compose::tx_render()).await.unwrap(),
        );
        let cache = Arc::new(ResponseCache::new(1 << 20));
        let admission = Admission::new(&AdmissionConfig::default(), 4);
        // Answers name the thread that computed them and the client's address.
        let inner = warp::path!("extended" / "v1" / "thing")
            .map(|| std::thread::current().name().unwrap_or_default().to_owned())
            .or(warp::path!("who")
                .and(warp::ext::optional::<ClientAddr>())
                .map(|c: Option<ClientAddr>| c.map_or("nobody".to_owned(), |c| c.0.ip().to_string())))
            .unify();
        let table_runs = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&table_runs);
        let routes = warp::any()
            .map(move || {
                counted.fetch_add(1, Ordering::SeqCst);
            })
            .untuple_one()
            .and(crate::api::cache::cached(Arc::clone(&cache), store, inner, false, admission))
            .recover(|_| async { Ok::<_, Infallible>(warp::http::StatusCode::NOT_FOUND.into_response()) })
            .unify();
        let runtime = ApiRuntime::new(2, 0).unwrap();
        let listener = crate::observer::listen(([127, 0, 0, 1], 0).into()).unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let (stop, stopped) = oneshot::channel::<()>();
        let server = serve(listener, routes, Arc::clone(&cache), &runtime, 2, async {
            let _ = stopped.await;
        })
        .unwrap();
        let server = tokio::spawn(server);
        let client = reqwest::Client::new();
        let get = |path: &str, inm: bool| {
            let mut req = client.get(format!("{base}{path}"));
            if inm {
                req = req.header("if-none-match", "\"x\"");
            }
            async move {
                let res = req.send().await.unwrap();
                (res.status().as_u16(), res.text().await.unwrap())
            }
        };

        assert_eq!(
            get("/extended/v1/thing", false).await,
            (200, "api".to_owned()),
            "computed on the runtime"
        );
        assert_eq!(table_runs.load(Ordering::SeqCst), 1);
        for _ in 0..3 {
            assert_eq!(get("/extended/v1/thing", false).await, (200, "api".to_owned()));
        }
        assert_eq!(table_runs.load(Ordering::SeqCst), 1, "kept answers never reach the table");
        assert_eq!(cache.hits(), 3);
        // What the cache may not answer goes through the table, as under warp::serve.
        assert_eq!(get("/extended/v1/thing", true).await, (200, "api".to_owned()));
        assert_eq!(get("/who", false).await, (200, "127.0.0.1".to_owned()), "the client's address");
        assert_eq!(get("/nowhere", false).await.0, 404);
        assert_eq!(table_runs.load(Ordering::SeqCst), 4);

        stop.send(()).unwrap();
        tokio::time::timeout(Duration::from_secs(10), server)
            .await
            .expect("the loops end once stopped")
            .unwrap();
        assert!(client.get(format!("{base}/who")).send().await.is_err(), "nothing listens any more");
    }
}
