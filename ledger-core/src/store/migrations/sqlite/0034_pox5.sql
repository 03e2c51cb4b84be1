-- PoX-5 staking (issue 22): the pox-5 boot contract's prints, decoded to the incumbent's
-- {name, data} form (data as JSON text). Rows of a block follow its `canonical` flag
-- (write::BLOCK_TABLES); the bonds, allowlists, registrations, positions, stakes, signers and
-- reward totals are folded from the canonical rows in chain order (ledger::pox5::fold), so a
-- reorg is the flip alone and nothing is deleted.
CREATE TABLE pox5_events (
    index_block_hash TEXT NOT NULL,
    block_height BIGINT NOT NULL,
    tx_id TEXT NOT NULL,
    tx_index BIGINT NOT NULL,
    event_index BIGINT NOT NULL,
    microblock_sequence BIGINT NOT NULL,
    name TEXT NOT NULL,
    data TEXT NOT NULL,
    canonical INTEGER NOT NULL,
    PRIMARY KEY (index_block_hash, tx_id, event_index)
);
CREATE INDEX pox5_events_order ON pox5_events (canonical, block_height, microblock_sequence, tx_index, event_index);
