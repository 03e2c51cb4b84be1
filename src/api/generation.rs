//! The store generation as every cached request reads it, with at most one read in flight
//! (PostgreSQL; on SQLite each request reads it, see [`Generations::read`]):
//! requests that arrive while a read runs share the *next* one, which starts after they
//! arrived. So each request still sees every change committed before it came (the guarantee
//! of one read per request), and under any load the cache costs the database one small
//! statement at a time instead of one per request, queued on the pool with the real work.

use std::sync::{Arc, Mutex};

use tokio::sync::watch;

use crate::store::{Generation, Store};

/// Reads numbered in start order; the last finished one's number and result (`None`: it was
/// abandoned, its request gone).
type Done = (u64, Option<Result<Generation, String>>);

pub struct Generations {
    store: Arc<Store>,
    /// (reads started, one running now).
    state: Mutex<(u64, bool)>,
    done: watch::Sender<Done>,
}

impl Generations {
    pub fn new(store: Arc<Store>) -> Generations {
        Generations { store, state: Mutex::new((0, false)), done: watch::channel((0, None)).0 }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (u64, bool)> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts read number `started + 1` if none runs (`Some(its number)`), else `None`.
    fn try_lead(&self) -> Option<u64> {
        let mut state = self.lock();
        if state.1 {
            return None;
        }
        state.0 += 1;
        state.1 = true;
        Some(state.0)
    }

    /// The generation, from a read that started after this call. Where the store's own read is
    /// cheap (SQLite: a comparison in memory while nothing commits), each request reads it
    /// itself, on its thread: waiting for another request's read would cost it a trip through
    /// the runtime's queue, which under load is the longest part of its answer.
    pub async fn read(&self) -> Result<Generation, String> {
        if self.store.generation_is_cheap() {
            return self.store.generation().await.map_err(|e| e.to_string());
        }
        let mut done = self.done.subscribe();
        // The first read to start from now on.
        let need = self.lock().0 + 1;
        loop {
            if let Some(n) = self.try_lead() {
                let mut running = Running { owner: self, n, result: None };
                let result = self.store.generation().await.map_err(|e| e.to_string());
                running.result = Some(result.clone());
                return result;
            }
            // A read runs: wait for it to end, then take its answer if it started after we
            // came, else lead (or join) the next.
            if done.changed().await.is_err() {
                return Err("generation reader closed".into());
            }
            if let (n, Some(result)) = &*done.borrow_and_update() {
                if *n >= need {
                    return result.clone();
                }
            }
        }
    }
}

/// The read in flight: when it ends, however (answered, or its request dropped), the next can
/// start and the waiters are woken.
struct Running<'a> {
    owner: &'a Generations,
    n: u64,
    result: Option<Result<Generation, String>>,
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        let mut state = self.owner.lock();
        state.1 = false;
        self.owner.done.send_replace((self.n, self.result.take()));
    }
}
