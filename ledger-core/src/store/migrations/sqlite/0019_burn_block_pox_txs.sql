-- The Bitcoin outputs paying PoX reward slots, from `new_burn_block.pox_transactions` (newer
-- nodes): `/extended/v2/burn-blocks/{h}/pox-transactions` and
-- `/extended/v2/addresses/{btc}/pox-transactions`. Orphaned with their burn block.
CREATE TABLE burn_block_pox_txs (
    burn_block_hash TEXT NOT NULL,
    burn_block_height BIGINT NOT NULL,
    tx_id TEXT NOT NULL,
    utxo_idx BIGINT NOT NULL,
    recipient TEXT NOT NULL,
    amount BIGINT NOT NULL,
    canonical INTEGER NOT NULL,
    PRIMARY KEY (burn_block_hash, tx_id, utxo_idx)
);
CREATE INDEX burn_block_pox_txs_height ON burn_block_pox_txs (burn_block_height, canonical);
CREATE INDEX burn_block_pox_txs_recipient ON burn_block_pox_txs (recipient, canonical, burn_block_height);
