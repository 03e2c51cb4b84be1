//! The `auto` policy's question: is the ledger caught up with the node? The node's tip (height
//! and block hash, from its `/v2/info`) is cached briefly so that a burst of requests asks the
//! node once.

use std::sync::Arc;
use std::time::{Duration, Instant};

use stacks_node_proxy::ProxyConfig;
use tokio::sync::Mutex;

/// How long a node tip height is reused.
const FRESH_FOR: Duration = Duration::from_secs(1);

pub struct NodeTipCache {
    config: Arc<ProxyConfig>,
    client: reqwest::Client,
    last: Mutex<Option<(Instant, Option<NodeTip>)>>,
}

/// The node's tip as its `/v2/info` states it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeTip {
    pub height: u64,
    /// `stacks_tip`, bare lowercase hex; `None` when the node did not say.
    pub block_hash: Option<String>,
}

impl NodeTipCache {
    pub fn new(config: Arc<ProxyConfig>) -> Self {
        let client = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .timeout(config.request_timeout)
            .build()
            .unwrap_or_default();
        NodeTipCache { config, client, last: Mutex::new(None) }
    }

    /// The node's tip, or `None` when the node cannot tell (down, slow, or an answer without
    /// `stacks_tip_height`).
    pub async fn node_tip(&self) -> Option<NodeTip> {
        let mut last = self.last.lock().await;
        if let Some((at, height)) = &*last {
            if at.elapsed() < FRESH_FOR {
                return height.clone();
            }
        }
        let height = self.fetch().await;
        *last = Some((Instant::now(), height.clone()));
        height
    }

    async fn fetch(&self) -> Option<NodeTip> {
        let base = self.config.node.as_str().trim_end_matches('/');
        let url = format!("{base}/v2/info");
        let answer = match self.client.get(&url).send().await {
            Ok(a) if a.status().is_success() => a,
            Ok(a) => {
                tracing::debug!(status = a.status().as_u16(), "node /v2/info answered an error");
                return None;
            }
            Err(e) => {
                tracing::debug!(error = %e, "node /v2/info unreachable");
                return None;
            }
        };
        let info: serde_json::Value = answer.json().await.ok()?;
        let height = info.get("stacks_tip_height")?.as_u64()?;
        let block_hash = info
            .get("stacks_tip")
            .and_then(serde_json::Value::as_str)
            .map(|h| h.trim_start_matches("0x").to_ascii_lowercase());
        Some(NodeTip { height, block_hash })
    }
}
