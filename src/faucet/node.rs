//! What the STX faucet asks of the Stacks node: its chain id, the PoX minimum, the transfer fee
//! rate, and the broadcast.

use std::time::Duration;

use serde::Deserialize;

use super::FaucetError;

/// How long one node call may take.
const TIMEOUT: Duration = Duration::from_secs(30);

pub struct NodeClient {
    http: reqwest::Client,
    /// None: no node configured; every call is a 503 saying so.
    base: Option<String>,
}

/// Why the node refused a broadcast (`/v2/transactions` answered 400).
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

#[derive(Deserialize)]
struct Info {
    network_id: u32,
}

#[derive(Deserialize)]
struct Pox {
    min_amount_ustx: u128,
}

impl NodeClient {
    pub fn new(http: reqwest::Client, base: Option<&str>) -> NodeClient {
        NodeClient { http, base: base.map(|b| b.trim_end_matches('/').to_owned()) }
    }

    /// `/v2/info` `network_id`: the chain id the faucet signs for.
    pub async fn chain_id(&self) -> Result<u32, FaucetError> {
        Ok(self.get_json::<Info>("/v2/info").await?.network_id)
    }

    /// `/v2/pox` `min_amount_ustx`.
    pub async fn pox_min_amount(&self) -> Result<u128, FaucetError> {
        Ok(self.get_json::<Pox>("/v2/pox").await?.min_amount_ustx)
    }

    /// `/v2/fees/transfer`: µSTX per byte. `None` when the node has no usable estimate (the
    /// caller falls back); a node that cannot be reached is an error.
    pub async fn transfer_fee_rate(&self) -> Result<Option<u64>, FaucetError> {
        let res = self.send(self.http.get(self.url("/v2/fees/transfer")?)).await?;
        if !res.status().is_success() {
            return Ok(None);
        }
        Ok(res.json::<u64>().await.ok().filter(|r| *r > 0))
    }

    /// POST `/v2/transactions`: the txid the node accepted, or its refusal.
    pub async fn broadcast(&self, raw: Vec<u8>) -> Result<Result<String, Rejection>, FaucetError> {
        let req = self
            .http
            .post(self.url("/v2/transactions")?)
            .header(reqwest::header::CONTENT_TYPE, "application/octet-stream")
            .body(raw);
        let res = self.send(req).await?;
        let status = res.status();
        let body = res.text().await.map_err(unreachable)?;
        if status.is_success() {
            let txid: String = serde_json::from_str(&body).map_err(|e| {
                FaucetError::Failed(format!("node answered the broadcast with {body:?}: {e}"))
            })?;
            return Ok(Ok(txid));
        }
        if status.is_client_error() {
            let reason = serde_json::from_str::<serde_json::Value>(&body)
                .ok()
                .and_then(|v| v.get("reason").and_then(|r| r.as_str()).map(str::to_owned))
                .unwrap_or_default();
            return Ok(Err(Rejection { reason, body }));
        }
        Err(FaucetError::Failed(format!("node answered the broadcast with {status}: {body}")))
    }

    fn url(&self, path: &str) -> Result<String, FaucetError> {
        match &self.base {
            Some(base) => Ok(format!("{base}{path}")),
            None => Err(FaucetError::Unavailable(
                "no Stacks node is configured (--node-rpc, STACKS_CORE_RPC_HOST or STACKS_FAUCET_NODE_HOST)"
                    .to_owned(),
            )),
        }
    }

    async fn send(&self, req: reqwest::RequestBuilder) -> Result<reqwest::Response, FaucetError> {
        req.timeout(TIMEOUT).send().await.map_err(unreachable)
    }

    async fn get_json<T: serde::de::DeserializeOwned>(&self, path: &str) -> Result<T, FaucetError> {
        let res = self.send(self.http.get(self.url(path)?)).await?;
        let status = res.status();
        if status.is_server_error() {
            return Err(FaucetError::Unavailable(format!("node answered {path} with {status}")));
        }
        if !status.is_success() {
            return Err(FaucetError::Failed(format!("node answered {path} with {status}")));
        }
        res.json::<T>().await.map_err(|e| FaucetError::Failed(format!("node's {path}: {e}")))
    }
}

/// A node that cannot be reached (refused, reset, timed out, unknown host).
fn unreachable(e: reqwest::Error) -> FaucetError {
    FaucetError::Unavailable(format!("Stacks node: {e}"))
}
