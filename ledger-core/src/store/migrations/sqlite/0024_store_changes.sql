-- Changes written without a raw event (a transaction the faucet broadcast, put in the mempool
-- before the node reports it; a backfill or repair of maintained totals): each bumps `n` in
-- its own transaction, so the API's response cache, keyed by the newest raw event AND this
-- counter (`Store::generation`), drops answers those changes made stale, in every process.
CREATE TABLE store_changes (
    id INTEGER PRIMARY KEY,
    n BIGINT NOT NULL
);
INSERT INTO store_changes (id, n) VALUES (1, 0);
