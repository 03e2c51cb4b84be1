-- The block fields a transaction's JSON shows, materialized on its `txs` row when the block is
-- stored (`rows::tx_vals`): the block's `block_time`, `burn_block_time`,
-- `parent_burn_block_time` and `parent_block_hash`. A row is stored once per block it is in
-- and those fields of a block never change, so the copy never goes stale; streamed rows
-- (`index_block_hash = ''`, no block yet) have NULLs, as the LEFT JOIN they replace gave them.
-- Transaction pages read 50 rows by rowid: the `blocks` seek per row (its 66-character key
-- compared level by level) was a fifth of that statement.
ALTER TABLE txs ADD COLUMN in_block_time BIGINT;
ALTER TABLE txs ADD COLUMN in_burn_block_time BIGINT;
ALTER TABLE txs ADD COLUMN in_parent_burn_block_time BIGINT;
ALTER TABLE txs ADD COLUMN in_parent_block_hash TEXT;
-- Existing stores: copied from the blocks.
UPDATE txs SET (in_block_time, in_burn_block_time, in_parent_burn_block_time, in_parent_block_hash) =
    (SELECT b.block_time, b.burn_block_time, b.parent_burn_block_time, b.parent_block_hash
     FROM blocks b WHERE b.index_block_hash = txs.index_block_hash)
WHERE index_block_hash <> '';
-- The canonical list's order (`/extended/v1/tx`: height, microblock sequence with anchored
-- rows last, index; newest first) read from the index alone, without a sort of each height's
-- rows (`explorer_tx::list_order`). It serves every query the index it replaces served (the
-- same two leading columns).
DROP INDEX txs_canonical_order;
CREATE INDEX txs_canonical_order ON txs (canonical, block_height, COALESCE(microblock_sequence, 2147483647), tx_index);
