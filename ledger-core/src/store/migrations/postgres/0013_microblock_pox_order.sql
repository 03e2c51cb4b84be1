-- Reads of /extended/v1/microblock and /extended/v1/{pox}/*: each page is an index range
-- instead of a sort of the whole table.
-- The canonical confirmed microblocks, newest first.
CREATE INDEX microblocks_canonical_order ON microblocks (canonical, block_height, microblock_sequence);
-- A PoX contract's canonical events, newest first, and a transaction's events.
CREATE INDEX pox_events_contract_order ON pox_events (pox_contract, canonical, block_height, tx_index, event_index);
CREATE INDEX pox_events_tx ON pox_events (tx_id);
-- Reward cycles: the blocks that announced a reward set, by cycle.
CREATE INDEX blocks_cycle ON blocks (cycle_number, canonical, block_height);
-- A streamed microblock's burn block as its stream announced it: the incumbent shows it as the
-- microblock's `parent_burn_block_*` (NULL on rows derived from an anchor block, and on rows
-- stored before this migration, which then show the confirming block's parent burn block).
ALTER TABLE microblocks ADD COLUMN stream_burn_block_hash TEXT;
ALTER TABLE microblocks ADD COLUMN stream_burn_block_time BIGINT;
ALTER TABLE microblocks ADD COLUMN stream_burn_block_height BIGINT;
