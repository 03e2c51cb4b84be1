-- A mined transaction's whole list JSON, materialized when its block is applied (issue 21):
-- `api_json` of a row under a block holds its row text (`stacks_extended::tx::row_text`), the
-- JSON the transaction lists show but for what can change (`canonical`; the events, `[]` in
-- lists; the called contract's ABI and the route's options), in six parts separated by
-- newlines. List pages read that text and `canonical` (~7 columns a row instead of ~30) and
-- splice. Streamed rows (no block yet) keep the three parts of 0032. A block's fields never
-- change and a row is stored once per block it is in, so the text never goes stale. Rows
-- stored before this are rewritten when the store opens (`backfill_0044`, pending_backfills
-- 'tx_row_text').
INSERT INTO pending_backfills (name) SELECT 'tx_row_text' WHERE EXISTS (SELECT 1 FROM txs);
