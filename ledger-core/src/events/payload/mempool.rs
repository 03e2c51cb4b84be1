//! `/new_mempool_tx` and `/drop_mempool_tx`.

use std::fmt;

use serde::{Deserialize, Deserializer};

/// Transactions the node accepted into its mempool, as 0x-hex serialised transactions.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct NewMempoolTx {
    pub raw_txs: Vec<String>,
}

/// Transactions the node evicted from its mempool.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct DropMempoolTx {
    pub dropped_txids: Vec<String>,
    pub reason: DropReason,
    /// The replacing transaction, for replace-by-fee drops (newer nodes).
    #[serde(default)]
    pub new_txid: Option<String>,
}

/// Why transactions were dropped. Unknown reasons are kept: a drop is still a drop, and the
/// mempool status can fall back to a generic one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DropReason {
    ReplaceByFee,
    ReplaceAcrossFork,
    TooExpensive,
    StaleGarbageCollect,
    Problematic,
    Other(String),
}

impl DropReason {
    pub fn as_str(&self) -> &str {
        match self {
            DropReason::ReplaceByFee => "ReplaceByFee",
            DropReason::ReplaceAcrossFork => "ReplaceAcrossFork",
            DropReason::TooExpensive => "TooExpensive",
            DropReason::StaleGarbageCollect => "StaleGarbageCollect",
            DropReason::Problematic => "Problematic",
            DropReason::Other(s) => s,
        }
    }
}

impl fmt::Display for DropReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for DropReason {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Ok(match s.as_str() {
            "ReplaceByFee" => DropReason::ReplaceByFee,
            "ReplaceAcrossFork" => DropReason::ReplaceAcrossFork,
            "TooExpensive" => DropReason::TooExpensive,
            "StaleGarbageCollect" => DropReason::StaleGarbageCollect,
            "Problematic" => DropReason::Problematic,
            _ => DropReason::Other(s),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_mempool_payloads() {
        let m: NewMempoolTx = serde_json::from_str(r#"["0x8080","0x0080"]"#).unwrap();
        assert_eq!(m.raw_txs, ["0x8080", "0x0080"]);

        let d: DropMempoolTx =
            serde_json::from_str(r#"{"dropped_txids":["0x01"],"reason":"ReplaceByFee","new_txid":"0x02"}"#)
                .unwrap();
        assert_eq!((d.reason, d.new_txid.as_deref()), (DropReason::ReplaceByFee, Some("0x02")));

        let d: DropMempoolTx = serde_json::from_str(r#"{"dropped_txids":[],"reason":"Later"}"#).unwrap();
        assert_eq!((d.reason.to_string(), d.new_txid), ("Later".to_owned(), None));

        let err = serde_json::from_str::<DropMempoolTx>(r#"{"reason":"TooExpensive"}"#).unwrap_err();
        assert!(err.to_string().contains("missing field `dropped_txids`"));
    }
}
