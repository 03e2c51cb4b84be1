//! Live updates: what ingestion changed becomes notifications, computed once and fanned out
//! through one hub ([`hub`], per-topic delivery), with sequence numbers, a replay window and reorg notices; served as
//! JSON-RPC 2.0 over WebSocket ([`ws`], the incumbent's `/extended/v1/ws`). See `docs/live.md`.

#![forbid(unsafe_code)]

pub mod config;
pub mod hub;
pub mod jsonrpc;
pub mod notifier;
pub mod socketio;
pub mod subs;
pub mod ws;

pub use config::LiveConfig;
pub use hub::{Hub, Notification, Receiver, RecvError, Topic, Wire};
pub use notifier::{Change, LiveReader, Notifier};
