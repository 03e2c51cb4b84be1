//! The CPU work of a batch that needs no store state, done before the writer takes it: parsing
//! the JSON bodies and deriving `/new_block` rows. A bulk import runs this on another thread
//! for the next batch while the writer applies the current one, so the two cores overlap
//! (the writer and the database engine on one, parsing and deriving on the other).

use std::sync::Arc;

use ledger_read::TxRender;

use crate::events::EventPayload;
use crate::ingest::IncomingEvent;
use crate::ledger::block::DerivedBlock;
use crate::ledger::{self, int, Network};

use super::{parse, Refusal};

/// One event of a [`PreparedBatch`].
pub(super) struct Prepared {
    pub ev: IncomingEvent,
    pub payload: Result<EventPayload, Refusal>,
    /// The block's rows, derived ahead when they do not depend on the store (every height but
    /// 1, whose derivation folds in the stored boot block). Derivation is pure, so the writer
    /// gets exactly what it would have derived itself; when it failed here it is left `None`
    /// and the writer derives again and refuses the event at its usual point.
    pub derived: Option<DerivedBlock>,
}

/// Events parsed, and blocks derived, for [`super::Store::ingest_prepared`]. Built by
/// [`prepare_batch`] without the store, so on any thread.
pub struct PreparedBatch {
    pub(super) network: Network,
    pub(super) events: Vec<Prepared>,
}

impl PreparedBatch {
    pub fn len(&self) -> usize {
        self.events.len()
    }

    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }
}

/// Parses `events` and derives their blocks for a store of `network` (a store of another
/// network derives again itself).
/// `render` writes the transactions' stored text, as the store's own does.
pub fn prepare_batch(events: Vec<IncomingEvent>, network: Network, render: &dyn TxRender) -> PreparedBatch {
    let events = events
        .into_iter()
        .map(|ev| {
            let payload = parse(&ev).map_err(|e| Refusal::Invalid(e.to_string()));
            let derived = match &payload {
                Ok(EventPayload::NewBlock(b)) if int(b.block_height) != 1 => {
                    ledger::derive_block(b, None, network, render).ok()
                }
                _ => None,
            };
            Prepared { ev, payload, derived }
        })
        .collect();
    PreparedBatch { network, events }
}

/// Events handed to the writer per message by [`Source::ahead`]: small, so that the writer
/// starts on a batch soon after the preparer does.
const CHUNK: usize = 16;
/// Chunks the preparer may run ahead of the writer (bounds the memory it holds).
const CHUNKS_AHEAD: usize = 4;

/// A batch's events as the writer takes them, in order: all prepared already, or prepared by
/// a blocking task running ahead of the writer, a chunk at a time, so that parsing and
/// deriving overlap with the database work (on the other core) within one batch too. Events
/// once taken stay, for the batch's passes after a refusal.
pub(super) struct Source {
    have: Vec<Prepared>,
    total: usize,
    ahead: Option<(tokio::sync::mpsc::Receiver<Vec<Prepared>>, tokio::task::JoinHandle<()>)>,
}

impl Source {
    pub fn ready(events: Vec<Prepared>) -> Source {
        Source { total: events.len(), have: events, ahead: None }
    }

    pub fn ahead(events: Vec<IncomingEvent>, network: Network, render: Arc<dyn TxRender>) -> Source {
        let total = events.len();
        let (tx, rx) = tokio::sync::mpsc::channel(CHUNKS_AHEAD);
        let task = tokio::task::spawn_blocking(move || {
            let mut events = events.into_iter();
            loop {
                let chunk: Vec<IncomingEvent> = events.by_ref().take(CHUNK).collect();
                // An empty chunk is the end; a closed channel means the writer gave up.
                if chunk.is_empty()
                    || tx.blocking_send(prepare_batch(chunk, network, &*render).events).is_err()
                {
                    break;
                }
            }
        });
        Source { have: Vec::with_capacity(total), total, ahead: Some((rx, task)) }
    }

    pub fn len(&self) -> usize {
        self.total
    }

    /// The events from `from` on for which `keep(index, event)` holds, up to the first that
    /// fails it (or the end), waiting for the preparer as needed.
    pub async fn run_from(
        &mut self,
        from: usize,
        keep: impl Fn(usize, &Prepared) -> bool,
    ) -> Result<&[Prepared], super::StoreError> {
        let mut end = from;
        while end < self.total {
            self.get(end).await?;
            if !keep(end, &self.have[end]) {
                break;
            }
            end += 1;
        }
        Ok(&self.have[from..end])
    }

    /// Event `i` (below [`Source::len`]), waiting for the preparer if needed. A panic of the
    /// preparer is resumed here.
    pub async fn get(&mut self, i: usize) -> Result<&Prepared, super::StoreError> {
        while self.have.len() <= i {
            let Some((rx, task)) = self.ahead.as_mut() else { break };
            match rx.recv().await {
                Some(chunk) => self.have.extend(chunk),
                None => {
                    if let Err(e) = task.await {
                        if e.is_panic() {
                            std::panic::resume_unwind(e.into_panic());
                        }
                    }
                    self.ahead = None;
                }
            }
        }
        self.have.get(i).ok_or_else(|| {
            super::StoreError::Prepare(format!("event {i} of {} was not prepared", self.total))
        })
    }
}
