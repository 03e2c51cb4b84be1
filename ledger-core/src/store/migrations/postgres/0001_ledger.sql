-- The ledger schema (PostgreSQL). The SQLite file is the same text with BOOLEAN → INTEGER.
-- See docs/store.md for why each table and index exists.

CREATE TABLE raw_events (
    id BIGINT PRIMARY KEY,
    receive_timestamp TEXT NOT NULL,
    event_path TEXT NOT NULL,
    payload TEXT NOT NULL
);
CREATE INDEX raw_events_path ON raw_events (event_path, id);

CREATE TABLE blocks (
    index_block_hash TEXT PRIMARY KEY,
    block_hash TEXT NOT NULL,
    block_height BIGINT NOT NULL,
    parent_index_block_hash TEXT NOT NULL,
    parent_block_hash TEXT NOT NULL,
    parent_microblock_hash TEXT NOT NULL,
    parent_microblock_sequence BIGINT NOT NULL,
    block_time BIGINT NOT NULL,
    burn_block_time BIGINT NOT NULL,
    burn_block_hash TEXT NOT NULL,
    burn_block_height BIGINT NOT NULL,
    miner_txid TEXT NOT NULL,
    parent_burn_block_hash TEXT NOT NULL,
    parent_burn_block_height BIGINT NOT NULL,
    parent_burn_block_time BIGINT NOT NULL,
    tenure_height BIGINT,
    consensus_hash TEXT,
    signer_bitvec TEXT,
    signer_signatures TEXT,
    signer_signature_hash TEXT,
    miner_signature TEXT,
    execution_cost_read_count BIGINT NOT NULL,
    execution_cost_read_length BIGINT NOT NULL,
    execution_cost_runtime BIGINT NOT NULL,
    execution_cost_write_count BIGINT NOT NULL,
    execution_cost_write_length BIGINT NOT NULL,
    tx_count BIGINT NOT NULL,
    tx_total_size BIGINT NOT NULL,
    cycle_number BIGINT,
    reward_set TEXT,
    pox_v1_unlock_height BIGINT,
    pox_v2_unlock_height BIGINT,
    pox_v3_unlock_height BIGINT,
    pox_v4_unlock_height BIGINT,
    canonical BOOLEAN NOT NULL,
    -- Lock/unlock operations and balance rows exist (computed when first canonical).
    materialized BOOLEAN NOT NULL,
    raw_event_id BIGINT NOT NULL
);
CREATE INDEX blocks_height ON blocks (block_height, canonical);
CREATE INDEX blocks_canonical_height ON blocks (canonical, block_height);
CREATE INDEX blocks_hash ON blocks (block_hash);
CREATE INDEX blocks_burn_height ON blocks (burn_block_height);

CREATE TABLE txs (
    tx_id TEXT NOT NULL,
    -- '' for a streamed microblock transaction not yet anchored (a preview row).
    index_block_hash TEXT NOT NULL,
    microblock_hash TEXT NOT NULL,
    block_hash TEXT NOT NULL,
    block_height BIGINT NOT NULL,
    burn_block_height BIGINT NOT NULL,
    tx_index BIGINT NOT NULL,
    raw_tx TEXT NOT NULL,
    synthetic_tx TEXT,
    tx_type TEXT NOT NULL,
    nonce BIGINT NOT NULL,
    fee BIGINT NOT NULL,
    sender_address TEXT NOT NULL,
    sponsored BOOLEAN NOT NULL,
    sponsor_address TEXT,
    sponsor_nonce BIGINT,
    anchor_mode TEXT NOT NULL,
    post_condition_mode TEXT NOT NULL,
    status TEXT NOT NULL,
    raw_result TEXT NOT NULL,
    vm_error TEXT,
    event_count BIGINT NOT NULL,
    execution_cost_read_count BIGINT NOT NULL,
    execution_cost_read_length BIGINT NOT NULL,
    execution_cost_runtime BIGINT NOT NULL,
    execution_cost_write_count BIGINT NOT NULL,
    execution_cost_write_length BIGINT NOT NULL,
    microblock_sequence BIGINT,
    microblock_parent_hash TEXT,
    contract_id TEXT,
    function_name TEXT,
    token_transfer_recipient TEXT,
    token_transfer_amount BIGINT,
    is_burnchain_op BOOLEAN NOT NULL,
    raw_size BIGINT NOT NULL,
    canonical BOOLEAN NOT NULL,
    PRIMARY KEY (tx_id, index_block_hash, microblock_hash)
);
CREATE INDEX txs_block ON txs (index_block_hash, tx_index);
CREATE INDEX txs_canonical_order ON txs (canonical, block_height, tx_index);
CREATE INDEX txs_sender_nonce ON txs (sender_address, canonical, nonce);
CREATE INDEX txs_sponsor_nonce ON txs (sponsor_address, canonical, sponsor_nonce);
CREATE INDEX txs_microblock ON txs (microblock_hash);
CREATE INDEX txs_contract ON txs (contract_id, canonical, block_height);

CREATE TABLE events (
    tx_id TEXT NOT NULL,
    index_block_hash TEXT NOT NULL,
    microblock_hash TEXT NOT NULL,
    block_height BIGINT NOT NULL,
    tx_index BIGINT NOT NULL,
    event_index BIGINT NOT NULL,
    kind TEXT NOT NULL,
    sender TEXT,
    recipient TEXT,
    amount TEXT,
    asset_identifier TEXT,
    value_hex TEXT,
    contract_identifier TEXT,
    topic TEXT,
    memo TEXT,
    unlock_height BIGINT,
    canonical BOOLEAN NOT NULL,
    PRIMARY KEY (tx_id, index_block_hash, microblock_hash, event_index)
);
CREATE INDEX events_block ON events (index_block_hash);
CREATE INDEX events_asset_value ON events (asset_identifier, value_hex, canonical, block_height, tx_index, event_index);
CREATE INDEX events_contract_log ON events (contract_identifier, canonical, block_height);
CREATE INDEX events_sender ON events (sender, canonical, block_height);
CREATE INDEX events_recipient ON events (recipient, canonical, block_height);

CREATE TABLE operations (
    index_block_hash TEXT NOT NULL,
    block_height BIGINT NOT NULL,
    tx_id TEXT NOT NULL,
    tx_index BIGINT NOT NULL,
    op_index BIGINT NOT NULL,
    op_type TEXT NOT NULL,
    status TEXT NOT NULL,
    account TEXT NOT NULL,
    amount BIGINT,
    locked_delta BIGINT NOT NULL,
    related_op_index BIGINT,
    metadata TEXT,
    canonical BOOLEAN NOT NULL,
    PRIMARY KEY (index_block_hash, tx_index, op_index)
);
CREATE INDEX operations_account ON operations (account, canonical, block_height);
CREATE INDEX operations_tx ON operations (tx_id);

CREATE TABLE stx_balances (
    account TEXT NOT NULL,
    index_block_hash TEXT NOT NULL,
    block_height BIGINT NOT NULL,
    liquid BIGINT NOT NULL,
    locked BIGINT NOT NULL,
    unlock_burn_height BIGINT NOT NULL,
    lock_tx_id TEXT,
    lock_height BIGINT NOT NULL,
    lock_burn_height BIGINT NOT NULL,
    pox_version BIGINT NOT NULL,
    canonical BOOLEAN NOT NULL,
    PRIMARY KEY (account, index_block_hash)
);
CREATE INDEX stx_balances_history ON stx_balances (account, canonical, block_height);
CREATE INDEX stx_balances_block ON stx_balances (index_block_hash);

-- The canonical tip's state per account (a cache of the latest canonical stx_balances row).
CREATE TABLE stx_accounts (
    account TEXT PRIMARY KEY,
    block_height BIGINT NOT NULL,
    liquid BIGINT NOT NULL,
    locked BIGINT NOT NULL,
    unlock_burn_height BIGINT NOT NULL,
    lock_tx_id TEXT,
    lock_height BIGINT NOT NULL,
    lock_burn_height BIGINT NOT NULL,
    pox_version BIGINT NOT NULL
);
CREATE INDEX stx_accounts_locked ON stx_accounts (pox_version, unlock_burn_height) WHERE locked <> 0;

CREATE TABLE account_txs (
    principal TEXT NOT NULL,
    tx_id TEXT NOT NULL,
    index_block_hash TEXT NOT NULL,
    block_height BIGINT NOT NULL,
    tx_index BIGINT NOT NULL,
    canonical BOOLEAN NOT NULL,
    PRIMARY KEY (principal, tx_id, index_block_hash)
);
CREATE INDEX account_txs_page ON account_txs (principal, canonical, block_height, tx_index);
CREATE INDEX account_txs_block ON account_txs (index_block_hash);

CREATE TABLE smart_contracts (
    contract_id TEXT NOT NULL,
    index_block_hash TEXT NOT NULL,
    tx_id TEXT NOT NULL,
    block_height BIGINT NOT NULL,
    clarity_version BIGINT,
    source_code TEXT NOT NULL,
    abi TEXT,
    canonical BOOLEAN NOT NULL,
    PRIMARY KEY (contract_id, index_block_hash)
);
CREATE INDEX smart_contracts_block ON smart_contracts (index_block_hash);

CREATE TABLE miner_rewards (
    index_block_hash TEXT NOT NULL,
    reward_index BIGINT NOT NULL,
    block_height BIGINT NOT NULL,
    from_index_block_hash TEXT NOT NULL,
    from_block_hash TEXT NOT NULL,
    recipient TEXT NOT NULL,
    miner_address TEXT NOT NULL,
    coinbase_amount BIGINT NOT NULL,
    tx_fees_anchored BIGINT NOT NULL,
    tx_fees_streamed_confirmed BIGINT NOT NULL,
    tx_fees_streamed_produced BIGINT NOT NULL,
    canonical BOOLEAN NOT NULL,
    PRIMARY KEY (index_block_hash, reward_index)
);
CREATE INDEX miner_rewards_recipient ON miner_rewards (recipient, canonical, block_height);

CREATE TABLE pox_events (
    index_block_hash TEXT NOT NULL,
    block_height BIGINT NOT NULL,
    tx_id TEXT NOT NULL,
    tx_index BIGINT NOT NULL,
    event_index BIGINT NOT NULL,
    pox_contract TEXT NOT NULL,
    name TEXT NOT NULL,
    stacker TEXT NOT NULL,
    balance TEXT,
    locked TEXT,
    burnchain_unlock_height BIGINT,
    pox_addr TEXT,
    pox_addr_raw TEXT,
    amount_ustx TEXT,
    delegate_to TEXT,
    lock_period BIGINT,
    start_burn_height BIGINT,
    unlock_burn_height BIGINT,
    start_cycle_id BIGINT,
    end_cycle_id BIGINT,
    signer_key TEXT,
    data TEXT NOT NULL,
    canonical BOOLEAN NOT NULL,
    PRIMARY KEY (index_block_hash, tx_id, event_index)
);
CREATE INDEX pox_events_stacker ON pox_events (stacker, canonical, block_height);
CREATE INDEX pox_events_delegate ON pox_events (delegate_to, canonical, block_height);
CREATE INDEX pox_events_name ON pox_events (name, canonical, block_height);

CREATE TABLE microblocks (
    microblock_hash TEXT NOT NULL,
    -- The confirming anchor block; '' while streamed and unconfirmed.
    index_block_hash TEXT NOT NULL,
    microblock_sequence BIGINT NOT NULL,
    microblock_parent_hash TEXT NOT NULL,
    parent_index_block_hash TEXT NOT NULL,
    block_height BIGINT NOT NULL,
    tx_count BIGINT NOT NULL,
    canonical BOOLEAN NOT NULL,
    -- For a streamed row: still on the stream's canonical branch (false once the next anchor
    -- block orphans it). Confirmed rows are accepted by definition.
    microblock_canonical BOOLEAN NOT NULL,
    PRIMARY KEY (microblock_hash, index_block_hash)
);
CREATE INDEX microblocks_parent ON microblocks (parent_index_block_hash, index_block_hash);
CREATE INDEX microblocks_block ON microblocks (index_block_hash);

CREATE TABLE ft_balances (
    asset_identifier TEXT NOT NULL,
    account TEXT NOT NULL,
    -- u128 as 39-digit zero-padded decimal: exact, and sorts numerically as text.
    balance TEXT NOT NULL,
    PRIMARY KEY (asset_identifier, account)
);
CREATE INDEX ft_balances_account ON ft_balances (account);
CREATE INDEX ft_balances_holders ON ft_balances (asset_identifier, balance);

CREATE TABLE nft_custody (
    asset_identifier TEXT NOT NULL,
    value_hex TEXT NOT NULL,
    owner TEXT NOT NULL,
    tx_id TEXT NOT NULL,
    index_block_hash TEXT NOT NULL,
    block_height BIGINT NOT NULL,
    tx_index BIGINT NOT NULL,
    event_index BIGINT NOT NULL,
    PRIMARY KEY (asset_identifier, value_hex)
);
CREATE INDEX nft_custody_owner ON nft_custody (owner, asset_identifier, block_height);

CREATE TABLE mempool_txs (
    tx_id TEXT PRIMARY KEY,
    raw_tx TEXT NOT NULL,
    tx_type TEXT NOT NULL,
    sender_address TEXT NOT NULL,
    nonce BIGINT NOT NULL,
    sponsored BOOLEAN NOT NULL,
    sponsor_address TEXT,
    sponsor_nonce BIGINT,
    fee BIGINT NOT NULL,
    contract_id TEXT,
    function_name TEXT,
    token_transfer_recipient TEXT,
    raw_size BIGINT NOT NULL,
    receipt_time BIGINT NOT NULL,
    status TEXT NOT NULL,
    replaced_by_tx_id TEXT,
    pruned BOOLEAN NOT NULL
);
CREATE INDEX mempool_pending ON mempool_txs (pruned, receipt_time);
CREATE INDEX mempool_sender ON mempool_txs (sender_address, pruned, nonce);
CREATE INDEX mempool_sponsor ON mempool_txs (sponsor_address, pruned, sponsor_nonce);
CREATE INDEX mempool_recipient ON mempool_txs (token_transfer_recipient, pruned);

CREATE TABLE burn_blocks (
    burn_block_hash TEXT PRIMARY KEY,
    burn_block_height BIGINT NOT NULL,
    burn_amount BIGINT NOT NULL,
    consensus_hash TEXT,
    parent_burn_block_hash TEXT,
    canonical BOOLEAN NOT NULL,
    -- The raw event that last announced it: orders burn blocks against Stacks blocks.
    raw_event_id BIGINT NOT NULL
);
CREATE INDEX burn_blocks_height ON burn_blocks (burn_block_height, canonical);

CREATE TABLE burnchain_rewards (
    burn_block_hash TEXT NOT NULL,
    reward_index BIGINT NOT NULL,
    burn_block_height BIGINT NOT NULL,
    recipient TEXT NOT NULL,
    amount BIGINT NOT NULL,
    canonical BOOLEAN NOT NULL,
    PRIMARY KEY (burn_block_hash, reward_index)
);
CREATE INDEX burnchain_rewards_recipient ON burnchain_rewards (recipient, canonical, burn_block_height);

CREATE TABLE reward_slot_holders (
    burn_block_hash TEXT NOT NULL,
    slot_index BIGINT NOT NULL,
    burn_block_height BIGINT NOT NULL,
    address TEXT NOT NULL,
    canonical BOOLEAN NOT NULL,
    PRIMARY KEY (burn_block_hash, slot_index)
);
CREATE INDEX reward_slot_holders_address ON reward_slot_holders (address, canonical, burn_block_height);
