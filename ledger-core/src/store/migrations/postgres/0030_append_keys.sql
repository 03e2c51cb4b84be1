-- Primary keys that new rows append to instead of landing at random places (see the SQLite
-- migration of the same number): events keyed by the block first, account_txs and
-- stx_balances by the principal and then the block height (a function of
-- index_block_hash, so the keys stay exactly as unique as before). Every lookup the old keys
-- served still has its prefix; the events primary key also covers events_block.
-- events_asset_value leaves out the events without an asset (contract logs: random keys,
-- never read through it; every query on it filters `asset_identifier = ...`).

ALTER TABLE events DROP CONSTRAINT events_pkey;
ALTER TABLE events ADD PRIMARY KEY (index_block_hash, tx_id, microblock_hash, event_index);
DROP INDEX events_block;

ALTER TABLE account_txs DROP CONSTRAINT account_txs_pkey;
ALTER TABLE account_txs ADD PRIMARY KEY (principal, block_height, index_block_hash, tx_id);

ALTER TABLE stx_balances DROP CONSTRAINT stx_balances_pkey;
ALTER TABLE stx_balances ADD PRIMARY KEY (account, block_height, index_block_hash);

DROP INDEX events_asset_value;
CREATE INDEX events_asset_value ON events (asset_identifier, value_hex, canonical, block_height, tx_index, event_index)
    WHERE asset_identifier IS NOT NULL;
