//! `export-events`: writes the stored raw event log, in id order, as the incumbent's TSV.

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use thiserror::Error;

use super::{IngestError, RawEventLog};
use crate::events::{EventPath, TsvWriter};

/// Events fetched per store round trip. Small, because one of them can be a genesis block of
/// hundreds of MB (the incumbent's replay uses batches of 100 too).
pub const EXPORT_BATCH: usize = 100;

#[derive(Debug, Clone, PartialEq)]
pub struct ExportSummary {
    pub events: u64,
    pub blocks: u64,
    pub elapsed: Duration,
}

impl fmt::Display for ExportSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} events exported ({} blocks) in {:.1} s",
            self.events,
            self.blocks,
            self.elapsed.as_secs_f64()
        )
    }
}

#[derive(Debug, Error)]
pub enum ExportError {
    #[error("{} already exists; add --overwrite-file to replace it", path.display())]
    Exists { path: PathBuf },
    #[error(
        "`local:` paths (written by the database server) are not supported; give a path on this machine"
    )]
    LocalPath,
    #[error("cannot write {} (what was written so far is left there)", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot read the raw event log")]
    Store(#[source] IngestError),
    #[error("the raw event log returned id {next} after id {previous}; an export must be in id order")]
    OutOfOrder { previous: i64, next: i64 },
}

/// Writes every raw event of `log` to `file`. An existing file is refused unless `overwrite`.
pub async fn export_events<L: RawEventLog>(
    log: &L,
    file: &Path,
    overwrite: bool,
) -> Result<ExportSummary, ExportError> {
    if file.to_str().is_some_and(|s| s.starts_with("local:")) {
        return Err(ExportError::LocalPath);
    }
    // `create_new` makes the existence check and the creation one step.
    let mut options = OpenOptions::new();
    options.write(true);
    if overwrite {
        options.create(true).truncate(true);
    } else {
        options.create_new(true);
    }
    let handle = options.open(file).map_err(|source| match source.kind() {
        io::ErrorKind::AlreadyExists => ExportError::Exists { path: file.to_owned() },
        _ => ExportError::Write { path: file.to_owned(), source },
    })?;
    tracing::info!("exporting the raw event log to {}", file.display());
    let summary = write_events(log, handle, file).await?;
    tracing::info!("export to {} done: {summary}", file.display());
    Ok(summary)
}

async fn write_events<L: RawEventLog>(
    log: &L,
    file: File,
    path: &Path,
) -> Result<ExportSummary, ExportError> {
    let started = Instant::now();
    let write_error = |source| ExportError::Write { path: path.to_owned(), source };
    // Blocking writes are fine here: the export is the only work of its runtime, and the next
    // batch cannot be fetched before this one is written anyway.
    let mut writer = TsvWriter::new(BufWriter::with_capacity(1 << 20, file));
    let (mut events, mut blocks) = (0, 0);
    let mut after = None;
    loop {
        let batch = log.raw_events_after(after, EXPORT_BATCH).await.map_err(ExportError::Store)?;
        if batch.is_empty() {
            break;
        }
        for event in &batch {
            if let Some(previous) = after.filter(|&p| event.id <= p) {
                return Err(ExportError::OutOfOrder { previous, next: event.id });
            }
            writer.write_event(event).map_err(write_error)?;
            after = Some(event.id);
            events += 1;
            if EventPath::from_path(&event.path) == Some(EventPath::NewBlock) {
                blocks += 1;
            }
        }
    }
    let file = writer.into_inner().into_inner().map_err(|e| write_error(e.into_error()))?;
    // Durable before "done" is printed; only regular files can be synced (not `/dev/stdout`).
    if file.metadata().is_ok_and(|m| m.is_file()) {
        file.sync_all().map_err(write_error)?;
    }
    Ok(ExportSummary { events, blocks, elapsed: started.elapsed() })
}
