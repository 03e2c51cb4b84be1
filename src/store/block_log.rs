//! A running server's life sign: one `info` line per block applied (height, transactions, time
//! taken), logged after its commit. On for `serve` and `demo` ([`Store::log_blocks`]); off for
//! `import-events`, which shows its own progress.
//!
//! The time is the block's own work: from taking the writer to its commit when events are
//! applied one by one; in a batch (`--event-ack logged`), its writes only (the batch's commit
//! is shared).

use std::time::{Duration, Instant};

use crate::events::EventPayload;

use super::Store;

/// A block applied, until its commit is.
pub(super) struct AppliedBlock {
    height: u64,
    txs: usize,
    took: Duration,
}

impl AppliedBlock {
    /// `payload`'s block, applied in the time since `started`; `None` for other events.
    pub(super) fn of(payload: &EventPayload, started: Instant) -> Option<AppliedBlock> {
        match payload {
            EventPayload::NewBlock(b) => Some(AppliedBlock {
                height: b.block_height,
                txs: b.transactions.len(),
                took: started.elapsed(),
            }),
            _ => None,
        }
    }

    /// The block's line, once committed.
    pub(super) fn log(&self) {
        let ms = (self.took.as_secs_f64() * 10_000.0).round() / 10.0;
        tracing::info!(height = self.height, txs = self.txs, ms, "block applied");
    }
}

impl Store {
    /// Whether each block applied is logged (`serve`, `demo`).
    pub fn log_blocks(&self, on: bool) {
        self.block_log.store(on, std::sync::atomic::Ordering::Relaxed);
    }

    pub(super) fn logs_blocks(&self) -> bool {
        self.block_log.load(std::sync::atomic::Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use crate::devnet::{DevnetConfig, Generator};
    use crate::events::EventPath;
    use crate::ingest::{EventSink, IncomingEvent};
    use crate::ledger::Network;
    use crate::log_capture::Capture;
    use crate::store::Store;

    /// A short devnet chain's events, and how many of them are blocks.
    fn chain() -> (Vec<IncomingEvent>, usize) {
        let config = DevnetConfig { blocks: 4, txs_per_block: 2, ..DevnetConfig::default() };
        let events: Vec<IncomingEvent> = Generator::new(config)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                IncomingEvent { id: None, receive_timestamp: None, path: e.path, payload: e.payload }
            })
            .collect();
        let blocks = events.iter().filter(|e| e.path == EventPath::NewBlock).count();
        (events, blocks)
    }

    fn block_lines(log: &Capture) -> Vec<String> {
        log.lines().into_iter().filter(|l| l.contains("block applied")).collect()
    }

    #[tokio::test]
    async fn a_line_per_block_applied_one_by_one_or_in_a_batch_and_none_when_off() {
        let (events, blocks) = chain();
        assert!(blocks >= 4);
        let dir = tempfile::tempdir().unwrap();
        let url = |name: &str| format!("sqlite://{}/{name}.db", dir.path().display());

        let log = Capture::start();
        let quiet = Store::open(&url("quiet"), Network::Testnet, crate::compose::tx_render()).await.unwrap();
        for e in events.clone() {
            quiet.ingest(e).await.unwrap();
        }
        assert_eq!(block_lines(&log), [] as [String; 0], "off unless asked");

        let one_by_one =
            Store::open(&url("one"), Network::Testnet, crate::compose::tx_render()).await.unwrap();
        one_by_one.log_blocks(true);
        for e in events.clone() {
            one_by_one.ingest(e).await.unwrap();
        }
        let lines = block_lines(&log);
        assert_eq!(lines.len(), blocks, "{lines:#?}");
        assert!(
            lines[0].contains("INFO") && lines[0].contains("block applied height=0 txs="),
            "{}",
            lines[0]
        );
        assert!(lines.iter().all(|l| l.contains(" ms=")), "{lines:#?}");
        // Again: nothing new is applied, nothing is logged.
        for (id, e) in (1..).zip(events.iter().take(3).cloned()) {
            one_by_one.ingest(IncomingEvent { id: Some(id), ..e }).await.unwrap();
        }
        assert_eq!(block_lines(&log).len(), blocks, "an event already stored is not applied");

        let batched =
            Store::open(&url("batch"), Network::Testnet, crate::compose::tx_render()).await.unwrap();
        batched.log_blocks(true);
        let outcomes = batched.ingest_many(events).await.unwrap();
        assert!(outcomes.iter().all(Result::is_ok));
        assert_eq!(block_lines(&log).len(), 2 * blocks, "a line per block of the batch, after its commit");
    }
}
