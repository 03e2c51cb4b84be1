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
