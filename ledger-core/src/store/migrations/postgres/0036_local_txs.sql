-- Transactions we (not the node) put into the mempool: a Rosetta `/construction/submit`, a
-- `/v2/transactions` broadcast the node accepted, a faucet transfer (`Store::record_local_tx`).
-- One row per transaction that entered `mempool_txs` this way, written in the same transaction
-- as its mempool row. The raw event log stays the node's own, so these rows are how the other
-- API processes on a SQLite file learn of the transaction (they follow `id`, as they follow
-- `raw_events`), and they say which source brought it. Not derived from node events: a wipe
-- and re-import of the event log leaves them alone.
CREATE TABLE local_txs (
    id BIGSERIAL PRIMARY KEY,
    tx_id TEXT NOT NULL,
    -- `rosetta_submit`, `v2_broadcast` or `faucet`.
    source TEXT NOT NULL,
    -- Unix seconds (the mempool row's receipt time).
    recorded_at BIGINT NOT NULL
);
CREATE INDEX local_txs_tx_id ON local_txs (tx_id);
