-- Reads of the /extended chain routes: a burn block's Stacks blocks (v1 by_burn_block_hash,
-- v2 /burn-blocks/{hash}) and a tenure's blocks seek instead of scanning the blocks table.
CREATE INDEX blocks_burn_hash ON blocks (burn_block_hash, canonical, block_height);
CREATE INDEX blocks_tenure ON blocks (tenure_height, canonical, block_height);
