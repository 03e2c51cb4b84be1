//! `import-events`: replays a TSV raw event log into a sink, line by line, in file order.
//!
//! Each line goes to the sink with the file's id and timestamp, so the store keeps the ids and
//! a replay is idempotent. Lines are applied in batches ([`EventSink::ingest_many`]: one
//! database transaction per batch in the store). The first bad line or failed ingest stops the
//! import: everything before it stays applied, nothing after it is. A store that already holds events
//! is refused unless it is wiped first or the file continues it (the store's last event is in
//! the file, same id, path and payload): then the lines up to that id are skipped and the
//! import resumes after it.

use std::fmt;
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use thiserror::Error;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::progress::{per_second, Counts, Progress, ProgressMode};
use super::{EventSink, IncomingEvent, IngestError, IngestOutcome, RawEventLog};
use crate::events::{EventPath, RawEvent, TsvError, TsvReader};

/// Read buffer: large lines (blocks) are common, small reads would only add syscalls.
const READ_BUFFER: usize = 1 << 20;
/// Lines parsed ahead of the sink. Parsing (unescaping, JSON check) runs on its own thread
/// while the sink applies the previous line; a small queue bounds memory when lines are
/// hundreds of MB.
const READ_AHEAD: usize = 2;
/// Events per [`EventSink::ingest_many`] call (one database transaction in the store), by
/// default: a commit per event (an fsync on PostgreSQL) was most of a replay's time, and the
/// more transactions a commit holds, the fewer times each B-tree page they share is written
/// (a replay of 40,000 events: 67 s in batches of 500, 55 s in batches of 2,000). A crash
/// loses at most the batch in flight, and the next run resumes after the last committed event.
pub const BATCH_EVENTS: usize = 2_000;
/// Payload bytes per batch, whatever the count: bounds the memory a batch of big blocks holds.
const BATCH_BYTES: usize = 64 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImportOptions {
    /// Empty a non-empty store before importing.
    pub wipe: bool,
    /// Import into a non-empty store even when its last event is not found in the file; lines
    /// with an id up to the store's last id are still skipped.
    pub force: bool,
    /// Events per database transaction (at most; fewer when their bodies pass 64 MiB).
    pub batch_events: usize,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions { wipe: false, force: false, batch_events: BATCH_EVENTS }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ImportSummary {
    pub counts: Counts,
    /// Lines read (including skipped ones).
    pub lines: u64,
    pub elapsed: Duration,
    pub wiped: bool,
    /// The store's last event id when the import resumed after it.
    pub resumed_after: Option<i64>,
    /// Indexes set aside for the replay and built at its end (included in `elapsed`).
    pub indexes_built: usize,
    pub index_build: Duration,
}

impl fmt::Display for ImportSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Counts { applied, skipped, blocks } = self.counts;
        write!(
            f,
            "{applied} events applied, {skipped} skipped, {blocks} blocks in {:.1} s ({:.1} blocks/s)",
            self.elapsed.as_secs_f64(),
            per_second(blocks, self.elapsed)
        )?;
        if self.indexes_built > 0 {
            let secs = self.index_build.as_secs_f64();
            write!(f, "; {} indexes built at the end in {secs:.1} s", self.indexes_built)?;
        }
        Ok(())
    }
}

/// Why the store's last event does not continue in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Discontinuity {
    /// No line has the store's last id.
    IdNotInFile,
    /// A line has the id, but another path or payload (the first such line).
    Differs { line: u64 },
    /// The store holds ledger data but no raw event to resume after.
    NoRawEvents,
}

impl fmt::Display for Discontinuity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Discontinuity::IdNotInFile => f.write_str("no line of the file has that id"),
            Discontinuity::Differs { line } => {
                write!(f, "line {line} has that id with another path or payload")
            }
            Discontinuity::NoRawEvents => f.write_str("the store has data but no raw events"),
        }
    }
}

#[derive(Debug, Error)]
pub enum ImportError {
    #[error("cannot open {}", path.display())]
    Open {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot read the store's state")]
    Store(#[source] IngestError),
    #[error(
        "the store is not empty{} and the file does not continue it ({reason}); add --wipe-db to \
         replace its contents, or --force to import the lines after its last id anyway",
        last_id.map(|id| format!(" (last event id {id})")).unwrap_or_default()
    )]
    NotContinued { last_id: Option<i64>, reason: Discontinuity },
    /// The line is not a raw event; its display starts with `line N: `.
    #[error(transparent)]
    Line(TsvError),
    #[error("line {line}: unknown event path `{path}`")]
    UnknownPath { line: u64, path: String },
    #[error("line {line}: event {id} ({path}) was not applied")]
    Ingest {
        line: u64,
        id: i64,
        path: EventPath,
        #[source]
        source: IngestError,
    },
    #[error("the file reader stopped unexpectedly: {0}")]
    Reader(String),
}

impl ImportError {
    /// The 1-based line the import stopped at, when a line is to blame.
    pub fn line(&self) -> Option<u64> {
        match self {
            ImportError::Line(e) => Some(e.line()),
            ImportError::UnknownPath { line, .. } | ImportError::Ingest { line, .. } => Some(*line),
            _ => None,
        }
    }
}

/// Where a non-empty store's events end and the file's new ones start.
struct Resume {
    last_id: i64,
    stored: Option<RawEvent>,
    verified: bool,
    first_mismatch: Option<u64>,
}

impl Resume {
    /// Whether `event` (at `line`) is to be skipped; `Err` once the file has gone past the
    /// store's last id without showing it.
    fn skip(&mut self, event: &RawEvent, line: u64) -> Result<bool, Discontinuity> {
        if event.id < self.last_id {
            return Ok(true);
        }
        if event.id == self.last_id {
            if !self.verified {
                let same = self
                    .stored
                    .as_ref()
                    .is_some_and(|s| s.path == canonical(&event.path) && s.payload == event.payload);
                if same {
                    self.verified = true;
                } else {
                    self.first_mismatch.get_or_insert(line);
                }
            }
            return Ok(true);
        }
        if self.verified {
            Ok(false)
        } else {
            Err(self.discontinuity())
        }
    }

    fn discontinuity(&self) -> Discontinuity {
        match self.first_mismatch {
            Some(line) => Discontinuity::Differs { line },
            None => Discontinuity::IdNotInFile,
        }
    }
}

/// The stored form of a path as the file spells it (a trailing slash is tolerated).
fn canonical(path: &str) -> &str {
    match EventPath::from_path(path) {
        Some(p) => p.as_str(),
        None => path,
    }
}

/// Imports `file` into `sink`. See the module documentation for the rules.
pub async fn import_events<S>(
    sink: &S,
    file: &Path,
    options: ImportOptions,
    progress: ProgressMode,
) -> Result<ImportSummary, ImportError>
where
    S: EventSink + RawEventLog,
{
    let started = Instant::now();
    let open_error = |source| ImportError::Open { path: file.to_owned(), source };
    let handle = File::open(file).map_err(open_error)?;
    let total_bytes = handle.metadata().map_err(open_error)?.len();

    let mut wiped = false;
    let mut resume = None;
    if !sink.is_empty().await.map_err(ImportError::Store)? {
        if options.wipe {
            tracing::warn!("wiping the store before the import (--wipe-db)");
            // First: the wipe then deletes no entry from the indexes it drops.
            sink.begin_bulk_replay().await.map_err(ImportError::Store)?;
            sink.wipe().await.map_err(ImportError::Store)?;
            wiped = true;
        } else {
            resume = Some(resume_point(sink, options.force).await?);
        }
    } else {
        sink.begin_bulk_replay().await.map_err(ImportError::Store)?;
    }
    let resumed_after = resume.as_ref().map(|r: &Resume| r.last_id);
    match resumed_after {
        Some(id) => tracing::info!("importing {}: skipping the lines up to event id {id}", file.display()),
        None => tracing::info!("importing {} ({total_bytes} bytes)", file.display()),
    }

    let mut reached = Reached::default();
    let replayed =
        replay(sink, handle, total_bytes, progress, options.batch_events, &mut resume, &mut reached).await;
    // However the replay ended, the store gets back what it set aside for it.
    let build_started = Instant::now();
    let built = sink.end_bulk_replay().await;
    let index_build = build_started.elapsed();
    if let (Err(_), Err(e)) = (&replayed, &built) {
        tracing::warn!(error = %e, "the indexes set aside for the import were not built; the next open builds them");
    }
    replayed?;
    let indexes_built = built.map_err(ImportError::Store)?;
    let summary = ImportSummary {
        counts: reached.counts,
        lines: reached.lines,
        elapsed: started.elapsed(),
        wiped,
        resumed_after,
        indexes_built,
        index_build,
    };
    tracing::info!("import of {} done: {summary}", file.display());
    Ok(summary)
}

/// How far a replay got.
#[derive(Default)]
struct Reached {
    counts: Counts,
    /// The last line read.
    lines: u64,
}

/// The lines of the file into the sink; `reached` says how far it got.
async fn replay<S: EventSink>(
    sink: &S,
    handle: File,
    total_bytes: u64,
    progress: ProgressMode,
    batch_events: usize,
    resume: &mut Option<Resume>,
    reached: &mut Reached,
) -> Result<(), ImportError> {
    let Reached { counts, lines: line_count } = reached;
    let bytes_read = Arc::new(AtomicU64::new(0));
    let (mut lines, reader) = spawn_reader(handle, bytes_read.clone());
    let mut progress = Progress::start(progress, total_bytes);
    let mut batch = Batch { max_events: batch_events.max(1), ..Batch::default() };
    while let Some((line, item)) = lines.recv().await {
        *line_count = line;
        // A bad line stops the import, after the lines before it are applied.
        let event = match item {
            Ok(event) => event,
            Err(e) => {
                batch.apply(sink, counts).await?;
                return Err(ImportError::Line(e));
            }
        };
        let skip = match resume.as_mut() {
            Some(r) => match r.skip(&event, line) {
                Ok(skip) => skip,
                Err(reason) => {
                    batch.apply(sink, counts).await?;
                    return Err(ImportError::NotContinued { last_id: Some(r.last_id), reason });
                }
            },
            None => false,
        };
        if skip {
            counts.skipped += 1;
        } else {
            let Some(path) = EventPath::from_path(&event.path) else {
                batch.apply(sink, counts).await?;
                return Err(ImportError::UnknownPath { line, path: event.path });
            };
            batch.push(line, path, event);
            if batch.is_full() {
                batch.apply(sink, counts).await?;
            }
        }
        progress.update(bytes_read.load(Ordering::Relaxed), *counts);
    }
    batch.apply(sink, counts).await?;
    progress.update(bytes_read.load(Ordering::Relaxed), *counts);
    // The channel also closes when the reader panics: that must not pass for the file's end.
    reader.await.map_err(|e| ImportError::Reader(e.to_string()))?;
    if let Some(r) = resume.as_ref() {
        if !r.verified {
            return Err(ImportError::NotContinued { last_id: Some(r.last_id), reason: r.discontinuity() });
        }
    }
    Ok(())
}

/// Checks that a non-empty store can be continued from the file, and from where.
async fn resume_point<S>(sink: &S, force: bool) -> Result<Resume, ImportError>
where
    S: EventSink + RawEventLog,
{
    let last_id = sink.last_event_id().await.map_err(ImportError::Store)?;
    let Some(last_id) = last_id else {
        if force {
            tracing::warn!("the store has data but no raw events; importing the whole file (--force)");
            return Ok(Resume { last_id: i64::MIN, stored: None, verified: true, first_mismatch: None });
        }
        return Err(ImportError::NotContinued { last_id: None, reason: Discontinuity::NoRawEvents });
    };
    let stored = sink
        .raw_events_after(last_id.checked_sub(1), 1)
        .await
        .map_err(ImportError::Store)?
        .into_iter()
        .find(|e| e.id == last_id);
    if force {
        tracing::warn!(
            "importing after event id {last_id} without checking that the file continues the store (--force)"
        );
    }
    Ok(Resume { last_id, stored, verified: force, first_mismatch: None })
}

/// Lines waiting to be applied together.
#[derive(Default)]
struct Batch {
    /// Per event: its line, id and path, for the error that names it.
    lines: Vec<(u64, i64, EventPath)>,
    events: Vec<IncomingEvent>,
    bytes: usize,
    max_events: usize,
}

impl Batch {
    fn push(&mut self, line: u64, path: EventPath, event: RawEvent) {
        self.bytes += event.payload.len();
        self.lines.push((line, event.id, path));
        self.events.push(IncomingEvent {
            id: Some(event.id),
            receive_timestamp: Some(event.receive_timestamp),
            path,
            payload: event.payload,
        });
    }

    fn is_full(&self) -> bool {
        self.events.len() >= self.max_events || self.bytes >= BATCH_BYTES
    }

    /// Applies the batch and empties it; the first event not applied stops the import.
    async fn apply<S: EventSink>(&mut self, sink: &S, counts: &mut Counts) -> Result<(), ImportError> {
        if self.events.is_empty() {
            return Ok(());
        }
        self.bytes = 0;
        let lines = std::mem::take(&mut self.lines);
        let outcomes = match sink.ingest_many(std::mem::take(&mut self.events)).await {
            Ok(outcomes) => outcomes,
            // Nothing of the batch is stored: its first line is the first not applied.
            Err(source) => {
                let (line, id, path) = lines[0];
                return Err(ImportError::Ingest { line, id, path, source });
            }
        };
        for ((line, id, path), outcome) in lines.into_iter().zip(outcomes) {
            match outcome {
                Ok(IngestOutcome::Applied { .. } | IngestOutcome::Logged { .. }) => {
                    counts.applied += 1;
                    if path == EventPath::NewBlock {
                        counts.blocks += 1;
                    }
                }
                Ok(IngestOutcome::AlreadyStored { .. }) => counts.skipped += 1,
                Err(source) => return Err(ImportError::Ingest { line, id, path, source }),
            }
        }
        Ok(())
    }
}

type Line = (u64, Result<RawEvent, TsvError>);

/// Parses the file on a blocking thread, ahead of the sink. The thread ends after the first
/// bad line, at the end of the file, or as soon as the receiver is dropped.
fn spawn_reader(file: File, bytes_read: Arc<AtomicU64>) -> (mpsc::Receiver<Line>, JoinHandle<()>) {
    let (tx, rx) = mpsc::channel(READ_AHEAD);
    let task = tokio::task::spawn_blocking(move || {
        let counted = CountingReader { inner: file, count: bytes_read };
        let mut reader = TsvReader::new(BufReader::with_capacity(READ_BUFFER, counted));
        while let Some(item) = reader.next() {
            let failed = item.is_err();
            if tx.blocking_send((reader.line_number(), item)).is_err() || failed {
                break;
            }
        }
    });
    (rx, task)
}

/// Counts the bytes read from the file, for the progress bar.
struct CountingReader<R> {
    inner: R,
    count: Arc<AtomicU64>,
}

impl<R: Read> Read for CountingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}
