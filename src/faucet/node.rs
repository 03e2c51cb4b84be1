//! What the STX faucet asks of the Stacks node (its chain id, the PoX minimum, the transfer fee
//! rate, the broadcast), through the shared node client, with the node's failures mapped to
//! the faucet's errors: no answer or a 5xx is `Unavailable` (503), anything else `Failed`.

use std::time::Duration;

use stacks_node_proxy::{NodeClient, NodeError, Url};

use super::FaucetError;

/// How long one node call may take.
const TIMEOUT: Duration = Duration::from_secs(30);

pub struct Node {
    /// `Err`: why there is no node to ask (none configured, or an unusable URL); every call is a
    /// 503 saying so.
    client: Result<NodeClient, String>,
}

/// Why the node refused a broadcast (`/v2/transactions` answered 4xx).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    pub reason: String,
    pub body: String,
}

impl Rejection {
    /// The refusals after which the incumbent tries the next faucet key.
    pub fn rotates_key(&self) -> bool {
        matches!(self.reason.as_str(), "ConflictingNonceInMempool" | "TooMuchChaining" | "NotEnoughFunds")
    }
}

impl Node {
    pub fn new(http: reqwest::Client, base: Option<&str>) -> Node {
        let client = match base {
            None => Err(
                "no Stacks node is configured (--node-rpc, STACKS_CORE_RPC_HOST or STACKS_FAUCET_NODE_HOST)"
                    .to_owned(),
            ),
            Some(base) => Url::parse(base)
                .map(|url| NodeClient::with_http(url, http).timeout(TIMEOUT))
                .map_err(|e| format!("the Stacks node URL {base:?} is invalid: {e}")),
        };
        Node { client }
    }

    fn client(&self) -> Result<&NodeClient, FaucetError> {
        self.client.as_ref().map_err(|why| FaucetError::Unavailable(why.clone()))
    }

    /// `/v2/info` `network_id`: the chain id the faucet signs for.
    pub async fn chain_id(&self) -> Result<u32, FaucetError> {
        let info = self.client()?.info().await.map_err(|e| read_error("/v2/info", e))?;
        info.network_id.ok_or_else(|| FaucetError::Failed("node's /v2/info: no network_id".into()))
    }

    /// `/v2/pox` `min_amount_ustx`.
    pub async fn pox_min_amount(&self) -> Result<u128, FaucetError> {
        let pox = self.client()?.pox().await.map_err(|e| read_error("/v2/pox", e))?;
        pox.min_amount_ustx.ok_or_else(|| FaucetError::Failed("node's /v2/pox: no min_amount_ustx".into()))
    }

    /// `/v2/fees/transfer`: µSTX per byte. `None` when the node has no usable estimate (the
    /// caller falls back); a node that cannot be reached is an error.
    pub async fn transfer_fee_rate(&self) -> Result<Option<u64>, FaucetError> {
        match self.client()?.transfer_fee_rate().await {
            Ok(rate) => Ok(Some(rate).filter(|r| *r > 0)),
            Err(e) if e.is_unanswered() => Err(unreachable(e)),
            Err(_) => Ok(None),
        }
    }

    /// POST `/v2/transactions`: the txid the node accepted, or its refusal.
    pub async fn broadcast(&self, raw: Vec<u8>) -> Result<Result<String, Rejection>, FaucetError> {
        match self.client()?.broadcast(raw).await {
            Ok(txid) => Ok(Ok(txid)),
            Err(NodeError::Rejected(r)) => {
                Ok(Err(Rejection { reason: r.reason().unwrap_or_default().to_owned(), body: r.body }))
            }
            Err(e) if e.is_unanswered() => Err(unreachable(e)),
            Err(NodeError::Status { status, body, .. }) => {
                Err(FaucetError::Failed(format!("node answered the broadcast with {status}: {body}")))
            }
            Err(e) => Err(FaucetError::Failed(format!("node answered the broadcast: {e}"))),
        }
    }
}

/// A failed read of `path`: no answer or a 5xx is the node being unavailable.
fn read_error(path: &str, e: NodeError) -> FaucetError {
    match e {
        e if e.is_unanswered() => unreachable(e),
        NodeError::Status { status, .. } if status >= 500 => {
            FaucetError::Unavailable(format!("node answered {path} with {status}"))
        }
        NodeError::Status { status, .. } => {
            FaucetError::Failed(format!("node answered {path} with {status}"))
        }
        e => FaucetError::Failed(format!("node's {path}: {e}")),
    }
}

/// A node that cannot be reached (refused, reset, timed out, unknown host).
fn unreachable(e: NodeError) -> FaucetError {
    FaucetError::Unavailable(format!("Stacks node: {e}"))
}
