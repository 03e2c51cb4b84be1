-- Every account the incumbent keeps an 'stx' balance row for: a transaction's fee payer (even
-- at fee 0), an STX event's sender or recipient, a miner reward's recipient, ever, orphaned
-- blocks included (its rows are never deleted). `/extended/v1/tokens/ft/stx/holders` lists
-- them with their `stx_accounts` balance, 0 when they have none.
CREATE TABLE stx_holders (
    account TEXT PRIMARY KEY
);
INSERT INTO stx_holders (account)
SELECT account FROM stx_accounts
UNION SELECT CASE WHEN sponsored = 1 THEN sponsor_address ELSE sender_address END FROM txs WHERE canonical = 1
UNION SELECT sender FROM events WHERE canonical = 1 AND sender IS NOT NULL AND kind IN ('stx_transfer', 'stx_burn')
UNION SELECT recipient FROM events WHERE canonical = 1 AND recipient IS NOT NULL AND kind IN ('stx_transfer', 'stx_mint')
UNION SELECT recipient FROM miner_rewards WHERE canonical = 1;
