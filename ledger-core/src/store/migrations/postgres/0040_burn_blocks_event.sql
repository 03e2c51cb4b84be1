-- The chain tip's burn height counts burn blocks announced after the tip's Stacks block
-- (`raw_event_id` above the block's). Found by height, that read walked every burn block
-- whenever none came after the tip (every request with an ETag: 84 % of `/extended/v1/tx`'s
-- CPU on the 1M-transaction chain); by this index it reads only the newer ones.
CREATE INDEX burn_blocks_event ON burn_blocks (raw_event_id);
