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
    use crate::events::EventPath;
    use crate::ingest::{EventSink, IncomingEvent};
    use crate::ledger::Network;
    use crate::store::Store;
    use test_support::log_capture::Capture;

    /// A 32-byte hash, `0x` hex, made of `byte`.
    fn hash(byte: u8) -> String {
        format!("0x{}", hex::encode([byte; 32]))
    }

    /// A short chain's events (blocks 0 to 4, each on the one before), and how many are blocks.
    fn chain() -> (Vec<IncomingEvent>, usize) {
        let events: Vec<IncomingEvent> = (0u8..5)
            .map(|h| {
                let parent = if h == 0 { hash(0) } else { hash(0x10 + h - 1) };
                let payload = serde_json::json!({
                    "block_hash": hash(0x20 + h), "block_height": h, "index_block_hash": hash(0x10 + h),
                    "parent_index_block_hash": parent, "parent_block_hash": hash(0x20 + h.saturating_sub(1)),
                    "parent_microblock": hash(0), "parent_microblock_sequence": 0,
                    "burn_block_time": 1_700_000_000 + u64::from(h), "burn_block_hash": hash(0x30 + h),
                    "burn_block_height": 100 + u64::from(h), "miner_txid": hash(0x40 + h),
                    "parent_burn_block_hash": hash(0x30 + h.saturating_sub(1)),
                    "parent_burn_block_height": 99 + u64::from(h), "parent_burn_block_timestamp": 0,
                    "transactions": [], "events": [], "matured_miner_rewards": []
                });
                IncomingEvent {
                    id: None,
                    receive_timestamp: None,
                    path: EventPath::NewBlock,
                    payload: payload.to_string(),
                }
            })
            .collect();
        let blocks = events.len();
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
        let quiet = Store::open(&url("quiet"), Network::Testnet, crate::test_render::marked()).await.unwrap();
        for e in events.clone() {
            quiet.ingest(e).await.unwrap();
        }
        assert_eq!(block_lines(&log), [] as [String; 0], "off unless asked");

        let one_by_one =
            Store::open(&url("one"), Network::Testnet, crate::test_render::marked()).await.unwrap();
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
            Store::open(&url("batch"), Network::Testnet, crate::test_render::marked()).await.unwrap();
        batched.log_blocks(true);
        let outcomes = batched.ingest_many(events).await.unwrap();
        assert!(outcomes.iter().all(Result::is_ok));
        assert_eq!(block_lines(&log).len(), 2 * blocks, "a line per block of the batch, after its commit");
    }
}
