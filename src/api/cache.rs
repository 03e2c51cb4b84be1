//! Whole-response cache of the `/extended` GET (and HEAD) answers, on top of the uncached
//! routes: a `200` answer is kept, body and headers, under its method and URL for the store's
//! [`Store::generation`] read *before* the answer was computed, so a kept body is never older
//! than the generation it is served for. Every request reads the generation (one indexed
//! statement, shared by the requests that arrive while one runs: see `api::generation`): a
//! change committed by any process (ingest on the same PostgreSQL or SQLite file) is seen by
//! the next request, and all older entries are dropped at once. Memory is bounded by bytes
//! (least recently used entries go first); size 0 disables it.
//!
//! Two generations: the answers of [`chain_only`] routes (the chain's blocks, transaction
//! lists, an address's mined transactions, NFT holdings: nothing a mempool event changes) are
//! kept for the store's chain generation ([`Generation::chain`]), which mempool traffic does
//! not move; every other answer for the whole generation. On a live node mempool events
//! arrive many times a second, blocks every few seconds or minutes.
//!
//! Under load (many connections while blocks arrive):
//! - **Coalescing.** Concurrent misses of one URL compute it once: the first leads, the
//!   others wait for its answer and share it (an answer computed at a generation at least as
//!   new as theirs).
//! - **Stale while recomputing.** On the chain-wide lists of recent items ([`STALE_PATHS`]),
//!   while a newer generation's answer is being computed, other requests get the newest older
//!   answer if its generation was read at most `stale_for` ago, marked with
//!   `x-stacks-ledger-cache: stale` and `x-stacks-ledger-stale-ms`. Never on the routes a
//!   client reads to act on its own state (an address, a transaction, nonces, the mempool): a
//!   wallet told of a block by a live update must then find it there. A request with
//!   `Cache-Control: no-cache` waits for the fresh answer.
//! - **Recomputed ahead.** When the generation moves, the most requested answers of the one
//!   left (at most `refresh`, each asked for at least [`REFRESH_MIN_DEMAND`] times, kept or
//!   still being computed, counting half the demand carried into that generation) that are
//!   never stale are recomputed at once, each by a task of its own on the runtime that built
//!   the routes (`serve`: the event observer's, at the writer's priority), instead of by the
//!   first request that misses, whose turn comes behind every connection queued on the API's
//!   threads. Requests that arrive meanwhile wait for that computation; when it runs on
//!   another runtime than theirs (`serve`), in place: their thread blocks for at most
//!   [`IN_PLACE`] rather than parking the task, which would be woken at the back of the API's
//!   run queue.
//!   (A stale-able answer's readers do not wait: it is recomputed on demand.)
//! - **Admission.** Only the computation behind a miss passes the admission gate
//!   (`api::admission`); hits, shared and stale answers never wait for a slot.
//!
//! Not cached: requests with `If-None-Match` (their answer depends on the header: they take
//! the uncached route, which answers `304` or the body as before), non-`200` answers (errors
//! carry a fresh `errorTag`), and routes whose answer depends on the clock
//! (`/extended/v2/blocks/average-times`).

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::BodyExt;
use tokio::sync::watch;
use tower_service::Service;
use warp::filters::BoxedFilter;
use warp::http::{header, HeaderMap, HeaderValue, Method, Request, StatusCode, Uri};
use warp::reply::Response;
use warp::{Filter, Rejection, Reply};

use super::admission::{Admission, Permit, Shed};
use super::generation::Generations;
// The cache's settings and their defaults, read with the rest of the configuration.
pub use crate::config::{CACHE_MB_ENV, DEFAULT_CACHE_MB, DEFAULT_REFRESH, DEFAULT_STALE};
use crate::store::{Generation, Store};

/// Asked for at least this often at the generation left, or not recomputed ahead: an answer
/// nobody asks for again is not worth the work.
pub const REFRESH_MIN_DEMAND: u64 = 4;
/// How long a request's thread may wait in place for a recomputation ahead
/// ([`Refresher::in_place`]) before it parks like any other waiter.
const IN_PLACE: Duration = Duration::from_millis(2);

/// Answers that must be computed every time: they depend on the clock.
const UNCACHED_SUFFIXES: &[&str] = &["/average-times"];
/// Answers that depend on the node as well as the store when there is one: `GET /extended`'s
/// `status` says how far behind the node the ledger is.
const NODE_STATUS_PATHS: &[&str] = &["/extended", "/extended/"];
/// The routes that may be answered stale while their new answer is computed: the chain's
/// recent transactions, blocks, microblocks and burn blocks, as an explorer's front page polls
/// them. A stale answer there is what the same request got a moment earlier, before the
/// newest event was applied: the incumbent's own answers lag the node by its ingest time.
pub const STALE_PATHS: &[&str] = &[
    "/extended/v1/tx",
    "/extended/v1/block",
    "/extended/v2/blocks",
    "/extended/v1/microblock",
    "/extended/v2/burn-blocks",
];

/// Response headers of a stale answer: the marker, and how old its data may be.
pub const STALE_HEADER: &str = "x-stacks-ledger-cache";
pub const STALE_AGE_HEADER: &str = "x-stacks-ledger-stale-ms";

/// Rough per-entry bookkeeping (map slots, `Arc`s, header map) counted against the limit.
const ENTRY_OVERHEAD: usize = 256;

struct Cached {
    headers: HeaderMap,
    body: Bytes,
    /// When the generation it was computed at was read: its data is no older than that.
    read_at: Instant,
    /// On a [`STALE_PATHS`] route.
    may_be_stale: bool,
}

/// A kept answer, when it was last used, and how many requests asked for it at its
/// generation (those that waited for it or got a stale answer meanwhile included).
struct Entry {
    cached: Arc<Cached>,
    used: u64,
    /// Its place in [`Inner::lru`]: its last use when it was put there. A hit only moves
    /// `used` (nothing else to do under the lock); eviction puts an entry used since back at
    /// its last use instead of dropping it.
    queued: u64,
    demand: u64,
}

/// A leader's answer as its followers get it (`None`: not shareable, a non-`200`).
type Shared = Option<Arc<Cached>>;

/// A computation under way.
struct Flight {
    id: u64,
    generation: Generation,
    answer: watch::Receiver<Option<Shared>>,
    /// A recomputation ahead's: set when it ends (see [`Waiter`]).
    ended: Option<Arc<Ended>>,
    /// Requests that asked for it while it ran (the leading request included; a
    /// recomputation ahead has none of its own).
    demand: u64,
    /// Of a [`chain_only`] route.
    chain_only: bool,
}

#[derive(Default)]
struct Inner {
    generation: Generation,
    /// The chain generation the [`chain_only`] entries were computed at.
    chain_generation: Generation,
    /// Answer and last use, of the other routes (`[0]`) and of the [`chain_only`] ones (`[1]`).
    entries: [HashMap<String, Entry>; 2],
    /// Last use when queued ([`Entry::queued`]) → key and whether it is a [`chain_only`]
    /// route's, oldest first.
    lru: BTreeMap<u64, (String, bool)>,
    tick: u64,
    bytes: usize,
    /// The newest answer of an older generation per [`STALE_PATHS`] URL.
    stale: HashMap<String, Arc<Cached>>,
    stale_bytes: usize,
    flights: HashMap<String, Flight>,
    flight_ids: u64,
}

/// The cache, shared by every connection of one API process.
pub struct ResponseCache {
    limit: usize,
    stale_for: Duration,
    /// How many answers are recomputed ahead when their generation is left (0: none).
    refresh: usize,
    inner: Mutex<Inner>,
    hits: AtomicU64,
    misses: AtomicU64,
    computed: AtomicU64,
    refreshed: AtomicU64,
    in_place: AtomicU64,
    waiting: AtomicUsize,
    /// Set by the route table built over this cache ([`cached`]): what answering from it
    /// outside the table needs ([`ResponseCache::kept_answer`]).
    outside: OnceLock<Outside>,
}

/// What [`ResponseCache::kept_answer`] needs of the route table's cache layer.
struct Outside {
    generations: Arc<Generations>,
    refresher: Refresher,
    with_node: bool,
}

/// What a lookup found.
enum Lookup {
    Hit(Arc<Cached>),
    Stale(Arc<Cached>),
    /// Another request computes this answer: wait for it.
    Wait(Waiter),
    /// Compute it, then hand it to the waiters.
    Lead(Leader),
}

/// A request waiting for another computation's answer.
struct Waiter {
    answer: watch::Receiver<Option<Shared>>,
    /// Set once a recomputation ahead ends: such a request may wait for it in place (see
    /// [`Refresher::in_place`]).
    ended: Option<Arc<Ended>>,
}

/// Whether a recomputation ahead has ended, for threads that wait for it blocked.
#[derive(Default)]
struct Ended {
    state: Mutex<InPlace>,
    cv: std::sync::Condvar,
}

#[derive(Default, Clone, Copy, PartialEq, Eq, Debug)]
enum InPlace {
    #[default]
    Running,
    Ended,
    /// A wait in place ran out: later waiters park at once, so that a slow recomputation
    /// blocks each API thread at most once.
    Slow,
}

impl Ended {
    fn lock(&self) -> std::sync::MutexGuard<'_, InPlace> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn set(&self) {
        *self.lock() = InPlace::Ended;
        self.cv.notify_all();
    }

    /// Blocks the calling thread until it has ended, or for `at_most` (then marks it slow);
    /// returns at once once it has ended or is slow. Whether it blocked.
    fn wait(&self, at_most: Duration) -> bool {
        let state = self.lock();
        if *state != InPlace::Running {
            return false;
        }
        let (mut state, _) = self
            .cv
            .wait_timeout_while(state, at_most, |s| *s == InPlace::Running)
            .unwrap_or_else(|e| e.into_inner());
        if *state == InPlace::Running {
            *state = InPlace::Slow;
        }
        true
    }
}

/// Whether `a` is an older generation than `b`: both counters behind or equal, not equal (a
/// store wiped and refilled is neither older nor newer: just different).
fn older(a: &Generation, b: &Generation) -> bool {
    let id = |g: &Generation| g.last_event.as_ref().map_or(i64::MIN, |(id, _)| *id);
    a != b && id(a) <= id(b) && a.changes <= b.changes
}

impl ResponseCache {
    /// A cache of at most `bytes` (0: disabled), with stale answers up to [`DEFAULT_STALE`].
    pub fn new(bytes: usize) -> ResponseCache {
        ResponseCache::with_stale(bytes, DEFAULT_STALE)
    }

    /// A cache of at most `bytes` whose stale answers are at most `stale_for` old (zero: none),
    /// recomputing nothing ahead (see [`ResponseCache::refreshing`]).
    pub fn with_stale(bytes: usize, stale_for: Duration) -> ResponseCache {
        ResponseCache {
            limit: bytes,
            stale_for,
            refresh: 0,
            inner: Mutex::new(Inner::default()),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            computed: AtomicU64::new(0),
            refreshed: AtomicU64::new(0),
            in_place: AtomicU64::new(0),
            waiting: AtomicUsize::new(0),
            outside: OnceLock::new(),
        }
    }

    /// The same cache, recomputing ahead at most `count` answers when their generation is
    /// left (see the module doc).
    pub fn refreshing(self, count: usize) -> ResponseCache {
        ResponseCache { refresh: count, ..self }
    }

    /// As `config` says: its size, stale bound and answers recomputed ahead (`serve`).
    pub fn configured(config: &crate::config::Config) -> ResponseCache {
        ResponseCache::with_stale(config.response_cache_bytes, config.load.cache_stale)
            .refreshing(config.load.cache_refresh)
    }

    pub fn enabled(&self) -> bool {
        self.limit > 0
    }

    /// Answers served from the cache so far (fresh hits).
    pub fn hits(&self) -> u64 {
        self.hits.load(Ordering::Relaxed)
    }

    /// Cacheable requests the cache did not have so far (they waited for another request's
    /// answer, got a stale one, or computed their own).
    pub fn misses(&self) -> u64 {
        self.misses.load(Ordering::Relaxed)
    }

    /// Answers computed so far by a request that then offered it to the others (a miss that led).
    pub fn computed(&self) -> u64 {
        self.computed.load(Ordering::Relaxed)
    }

    /// Answers recomputed ahead so far (started; see the module doc).
    pub fn refreshed(&self) -> u64 {
        self.refreshed.load(Ordering::Relaxed)
    }

    /// Requests that waited in place for a recomputation ahead (see the module doc).
    pub fn waited_in_place(&self) -> u64 {
        self.in_place.load(Ordering::Relaxed)
    }

    /// Requests waiting now for another request's computation of their answer.
    pub fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Relaxed)
    }

    /// Bytes held now (bodies, headers, keys and bookkeeping; stale answers included).
    pub fn bytes(&self) -> usize {
        let inner = self.lock();
        inner.bytes + inner.stale_bytes
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The cache's generation for the entries of `key`'s kind.
    fn generation_of<'a>(inner: &'a Inner, key: &Key) -> &'a Generation {
        match key.chain_only {
            true => &inner.chain_generation,
            false => &inner.generation,
        }
    }

    /// Moves `key`'s kind of entries to its generation unless that is older than the cache's:
    /// the entries of the one left become stale answers (on [`STALE_PATHS`], while young
    /// enough), the rest are dropped. Returns the URLs to recompute ahead: the GETs of the
    /// generation left (kept, or still being computed) asked for most often, at least
    /// [`REFRESH_MIN_DEMAND`] times, whose readers would wait for the new answer (not on
    /// [`STALE_PATHS`]).
    fn at(&self, inner: &mut Inner, key: &Key, now: Instant) -> Vec<(String, u64)> {
        let generation = &key.generation;
        let mine = Self::generation_of(inner, key);
        if mine == generation || older(generation, mine) {
            return Vec::new();
        }
        let left_at = mine.clone();
        match key.chain_only {
            true => inner.chain_generation = generation.clone(),
            false => inner.generation = generation.clone(),
        }
        let left = std::mem::take(&mut inner.entries[usize::from(key.chain_only)]);
        // Worth recomputing: a GET asked for often enough, whose readers would wait for the new
        // answer (those of a stale-able one never do).
        let worth = |url: &str, demand: u64| {
            self.refresh > 0
                && demand >= REFRESH_MIN_DEMAND
                && url.starts_with("GET ")
                && !stale_ok(url_path(url), None)
        };
        let mut hot = Vec::new();
        for (url, e) in &left {
            inner.lru.remove(&e.queued);
            inner.bytes = inner.bytes.saturating_sub(size(url, &e.cached));
            if worth(url, e.demand) {
                hot.push((e.demand, url.clone()));
            }
        }
        // An answer still being computed when the generation moved on (blocks closer together
        // than its computation) counts with the requests waiting for it.
        for (url, f) in &inner.flights {
            if f.generation == left_at
                && f.chain_only == key.chain_only
                && !left.contains_key(url)
                && worth(url, f.demand)
            {
                hot.push((f.demand, url.clone()));
            }
        }
        hot.sort_unstable_by(|a, b| b.cmp(a));
        let hot = hot.into_iter().take(self.refresh).map(|(demand, url)| (url, demand)).collect();
        if self.stale_for.is_zero() {
            return hot;
        }
        inner.stale.retain(|_, c| now.duration_since(c.read_at) <= self.stale_for);
        for (url, e) in left {
            if e.cached.may_be_stale {
                inner.stale.insert(url, e.cached);
            }
        }
        self.bound_stale(inner);
        hot
    }

    /// Keeps the stale answers within the cache's size, dropping the oldest first.
    fn bound_stale(&self, inner: &mut Inner) {
        inner.stale_bytes = inner.stale.iter().map(|(url, c)| size(url, c)).sum();
        while inner.stale_bytes > self.limit {
            let Some(oldest) = inner.stale.iter().min_by_key(|(_, c)| c.read_at).map(|(u, _)| u.clone())
            else {
                break;
            };
            if let Some(c) = inner.stale.remove(&oldest) {
                inner.stale_bytes -= size(&oldest, &c);
            }
        }
    }

    #[cfg(test)]
    fn lookup(self: &Arc<Self>, key: &Key, now: Instant) -> Lookup {
        self.look_up(key, now).0
    }

    /// What a request finds for `key`; and, if it moved the cache to a newer generation, the
    /// leaders of the answers to recompute ahead (their flights already registered, so that
    /// requests for them, this one included, wait for them).
    fn look_up(self: &Arc<Self>, key: &Key, now: Instant) -> (Lookup, Vec<Leader>) {
        let mut inner = self.lock();
        let ahead = self.move_to(&mut inner, key, now);
        (self.find(&mut inner, key, now), ahead)
    }

    /// [`ResponseCache::at`], and the leaders of the recomputations ahead it calls for.
    fn move_to(self: &Arc<Self>, inner: &mut Inner, key: &Key, now: Instant) -> Vec<Leader> {
        let hot = self.at(inner, key, now);
        self.ahead(inner, key, hot)
    }

    /// Leaders for `urls`, of `key`'s kind, at its generation: those no flight computes yet.
    /// Each starts with half the demand its URL had at the generation left, so that an answer
    /// asked for at a steady rate stays recomputed when changes come closer together than its
    /// requests (a block and its burn block a millisecond apart), and one no longer asked for
    /// drops out after a few generations.
    fn ahead(self: &Arc<Self>, inner: &mut Inner, key: &Key, urls: Vec<(String, u64)>) -> Vec<Leader> {
        let mut leaders = Vec::with_capacity(urls.len());
        for (url, demand) in urls {
            let computed = inner
                .flights
                .get(&url)
                .is_some_and(|f| f.generation == key.generation || older(&key.generation, &f.generation));
            if computed {
                continue;
            }
            let k = Key { url, stale_ok: false, ..key.clone() };
            self.refreshed.fetch_add(1, Ordering::Relaxed);
            crate::metrics::cache_refreshed();
            leaders.push(self.fly(inner, &k, demand / 2, true));
        }
        leaders
    }

    fn find(self: &Arc<Self>, inner: &mut Inner, key: &Key, now: Instant) -> Lookup {
        if let Some(kept) = self.find_kept(inner, key, now) {
            return kept;
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        if let Some(flight) = inner.flights.get_mut(&key.url) {
            // A computation is under way: its answer, if fresh enough for this request.
            flight.demand += 1;
            if flight.generation == key.generation || older(&key.generation, &flight.generation) {
                return Lookup::Wait(Waiter { answer: flight.answer.clone(), ended: flight.ended.clone() });
            }
        }
        self.computed.fetch_add(1, Ordering::Relaxed);
        Lookup::Lead(self.fly(inner, key, 1, false))
    }

    /// [`ResponseCache::find`]'s answers that need no waiting: a kept answer, or a stale one
    /// (allowed, while a computation is under way); otherwise nothing, and nothing counted.
    fn find_kept(&self, inner: &mut Inner, key: &Key, now: Instant) -> Option<Lookup> {
        // A request that read an older generation may be answered at the cache's: the data
        // is newer than it asked for, never older.
        let mine = Self::generation_of(inner, key);
        let current = *mine == key.generation || older(&key.generation, mine);
        if current {
            inner.tick += 1;
            let tick = inner.tick;
            if let Some(e) = inner.entries[usize::from(key.chain_only)].get_mut(&key.url) {
                e.demand += 1;
                e.used = tick;
                self.hits.fetch_add(1, Ordering::Relaxed);
                return Some(Lookup::Hit(Arc::clone(&e.cached)));
            }
        }
        if !key.stale_ok || self.stale_for.is_zero() {
            return None;
        }
        let stale = inner.stale.get(&key.url).filter(|c| now.duration_since(c.read_at) <= self.stale_for)?;
        let flight = inner.flights.get_mut(&key.url)?;
        flight.demand += 1;
        self.misses.fetch_add(1, Ordering::Relaxed);
        Some(Lookup::Stale(Arc::clone(stale)))
    }

    /// The kept (or stale) answer to a request, if the cache has one now, answered as the route
    /// table's cache layer would answer it ([`cached`]); `None` for anything else, which the
    /// route table then answers (requests that must wait for another's computation or compute
    /// their own included). For a server that answers kept answers itself and hands the rest
    /// to the route table elsewhere (`super::server`). Nothing before the table is built.
    pub async fn kept_answer(
        self: &Arc<Self>,
        method: &Method,
        uri: &Uri,
        headers: &HeaderMap,
    ) -> Option<Response> {
        let outside = self.outside.get()?;
        let path = uri.path();
        let cache_control = match headers.get(header::CACHE_CONTROL) {
            Some(v) => Some(v.to_str().ok()?),
            None => None,
        };
        let inm = headers.contains_key(header::IF_NONE_MATCH);
        if !self.cacheable(method, path, inm, outside.with_node) {
            return None;
        }
        let query = uri.query().unwrap_or("");
        let key = request_key(&outside.generations, method, path, query, cache_control).await.ok()?;
        let now = Instant::now();
        let (found, ahead) = {
            let mut inner = self.lock();
            let ahead = self.move_to(&mut inner, &key, now);
            (self.find_kept(&mut inner, &key, now), ahead)
        };
        outside.refresher.spawn(ahead);
        match found? {
            Lookup::Hit(c) => Some(response(&c, false)),
            Lookup::Stale(c) => {
                crate::metrics::cache_shared("stale");
                Some(response(&c, true))
            }
            Lookup::Wait(_) | Lookup::Lead(_) => None,
        }
    }

    /// Whether a request may be answered from the cache (`inm`: it sent `If-None-Match`).
    fn cacheable(&self, method: &Method, path: &str, inm: bool, with_node: bool) -> bool {
        self.enabled()
            && (method == Method::GET || method == Method::HEAD)
            && !inm
            && path.starts_with("/extended")
            && !UNCACHED_SUFFIXES.iter().any(|s| path.ends_with(s))
            && !(with_node && NODE_STATUS_PATHS.contains(&path))
    }

    /// Registers the computation of `key`'s answer, asked for by `demand` requests so far;
    /// `ahead`: a recomputation ahead's.
    fn fly(self: &Arc<Self>, inner: &mut Inner, key: &Key, demand: u64, ahead: bool) -> Leader {
        inner.flight_ids += 1;
        let id = inner.flight_ids;
        let (tx, rx) = watch::channel(None);
        let ended = ahead.then(Arc::default);
        let flight = Flight {
            id,
            generation: key.generation.clone(),
            answer: rx,
            ended: ended.clone(),
            demand,
            chain_only: key.chain_only,
        };
        inner.flights.insert(key.url.clone(), flight);
        Leader { cache: Arc::clone(self), key: key.clone(), id, answer: tx, ended }
    }

    /// Waits for a leader's answer: `None` when it has none to share (or gave up).
    async fn wait(&self, waiter: Waiter) -> Shared {
        let mut answer = waiter.answer;
        self.waiting.fetch_add(1, Ordering::Relaxed);
        let shared = answer.wait_for(Option::is_some).await.ok().and_then(|a| a.clone().flatten());
        self.waiting.fetch_sub(1, Ordering::Relaxed);
        shared
    }

    /// Keeps `cached` as `key`'s answer; returns the leaders of the answers to recompute ahead
    /// if that moved the cache to a newer generation.
    #[cfg(test)]
    fn put(self: &Arc<Self>, key: &Key, cached: Arc<Cached>) -> Vec<Leader> {
        self.keep(key, cached, None)
    }

    /// [`ResponseCache::put`] for the leader of flight `led`, whose demand the entry inherits.
    fn keep(self: &Arc<Self>, key: &Key, cached: Arc<Cached>, led: Option<u64>) -> Vec<Leader> {
        let size = size(&key.url, &cached);
        if size > self.limit {
            return Vec::new();
        }
        let mut inner = self.lock();
        let hot = self.move_to(&mut inner, key, Instant::now());
        if *Self::generation_of(&inner, key) != key.generation {
            // Computed at an older generation than the cache's: a stale answer at most.
            let newer = inner.stale.get(&key.url).is_none_or(|s| s.read_at < cached.read_at);
            if cached.may_be_stale && !self.stale_for.is_zero() && newer {
                inner.stale.insert(key.url.clone(), cached);
                self.bound_stale(&mut inner);
            }
            return hot;
        }
        let demand = match inner.flights.get(&key.url) {
            Some(f) if Some(f.id) == led => f.demand,
            _ => 0,
        };
        let class = usize::from(key.chain_only);
        if let Some(old) = inner.entries[class].remove(&key.url) {
            inner.lru.remove(&old.queued);
            inner.bytes = inner.bytes.saturating_sub(self::size(&key.url, &old.cached));
        }
        while inner.bytes + size > self.limit {
            let Some((queued, (url, chain_only))) = inner.lru.pop_first() else { break };
            let of = usize::from(chain_only);
            match inner.entries[of].get_mut(&url) {
                // Used since it was queued: back in the queue at its last use.
                Some(e) if e.used != queued => {
                    e.queued = e.used;
                    let used = e.used;
                    inner.lru.insert(used, (url, chain_only));
                }
                Some(_) => {
                    if let Some(old) = inner.entries[of].remove(&url) {
                        inner.bytes = inner.bytes.saturating_sub(self::size(&url, &old.cached));
                    }
                }
                None => {}
            }
        }
        inner.tick += 1;
        let tick = inner.tick;
        inner.lru.insert(tick, (key.url.clone(), key.chain_only));
        inner.entries[class].insert(key.url.clone(), Entry { cached, used: tick, queued: tick, demand });
        inner.bytes += size;
        hot
    }
}

/// The request computing an answer for the others. However it ends (answered, failed, or its
/// client gone), its flight ends: the waiters get its answer, or compute their own.
struct Leader {
    cache: Arc<ResponseCache>,
    key: Key,
    id: u64,
    answer: watch::Sender<Option<Shared>>,
    /// A recomputation ahead's: set when the leader is dropped, however it ends.
    ended: Option<Arc<Ended>>,
}

impl Leader {
    /// Hands the answer to the waiters, and keeps it; returns the leaders of the answers to
    /// recompute ahead.
    fn finish(self, cached: Option<Cached>) -> Vec<Leader> {
        let shared = cached.map(Arc::new);
        let hot = match &shared {
            Some(c) => self.cache.keep(&self.key, Arc::clone(c), Some(self.id)),
            None => Vec::new(),
        };
        self.answer.send_replace(Some(shared));
        // Dropped here: that ends the flight, and its waiters in place (see `Drop`).
        hot
    }

    /// Offers `res`, the routes' answer to the leader's request, to the waiters and the cache
    /// (a `200` only), and gives it back; with the leaders of the answers to recompute ahead.
    async fn keep(self, res: Response) -> (Response, Vec<Leader>) {
        if res.status() != StatusCode::OK {
            self.finish(None);
            return (res, Vec::new());
        }
        let (parts, body) = res.into_parts();
        let body = match body.collect().await {
            Ok(b) => b.to_bytes(),
            Err(e) => {
                tracing::warn!("response cache: reading an answer: {e}");
                self.finish(None);
                return (Response::from_parts(parts, Bytes::new().into()), Vec::new());
            }
        };
        let may_be_stale = stale_ok(url_path(&self.key.url), None);
        let cached = Cached {
            headers: parts.headers.clone(),
            body: body.clone(),
            read_at: self.key.read_at,
            may_be_stale,
        };
        let hot = self.finish(Some(cached));
        (Response::from_parts(parts, body.into()), hot)
    }
}

/// Recomputes answers ahead (see the module doc): each on a task of its own, through the
/// uncached routes, as the first request to miss it would.
#[derive(Clone)]
struct Refresher {
    admission: Arc<Admission>,
    routes: BoxedFilter<(Response,)>,
    /// The runtime that built the routes (none outside one: the caller's, then).
    runtime: Option<tokio::runtime::Handle>,
}

impl Refresher {
    /// What a request's lookup found, once the recomputations it calls for are started.
    fn found(&self, (found, ahead): (Lookup, Vec<Leader>)) -> Lookup {
        self.spawn(ahead);
        found
    }

    /// Lets a request about to wait for a recomputation ahead wait for it in place, its thread
    /// blocked for at most [`IN_PLACE`]. The recomputation runs on another runtime and is due
    /// within about a millisecond; a task that parked instead would be woken at the back of
    /// the API's run queue, behind every connection there (105–170 ms on average under the
    /// mixed benchmark's load: the tail of a hot address's latency). Only when the routes'
    /// runtime is not the caller's (as in `serve`): on the same runtime, the blocked thread
    /// could be the one that would run the recomputation.
    /// Once one such wait runs out, the others of that recomputation park at once. Whether it
    /// blocked.
    fn in_place(&self, waiter: &Waiter) -> bool {
        let (Some(ended), Some(routes)) = (&waiter.ended, &self.runtime) else { return false };
        let elsewhere = tokio::runtime::Handle::try_current().map_or(true, |mine| mine.id() != routes.id());
        elsewhere && ended.wait(IN_PLACE)
    }

    fn spawn(&self, leaders: Vec<Leader>) {
        for leader in leaders {
            let task = self.clone().refresh(leader);
            match &self.runtime {
                Some(rt) => drop(rt.spawn(task)),
                None => drop(tokio::spawn(task)),
            }
        }
    }

    /// Computes `leader`'s answer (its key's URL is `GET /path?query`) for its waiters and the
    /// cache. However it ends, the flight ends with it (see [`Leader`]).
    async fn refresh(self, leader: Leader) {
        let Some((path, query)) = leader.key.url.strip_prefix("GET ").and_then(|t| t.split_once('?')) else {
            return;
        };
        let target = if query.is_empty() { path.to_owned() } else { format!("{path}?{query}") };
        let Ok(uri) = target.parse() else { return };
        let Ok(_permit) = self.admission.admit().await else { return };
        let mut req = Request::new(String::new());
        *req.uri_mut() = uri;
        let Ok(res) = warp::service(self.routes.clone()).call(req).await;
        let (_, ahead) = leader.keep(res).await;
        self.spawn(ahead);
    }
}

impl Drop for Leader {
    fn drop(&mut self) {
        let mut inner = self.cache.lock();
        if inner.flights.get(&self.key.url).is_some_and(|f| f.id == self.id) {
            inner.flights.remove(&self.key.url);
        }
        drop(inner);
        if let Some(ended) = &self.ended {
            ended.set();
        }
    }
}

/// What an entry counts against the limit: body, headers, the key (map and LRU) and overhead.
fn size(url: &str, cached: &Cached) -> usize {
    cached.body.len()
        + url.len() * 2
        + cached.headers.iter().map(|(n, v)| n.as_str().len() + v.len() + 32).sum::<usize>()
        + ENTRY_OVERHEAD
}

/// A cacheable request: its method and URL, at the store generation read before answering
/// (for a [`chain_only`] route, its chain generation).
#[derive(Clone)]
struct Key {
    url: String,
    generation: Generation,
    /// A [`chain_only`] route.
    chain_only: bool,
    /// When the generation was read (before the read: a conservative age).
    read_at: Instant,
    /// A [`STALE_PATHS`] route, and the client did not ask for a fresh answer.
    stale_ok: bool,
}

fn response(cached: &Cached, stale: bool) -> Response {
    let mut res = Response::new(cached.body.clone().into());
    *res.headers_mut() = cached.headers.clone();
    if stale {
        let age = cached.read_at.elapsed().as_millis() as u64;
        res.headers_mut().insert(STALE_HEADER, HeaderValue::from_static("stale"));
        res.headers_mut().insert(STALE_AGE_HEADER, HeaderValue::from(age));
    }
    res
}

/// Whether `path`'s answers depend on the chain only, never on the mempool: mined
/// transactions, blocks, microblocks, burn blocks, an address's mined transactions and
/// inbound transfers, NFT holdings, history and mints. Listed one by one: a route not listed
/// (a transaction by id, balances, nonces, anything with pending transactions) follows every
/// event.
pub fn chain_only(path: &str) -> bool {
    let path = path.strip_suffix('/').unwrap_or(path);
    // The first six segments, without allocating: the longest pattern below has five, so a
    // longer path still matches the prefix patterns alone.
    let mut segs = [""; 6];
    let mut n = 0;
    for s in path.split('/').skip(1).take(segs.len()) {
        segs[n] = s;
        n += 1;
    }
    matches!(
        &segs[..n],
        ["extended", "v1", "tx"]
            | ["extended", "v3", "transactions"]
            | ["extended", "v1", "block" | "microblock", ..]
            | ["extended", "v2", "blocks" | "burn-blocks", ..]
            | ["extended", "v1", "burnchain", "rewards" | "reward_slot_holders", ..]
            | ["extended", "v1", "tokens", "nft", "holdings" | "history" | "mints"]
            | [
                "extended",
                "v1",
                "address",
                _,
                "transactions" | "transactions_with_transfers" | "stx_inbound"
            ]
            | ["extended", "v2", "addresses", _, "transactions"]
            | ["extended", "v3", "principals", _, "transactions"]
    )
}

/// A cacheable request's key, at the store's generation read now.
async fn request_key(
    generations: &Generations,
    method: &Method,
    path: &str,
    query: &str,
    cache_control: Option<&str>,
) -> Result<Key, String> {
    let read_at = Instant::now();
    let generation = generations.read().await?;
    let chain_only = chain_only(path);
    Ok(Key {
        url: format!("{method} {path}?{query}"),
        generation: if chain_only { generation.chain() } else { generation },
        chain_only,
        read_at,
        stale_ok: stale_ok(path, cache_control),
    })
}

/// Whether the client accepts a stale answer of `path` (`Cache-Control` as sent).
fn stale_ok(path: &str, cache_control: Option<&str>) -> bool {
    let path = path.strip_suffix('/').unwrap_or(path);
    let fresh_asked = cache_control.is_some_and(|cc| {
        cc.split(',').map(str::trim).any(|d| d.eq_ignore_ascii_case("no-cache") || d == "max-age=0")
    });
    STALE_PATHS.contains(&path) && !fresh_asked
}

/// How a request goes on past the lookup: computing for the others, or alone.
enum Pass {
    Lead(Leader),
    Alone,
}

/// A request let through to the routes (with its admission slot, if it needs one).
struct Admitted {
    pass: Pass,
    _permit: Option<Permit>,
}

/// `routes` answered from `cache` when the same URL was answered at the store's current
/// generation, and their `200` answers kept; concurrent misses of one URL computed once; every
/// computation under `/extended` admitted by `admission` first (shed: `503`).
///
/// `with_node`: `GET /extended` is then never kept, its `status` following the node's tip.
pub fn cached<F, T>(
    cache: Arc<ResponseCache>,
    store: Arc<Store>,
    routes: F,
    with_node: bool,
    admission: Arc<Admission>,
) -> BoxedFilter<(Response,)>
where
    F: Filter<Extract = (T,), Error = Rejection> + Clone + Send + Sync + 'static,
    T: Reply + 'static,
{
    // Boxed, in and out: the route table's nested filter types otherwise overflow the
    // compiler's type-layout depth once wrapped.
    let routes = routes.map(Reply::into_response).boxed();
    let generations = Arc::new(Generations::new(store));
    let refresher = Refresher {
        admission: Arc::clone(&admission),
        routes: routes.clone(),
        runtime: tokio::runtime::Handle::try_current().ok(),
    };
    let _ = cache.outside.set(Outside {
        generations: Arc::clone(&generations),
        refresher: refresher.clone(),
        with_node,
    });
    let on_answer = refresher.clone();
    let query = warp::query::raw().or(warp::any().map(String::new)).unify();
    let key = warp::method()
        .and(warp::path::full())
        .and(query)
        .and(warp::header::optional::<String>("if-none-match"))
        .and(warp::header::optional::<String>("cache-control"))
        .and_then(
            move |method: Method,
                  path: warp::path::FullPath,
                  query: String,
                  inm: Option<String>,
                  cc: Option<String>| {
                let (cache, generations) = (Arc::clone(&cache), Arc::clone(&generations));
                async move {
                    let path = path.as_str();
                    let gated = path.starts_with("/extended");
                    if !cache.cacheable(&method, path, inm.is_some(), with_node) {
                        return Ok::<_, Rejection>((None, gated));
                    }
                    match request_key(&generations, &method, path, &query, cc.as_deref()).await {
                        Ok(key) => Ok((Some((cache, key)), gated)),
                        Err(e) => {
                            // The uncached route answers (and reports the database's state).
                            tracing::warn!("response cache: store generation: {e}");
                            Ok((None, gated))
                        }
                    }
                }
            },
        );
    // A hit ends the request at the lookup (as a rejection the `recover` below turns back into
    // the kept answer), so the routes run, and the generation is read, once per request.
    let lookup = key.and_then(move |(k, gated): (Option<(Arc<ResponseCache>, Key)>, bool)| {
        let (admission, refresher) = (Arc::clone(&admission), refresher.clone());
        async move {
            let pass = match k {
                None => Pass::Alone,
                Some((cache, key)) => match refresher.found(cache.look_up(&key, Instant::now())) {
                    Lookup::Hit(c) => return Err(warp::reject::custom(Hit(c, false))),
                    Lookup::Stale(c) => {
                        crate::metrics::cache_shared("stale");
                        return Err(warp::reject::custom(Hit(c, true)));
                    }
                    Lookup::Wait(waiter) => {
                        if refresher.in_place(&waiter) {
                            cache.in_place.fetch_add(1, Ordering::Relaxed);
                        }
                        match cache.wait(waiter).await {
                            Some(c) => {
                                crate::metrics::cache_shared("coalesced");
                                return Err(warp::reject::custom(Hit(c, false)));
                            }
                            None => Pass::Alone,
                        }
                    }
                    Lookup::Lead(leader) => Pass::Lead(leader),
                },
            };
            let permit = match gated {
                true => Some(admission.admit().await.map_err(warp::reject::custom)?),
                false => None,
            };
            Ok(Admitted { pass, _permit: permit })
        }
    });
    let answered = lookup.and(routes).and_then(move |admitted: Admitted, res: Response| {
        let refresher = on_answer.clone();
        async move {
            let Pass::Lead(leader) = admitted.pass else {
                return Ok::<_, Rejection>(res);
            };
            let (res, hot) = leader.keep(res).await;
            refresher.spawn(hot);
            Ok(res)
        }
    });
    answered
        .recover(|r: Rejection| async move {
            if let Some(Hit(c, stale)) = r.find::<Hit>() {
                return Ok(response(c, *stale));
            }
            match r.find::<Shed>() {
                Some(shed) => Ok(shed.into_response()),
                None => Err(r),
            }
        })
        .unify()
        .boxed()
}

/// The path of a key's `METHOD /path?query`.
fn url_path(url: &str) -> &str {
    let path = url.split_once(' ').map_or(url, |(_, rest)| rest);
    path.split_once('?').map_or(path, |(p, _)| p)
}

/// A kept answer found by the lookup (carried as a rejection past the routes), and whether it
/// is a stale one.
struct Hit(Arc<Cached>, bool);

impl std::fmt::Debug for Hit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cached answer of {} bytes", self.0.body.len())
    }
}

impl warp::reject::Reject for Hit {}

#[cfg(test)]
mod tests;
