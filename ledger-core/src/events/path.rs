//! The event-observer URL paths a Stacks node POSTs to.

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

/// Which kind of event a request path carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EventPath {
    NewBlock,
    NewBurnBlock,
    NewMempoolTx,
    DropMempoolTx,
    NewMicroblocks,
    AttachmentsNew,
    /// Stored raw only; the ledger does not read it.
    StackerDbChunks,
    /// Stored raw only; the ledger does not read it.
    ProposalResponse,
}

/// A path no event-observer route handles.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("no event-observer route for path `{0}`")]
pub struct UnknownEventPath(pub String);

impl EventPath {
    pub const ALL: [EventPath; 8] = [
        EventPath::NewBlock,
        EventPath::NewBurnBlock,
        EventPath::NewMempoolTx,
        EventPath::DropMempoolTx,
        EventPath::NewMicroblocks,
        EventPath::AttachmentsNew,
        EventPath::StackerDbChunks,
        EventPath::ProposalResponse,
    ];

    /// The canonical path, as stored in the raw event log.
    pub fn as_str(self) -> &'static str {
        match self {
            EventPath::NewBlock => "/new_block",
            EventPath::NewBurnBlock => "/new_burn_block",
            EventPath::NewMempoolTx => "/new_mempool_tx",
            EventPath::DropMempoolTx => "/drop_mempool_tx",
            EventPath::NewMicroblocks => "/new_microblocks",
            EventPath::AttachmentsNew => "/attachments/new",
            EventPath::StackerDbChunks => "/stackerdb_chunks",
            EventPath::ProposalResponse => "/proposal_response",
        }
    }

    /// Maps a request path to its kind. One trailing slash is ignored, as the incumbent's
    /// server does (`ignoreTrailingSlash`).
    pub fn from_path(path: &str) -> Option<EventPath> {
        let path = match path.strip_suffix('/') {
            Some(p) if !p.is_empty() => p,
            _ => path,
        };
        EventPath::ALL.into_iter().find(|p| p.as_str() == path)
    }

    /// Whether the event may change what the chain's routes answer (blocks, transactions,
    /// balances, names): every event but the mempool's own. Unknown kinds would count as chain.
    pub fn changes_chain(self) -> bool {
        !matches!(self, EventPath::NewMempoolTx | EventPath::DropMempoolTx)
    }

    /// Whether the ledger applies this event (the others are only kept in the raw log).
    pub fn is_applied(self) -> bool {
        !matches!(self, EventPath::StackerDbChunks | EventPath::ProposalResponse)
    }
}

impl fmt::Display for EventPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for EventPath {
    type Err = UnknownEventPath;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        EventPath::from_path(s).ok_or_else(|| UnknownEventPath(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_path_round_trips() {
        for p in EventPath::ALL {
            assert_eq!(p.as_str().parse::<EventPath>(), Ok(p));
            assert_eq!(p.to_string(), p.as_str());
        }
    }

    #[test]
    fn trailing_slash_is_ignored_and_unknown_paths_are_errors() {
        assert_eq!(EventPath::from_path("/new_block/"), Some(EventPath::NewBlock));
        assert_eq!(EventPath::from_path("/attachments/new/"), Some(EventPath::AttachmentsNew));
        assert_eq!(EventPath::from_path("new_block"), None);
        assert_eq!(EventPath::from_path("/"), None);
        assert_eq!(EventPath::from_path("/new_block//"), None);
        assert_eq!(
            "/nope".parse::<EventPath>().unwrap_err().to_string(),
            "no event-observer route for path `/nope`"
        );
        assert!(!EventPath::ProposalResponse.is_applied());
        assert!(EventPath::NewMicroblocks.is_applied());
    }
}
