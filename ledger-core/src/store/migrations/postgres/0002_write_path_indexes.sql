-- Indexes the write path needs. A burn block at height h marks the payouts and reward slot
-- holders at >= h on other branches non-canonical; without an index on the height, that UPDATE
-- scanned both tables once per burn block, a cost that grew with the chain.
CREATE INDEX burnchain_rewards_height ON burnchain_rewards (burn_block_height);
CREATE INDEX reward_slot_holders_height ON reward_slot_holders (burn_block_height);
