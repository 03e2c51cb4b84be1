-- Token operations (issue 21 item 1): fungible and non-fungible token movements are rows of
-- `operations` too, one per balance change as the STX ones (`ft_transfer`/`nft_transfer` debit
-- and credit, `ft_mint`/`nft_mint` credit, `ft_burn`/`nft_burn` debit). `asset_identifier` is
-- NULL on every STX operation and names the token on a token operation, whose signed amount is
-- `token_amount` (decimal text: FT units are u128; an NFT moves 1) while `amount` stays NULL.
-- Token operations are numbered from 2^32 within their transaction (`ops::TOKEN_OP_BASE`), so
-- the STX operations keep Rosetta's op_index; STX readers (Rosetta among them) filter
-- `asset_identifier IS NULL`. They follow their block's canonical flag like every operation.
-- Rows of transactions stored before this are derived from their stored events when the store
-- opens (`backfill_0035`, pending_backfills 'token_operations').
ALTER TABLE operations ADD COLUMN asset_identifier TEXT;
ALTER TABLE operations ADD COLUMN token_amount TEXT;
INSERT INTO pending_backfills (name) SELECT 'token_operations'
WHERE EXISTS (SELECT 1 FROM events WHERE kind IN ('ft_transfer', 'ft_mint', 'ft_burn', 'nft_transfer', 'nft_mint', 'nft_burn'));
