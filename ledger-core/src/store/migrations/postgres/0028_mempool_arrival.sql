-- The order transactions entered the mempool, finer than `receipt_time` (whole seconds): the
-- raw event that brought a transaction in, times 65,536, plus its position in that event
-- (`write::arrival`). Lists sorted by fee, size or age break ties by it, first come first
-- (the incumbent returns such ties in the order its table received them). Rows stored before
-- this migration keep 0 and fall back to the tx id.
ALTER TABLE mempool_txs ADD COLUMN arrival BIGINT NOT NULL DEFAULT 0;
