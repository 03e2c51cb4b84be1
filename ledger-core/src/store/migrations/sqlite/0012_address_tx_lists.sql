-- The incumbent's principal transaction lists (docs/store.md, "Principal transactions"):
-- `listed` marks a principal the incumbent lists the transaction for (every party but one that
-- is only the sponsor or a lock's account); `boot` marks the boot block's transactions, which the
-- store keeps in block 1 and most lists leave out. Both are set by the ledger and backfilled here.
ALTER TABLE account_txs ADD COLUMN listed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE account_txs ADD COLUMN boot INTEGER NOT NULL DEFAULT 0;
UPDATE account_txs SET listed = 1
WHERE EXISTS (SELECT 1 FROM txs t WHERE t.tx_id = account_txs.tx_id
              AND t.index_block_hash = account_txs.index_block_hash
              AND (t.sender_address = account_txs.principal
                   OR t.token_transfer_recipient = account_txs.principal
                   OR t.contract_id = account_txs.principal))
   OR EXISTS (SELECT 1 FROM events e WHERE e.tx_id = account_txs.tx_id
              AND e.index_block_hash = account_txs.index_block_hash
              AND e.kind NOT IN ('stx_lock', 'contract_log')
              AND (e.sender = account_txs.principal OR e.recipient = account_txs.principal));
UPDATE account_txs SET boot = 1
WHERE account_txs.block_height = 1
  AND EXISTS (SELECT 1 FROM blocks b WHERE b.block_height = 0)
  AND EXISTS (SELECT 1 FROM txs t WHERE t.tx_id = account_txs.tx_id
              AND t.index_block_hash = account_txs.index_block_hash
              AND t.sender_address IN ('SP000000000000000000002Q6VF78', 'ST000000000000000000002AMW42H'));
CREATE INDEX account_txs_listed ON account_txs (principal, listed, canonical, block_height, tx_index);
-- stx_inbound: token transfers by recipient.
CREATE INDEX txs_recipient ON txs (token_transfer_recipient, canonical, block_height);
