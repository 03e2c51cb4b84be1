-- Indexes a bulk replay dropped and has not built yet, with their definitions
-- (src/store/bulk.rs). Empty except during `import-events` into an empty store, or after one
-- was interrupted: then `Store::open` builds them.
CREATE TABLE deferred_indexes (
    name TEXT PRIMARY KEY,
    definition TEXT NOT NULL
);
