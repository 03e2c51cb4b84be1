//! What the benchmarks share (a module, not a bench target: cargo only discovers
//! `benches/*.rs` and `benches/*/main.rs`).

/// User + system CPU seconds this process has used, from `/proc/self/stat`: on a shared
/// machine the wall time depends on the load, the CPU time much less.
pub fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the `(comm)`: utime and stime are the 12th and 13th, in clock ticks (100/s).
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
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
        let f: Vec<&str> = rest.split_whitespace().collect();
        let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
        total += (ticks(11) + ticks(12)) / 100.0;
    }
    total
}
