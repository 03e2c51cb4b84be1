use super::*;

fn generation(n: i64) -> Generation {
    Generation { last_event: Some((n, "t".into())), changes: 0 }
}

fn key(url: &str, n: i64) -> Key {
    let stale_ok = stale_ok(url_path(url), None);
    Key { url: url.into(), generation: generation(n), read_at: Instant::now(), stale_ok }
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
