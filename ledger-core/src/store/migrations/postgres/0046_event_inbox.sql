-- Node events acknowledged before they are applied (`serve` with `STACKS_LEDGER_EVENT_ACK=logged`,
-- docs/store.md "The event inbox"). A POST writes its event here, under the raw-event id it
-- will have, and commits; the node gets its `200`; the applier then applies the events in id
-- order, in batches, each batch one transaction that also stores their `raw_events` rows. An
-- inbox row whose id is at most `raw_events`' highest is applied (ids are applied in order)
-- and is deleted later; the rows above it are applied at the next start after a crash.
CREATE TABLE event_inbox (
    id BIGINT PRIMARY KEY,
    receive_timestamp TEXT NOT NULL,
    event_path TEXT NOT NULL,
    payload TEXT NOT NULL
);
