//! What the benchmarks share (a module, not a bench target: cargo only discovers
//! `benches/*.rs` and `benches/*/main.rs`).

/// User + system CPU seconds this process has used, from `/proc/self/stat`: on a shared
/// machine the wall time depends on the load, the CPU time much less.
pub fn cpu_seconds() -> f64 {
    cpu_seconds_of("self")
}

/// [`cpu_seconds`] of process `pid` (`"self"` or a number), e.g. a bench's child process.
pub fn cpu_seconds_of(pid: &str) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat_cpu_seconds(stat.rsplit_once(')').map_or("", |(_, r)| r))
}

/// utime + stime from the fields after a `stat` file's `(comm)` (the 12th and 13th, in clock
/// ticks of 1/100 s).
fn stat_cpu_seconds(after_comm: &str) -> f64 {
    let f: Vec<&str> = after_comm.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

/// The 1-, 5- and 15-minute load averages (`/proc/loadavg`), to print beside wall-clock figures.
#[allow(dead_code)] // Not every bench prints it.
pub fn load_average() -> String {
    let l = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    l.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
}

/// User + system CPU seconds used so far by this process's threads whose name starts with
/// `prefix` (`/proc/self/task/*/stat`): splits a bench's client from the server it drives
/// in the same process. Threads that already exited are not counted.
#[allow(dead_code)] // not every bench splits its CPU time
pub fn thread_cpu_seconds(prefix: &str) -> f64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return 0.0 };
    let mut total = 0.0;
    for t in tasks.flatten() {
        let stat = std::fs::read_to_string(t.path().join("stat")).unwrap_or_default();
        let Some((head, rest)) = stat.rsplit_once(')') else { continue };
        let comm = head.split_once('(').map_or("", |(_, c)| c);
        if !comm.starts_with(prefix) {
            continue;
        }
        total += stat_cpu_seconds(rest);
    }
    total
}

/// The server's configuration as `serve` reads it with no flags: from the process environment,
/// so that the variables a bench is run with take effect. An unusable value stops the bench,
/// naming it.
#[allow(dead_code)] // not every bench serves the API
pub fn env_config() -> stacks_ledger::config::Config {
    stacks_ledger::config::Config::from_process_env(&stacks_ledger::config::ConfigArgs::default())
        .unwrap_or_else(|e| panic!("configuration: {e}"))
}

/// Every route of the public API over `store` with no node (`api::routes`), configured by the
/// process environment ([`env_config`]).
#[allow(dead_code)] // not every bench serves the API
pub fn routes(
    store: std::sync::Arc<stacks_ledger::store::Store>,
) -> impl warp::Filter<Extract = (impl warp::Reply,), Error = std::convert::Infallible> + Clone {
    stacks_ledger::api::routes(store, &env_config()).unwrap_or_else(|e| panic!("faucets: {e}"))
}
