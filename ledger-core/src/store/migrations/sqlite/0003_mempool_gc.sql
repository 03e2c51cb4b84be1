-- Mempool garbage collection (the incumbent's `deleteGarbageCollectedMempoolTxs`): a pending
-- transaction received when the canonical tip was at height r is pruned, with the status
-- `dropped_stale_garbage_collect`, once a canonical block arrives on a tip at r + 256 or above.
-- `receipt_block_height` is that r. Rows already in the mempool start counting from the
-- current tip, so an upgrade drops nothing at once.
ALTER TABLE mempool_txs ADD COLUMN receipt_block_height BIGINT NOT NULL DEFAULT 0;
UPDATE mempool_txs SET receipt_block_height =
    COALESCE((SELECT MAX(block_height) FROM blocks WHERE canonical = true), 0);
CREATE INDEX mempool_gc ON mempool_txs (pruned, receipt_block_height);
