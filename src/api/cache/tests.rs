use super::*;

fn generation(n: i64) -> Generation {
    Generation { last_event: Some((n, "t".into())), chain_event: Some((n, "t".into())), changes: 0 }
}

fn key(url: &str, n: i64) -> Key {
    let stale_ok = stale_ok(url_path(url), None);
    Key { url: url.into(), generation: generation(n), chain_only: false, read_at: Instant::now(), stale_ok }
}

/// A request at the store generation whose newest event is `n` and newest chain event `chain`.
fn key_at(url: &str, n: i64, chain: i64) -> Key {
    let full =
        Generation { last_event: Some((n, "t".into())), chain_event: Some((chain, "t".into())), changes: 0 };
    let chain_only = chain_only(url_path(url));
    let generation = if chain_only { full.chain() } else { full };
    Key {
        url: url.into(),
        generation,
        chain_only,
        read_at: Instant::now(),
        stale_ok: stale_ok(url_path(url), None),
    }
}

fn entry(body: &str) -> Cached {
    Cached {
        headers: HeaderMap::new(),
        body: Bytes::from(body.to_string()),
        read_at: Instant::now(),
        may_be_stale: false,
    }
}

fn cache(bytes: usize) -> Arc<ResponseCache> {
    Arc::new(ResponseCache::new(bytes))
}

/// A fresh hit's body; a miss's flight is dropped at once (nothing computed).
fn get(c: &Arc<ResponseCache>, k: &Key) -> Option<Bytes> {
    match c.lookup(k, Instant::now()) {
        Lookup::Hit(c) => Some(c.body.clone()),
        _ => None,
    }
}

fn put(c: &Arc<ResponseCache>, k: &Key, e: Cached) {
    c.put(k, Arc::new(e));
}

#[test]
fn entries_live_for_one_generation() {
    let c = cache(1 << 20);
    put(&c, &key("GET /a?", 1), entry("one"));
    assert_eq!(get(&c, &key("GET /a?", 1)).unwrap(), "one");
    // Another generation: nothing from the first survives.
    assert!(get(&c, &key("GET /a?", 2)).is_none());
    assert_eq!(c.bytes(), 0);
    // An answer computed at the older generation is not kept under the newer one.
    put(&c, &key("GET /b?", 2), entry("two"));
    put(&c, &key("GET /a?", 1), entry("stale"));
    assert!(get(&c, &key("GET /a?", 2)).is_none());
    assert_eq!(get(&c, &key("GET /b?", 2)).unwrap(), "two");
    // A request that read an older generation does not move the cache back: it gets the
    // newer answer.
    assert_eq!(get(&c, &key("GET /b?", 1)).unwrap(), "two");
    assert_eq!(get(&c, &key("GET /b?", 2)).unwrap(), "two");
}

#[test]
fn lookups_are_counted_as_hits_and_misses() {
    let c = cache(1 << 20);
    assert!(get(&c, &key("GET /a?", 1)).is_none());
    put(&c, &key("GET /a?", 1), entry("one"));
    for _ in 0..3 {
        assert!(get(&c, &key("GET /a?", 1)).is_some());
    }
    assert!(get(&c, &key("GET /b?", 1)).is_none());
    assert!(get(&c, &key("GET /a?", 2)).is_none());
    assert_eq!((c.hits(), c.misses()), (3, 3));
}

#[test]
fn bytes_are_bounded_least_recently_used_first() {
    let body = "x".repeat(1000);
    let one = 1000 + 2 * "GET /0?".len() + ENTRY_OVERHEAD;
    let c = cache(3 * one);
    for i in 0..3 {
        put(&c, &key(&format!("GET /{i}?"), 1), entry(&body));
    }
    assert_eq!(c.bytes(), 3 * one);
    // Use /0, then add /3: /1 (the least recently used) goes.
    assert!(get(&c, &key("GET /0?", 1)).is_some());
    put(&c, &key("GET /3?", 1), entry(&body));
    assert!(c.bytes() <= 3 * one);
    assert!(get(&c, &key("GET /1?", 1)).is_none());
    for i in [0, 2, 3] {
        assert!(get(&c, &key(&format!("GET /{i}?"), 1)).is_some(), "/{i} evicted");
    }
    // Least recently *used*, not put: after /3, /0 and then /2 are used (in that order), so
    // /0's and /2's places in the queue are stale; the next two evictions take /3, then /0.
    for i in [3, 0, 2] {
        assert!(get(&c, &key(&format!("GET /{i}?"), 1)).is_some());
    }
    put(&c, &key("GET /4?", 1), entry(&body));
    assert!(get(&c, &key("GET /3?", 1)).is_none(), "/3 evicted first");
    put(&c, &key("GET /5?", 1), entry(&body));
    assert!(get(&c, &key("GET /0?", 1)).is_none(), "/0 evicted next");
    for i in [2, 4, 5] {
        assert!(get(&c, &key(&format!("GET /{i}?"), 1)).is_some(), "/{i} evicted");
    }
    // Larger than the whole cache: not kept.
    put(&c, &key("GET /big?", 1), entry(&"y".repeat(4 * one)));
    assert!(get(&c, &key("GET /big?", 1)).is_none());
    // Size 0 disables it.
    assert!(!ResponseCache::new(0).enabled());
}

#[tokio::test]
async fn concurrent_misses_compute_once_and_share_the_answer() {
    let c = cache(1 << 20);
    let k = key("GET /extended/v1/address/x/transactions?", 1);
    let Lookup::Lead(leader) = c.lookup(&k, Instant::now()) else { panic!("the first miss leads") };
    let waiters: Vec<_> = (0..5)
        .map(|_| match c.lookup(&k, Instant::now()) {
            Lookup::Wait(rx) => {
                let c = Arc::clone(&c);
                tokio::spawn(async move { c.wait(rx).await.map(|a| a.body.clone()) })
            }
            _ => panic!("a concurrent miss waits"),
        })
        .collect();
    assert_eq!(c.computed(), 1);
    leader.finish(Some(entry("answer")));
    for w in waiters {
        assert_eq!(w.await.unwrap().unwrap(), "answer");
    }
    assert_eq!(get(&c, &k).unwrap(), "answer");
    assert_eq!(c.computed(), 1);
}

#[tokio::test]
async fn waiters_of_a_leader_that_gave_up_compute_alone() {
    let c = cache(1 << 20);
    let k = key("GET /x?", 1);
    let Lookup::Lead(leader) = c.lookup(&k, Instant::now()) else { panic!() };
    let Lookup::Wait(rx) = c.lookup(&k, Instant::now()) else { panic!() };
    drop(leader);
    assert!(c.wait(rx).await.is_none());
    // A non-200 (not shareable) likewise.
    let Lookup::Lead(leader) = c.lookup(&k, Instant::now()) else { panic!("the flight ended") };
    let Lookup::Wait(rx) = c.lookup(&k, Instant::now()) else { panic!() };
    leader.finish(None);
    assert!(c.wait(rx).await.is_none());
}

#[test]
fn stale_answers_only_where_allowed_while_recomputing_and_while_young() {
    let c = cache(1 << 20);
    let list = "GET /extended/v1/tx?limit=50";
    let mine = "GET /extended/v1/address/x/nonces?";
    for url in [list, mine] {
        let mut e = entry("old");
        e.may_be_stale = stale_ok(url_path(url), None);
        put(&c, &key(url, 1), e);
    }
    // Generation 2: the first request of each computes (no flight yet).
    let Lookup::Lead(list_leader) = c.lookup(&key(list, 2), Instant::now()) else { panic!() };
    let Lookup::Lead(_mine_leader) = c.lookup(&key(mine, 2), Instant::now()) else { panic!() };
    // Meanwhile: the list answers stale, the address route waits.
    assert!(matches!(c.lookup(&key(list, 2), Instant::now()), Lookup::Stale(s) if s.body == "old"));
    assert!(matches!(c.lookup(&key(mine, 2), Instant::now()), Lookup::Wait(_)));
    // A client asking for a fresh answer waits too.
    let fresh = Key { stale_ok: stale_ok("/extended/v1/tx", Some("no-cache")), ..key(list, 2) };
    assert!(matches!(c.lookup(&fresh, Instant::now()), Lookup::Wait(_)));
    // Past the bound, no stale answer.
    let later = Instant::now() + DEFAULT_STALE + Duration::from_millis(1);
    assert!(matches!(c.lookup(&key(list, 2), later), Lookup::Wait(_)));
    // The new answer replaces it.
    list_leader.finish(Some(entry("new")));
    assert_eq!(get(&c, &key(list, 2)).unwrap(), "new");
    // No stale answers at all with a zero bound.
    let c = Arc::new(ResponseCache::with_stale(1 << 20, Duration::ZERO));
    let mut e = entry("old");
    e.may_be_stale = true;
    put(&c, &key(list, 1), e);
    let Lookup::Lead(_l) = c.lookup(&key(list, 2), Instant::now()) else { panic!() };
    assert!(matches!(c.lookup(&key(list, 2), Instant::now()), Lookup::Wait(_)));
    assert_eq!(c.bytes(), 0);
}

#[test]
fn chain_only_answers_outlive_mempool_events_and_no_others_do() {
    let c = cache(1 << 20);
    let list = "GET /extended/v1/address/SP1/transactions?limit=50";
    let nonces = "GET /extended/v1/address/SP1/nonces?";
    put(&c, &key_at(list, 10, 10), entry("list"));
    put(&c, &key_at(nonces, 10, 10), entry("nonces"));
    // Mempool events 11 and 12: the mined list stays, the nonces go.
    assert_eq!(get(&c, &key_at(list, 12, 10)).unwrap(), "list");
    assert!(get(&c, &key_at(nonces, 12, 10)).is_none());
    put(&c, &key_at(nonces, 12, 10), entry("nonces 12"));
    // A block (13): both go.
    assert!(get(&c, &key_at(list, 13, 13)).is_none());
    assert!(get(&c, &key_at(nonces, 13, 13)).is_none());
    // And the bytes of what went are no longer counted.
    assert_eq!(c.bytes(), 0);
}

#[test]
fn the_chain_only_routes_are_those_listed() {
    for path in [
        "/extended/v1/tx",
        "/extended/v1/tx/",
        "/extended/v3/transactions",
        "/extended/v1/block/by_height/5",
        "/extended/v2/blocks/5/transactions",
        "/extended/v2/burn-blocks",
        "/extended/v1/address/SP1/transactions",
        "/extended/v1/address/SP1/transactions_with_transfers",
        "/extended/v2/addresses/SP1/transactions",
        "/extended/v3/principals/SP1/transactions",
        "/extended/v1/tokens/nft/holdings",
    ] {
        assert!(chain_only(path), "{path}");
    }
    for path in [
        "/extended/v1/tx/0x01",
        "/extended/v1/tx/mempool",
        "/extended/v1/address/SP1/nonces",
        "/extended/v1/address/SP1/balances",
        "/extended/v1/address/SP1/mempool",
        "/extended/v3/principals/SP1/mempool/transactions",
        "/extended/v3/transactions/0x01",
        "/extended/v3/mempool/transactions",
        "/extended",
    ] {
        assert!(!chain_only(path), "{path}");
    }
}

/// Asks for `url` at generation `n` `times` times (hits, once kept).
fn ask(c: &Arc<ResponseCache>, url: &str, n: i64, times: usize) {
    for _ in 0..times {
        drop(c.look_up(&key(url, n), Instant::now()));
    }
}

#[tokio::test]
async fn the_most_asked_answers_that_readers_wait_for_are_recomputed_ahead() {
    let c = Arc::new(ResponseCache::new(1 << 20).refreshing(2));
    let (hot, warm, cold) = (
        "GET /extended/v1/address/a/transactions?",
        "GET /extended/v1/address/b/transactions?",
        "GET /extended/v1/address/c/transactions?",
    );
    let list = "GET /extended/v1/tx?limit=50";
    let head = "HEAD /extended/v1/address/d/transactions?";
    for url in [hot, warm, cold, list, head] {
        let mut e = entry(url);
        e.may_be_stale = stale_ok(url_path(url), None);
        put(&c, &key(url, 1), e);
    }
    ask(&c, hot, 1, 9);
    ask(&c, warm, 1, REFRESH_MIN_DEMAND as usize);
    ask(&c, cold, 1, REFRESH_MIN_DEMAND as usize - 1);
    ask(&c, list, 1, 20);
    ask(&c, head, 1, 20);
    // The first request at generation 2 (for another URL) moves the cache: the two most asked
    // never-stale GETs get leaders at once; not the stale-able list, the HEAD, nor `cold`.
    let (found, ahead) = c.look_up(&key("GET /other?", 2), Instant::now());
    assert!(matches!(found, Lookup::Lead(_)));
    let urls: Vec<&str> = ahead.iter().map(|l| l.key.url.as_str()).collect();
    assert_eq!(urls, [hot, warm]);
    assert_eq!((c.refreshed(), c.computed()), (2, 1));
    assert!(ahead.iter().all(|l| l.key.generation == generation(2) && !l.key.stale_ok));
    // Requests for them wait for those computations, counted as demand for the next round.
    let Lookup::Wait(rx) = c.lookup(&key(hot, 2), Instant::now()) else { panic!("waits for the refresh") };
    let mut ahead = ahead.into_iter();
    let hot_leader = ahead.next().unwrap();
    hot_leader.finish(Some(entry("hot 2")));
    assert_eq!(c.wait(rx).await.unwrap().body, "hot 2");
    assert_eq!(get(&c, &key(hot, 2)).unwrap(), "hot 2");
    // A refresh that gives up ends its flight: the next request computes.
    drop(ahead);
    assert!(matches!(c.lookup(&key(warm, 2), Instant::now()), Lookup::Lead(_)));
    // Generation 3: `hot` carried half its 9 asks into 2 and was asked for twice there (the
    // waiter and the hit above): 6, recomputed again, with 3 carried. `warm`'s flight at 2
    // ended with its leader: nothing to carry.
    let (_, ahead) = c.look_up(&key("GET /other?", 3), Instant::now());
    let urls: Vec<&str> = ahead.iter().map(|l| l.key.url.as_str()).collect();
    assert_eq!(urls, [hot]);
    drop(ahead);
    // Not asked for at 3: 3 is below the bar, so the demand dies out.
    let (_, ahead) = c.look_up(&key("GET /other?", 4), Instant::now());
    assert!(ahead.is_empty());
}

#[tokio::test]
async fn an_answer_asked_for_steadily_stays_recomputed_when_changes_come_close_together() {
    let c = Arc::new(ResponseCache::new(1 << 20).refreshing(8));
    let url = "GET /extended/v1/address/a/transactions?";
    put(&c, &key(url, 1), entry("a"));
    ask(&c, url, 1, 40);
    // Changes in a row, each before anyone asks: each recomputation is still under way (its
    // leader held) when the next change comes, and carries half the demand of the one before:
    // 40 → 20 → 10 → 5 → 2.
    let mut computing = Vec::new();
    for n in 2..=5 {
        let (_, ahead) = c.look_up(&key("GET /other?", n), Instant::now());
        let urls: Vec<&str> = ahead.iter().map(|l| l.key.url.as_str()).collect();
        assert_eq!(urls, [url], "recomputed ahead at {n}");
        computing.extend(ahead);
    }
    // The fifth change in a row without a request lets it go.
    let (_, ahead) = c.look_up(&key("GET /other?", 6), Instant::now());
    assert!(ahead.is_empty());
}

#[test]
fn nothing_is_recomputed_ahead_unless_asked_to() {
    let c = cache(1 << 20);
    let url = "GET /extended/v1/address/a/transactions?";
    put(&c, &key(url, 1), entry("a"));
    ask(&c, url, 1, 50);
    let (_, ahead) = c.look_up(&key(url, 2), Instant::now());
    assert!(ahead.is_empty());
    assert_eq!(c.refreshed(), 0);
}

#[tokio::test]
async fn an_answer_still_computing_when_the_generation_moves_is_recomputed_ahead_too() {
    let c = Arc::new(ResponseCache::new(1 << 20).refreshing(8));
    let url = "GET /extended/v1/address/a/transactions?";
    // At generation 1 its computation is under way, with readers waiting for it.
    let Lookup::Lead(old) = c.lookup(&key(url, 1), Instant::now()) else { panic!() };
    for _ in 0..REFRESH_MIN_DEMAND {
        assert!(matches!(c.lookup(&key(url, 1), Instant::now()), Lookup::Wait(_)));
    }
    // Generation 2 arrives first: the answer is recomputed at 2 at once.
    let (_, ahead) = c.look_up(&key("GET /other?", 2), Instant::now());
    let urls: Vec<&str> = ahead.iter().map(|l| l.key.url.as_str()).collect();
    assert_eq!(urls, [url]);
    assert!(matches!(c.lookup(&key(url, 2), Instant::now()), Lookup::Wait(_)));
    // The older computation still ends for its own waiters (kept at most as stale).
    old.finish(Some(entry("at 1")));
    assert!(get(&c, &key(url, 2)).is_none());
    // One asked for fewer times is not.
    let cold = "GET /extended/v1/address/b/transactions?";
    let Lookup::Lead(_cold) = c.lookup(&key(cold, 2), Instant::now()) else { panic!() };
    let (_, ahead) = c.look_up(&key("GET /other?", 3), Instant::now());
    assert!(ahead.iter().all(|l| l.key.url != cold));
}

#[test]
fn a_recomputation_ahead_ends_for_the_threads_waiting_in_place_however_it_ends() {
    let c = Arc::new(ResponseCache::new(1 << 20).refreshing(8));
    let (hot, other) =
        ("GET /extended/v1/address/a/transactions?", "GET /extended/v1/address/b/transactions?");
    for (url, asks) in [(hot, 12), (other, 10)] {
        put(&c, &key(url, 1), entry("1"));
        ask(&c, url, 1, asks);
    }
    let (_, ahead) = c.look_up(&key("GET /x?", 2), Instant::now());
    let mut ahead = ahead.into_iter();
    // A request-led flight's waiters have nothing to wait for in place.
    let Lookup::Lead(_lead) = c.lookup(&key("GET /extended/v1/address/c/transactions?", 2), Instant::now())
    else {
        panic!()
    };
    let Lookup::Wait(w) = c.lookup(&key("GET /extended/v1/address/c/transactions?", 2), Instant::now())
    else {
        panic!()
    };
    assert!(w.ended.is_none());
    // Threads blocked on a recomputation ahead return when it is answered, or given up.
    for (url, answered) in [(hot, true), (other, false)] {
        let Lookup::Wait(w) = c.lookup(&key(url, 2), Instant::now()) else { panic!("{url} waits") };
        let ended = w.ended.clone().expect("a recomputation ahead's");
        let blocked = std::thread::spawn(move || ended.wait(Duration::from_secs(600)));
        let leader = ahead.next().unwrap();
        assert_eq!(leader.key.url, url);
        match answered {
            true => drop(leader.finish(Some(entry("2")))),
            false => drop(leader),
        }
        blocked.join().unwrap();
        assert_eq!(*w.ended.unwrap().lock(), InPlace::Ended);
    }
}

#[test]
fn a_slow_recomputation_blocks_a_thread_waiting_in_place_once() {
    let ended = Ended::default();
    assert!(ended.wait(Duration::from_millis(1)));
    assert_eq!(*ended.lock(), InPlace::Slow);
    // The next waiter does not block at all: nothing would end this one's 600 s.
    assert!(!ended.wait(Duration::from_secs(600)));
    ended.set();
    assert_eq!(*ended.lock(), InPlace::Ended);
    assert!(!ended.wait(Duration::from_secs(600)));
}

/// A refresher whose routes were built on `runtime`.
fn refresher_on(runtime: tokio::runtime::Handle) -> Refresher {
    let routes = warp::any().map(|| Response::new("x".into())).boxed();
    Refresher { admission: Admission::unbounded(), routes, runtime: Some(runtime) }
}

#[test]
fn only_requests_on_another_runtime_than_the_recomputation_wait_in_place() {
    let c = Arc::new(ResponseCache::new(1 << 20).refreshing(8));
    let url = "GET /extended/v1/address/a/transactions?";
    put(&c, &key(url, 1), entry("1"));
    ask(&c, url, 1, 10);
    let (_, ahead) = c.look_up(&key("GET /x?", 2), Instant::now());
    let Lookup::Wait(w) = c.lookup(&key(url, 2), Instant::now()) else { panic!() };
    let routes_rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let requests_rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let refresher = refresher_on(routes_rt.handle().clone());
    // On the recomputation's own runtime it would block the thread that has to compute it.
    assert!(!routes_rt.block_on(async { refresher.in_place(&w) }));
    // Elsewhere it waits (here: its bound, as nothing answers).
    assert!(requests_rt.block_on(async { refresher.in_place(&w) }));
    drop(ahead);
}
