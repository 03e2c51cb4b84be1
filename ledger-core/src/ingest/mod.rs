//! The seam between whatever delivers node events (the event-observer HTTP server, a TSV
//! replay, the devnet generator) and whatever records them (the ledger store).
//!
//! A sink either commits the raw event **and** its effects on the ledger, or nothing at all.
//!
//! Around the seam: [`import`] and [`export`] move the raw event log to and from the incumbent's
//! TSV, [`memory::MemorySink`] is the in-memory fake the tests (and, until a store is wired in,
//! `serve`) run on, and [`error_chain`] renders an error with its causes for replies and logs.

pub mod chain;
pub mod export;
pub mod import;
pub mod inbox;
pub mod memory;
pub mod progress;

use std::future::Future;

use thiserror::Error;

use crate::events::{EventPath, RawEvent};

pub use chain::error_chain;

/// One event as delivered to a sink.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IncomingEvent {
    /// Set when replaying a log (the TSV's `id`): the sink keeps it, which makes a replay
    /// idempotent and resumable. `None` for live events: the sink assigns the next id.
    pub id: Option<i64>,
    /// The receive time as the log has it (PostgreSQL `timestamptz` text, UTC). `None` for
    /// live events: the sink stamps the current time.
    pub receive_timestamp: Option<String>,
    pub path: EventPath,
    /// The JSON body, exactly as received.
    pub payload: String,
}

/// What a sink did with an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IngestOutcome {
    /// Stored and applied under this raw-event id.
    Applied { id: i64 },
    /// A replayed event whose id is already stored: nothing was written.
    AlreadyStored { id: i64 },
    /// Logged durably under this raw-event id, to be applied shortly (the event observer with
    /// `STACKS_LEDGER_EVENT_ACK=logged`: see [`inbox`]).
    Logged { id: i64 },
}

#[derive(Debug, Error)]
pub enum IngestError {
    /// The body is not what the path promises (not JSON, missing or mistyped fields, a raw
    /// transaction that does not decode, another network's chain id). The node gets a 400 for
    /// unparseable JSON and a 500 otherwise; a replay stops at it.
    #[error("invalid {path} payload: {reason}")]
    Invalid { path: EventPath, reason: String },
    /// The event is well-formed but cannot be applied to the ledger as it stands (e.g. its
    /// parent block is unknown). The node retries it.
    #[error("cannot apply {path}: {reason}")]
    Rejected { path: EventPath, reason: String },
    /// The store failed (I/O, database).
    #[error("store error: {0}")]
    Store(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// Records node events. Implemented by the ledger store; tests use in-memory fakes.
pub trait EventSink: Send + Sync + 'static {
    fn ingest(&self, event: IncomingEvent)
        -> impl Future<Output = Result<IngestOutcome, IngestError>> + Send;

    /// The highest raw-event id stored, if any (where a replay resumes).
    fn last_event_id(&self) -> impl Future<Output = Result<Option<i64>, IngestError>> + Send;

    /// A replay's bulk path: applies `events` in order, each with the semantics of
    /// [`ingest`](EventSink::ingest), and **stops at the first one not applied**. The result
    /// has one outcome per event up to and including that one (then an `Err`); the events after
    /// it were not applied. A sink may commit the events together: an `Err` of the call itself
    /// means that none of them is stored. Never for live node POSTs, which are acknowledged
    /// one by one. By default, one [`ingest`](EventSink::ingest) after the other.
    fn ingest_many(
        &self,
        events: Vec<IncomingEvent>,
    ) -> impl Future<Output = Result<Vec<Result<IngestOutcome, IngestError>>, IngestError>> + Send {
        async move {
            let mut out = Vec::with_capacity(events.len());
            for event in events {
                let outcome = self.ingest(event).await;
                let failed = outcome.is_err();
                out.push(outcome);
                if failed {
                    break;
                }
            }
            Ok(out)
        }
    }
}

/// Where the event observer logs events it acknowledges before applying them ([`inbox`]).
/// Implemented by the ledger store (`event_inbox`).
pub trait EventInbox: Send + Sync + 'static {
    /// The id the next logged event gets: above every stored raw event and logged event.
    fn inbox_next_id(&self) -> impl Future<Output = Result<i64, IngestError>> + Send;

    /// Durably logs `event`, which carries its id and receive time; refuses an invalid body
    /// (`Invalid`, nothing written) as [`EventSink::ingest`] would.
    fn inbox_put(&self, event: &IncomingEvent) -> impl Future<Output = Result<(), IngestError>> + Send;

    /// The logged events not applied yet, in id order (what a crash left).
    fn inbox_pending(&self) -> impl Future<Output = Result<Vec<IncomingEvent>, IngestError>> + Send;

    /// Deletes the logged events already applied; returns how many.
    fn inbox_trim(&self) -> impl Future<Output = Result<u64, IngestError>> + Send;
}

/// The stored raw event log, read back in id order (for `export-events`) and cleared (for
/// `import-events --wipe-db`). Implemented by the ledger store next to [`EventSink`].
pub trait RawEventLog: Send + Sync + 'static {
    /// Up to `limit` stored events with an id above `after_id` (from the lowest id when `None`),
    /// in ascending id order. An empty result means there are no more.
    fn raw_events_after(
        &self,
        after_id: Option<i64>,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<RawEvent>, IngestError>> + Send;

    /// Whether the store holds nothing at all: no raw event and no ledger data.
    fn is_empty(&self) -> impl Future<Output = Result<bool, IngestError>> + Send;

    /// Deletes every raw event and everything derived from them.
    fn wipe(&self) -> impl Future<Output = Result<(), IngestError>> + Send;

    /// A replay of a whole log into an empty (or about to be wiped) store starts: the store may
    /// set itself up for many events at once (the ledger store drops the indexes only reads
    /// use). Reads still answer correctly meanwhile. By default, nothing.
    fn begin_bulk_replay(&self) -> impl Future<Output = Result<(), IngestError>> + Send {
        async { Ok(()) }
    }

    /// A replay ended, however it ended (also one that resumed an interrupted replay): the
    /// store undoes what [`begin_bulk_replay`](RawEventLog::begin_bulk_replay) did, here or in
    /// an earlier run. Returns how many indexes it built. By default, nothing.
    fn end_bulk_replay(&self) -> impl Future<Output = Result<usize, IngestError>> + Send {
        async { Ok(0) }
    }
}
