//! The few Stacks node RPC calls the online construction routes make: account nonce, fee
//! rate, PoX info, and broadcasting a transaction. A small client of our own (the /v2 proxy
//! is another module's concern).

use std::time::Duration;

use serde::Deserialize;
use serde_json::Value as Json;
use thiserror::Error;

#[derive(Debug, Clone)]
pub struct NodeClient {
    base: String,
    http: reqwest::Client,
}

#[derive(Debug, Error)]
pub enum NodeError {
    #[error("the node at {url} cannot be reached: {source}")]
    Unreachable { url: String, source: reqwest::Error },
    #[error("the node answered {url} with HTTP {status}: {body}")]
    Status { url: String, status: u16, body: String },
    /// `POST /v2/transactions` refused the transaction (HTTP 400 with the node's reason).
    #[error("the node rejected the transaction: {reason}")]
    Rejected { reason: String, reason_data: Option<Json>, body: Json },
}

/// `GET /v2/pox`: the fields a stacking call needs.
#[derive(Debug, Clone, Deserialize)]
pub struct PoxInfo {
    pub contract_id: String,
    pub current_burnchain_block_height: u64,
}

impl NodeClient {
    /// `base`: `http://host:port` of the node's RPC server.
    pub fn new(base: &str) -> NodeClient {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .unwrap_or_else(|_| reqwest::Client::new());
        NodeClient { base: base.trim_end_matches('/').to_owned(), http }
    }

    pub fn base(&self) -> &str {
        &self.base
    }

    async fn get_json(&self, path: &str) -> Result<Json, NodeError> {
        let url = format!("{}{path}", self.base);
        let unreachable = |source| NodeError::Unreachable { url: url.clone(), source };
        let resp = self.http.get(&url).send().await.map_err(unreachable)?;
        let status = resp.status();
        let body = resp.text().await.map_err(unreachable)?;
        if !status.is_success() {
            return Err(NodeError::Status { url, status: status.as_u16(), body });
        }
        serde_json::from_str(&body).map_err(|e| NodeError::Status {
            url,
            status: status.as_u16(),
            body: format!("not JSON: {e}"),
        })
    }

    /// The account's next nonce as the node sees it (`/v2/accounts/{principal}?proof=0`).
    pub async fn account_nonce(&self, principal: &str) -> Result<u64, NodeError> {
        let path = format!("/v2/accounts/{principal}?proof=0");
        let v = self.get_json(&path).await?;
        v.get("nonce").and_then(Json::as_u64).ok_or_else(|| NodeError::Status {
            url: format!("{}{path}", self.base),
            status: 200,
            body: format!("no nonce in {v}"),
        })
    }

    /// µSTX per byte (`/v2/fees/transfer`, a bare number).
    pub async fn fee_rate(&self) -> Result<u64, NodeError> {
        let v = self.get_json("/v2/fees/transfer").await?;
        v.as_u64().ok_or_else(|| NodeError::Status {
            url: format!("{}/v2/fees/transfer", self.base),
            status: 200,
            body: format!("not a fee rate: {v}"),
        })
    }

    pub async fn pox(&self) -> Result<PoxInfo, NodeError> {
        let v = self.get_json("/v2/pox").await?;
        serde_json::from_value(v.clone()).map_err(|e| NodeError::Status {
            url: format!("{}/v2/pox", self.base),
            status: 200,
            body: format!("{e}: {v}"),
        })
    }

    /// Broadcasts a serialized transaction; the node answers with its txid as a JSON string.
    pub async fn broadcast(&self, raw: Vec<u8>) -> Result<String, NodeError> {
        let url = format!("{}/v2/transactions", self.base);
        let unreachable = |source| NodeError::Unreachable { url: url.clone(), source };
        let resp = self
            .http
            .post(&url)
            .header(reqwest::header::CONTENT_TYPE, "application/octet-stream")
            .body(raw)
            .send()
            .await
            .map_err(unreachable)?;
        let status = resp.status();
        let text = resp.text().await.map_err(unreachable)?;
        let json: Option<Json> = serde_json::from_str(&text).ok();
        if status.is_success() {
            return match json {
                Some(Json::String(txid)) => Ok(txid),
                _ => Err(NodeError::Status { url, status: status.as_u16(), body: text }),
            };
        }
        match json {
            Some(body) if status.as_u16() == 400 => Err(NodeError::Rejected {
                reason: body.get("reason").and_then(Json::as_str).unwrap_or("Unknown").to_owned(),
                reason_data: body.get("reason_data").cloned(),
                body,
            }),
            _ => Err(NodeError::Status { url, status: status.as_u16(), body: text }),
        }
    }
}
