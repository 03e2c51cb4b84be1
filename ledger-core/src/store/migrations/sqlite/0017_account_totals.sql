-- Per-account totals kept by the write path (src/store/totals.rs) so the tip's
-- `/extended/v1/address/{p}/balances` and `/stx` read one row per asset instead of summing the
-- account's whole history. They always equal the sums over the canonical rows: a block adds its
-- rows when it becomes canonical and subtracts them when a reorg orphans it.

-- STX (µSTX, successful canonical operations): as `stx_totals_at` sums them.
CREATE TABLE account_stx_totals (
    account TEXT PRIMARY KEY,
    total_sent BIGINT NOT NULL,
    total_received BIGINT NOT NULL,
    total_fees_sent BIGINT NOT NULL,
    total_miner_rewards BIGINT NOT NULL
);
INSERT INTO account_stx_totals (account, total_sent, total_received, total_fees_sent, total_miner_rewards)
SELECT account,
    CAST(COALESCE(SUM(CASE WHEN op_type IN ('token_transfer', 'burn') AND amount < 0 THEN -amount ELSE 0 END), 0) AS BIGINT),
    CAST(COALESCE(SUM(CASE WHEN op_type IN ('token_transfer', 'mint') AND amount > 0 THEN amount ELSE 0 END), 0) AS BIGINT),
    CAST(COALESCE(SUM(CASE WHEN op_type = 'fee' AND amount < 0 THEN -amount ELSE 0 END), 0) AS BIGINT),
    CAST(COALESCE(SUM(CASE WHEN op_type = 'miner_reward' AND amount > 0 THEN amount ELSE 0 END), 0) AS BIGINT)
FROM operations
WHERE canonical = true AND status = 'success'
  AND op_type IN ('token_transfer', 'burn', 'mint', 'fee', 'miner_reward')
GROUP BY account;

-- FT and NFT asset events per (account, asset, kind `ft`/`nft`): totals as u128-safe decimal
-- text (FT amounts; 1 per NFT event) and how many canonical events they sum (0: not listed).
CREATE TABLE account_asset_totals (
    account TEXT NOT NULL,
    asset_identifier TEXT NOT NULL,
    kind TEXT NOT NULL,
    total_sent TEXT NOT NULL,
    total_received TEXT NOT NULL,
    events BIGINT NOT NULL,
    PRIMARY KEY (account, asset_identifier, kind)
);
-- Summing u128 text is beyond SQLite, so the asset totals of a store that already has events are
-- filled in Rust when the store is opened (`totals::backfill`), once: this row asks for it.
CREATE TABLE pending_backfills (name TEXT PRIMARY KEY);
INSERT INTO pending_backfills (name) SELECT 'account_asset_totals' WHERE EXISTS (SELECT 1 FROM events);

-- Principal transaction lists (`/extended/v1/address/{p}/transactions`): per principal and
-- canonical block, its listed entries (`n`, of which `n_boot` boot-block ones) and the running
-- counts over the canonical chain up to and including the block (`cum`, `cum_boot`). Only
-- canonical blocks have rows (a block's rows are written when it becomes canonical, on top of
-- its canonical parent, and deleted when a reorg orphans it), so the total is one seek (the
-- principal's highest row) and the block holding a deep `offset` another (on `cum`).
CREATE TABLE account_block_txs (
    principal TEXT NOT NULL,
    block_height BIGINT NOT NULL,
    index_block_hash TEXT NOT NULL,
    n BIGINT NOT NULL,
    n_boot BIGINT NOT NULL,
    cum BIGINT NOT NULL,
    cum_boot BIGINT NOT NULL,
    PRIMARY KEY (principal, block_height)
);
CREATE INDEX account_block_txs_cum ON account_block_txs (principal, cum);
CREATE INDEX account_block_txs_block ON account_block_txs (index_block_hash);
INSERT INTO account_block_txs (principal, block_height, index_block_hash, n, n_boot, cum, cum_boot)
SELECT principal, block_height, index_block_hash, n, n_boot,
    CAST(SUM(n) OVER (PARTITION BY principal ORDER BY block_height ROWS UNBOUNDED PRECEDING) AS BIGINT),
    CAST(SUM(n_boot) OVER (PARTITION BY principal ORDER BY block_height ROWS UNBOUNDED PRECEDING) AS BIGINT)
FROM (
    SELECT principal, block_height, index_block_hash, CAST(COUNT(*) AS BIGINT) AS n,
        CAST(SUM(CASE WHEN boot THEN 1 ELSE 0 END) AS BIGINT) AS n_boot
    FROM account_txs WHERE canonical = true AND listed = true
    GROUP BY principal, block_height, index_block_hash
) g;
