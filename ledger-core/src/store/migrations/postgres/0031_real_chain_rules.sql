-- Rules that real nodes' chains exercise and the recorded fixtures did not (issue 20).
--
-- 1. A sponsored transaction is one of its sponsor's transactions: the incumbent's
--    `principal_txs` records the fee payer, so the v1 and v2 address transaction lists show it
--    to the sponsor and count it in `total`. Sponsor links stored before this were not listed;
--    they are now, and the sponsors' per-block list counts are summed again (as 0017 does).
UPDATE account_txs SET listed = true
WHERE listed = false AND EXISTS (
    SELECT 1 FROM txs t
    WHERE t.tx_id = account_txs.tx_id AND t.index_block_hash = account_txs.index_block_hash
      AND t.sponsored = true AND t.sponsor_address = account_txs.principal
);
DELETE FROM account_block_txs WHERE principal IN (SELECT sponsor_address FROM txs WHERE sponsored = true);
INSERT INTO account_block_txs (principal, block_height, index_block_hash, n, n_boot, cum, cum_boot)
SELECT principal, block_height, index_block_hash, n, n_boot,
    CAST(SUM(n) OVER (PARTITION BY principal ORDER BY block_height ROWS UNBOUNDED PRECEDING) AS BIGINT),
    CAST(SUM(n_boot) OVER (PARTITION BY principal ORDER BY block_height ROWS UNBOUNDED PRECEDING) AS BIGINT)
FROM (
    SELECT principal, block_height, index_block_hash, CAST(COUNT(*) AS BIGINT) AS n,
        CAST(SUM(CASE WHEN boot THEN 1 ELSE 0 END) AS BIGINT) AS n_boot
    FROM account_txs
    WHERE canonical = true AND listed = true
      AND principal IN (SELECT sponsor_address FROM txs WHERE sponsored = true)
    GROUP BY principal, block_height, index_block_hash
) g;

-- 2. Every contract deploy keeps a row, failed ones too (`success` 0; `abi` NULL when the node
--    sent none): the incumbent's `/extended/v1/contract/{id}` answers them. The same sender can
--    deploy a name twice in one block (the second fails), so the key gains the tx id.
-- 3. `abi_jsonb`: the ABI as the incumbent serves it, re-serialized from PostgreSQL jsonb (keys
--    shorter first, then bytewise), derived at ingest; `abi` keeps the node's text, which is
--    the node's own `/v2/contracts/interface` answer. Rows stored before are filled when the
--    store opens (`backfill_0031`, pending_backfills 'contract_abi_jsonb').
ALTER TABLE smart_contracts ADD COLUMN success BOOLEAN NOT NULL DEFAULT true;
ALTER TABLE smart_contracts ALTER COLUMN success DROP DEFAULT;
ALTER TABLE smart_contracts ADD COLUMN abi_jsonb TEXT;
ALTER TABLE smart_contracts DROP CONSTRAINT smart_contracts_pkey;
ALTER TABLE smart_contracts ADD PRIMARY KEY (contract_id, index_block_hash, tx_id);
INSERT INTO pending_backfills (name) VALUES ('contract_abi_jsonb');
-- Failed deploys stored before this migration have no row yet: they are derived again from
-- the raw event log when the store opens (`backfill_0031`).
INSERT INTO pending_backfills (name) VALUES ('failed_deploys');

-- 4. A streamed (not yet anchored) transaction's `block_time` is when this server received its
--    `/new_microblocks` event, as the incumbent stamps it; streams stored before get it from
--    their raw events when the store opens (pending_backfills 'stream_receipt_times').
ALTER TABLE microblocks ADD COLUMN stream_receipt_time BIGINT;
INSERT INTO pending_backfills (name) VALUES ('stream_receipt_times');
