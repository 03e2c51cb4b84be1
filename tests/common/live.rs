//! Feeding events to a running live service in lockstep with its notifier.

use std::time::Duration;

use stacks_ledger::events::RawEvent;
use stacks_ledger::ingest::{EventSink, IngestOutcome};
use stacks_ledger::live::{change_of, Live, LiveSink};
use stacks_ledger::store::Store;

use super::incoming;

/// Ingests `events` one at a time, each announced change handled by the notifier before the
/// next event goes in. The notifier reads the chain as it is when it handles a change, so one
/// that runs behind folds a fork it never announced into the chain it finds (docs/live.md);
/// in lockstep it sees every state the events pass through, and every fork is announced.
/// Returns the ids of the events the store refused (fixtures hold some on purpose); those
/// announce nothing.
pub async fn ingest_in_lockstep(live: &Live, sink: &LiveSink<Store>, events: &[RawEvent]) -> Vec<i64> {
    let mut announced = live.processed();
    let mut refused = Vec::new();
    for ev in events {
        let change = change_of(&incoming(ev));
        match sink.ingest(incoming(ev)).await {
            Ok(IngestOutcome::Applied { .. }) if change.is_some() => {}
            Ok(_) => continue,
            Err(_) => {
                refused.push(ev.id);
                continue;
            }
        }
        announced += 1;
        until_handled(live, announced).await;
    }
    refused
}

/// Waits until the notifier has handled `n` changes in all ([`Live::processed`]); fails after a
/// minute.
pub async fn until_handled(live: &Live, n: u64) {
    let waited = tokio::time::Instant::now();
    while live.processed() < n {
        assert!(
            waited.elapsed() < Duration::from_secs(60),
            "the notifier handled {} of {n} changes",
            live.processed()
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}
