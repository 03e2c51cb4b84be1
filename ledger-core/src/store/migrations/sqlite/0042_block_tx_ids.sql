-- Each block's transaction ids, materialized when the block is stored (`rows::block_tx_ids`):
-- the JSON array of the tx_id of every `txs` row stored under the block (its anchored
-- transactions, the microblock transactions it confirms and, for block 1, the boot block's),
-- newest first: COALESCE(microblock_sequence, 2147483647) DESC, tx_index DESC, the order the
-- v1 `/block` list and `/block/{hash}` render them in. Those rows are inserted once, with the
-- block, and never change but for their `canonical` flag, which reorgs flip for the whole
-- block at once (`write::canonical::flip`): the flag is not part of the list; the reads take
-- the block's own flag (`explorer_block_list`). The v1 `/block` list read ~100 rows per
-- block of the 1M chain through `txs_block` (2,000 per page).
ALTER TABLE blocks ADD COLUMN tx_ids TEXT NOT NULL DEFAULT '[]';
-- Existing stores: the same list from the stored rows (SQLite >= 3.44 orders aggregates).
UPDATE blocks SET tx_ids = (SELECT '[' || group_concat('"' || t.tx_id || '"', ','
        ORDER BY COALESCE(t.microblock_sequence, 2147483647) DESC, t.tx_index DESC) || ']'
    FROM txs t WHERE t.index_block_hash = blocks.index_block_hash)
WHERE index_block_hash IN (SELECT index_block_hash FROM txs);
