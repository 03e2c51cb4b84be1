//! The incumbent's optional rewrite of `POST /v2/fees/transaction` answers. stacks-node's
//! estimator keeps quoting high fees after a busy spell even when blocks are nearly empty; the
//! rewrite quotes the minimum fee while there is no fee market, and otherwise scales the node's
//! estimates by a configured modifier, never below the minimum.

use std::time::{Duration, Instant};

use bytes::Bytes;
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::Mutex;
use warp::http::{header, Method, StatusCode};
use warp::reply::Response;

use crate::config::FeeRewriteConfig;
use crate::error::ProxyError;
use crate::headers;
use crate::hook::{CostDimensions, FeeMarketCosts};
use crate::upstream::{self, Incoming, Upstream};

/// Per-block cost limits; stacks-core's defaults until the node's `/v2/pox` says otherwise.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct BlockLimits {
    pub read_count: f64,
    pub read_length: f64,
    pub write_count: f64,
    pub write_length: f64,
    pub runtime: f64,
    /// Not in `/v2/pox`: stacks-core's fixed maximum block size (2 MiB).
    pub size: f64,
}

impl Default for BlockLimits {
    fn default() -> Self {
        BlockLimits {
            read_count: 15_000.0,
            read_length: 100_000_000.0,
            write_count: 15_000.0,
            write_length: 15_000_000.0,
            runtime: 5_000_000_000.0,
            size: (2 * 1024 * 1024) as f64,
        }
    }
}

/// How long to keep using the defaults after `/v2/pox` could not be read before asking again.
const LIMITS_RETRY_AFTER: Duration = Duration::from_secs(60);

enum LimitsState {
    Unknown,
    Loaded(BlockLimits),
    FailedAt(Instant),
}

/// The block limits of the node's latest epoch, read once. The incumbent gives up for good after
/// its first failed attempts; here a failure only means defaults for the next minute.
pub(crate) struct BlockLimitsCache {
    state: Mutex<LimitsState>,
}

impl Default for BlockLimitsCache {
    fn default() -> Self {
        BlockLimitsCache { state: Mutex::new(LimitsState::Unknown) }
    }
}

impl BlockLimitsCache {
    async fn get(&self, upstream: &Upstream) -> BlockLimits {
        // Held across the fetch so concurrent estimates wait for one `/v2/pox` call.
        let mut state = self.state.lock().await;
        match *state {
            LimitsState::Loaded(limits) => return limits,
            LimitsState::FailedAt(at) if at.elapsed() < LIMITS_RETRY_AFTER => return BlockLimits::default(),
            _ => {}
        }
        match fetch_limits(upstream).await {
            Ok(limits) => {
                tracing::info!(?limits, "fee rewrite: block limits read from the node");
                *state = LimitsState::Loaded(limits);
                limits
            }
            Err(err) => {
                tracing::warn!(error = %err, "fee rewrite: cannot read block limits from /v2/pox; using defaults");
                *state = LimitsState::FailedAt(Instant::now());
                BlockLimits::default()
            }
        }
    }
}

async fn fetch_limits(upstream: &Upstream) -> Result<BlockLimits, ProxyError> {
    let pox = upstream.node.pox().await.map_err(|e| upstream.client_error(e))?;
    // Like the incumbent: the last listed epoch is the one whose limits apply.
    let limit = pox
        .epochs
        .into_iter()
        .last()
        .and_then(|e| e.block_limit)
        .ok_or_else(|| ProxyError::BadNodeResponse("/v2/pox lists no block limit".into()))?;
    Ok(BlockLimits {
        read_count: limit.read_count,
        read_length: limit.read_length,
        write_count: limit.write_count,
        write_length: limit.write_length,
        runtime: limit.runtime,
        ..BlockLimits::default()
    })
}

pub(crate) async fn handle(
    upstream: &Upstream,
    limits: &BlockLimitsCache,
    config: &FeeRewriteConfig,
    req: Incoming,
) -> Result<Response, ProxyError> {
    let url = upstream.target(&req.path, req.query.as_deref())?;
    let upstream_headers = headers::to_node(&req.headers, req.remote);
    let body = upstream.buffer_request_body(&req.headers, req.body).await?;
    let mut answer = upstream.exchange(Method::POST, url, upstream_headers, body.clone()).await?;
    // Only successful estimates are rewritten; errors go back as the node wrote them.
    if answer.status == StatusCode::OK {
        if let Some(rewritten) = rewrite(upstream, limits, config, &body, &answer.body).await {
            answer.body = rewritten;
            answer.headers.remove(header::CONTENT_LENGTH);
        }
    }
    Ok(upstream::into_response(answer))
}

/// The fee-estimate request body (only the fields the rewrite reads).
#[derive(Deserialize)]
struct FeeRequest {
    estimated_len: Option<u64>,
    transaction_payload: String,
}

async fn rewrite(
    upstream: &Upstream,
    cache: &BlockLimitsCache,
    config: &FeeRewriteConfig,
    request: &[u8],
    answer: &[u8],
) -> Option<Bytes> {
    let request: FeeRequest = serde_json::from_slice(request).ok()?;
    let mut estimate: Value = match serde_json::from_slice(answer) {
        Ok(v) => v,
        Err(err) => {
            tracing::warn!(error = %err, "fee rewrite: the node's estimate is not JSON; relayed as is");
            return None;
        }
    };
    let min_fee = min_fee(config, request.estimated_len, &request.transaction_payload);
    let limits = cache.get(upstream).await;
    let timeout = upstream.config.request_timeout;
    let costs = match tokio::time::timeout(
        timeout,
        upstream.hooks.fee_market_costs(config.past_tenure_fullness_window),
    )
    .await
    {
        Ok(costs) => costs,
        Err(_) => {
            tracing::warn!(
                ?timeout,
                "fee rewrite: tenure costs not available in time; assuming a fee market"
            );
            None
        }
    };
    let use_minimum = costs.is_some_and(|c| no_fee_market(config, &limits, &c));
    if !rewrite_estimations(&mut estimate, min_fee, use_minimum, config.estimation_modifier) {
        return None;
    }
    tracing::debug!(min_fee, use_minimum, "fee rewrite applied");
    serde_json::to_vec(&estimate).ok().map(Bytes::from)
}

/// The floor: the larger of the declared length and the payload's length (hex, two digits per
/// byte, rounded up) times the minimum rate.
fn min_fee(config: &FeeRewriteConfig, estimated_len: Option<u64>, payload_hex: &str) -> u64 {
    let payload_len = (payload_hex.len() as u64).div_ceil(2);
    estimated_len.unwrap_or(0).max(payload_len).saturating_mul(config.min_fee_rate_per_byte)
}

/// The incumbent's test: no fee market if the current tenure has enough blocks and every dimension
/// is under the "current" fraction of the block limit, or else if the weighted average of the past
/// tenures is under the "past" fraction in every dimension (or there are no past tenures).
pub(crate) fn no_fee_market(config: &FeeRewriteConfig, limits: &BlockLimits, costs: &FeeMarketCosts) -> bool {
    let under = |c: &CostDimensions, fraction: f64| {
        c.read_count < limits.read_count * fraction
            && c.read_length < limits.read_length * fraction
            && c.write_count < limits.write_count * fraction
            && c.write_length < limits.write_length * fraction
            && c.runtime < limits.runtime * fraction
            && c.tx_total_size < limits.size * fraction
    };
    if costs.current_block_count >= config.current_block_count_minimum
        && under(&costs.current, config.current_dimension_fullness_threshold)
    {
        return true;
    }
    match &costs.past_weighted_average {
        None => true,
        Some(past) => under(past, config.past_dimension_fullness_threshold),
    }
}

/// Rewrites every `estimations[].fee`; `fee_rate` is left as the node gave it (as the incumbent
/// does). Returns false, leaving the value alone, when it has no estimations to rewrite.
pub(crate) fn rewrite_estimations(
    estimate: &mut Value,
    min_fee: u64,
    use_minimum: bool,
    modifier: f64,
) -> bool {
    let Some(estimations) = estimate.get_mut("estimations").and_then(Value::as_array_mut) else {
        return false;
    };
    let mut changed = false;
    for estimation in estimations {
        let Some(fee) = estimation.get("fee").and_then(Value::as_f64) else {
            continue;
        };
        let new_fee = if use_minimum {
            min_fee
        } else {
            // `as` saturates, so an absurd modifier cannot wrap around.
            ((fee * modifier).round() as u64).max(min_fee)
        };
        estimation["fee"] = Value::from(new_fee);
        changed = true;
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn quiet() -> CostDimensions {
        CostDimensions::default()
    }

    fn busy(limits: &BlockLimits, fraction: f64) -> CostDimensions {
        CostDimensions { read_count: limits.read_count * fraction, ..CostDimensions::default() }
    }

    #[test]
    fn minimum_fee() {
        let config = FeeRewriteConfig::default();
        assert_eq!(min_fee(&config, None, "aabbcc"), 3);
        assert_eq!(min_fee(&config, Some(180), "aabbcc"), 180);
        assert_eq!(min_fee(&config, Some(1), "aabbc"), 3);
    }

    #[test]
    fn fee_market_decision() {
        let config = FeeRewriteConfig::default();
        let limits = BlockLimits::default();
        // A quiet current tenure with enough blocks: no market, whatever the past says.
        let costs = FeeMarketCosts {
            current_block_count: 5,
            current: quiet(),
            past_weighted_average: Some(busy(&limits, 0.95)),
        };
        assert!(no_fee_market(&config, &limits, &costs));
        // Too few blocks: the past decides.
        let costs = FeeMarketCosts { current_block_count: 4, ..costs };
        assert!(!no_fee_market(&config, &limits, &costs));
        let costs = FeeMarketCosts { past_weighted_average: Some(busy(&limits, 0.5)), ..costs };
        assert!(no_fee_market(&config, &limits, &costs));
        let costs = FeeMarketCosts { past_weighted_average: None, ..costs };
        assert!(no_fee_market(&config, &limits, &costs));
        // A busy current tenure falls through to the past too.
        let costs = FeeMarketCosts {
            current_block_count: 10,
            current: busy(&limits, 0.6),
            past_weighted_average: Some(busy(&limits, 0.9)),
        };
        assert!(!no_fee_market(&config, &limits, &costs));
    }

    #[test]
    fn estimations_are_rewritten() {
        let original = json!({
            "estimated_cost_scalar": 14,
            "estimations": [
                {"fee": 100, "fee_rate": 1.5},
                {"fee": 1000, "fee_rate": 2.5},
                {"fee": 10000, "fee_rate": 3.5}
            ]
        });
        let mut v = original.clone();
        assert!(rewrite_estimations(&mut v, 180, true, 1.0));
        let fees: Vec<u64> =
            v["estimations"].as_array().unwrap().iter().map(|e| e["fee"].as_u64().unwrap()).collect();
        assert_eq!(fees, [180, 180, 180]);
        assert_eq!(v["estimations"][0]["fee_rate"], 1.5);

        let mut v = original.clone();
        assert!(rewrite_estimations(&mut v, 180, false, 0.5));
        let fees: Vec<u64> =
            v["estimations"].as_array().unwrap().iter().map(|e| e["fee"].as_u64().unwrap()).collect();
        assert_eq!(fees, [180, 500, 5000]);

        let mut v = json!({"error": "x"});
        assert!(!rewrite_estimations(&mut v, 1, true, 1.0));
    }
}
