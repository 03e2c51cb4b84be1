-- Historical nonces (Rosetta /account/balance at a block, /extended/v1/address/{a}/nonces?block_height=):
-- the sender's (sponsor's) last canonical transaction at or below a height is one seek here.
-- Without it the planner walked txs_canonical_order up to the height (every canonical tx).
CREATE INDEX txs_sender_height ON txs (sender_address, canonical, block_height, nonce);
CREATE INDEX txs_sponsor_height ON txs (sponsor_address, canonical, block_height, sponsor_nonce);
-- Principal transaction lists (/extended/v1/address/{p}/transactions and v2): the same order as
-- account_txs_listed with `boot` in the index, so the total and the walk to a deep offset read
-- the index only (no table row per skipped transaction). Supersedes account_txs_listed.
CREATE INDEX account_txs_listed_page ON account_txs (principal, listed, canonical, block_height, tx_index, boot);
DROP INDEX account_txs_listed;
