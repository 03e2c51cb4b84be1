-- SQLite only (PostgreSQL has no stable row address; its pages join by key as before).
-- A principal's page of listed transactions (v1 address transactions) is picked from
-- `account_txs` in the list's order, then its rows are read from `txs`. Each picked entry was
-- looked up in the `account_txs` table (for its tx_id and block) and then in the `txs`
-- primary key (two 66-character keys) before the row itself was read by rowid: on the 1M
-- chain a quarter of a busy principal's page. `tx_rid` is the rowid of the transaction's
-- `txs` row, chosen by the writer when it inserts the block's rows (`write::blocks`), and the
-- index below carries it, so the page's rowids come from the index alone.
--
-- A rowid is a row's address, not its key: a dump and restore, or a VACUUM, may renumber
-- `txs`. So a reader trusts `tx_rid` only when the row it finds there is the one the entry
-- describes (canonical, at the entry's height, microblock sequence and index: one row of the
-- chain), and otherwise reads the page by key; `Store::account_tx_rid_mismatches` reports
-- stale pointers (in the tests' consistency checks). NULL where no single row was known.
ALTER TABLE account_txs ADD COLUMN tx_rid INTEGER;
UPDATE account_txs SET tx_rid = (SELECT t.rowid FROM txs t
    WHERE t.tx_id = account_txs.tx_id AND t.index_block_hash = account_txs.index_block_hash
    GROUP BY t.tx_id HAVING COUNT(*) = 1);
CREATE INDEX account_txs_listed_rid ON account_txs (principal, listed, canonical, boot, block_height, seq, tx_index, tx_rid);
DROP INDEX account_txs_listed_seq;
