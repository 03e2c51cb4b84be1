//! Import progress on stderr: an `indicatif` bar on a terminal, periodic log lines otherwise
//! (a bar's carriage returns would flood a log file), nothing in tests.
//!
//! Log lines and the bar share stderr: [`ProgressAwareStderr`] is the tracing writer that hides
//! the bar while a line is printed, so logs emitted mid-import (by the store, say) do not get
//! overdrawn.

use std::io::{self, IsTerminal, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use tracing_subscriber::fmt::MakeWriter;

/// The bar currently drawn on stderr, if any.
static ACTIVE_BAR: Mutex<Option<ProgressBar>> = Mutex::new(None);

/// How often the plain reporter logs.
const LOG_EVERY: Duration = Duration::from_secs(10);
const BAR_TEMPLATE: &str = "{spinner} {elapsed_precise} [{wide_bar}] {bytes}/{total_bytes} {msg} ETA {eta}";
const COUNT_TEMPLATE: &str =
    "{spinner} {elapsed_precise} [{wide_bar}] {human_pos}/{human_len} {msg} ETA {eta}";
/// How often the bar's message (blocks, blocks/s) is re-rendered.
const MESSAGE_EVERY: Duration = Duration::from_millis(200);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressMode {
    /// A progress bar (bytes read of the file size, blocks/s, ETA).
    Bar,
    /// An `info` log line every few seconds.
    Log,
    /// No output.
    Hidden,
}

impl ProgressMode {
    /// A bar when stderr is a terminal, log lines when it is not.
    pub fn for_stderr() -> Self {
        if io::stderr().is_terminal() {
            ProgressMode::Bar
        } else {
            ProgressMode::Log
        }
    }
}

/// What has been done so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub applied: u64,
    pub skipped: u64,
    /// Applied `/new_block` events.
    pub blocks: u64,
}

/// Progress of one import over a file of `total_bytes`.
pub struct Progress {
    bar: Option<ProgressBar>,
    log: bool,
    total_bytes: u64,
    started: Instant,
    last_report: Instant,
    counts: Counts,
}

impl Progress {
    pub fn start(mode: ProgressMode, total_bytes: u64) -> Self {
        let now = Instant::now();
        let bar = (mode == ProgressMode::Bar).then(|| start_bar(total_bytes, BAR_TEMPLATE));
        Progress {
            bar,
            log: mode == ProgressMode::Log,
            total_bytes,
            started: now,
            last_report: now,
            counts: Counts::default(),
        }
    }

    /// Records that `bytes` of the file have been read and `counts` done.
    pub fn update(&mut self, bytes: u64, counts: Counts) {
        let now = Instant::now();
        if let Some(bar) = &self.bar {
            bar.set_position(bytes.min(self.total_bytes));
            if now.duration_since(self.last_report) >= MESSAGE_EVERY {
                self.last_report = now;
                bar.set_message(format!(
                    "{} blocks, {:.1} blocks/s",
                    counts.blocks,
                    self.rate(counts.blocks)
                ));
            }
        } else if self.log && now.duration_since(self.last_report) >= LOG_EVERY {
            self.last_report = now;
            let percent =
                if self.total_bytes == 0 { 100.0 } else { bytes as f64 * 100.0 / self.total_bytes as f64 };
            tracing::info!(
                "import: {percent:.1}% of the file read, {} events applied, {} skipped, {} blocks ({:.1} blocks/s)",
                counts.applied,
                counts.skipped,
                counts.blocks,
                self.rate(counts.blocks)
            );
        }
    }

    fn bar_message(&self) -> String {
        format!("{} blocks, {:.1} blocks/s", self.counts.blocks, self.rate(self.counts.blocks))
    }

    fn rate(&self, blocks: u64) -> f64 {
        per_second(blocks, self.started.elapsed())
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.set_message(self.bar_message());
            end_bar(bar);
        }
    }
}

/// A bar on stderr of `template`, registered for log suspension.
fn start_bar(total: u64, template: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    // The templates are constants; a failure would be a programming error caught by the tests
    // below, so fall back to the default style rather than abort an import.
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.enable_steady_tick(Duration::from_millis(250));
    *lock_bar() = Some(bar.clone());
    bar
}

/// Leaves the bar's last state on screen, whether the import finished or stopped.
fn end_bar(bar: ProgressBar) {
    *lock_bar() = None;
    bar.abandon();
}

/// Progress of a count toward a known total (`import-bns`'s subdomains): a bar on a terminal,
/// an `info` line every few seconds otherwise.
pub struct CountProgress {
    bar: Option<ProgressBar>,
    log: bool,
    /// What is counted, as the log lines say it (`import-bns: subdomains`).
    what: &'static str,
    total: u64,
    last_report: Instant,
}

impl CountProgress {
    pub fn start(mode: ProgressMode, what: &'static str, total: u64) -> Self {
        let bar = (mode == ProgressMode::Bar).then(|| {
            let bar = start_bar(total, COUNT_TEMPLATE);
            bar.set_message(what);
            bar
        });
        CountProgress { bar, log: mode == ProgressMode::Log, what, total, last_report: Instant::now() }
    }

    /// `done` of the total are done.
    pub fn set(&mut self, done: u64) {
        if let Some(bar) = &self.bar {
            bar.set_position(done.min(self.total));
        } else if self.log && (self.last_report.elapsed() >= LOG_EVERY || done >= self.total) {
            self.last_report = Instant::now();
            let percent = if self.total == 0 { 100.0 } else { done as f64 * 100.0 / self.total as f64 };
            tracing::info!("{}: {done} of {} ({percent:.1}%)", self.what, self.total);
        }
    }
}

impl Drop for CountProgress {
    fn drop(&mut self) {
        if let Some(bar) = self.bar.take() {
            end_bar(bar);
        }
    }
}

/// `count / elapsed`, 0 for an instant run.
pub fn per_second(count: u64, elapsed: Duration) -> f64 {
    let secs = elapsed.as_secs_f64();
    if secs > 0.0 {
        count as f64 / secs
    } else {
        0.0
    }
}

fn lock_bar() -> std::sync::MutexGuard<'static, Option<ProgressBar>> {
    ACTIVE_BAR.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A `tracing_subscriber` writer for stderr that suspends an active progress bar around each
/// log line.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProgressAwareStderr;

impl<'a> MakeWriter<'a> for ProgressAwareStderr {
    type Writer = ProgressAwareStderr;

    fn make_writer(&'a self) -> Self::Writer {
        ProgressAwareStderr
    }
}

impl Write for ProgressAwareStderr {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        // The formatter hands over a whole line at once, so one suspension per line.
        let bar = lock_bar().clone();
        match bar {
            Some(bar) => bar.suspend(|| io::stderr().write_all(buf))?,
            None => io::stderr().write_all(buf)?,
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        io::stderr().flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bar_templates_parse() {
        ProgressStyle::with_template(BAR_TEMPLATE).unwrap();
        ProgressStyle::with_template(COUNT_TEMPLATE).unwrap();
    }

    /// The bar tests share the one active bar: one at a time.
    static ONE_BAR: Mutex<()> = Mutex::new(());

    #[test]
    fn a_count_bar_registers_for_log_suspension_until_dropped() {
        let _one = ONE_BAR.lock().unwrap_or_else(|e| e.into_inner());
        let mut progress = CountProgress::start(ProgressMode::Bar, "subdomains", 10);
        progress.set(4);
        assert_eq!(progress.bar.as_ref().map(ProgressBar::position), Some(4));
        assert!(lock_bar().is_some());
        drop(progress);
        assert!(lock_bar().is_none());
    }

    #[test]
    fn a_bar_registers_for_log_suspension_until_dropped() {
        let _one = ONE_BAR.lock().unwrap_or_else(|e| e.into_inner());
        let mut progress = Progress::start(ProgressMode::Bar, 100);
        assert!(lock_bar().is_some());
        progress.update(50, Counts { applied: 3, skipped: 0, blocks: 1 });
        ProgressAwareStderr.write_all(b"").unwrap();
        drop(progress);
        assert!(lock_bar().is_none());
    }

    #[test]
    fn rates() {
        assert_eq!(per_second(10, Duration::ZERO), 0.0);
        assert_eq!(per_second(10, Duration::from_secs(4)), 2.5);
    }
}
