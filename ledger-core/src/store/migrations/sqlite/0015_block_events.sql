-- The Rosetta indexer's block event log (`/events/blocks`): every change of the canonical
-- chain, in order. Appended by the write path in the transaction that flips canonical flags:
-- `block_added` when a block becomes canonical, `block_removed` when a reorg orphans it
-- (highest first, before the new fork's blocks are added lowest first).
CREATE TABLE block_events (
    sequence BIGINT PRIMARY KEY,
    kind TEXT NOT NULL,
    index_block_hash TEXT NOT NULL,
    block_hash TEXT NOT NULL,
    block_height BIGINT NOT NULL
);
-- Backfill: a database migrated with blocks already stored has no record of its past flips,
-- so its log starts as the current canonical chain added in height order. The canonical chain
-- holds heights 1..tip, so the sequence is the height, as `/events/blocks` numbered it before.
INSERT INTO block_events (sequence, kind, index_block_hash, block_hash, block_height)
SELECT block_height, 'block_added', index_block_hash, block_hash, block_height
FROM blocks WHERE canonical = true AND block_height >= 1;
