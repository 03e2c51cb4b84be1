//! The `auto` policy's question: is the ledger caught up with the node? The node's tip (height
//! and block hash, from its `/v2/info`) is cached briefly so that a burst of requests asks the
//! node once.

use std::sync::Arc;
use std::time::{Duration, Instant};

use stacks_node_proxy::{NodeClient, ProxyConfig};
use tokio::sync::Mutex;

/// How long a node tip height is reused.
const FRESH_FOR: Duration = Duration::from_secs(1);

pub struct NodeTipCache {
    client: NodeClient,
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
        let client =
            NodeClient::with_timeouts(config.node.clone(), config.connect_timeout, config.request_timeout);
        NodeTipCache { client, last: Mutex::new(None) }
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
        let info = match self.client.info().await {
            Ok(info) => info,
            Err(e) => {
                tracing::debug!(error = %e, "node /v2/info gave no tip");
                return None;
            }
        };
        let height = info.stacks_tip_height?;
        let block_hash = info.stacks_tip.map(|h| h.trim_start_matches("0x").to_ascii_lowercase());
        Some(NodeTip { height, block_hash })
    }
}
