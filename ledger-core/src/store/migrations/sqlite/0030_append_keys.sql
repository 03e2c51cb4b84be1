-- Primary keys that new rows append to instead of landing at random places.
--
-- `events` was keyed (tx_id, ...), `account_txs` (principal, tx_id, ...) and `stx_balances`
-- (account, index_block_hash): a random txid or block hash decided where each new row's key
-- went, so every commit of a replay dirtied (and wrote to the WAL) nearly every leaf page of
-- these three B-trees, however few rows it added to each. Keyed by the block first (events)
-- or by the principal and then the block height (a function of index_block_hash, so the keys
-- stay exactly as unique as before), a block's new rows sit together, at the end of each
-- principal's range. Every lookup these keys served still has its prefix: events by
-- (index_block_hash, tx_id, microblock_hash), which also covers events_block; the principal
-- and account ranges by their first column.
--
-- events_asset_value (the NFT history and the reorgs' custody recomputation, always by
-- `asset_identifier = ...`) no longer lists the events without an asset: a contract log's
-- value_hex is a random key too, and those entries were half of the index and never read.
--
-- SQLite cannot change a primary key in place: each table is rebuilt with the same columns,
-- in the same order, and its indexes created again.

ALTER TABLE events RENAME TO events_old;
CREATE TABLE events (
    tx_id TEXT NOT NULL,
    index_block_hash TEXT NOT NULL,
    microblock_hash TEXT NOT NULL,
    block_height BIGINT NOT NULL,
    tx_index BIGINT NOT NULL,
    event_index BIGINT NOT NULL,
    kind TEXT NOT NULL,
    sender TEXT,
    recipient TEXT,
    amount TEXT,
    asset_identifier TEXT,
    value_hex TEXT,
    contract_identifier TEXT,
    topic TEXT,
    memo TEXT,
    unlock_height BIGINT,
    canonical INTEGER NOT NULL,
    PRIMARY KEY (index_block_hash, tx_id, microblock_hash, event_index)
);
INSERT INTO events SELECT * FROM events_old ORDER BY index_block_hash, tx_id, microblock_hash, event_index;
DROP TABLE events_old;
CREATE INDEX events_asset_value ON events (asset_identifier, value_hex, canonical, block_height, tx_index, event_index)
    WHERE asset_identifier IS NOT NULL;
CREATE INDEX events_contract_log ON events (contract_identifier, canonical, block_height);
CREATE INDEX events_sender ON events (sender, canonical, block_height);
CREATE INDEX events_recipient ON events (recipient, canonical, block_height);

ALTER TABLE account_txs RENAME TO account_txs_old;
CREATE TABLE account_txs (
    principal TEXT NOT NULL,
    tx_id TEXT NOT NULL,
    index_block_hash TEXT NOT NULL,
    block_height BIGINT NOT NULL,
    tx_index BIGINT NOT NULL,
    canonical INTEGER NOT NULL,
    listed INTEGER NOT NULL DEFAULT 0,
    boot INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (principal, block_height, index_block_hash, tx_id)
);
INSERT INTO account_txs SELECT * FROM account_txs_old ORDER BY principal, block_height, index_block_hash, tx_id;
DROP TABLE account_txs_old;
CREATE INDEX account_txs_page ON account_txs (principal, canonical, block_height, tx_index);
CREATE INDEX account_txs_block ON account_txs (index_block_hash);
CREATE INDEX account_txs_listed_page ON account_txs (principal, listed, canonical, block_height, tx_index, boot);

ALTER TABLE stx_balances RENAME TO stx_balances_old;
CREATE TABLE stx_balances (
    account TEXT NOT NULL,
    index_block_hash TEXT NOT NULL,
    block_height BIGINT NOT NULL,
    liquid BIGINT NOT NULL,
    locked BIGINT NOT NULL,
    unlock_burn_height BIGINT NOT NULL,
    lock_tx_id TEXT,
    lock_height BIGINT NOT NULL,
    lock_burn_height BIGINT NOT NULL,
    pox_version BIGINT NOT NULL,
    canonical INTEGER NOT NULL,
    PRIMARY KEY (account, block_height, index_block_hash)
);
INSERT INTO stx_balances SELECT * FROM stx_balances_old ORDER BY account, block_height, index_block_hash;
DROP TABLE stx_balances_old;
CREATE INDEX stx_balances_history ON stx_balances (account, canonical, block_height);
CREATE INDEX stx_balances_block ON stx_balances (index_block_hash);
