-- BNS (issue 23): namespaces and names from the `bns` contract's prints (and renewals read
-- from their calls), subdomains and zonefiles from `/attachments/new`, and the genesis names
-- of `import-bns`. Rows of a block follow its `canonical` flag (write::BLOCK_TABLES);
-- imported rows have index_block_hash '' and stay canonical. `microblock_sequence` is the
-- incumbent's ordering key: 2147483647 for a transaction of the anchored block.
CREATE TABLE bns_namespaces (
    namespace_id TEXT NOT NULL,
    address TEXT NOT NULL,
    launched_at BIGINT NOT NULL,
    reveal_block BIGINT NOT NULL,
    ready_block BIGINT NOT NULL,
    buckets TEXT NOT NULL,
    base TEXT NOT NULL,
    coeff TEXT NOT NULL,
    nonalpha_discount TEXT NOT NULL,
    no_vowel_discount TEXT NOT NULL,
    lifetime BIGINT NOT NULL,
    status TEXT NOT NULL,
    tx_id TEXT NOT NULL,
    tx_index BIGINT NOT NULL,
    index_block_hash TEXT NOT NULL,
    microblock_sequence BIGINT NOT NULL,
    canonical BOOLEAN NOT NULL,
    PRIMARY KEY (namespace_id, tx_id, index_block_hash)
);
CREATE INDEX bns_namespaces_block ON bns_namespaces (index_block_hash);

CREATE TABLE bns_names (
    name TEXT NOT NULL,
    namespace_id TEXT NOT NULL,
    address TEXT NOT NULL,
    registered_at BIGINT NOT NULL,
    expire_block BIGINT NOT NULL,
    zonefile_hash TEXT NOT NULL,
    tx_id TEXT NOT NULL,
    tx_index BIGINT NOT NULL,
    -- -1: a renewal read from its call (no print).
    event_index BIGINT NOT NULL,
    status TEXT NOT NULL,
    index_block_hash TEXT NOT NULL,
    microblock_hash TEXT NOT NULL,
    microblock_sequence BIGINT NOT NULL,
    canonical BOOLEAN NOT NULL,
    PRIMARY KEY (name, tx_id, index_block_hash, microblock_hash, event_index)
);
CREATE INDEX bns_names_namespace ON bns_names (namespace_id, name);
CREATE INDEX bns_names_address ON bns_names (address);
CREATE INDEX bns_names_block ON bns_names (index_block_hash);

CREATE TABLE bns_subdomains (
    fully_qualified_subdomain TEXT NOT NULL,
    name TEXT NOT NULL,
    namespace_id TEXT NOT NULL,
    owner TEXT NOT NULL,
    zonefile_hash TEXT NOT NULL,
    parent_zonefile_hash TEXT NOT NULL,
    parent_zonefile_index BIGINT NOT NULL,
    block_height BIGINT NOT NULL,
    tx_index BIGINT NOT NULL,
    zonefile_offset BIGINT NOT NULL,
    resolver TEXT NOT NULL,
    tx_id TEXT NOT NULL,
    index_block_hash TEXT NOT NULL,
    microblock_hash TEXT NOT NULL,
    microblock_sequence BIGINT NOT NULL,
    canonical BOOLEAN NOT NULL,
    PRIMARY KEY (fully_qualified_subdomain, tx_id, index_block_hash, microblock_hash)
);
CREATE INDEX bns_subdomains_name ON bns_subdomains (name);
CREATE INDEX bns_subdomains_owner ON bns_subdomains (owner);
CREATE INDEX bns_subdomains_block ON bns_subdomains (index_block_hash);

-- Joined to the row (name or subdomain) of the same tx and block, which decides canonicity.
CREATE TABLE bns_zonefiles (
    name TEXT NOT NULL,
    zonefile TEXT NOT NULL,
    zonefile_hash TEXT NOT NULL,
    tx_id TEXT NOT NULL,
    index_block_hash TEXT NOT NULL,
    PRIMARY KEY (name, zonefile_hash, tx_id, index_block_hash)
);

-- What `import-bns` has finished (resumable: a file done is not read again).
CREATE TABLE bns_import_progress (
    file TEXT PRIMARY KEY,
    sha256 TEXT NOT NULL,
    rows BIGINT NOT NULL
);
