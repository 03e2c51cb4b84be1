-- Faucet requests, for the per-address rate limits: stored so that the limits survive restarts
-- and hold across API processes sharing one database. Not derived from node events, so a wipe
-- and re-import of the event log leaves them alone.
CREATE TABLE faucet_requests (
    id BIGSERIAL PRIMARY KEY,
    -- The address funded, as given (c32 for STX, base58/bech32 for BTC).
    address TEXT NOT NULL,
    -- `stx` or `btc`.
    currency TEXT NOT NULL,
    -- `regular` or `stacking` (STX); `regular`, `large`, `xlarge` (BTC).
    kind TEXT NOT NULL,
    ip TEXT NOT NULL,
    -- Unix milliseconds.
    occurred_at BIGINT NOT NULL
);
CREATE INDEX faucet_requests_address ON faucet_requests (address, currency, kind, occurred_at);
