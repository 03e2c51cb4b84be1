//! The public API's own tokio runtime, whose threads run at a lower CPU priority than the event
//! observer's ("ingestion first", `docs/configuration.md`). Its connections are served by event loops at the
//! same priority (`super::server`); this runtime computes what they hand it.
//!
//! Admission control bounds the database work readers may start while an event is applied, but
//! not the CPU of the HTTP layer: a thousand connections answered from the response cache kept
//! both cores busy and the node's POSTs waited behind them in the same scheduler queue
//! (the mixed-load benchmark: ingestion at 2–4 % of its rate alone). On a runtime of its own,
//! the API's tasks no longer queue ahead of the observer's, and its threads' higher nice value
//! lets the kernel run the observer and the writer first whenever they have work; when they
//! are idle the API gets every core. Threads the API's threads start (its blocking pool, and
//! the SQLite driver's worker thread of a reader connection opened from one of them) inherit
//! the nice value. PostgreSQL's server processes are not affected.

use std::future::Future;

use tokio::runtime::{Builder, Handle, Runtime};
use tokio::task::JoinHandle;

/// A multi-threaded runtime for the API, shut down (without waiting) when dropped, which is
/// allowed from async code, unlike dropping a [`Runtime`].
pub struct ApiRuntime {
    rt: Option<Runtime>,
    nice: i32,
}

impl ApiRuntime {
    /// `threads` workers (at least 1), each `nice` steps below the priority of the thread that
    /// starts it (capped at 19).
    pub fn new(threads: usize, nice: i32) -> std::io::Result<ApiRuntime> {
        let rt = Builder::new_multi_thread()
            .worker_threads(threads.max(1))
            .thread_name("api")
            .enable_all()
            .on_thread_start(move || lower_priority(nice))
            .build()?;
        Ok(ApiRuntime { rt: Some(rt), nice })
    }

    /// How many steps below the starting thread's priority its threads run.
    pub fn nice(&self) -> i32 {
        self.nice
    }

    pub fn handle(&self) -> &Handle {
        self.rt.as_ref().expect("the runtime lives until dropped").handle()
    }

    pub fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.handle().spawn(future)
    }
}

impl Drop for ApiRuntime {
    fn drop(&mut self) {
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

/// Raises the calling thread's nice value by `by` (Linux: the nice value is per thread, set
/// with `setpriority` on the thread's id).
pub(crate) fn lower_priority(by: i32) {
    #[cfg(target_os = "linux")]
    {
        let tid = Some(rustix::thread::gettid());
        let current = rustix::process::getpriority_process(tid).unwrap_or(0);
        let target = current.saturating_add(by).min(19);
        if let Err(e) = rustix::process::setpriority_process(tid, target) {
            tracing::warn!("cannot lower the API thread's priority to nice {target}: {e}");
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = by;
}

/// This thread's nice value.
#[cfg(target_os = "linux")]
pub fn thread_nice() -> i32 {
    rustix::process::getpriority_process(Some(rustix::thread::gettid())).unwrap_or(0)
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn api_threads_run_below_the_callers_priority() {
        let caller = thread_nice();
        let rt = ApiRuntime::new(2, 5).unwrap();
        let (worker, blocking) = rt
            .handle()
            .block_on(async { (thread_nice(), tokio::task::spawn_blocking(thread_nice).await.unwrap()) });
        // block_on runs on this thread; the spawned task on a worker.
        let spawned = rt.handle().block_on(rt.spawn(async { thread_nice() })).unwrap();
        assert_eq!(worker, caller, "block_on runs on the calling thread");
        assert_eq!(spawned, (caller + 5).min(19));
        assert_eq!(blocking, (caller + 5).min(19), "the blocking pool inherits the priority");
        drop(rt);
        assert_eq!(thread_nice(), caller, "the caller's own priority is untouched");
    }
}
