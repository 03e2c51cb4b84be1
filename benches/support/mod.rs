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
    // Fields after the `(comm)`: utime and stime are the 12th and 13th, in clock ticks (100/s).
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

/// The 1-, 5- and 15-minute load averages (`/proc/loadavg`), to print beside wall-clock figures.
#[allow(dead_code)] // Not every bench prints it.
pub fn load_average() -> String {
    let l = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    l.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
}
