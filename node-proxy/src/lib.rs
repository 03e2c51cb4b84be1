//! The /v2 node RPC proxy.
