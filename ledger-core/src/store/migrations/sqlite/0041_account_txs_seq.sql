-- Principal transaction lists (/extended/v1/address/{p}/transactions, v2, and the v3
-- /principals/{p}/transactions cursors) are ordered `block_height DESC, microblock sequence
-- DESC, tx_index DESC`. The sequence was on `txs` only, so each page joined `txs` for every
-- candidate row to sort it and to test the cursor. A row's sequence never changes (its `txs`
-- row has the same tx_id and index_block_hash), so it is kept here: `seq` is
-- COALESCE(microblock_sequence, 2147483647) of its transaction, and the index below gives the
-- page order and the cursor's range on account_txs alone. Supersedes account_txs_listed_page
-- (0014): `boot` moves before the height, as every list but the transfers one (which reads
-- both halves in order, `explorer_address`) asks `boot = false`.
ALTER TABLE account_txs ADD COLUMN seq BIGINT NOT NULL DEFAULT 2147483647;
-- Only the blocks that confirmed microblocks have rows that are not anchored ones.
UPDATE account_txs SET seq = COALESCE((SELECT t.microblock_sequence FROM txs t
    WHERE t.tx_id = account_txs.tx_id AND t.index_block_hash = account_txs.index_block_hash), 2147483647)
WHERE index_block_hash IN (SELECT index_block_hash FROM txs WHERE microblock_hash > '' AND index_block_hash <> '');
CREATE INDEX account_txs_listed_seq ON account_txs (principal, listed, canonical, boot, block_height, seq, tx_index);
DROP INDEX account_txs_listed_page;
