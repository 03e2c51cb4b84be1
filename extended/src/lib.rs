//! The /extended API routes over a reader trait the store implements.
