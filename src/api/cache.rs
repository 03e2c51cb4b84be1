//! Whole-response cache of the `/extended` GET (and HEAD) answers, on top of the uncached
//! routes: a `200` answer is kept, body and headers, under its method and URL for the store's
//! [`Store::generation`] read *before* the answer was computed, so a kept body is never older
//! than the generation it is served for. Every request reads the generation (one indexed
//! statement): a change committed by any process (ingest on the same PostgreSQL or SQLite
//! file) is seen by the next request, and all older entries are dropped at once. Memory is
//! bounded by bytes (least recently used entries go first); size 0 disables it.
//!
//! Not cached: requests with `If-None-Match` (their answer depends on the header: they take
//! the uncached route, which answers `304` or the body as before), non-`200` answers (errors
//! carry a fresh `errorTag`), and routes whose answer depends on the clock
//! (`/extended/v2/blocks/average-times`).

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::BodyExt;
use warp::filters::BoxedFilter;
use warp::http::{HeaderMap, Method, StatusCode};
use warp::reply::Response;
use warp::{Filter, Rejection, Reply};

use crate::store::{Generation, Store};

/// The environment variable sizing the cache, in MiB (0 disables it).
pub const CACHE_MB_ENV: &str = "STACKS_LEDGER_RESPONSE_CACHE_MB";
/// The default size, in MiB.
pub const DEFAULT_CACHE_MB: u64 = 64;

/// Answers that must be computed every time: they depend on the clock.
const UNCACHED_SUFFIXES: &[&str] = &["/average-times"];
/// Answers that depend on the node as well as the store when there is one: `GET /extended`'s
/// `status` says how far behind the node the ledger is.
const NODE_STATUS_PATHS: &[&str] = &["/extended", "/extended/"];

/// Rough per-entry bookkeeping (map slots, `Arc`s, header map) counted against the limit.
const ENTRY_OVERHEAD: usize = 256;

struct Cached {
    headers: HeaderMap,
    body: Bytes,
}

#[derive(Default)]
struct Inner {
    generation: Generation,
    entries: HashMap<String, (Arc<Cached>, u64)>,
    /// Last use → key, oldest first.
    lru: BTreeMap<u64, String>,
    tick: u64,
    bytes: usize,
}

/// The cache, shared by every connection of one API process.
pub struct ResponseCache {
    limit: usize,
    inner: Mutex<Inner>,
    hits: AtomicU64,
}

impl ResponseCache {
    /// A cache of at most `bytes` (0: disabled).
    pub fn new(bytes: usize) -> ResponseCache {
        ResponseCache { limit: bytes, inner: Mutex::new(Inner::default()), hits: AtomicU64::new(0) }
    }

    /// Sized as the process environment says ([`CACHE_MB_ENV`], default [`DEFAULT_CACHE_MB`]),
    /// for tests and benches (`serve` sizes it from its `Config`); an unusable value panics,
    /// naming it.
    pub fn from_env() -> ResponseCache {
        let config = crate::config::Config::from_process_env(&crate::config::ConfigArgs::default())
            .unwrap_or_else(|e| panic!("configuration: {e}"));
        ResponseCache::new(config.response_cache_bytes)
    }

    pub fn enabled(&self) -> bool {
        self.limit > 0
    }

    /// Answers served from the cache so far.
    pub fn hits(&self) -> u64 {
        self.hits.load(Ordering::Relaxed)
    }

    /// Bytes held now (bodies, headers, keys and bookkeeping).
    pub fn bytes(&self) -> usize {
        self.lock().bytes
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Moves to `generation`, dropping every entry of another one.
    fn at(inner: &mut Inner, generation: &Generation) {
        if &inner.generation != generation {
            inner.generation = generation.clone();
            inner.entries.clear();
            inner.lru.clear();
            inner.bytes = 0;
        }
    }

    fn get(&self, key: &Key) -> Option<Arc<Cached>> {
        let mut inner = self.lock();
        Self::at(&mut inner, &key.generation);
        inner.tick += 1;
        let tick = inner.tick;
        let Some((cached, used)) = inner.entries.get_mut(&key.url) else {
            crate::metrics::cache_lookup(false);
            return None;
        };
        let (cached, old) = (Arc::clone(cached), std::mem::replace(used, tick));
        inner.lru.remove(&old);
        inner.lru.insert(tick, key.url.clone());
        self.hits.fetch_add(1, Ordering::Relaxed);
        crate::metrics::cache_lookup(true);
        Some(cached)
    }

    fn put(&self, key: Key, cached: Cached) {
        let size = size(&key.url, &cached);
        if size > self.limit {
            return;
        }
        let mut inner = self.lock();
        // An answer computed at an older generation than the cache's has nothing to join.
        if inner.generation != key.generation && !inner.entries.is_empty() {
            return;
        }
        Self::at(&mut inner, &key.generation);
        if let Some((old, used)) = inner.entries.remove(&key.url) {
            inner.lru.remove(&used);
            inner.bytes = inner.bytes.saturating_sub(self::size(&key.url, &old));
        }
        while inner.bytes + size > self.limit {
            let Some((_, url)) = inner.lru.pop_first() else { break };
            if let Some((old, _)) = inner.entries.remove(&url) {
                inner.bytes = inner.bytes.saturating_sub(self::size(&url, &old));
            }
        }
        inner.tick += 1;
        let tick = inner.tick;
        inner.lru.insert(tick, key.url.clone());
        inner.entries.insert(key.url, (Arc::new(cached), tick));
        inner.bytes += size;
    }
}

/// What an entry counts against the limit: body, headers, the key (map and LRU) and overhead.
fn size(url: &str, cached: &Cached) -> usize {
    cached.body.len()
        + url.len() * 2
        + cached.headers.iter().map(|(n, v)| n.as_str().len() + v.len() + 32).sum::<usize>()
        + ENTRY_OVERHEAD
}

/// A cacheable request: its method and URL, at the store generation read before answering.
#[derive(Clone)]
struct Key {
    url: String,
    generation: Generation,
}

fn response(cached: &Cached) -> Response {
    let mut res = Response::new(cached.body.clone().into());
    *res.headers_mut() = cached.headers.clone();
    res
}

/// `routes` answered from `cache` when the same URL was answered at the store's current
/// generation, and their `200` answers kept.
///
/// `with_node`: `GET /extended` is then never kept, its `status` following the node's tip.
pub fn cached<F, T>(
    cache: Arc<ResponseCache>,
    store: Arc<Store>,
    routes: F,
    with_node: bool,
) -> BoxedFilter<(Response,)>
where
    F: Filter<Extract = (T,), Error = Rejection> + Clone + Send + Sync + 'static,
    T: Reply + 'static,
{
    // Boxed, in and out: the route table's nested filter types otherwise overflow the
    // compiler's type-layout depth once wrapped.
    let routes = routes.map(Reply::into_response).boxed();
    let query = warp::query::raw().or(warp::any().map(String::new)).unify();
    let key = warp::method()
        .and(warp::path::full())
        .and(query)
        .and(warp::header::optional::<String>("if-none-match"))
        .and_then(move |method: Method, path: warp::path::FullPath, query: String, inm: Option<String>| {
            let (cache, store) = (Arc::clone(&cache), Arc::clone(&store));
            async move {
                let path = path.as_str();
                let cacheable = cache.enabled()
                    && (method == Method::GET || method == Method::HEAD)
                    && inm.is_none()
                    && path.starts_with("/extended")
                    && !UNCACHED_SUFFIXES.iter().any(|s| path.ends_with(s))
                    && !(with_node && NODE_STATUS_PATHS.contains(&path));
                if !cacheable {
                    return Ok::<_, Rejection>(None);
                }
                match store.generation().await {
                    Ok(generation) => {
                        let url = format!("{method} {path}?{query}");
                        Ok(Some((cache, Key { url, generation })))
                    }
                    Err(e) => {
                        // The uncached route answers (and reports the database's state).
                        tracing::warn!("response cache: store generation: {e}");
                        Ok(None)
                    }
                }
            }
        });
    // A hit ends the request at the lookup (as a rejection the `recover` below turns back into
    // the kept answer), so the routes run, and the generation is read, once per request.
    let lookup = key.and_then(|k: Option<(Arc<ResponseCache>, Key)>| async move {
        match k.as_ref().and_then(|(cache, key)| cache.get(key)) {
            Some(c) => Err(warp::reject::custom(Hit(c))),
            None => Ok(k),
        }
    });
    let answered =
        lookup.and(routes).and_then(|k: Option<(Arc<ResponseCache>, Key)>, res: Response| async move {
            let Some((cache, key)) = k.filter(|_| res.status() == StatusCode::OK) else {
                return Ok::<_, Rejection>(res);
            };
            let (parts, body) = res.into_parts();
            let body = match body.collect().await {
                Ok(b) => b.to_bytes(),
                Err(e) => {
                    tracing::warn!("response cache: reading an answer: {e}");
                    return Ok(Response::from_parts(parts, Bytes::new().into()));
                }
            };
            let cached = Cached { headers: parts.headers.clone(), body: body.clone() };
            cache.put(key, cached);
            Ok(Response::from_parts(parts, body.into()))
        });
    answered
        .recover(|r: Rejection| async move {
            match r.find::<Hit>() {
                Some(Hit(c)) => Ok(response(c)),
                None => Err(r),
            }
        })
        .unify()
        .boxed()
}

/// A kept answer found by the lookup (carried as a rejection past the routes).
struct Hit(Arc<Cached>);

impl std::fmt::Debug for Hit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cached answer of {} bytes", self.0.body.len())
    }
}

impl warp::reject::Reject for Hit {}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(url: &str, generation: i64) -> Key {
        Key {
            url: url.into(),
            generation: Generation { last_event: Some((generation, "t".into())), changes: 0 },
        }
    }

    fn entry(body: &str) -> Cached {
        Cached { headers: HeaderMap::new(), body: Bytes::from(body.to_string()) }
    }

    #[test]
    fn entries_live_for_one_generation() {
        let c = ResponseCache::new(1 << 20);
        c.put(key("GET /a?", 1), entry("one"));
        assert_eq!(c.get(&key("GET /a?", 1)).unwrap().body, "one");
        // Another generation: nothing from the first survives.
        assert!(c.get(&key("GET /a?", 2)).is_none());
        assert_eq!(c.bytes(), 0);
        // An answer computed at the older generation is not kept under the newer one.
        c.put(key("GET /b?", 2), entry("two"));
        c.put(key("GET /a?", 1), entry("stale"));
        assert!(c.get(&key("GET /a?", 2)).is_none());
        assert_eq!(c.get(&key("GET /b?", 2)).unwrap().body, "two");
    }

    #[test]
    fn bytes_are_bounded_least_recently_used_first() {
        let body = "x".repeat(1000);
        let one = 1000 + 2 * "GET /0?".len() + ENTRY_OVERHEAD;
        let c = ResponseCache::new(3 * one);
        for i in 0..3 {
            c.put(key(&format!("GET /{i}?"), 1), entry(&body));
        }
        assert_eq!(c.bytes(), 3 * one);
        // Use /0, then add /3: /1 (the least recently used) goes.
        assert!(c.get(&key("GET /0?", 1)).is_some());
        c.put(key("GET /3?", 1), entry(&body));
        assert!(c.bytes() <= 3 * one);
        assert!(c.get(&key("GET /1?", 1)).is_none());
        for i in [0, 2, 3] {
            assert!(c.get(&key(&format!("GET /{i}?"), 1)).is_some(), "/{i} evicted");
        }
        // Larger than the whole cache: not kept.
        c.put(key("GET /big?", 1), entry(&"y".repeat(4 * one)));
        assert!(c.get(&key("GET /big?", 1)).is_none());
        // Size 0 disables it.
        assert!(!ResponseCache::new(0).enabled());
    }
}
