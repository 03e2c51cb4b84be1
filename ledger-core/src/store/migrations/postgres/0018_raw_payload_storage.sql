-- Raw event payloads are stored out of line without compression. They are written once and
-- read rarely (reorgs re-derive from them, export-events streams them); pglz compression of
-- every /new_block body was a large share of the server's CPU time in an ingest replay.
-- Applies to rows written from now on.
ALTER TABLE raw_events ALTER COLUMN payload SET STORAGE EXTERNAL;
