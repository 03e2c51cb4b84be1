//! The seam to the root crate: what the proxy tells it (accepted broadcasts) and what it asks it
//! (tenure fullness for the fee rewrite). The proxy itself holds no ledger state.

use bytes::Bytes;
use futures_util::future::BoxFuture;
use warp::reply::Response;

/// A transaction the primary node accepted (answered 2xx to `POST /v2/transactions`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BroadcastedTx {
    /// The consensus-serialised transaction, whichever body form the client used (raw octets, or
    /// the JSON `{"tx": "<hex>"}` form, which is decoded here).
    pub raw_tx: Bytes,
    /// The txid from the node's answer as `0x` + 64 lowercase hex digits, or `None` when the
    /// answer was not a txid (the root can then hash `raw_tx` itself).
    pub txid: Option<String>,
}

/// Execution-cost totals in the node's cost units, plus the bytes of transactions.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CostDimensions {
    pub read_count: f64,
    pub read_length: f64,
    pub write_count: f64,
    pub write_length: f64,
    pub runtime: f64,
    pub tx_total_size: f64,
}

/// What the fee rewrite needs from the ledger to decide whether there is a fee market.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FeeMarketCosts {
    /// Blocks so far in the current tenure.
    pub current_block_count: u64,
    /// Costs summed over the current tenure's blocks.
    pub current: CostDimensions,
    /// The block-count-weighted average over the last `window` finished tenures, or `None` when
    /// the ledger has no such tenures (which, as in the incumbent, means "no fee market").
    pub past_weighted_average: Option<CostDimensions>,
}

/// Callbacks the root crate supplies. Both are awaited with the proxy's request timeout, so a slow
/// implementation delays a reply but cannot hang it.
pub trait BroadcastHook: Send + Sync + 'static {
    /// Called once per `POST /v2/transactions` the primary node accepted, before the client gets
    /// the node's answer, so that a client reading our mempool right after its broadcast finds
    /// the transaction. Errors are the implementation's to log: the node has already accepted the
    /// transaction, so the client gets the node's answer regardless.
    fn on_broadcast(&self, tx: BroadcastedTx) -> BoxFuture<'_, ()>;

    /// Tenure costs for the fee rewrite, looking back `past_tenure_window` tenures. `None` means
    /// the ledger cannot tell (no store yet, a store error): the rewrite then keeps the node's
    /// estimates (scaled by the modifier, floored at the minimum fee) rather than guessing that
    /// there is no fee market.
    fn fee_market_costs(&self, past_tenure_window: u32) -> BoxFuture<'_, Option<FeeMarketCosts>> {
        let _ = past_tenure_window;
        Box::pin(async { None })
    }

    /// Checks a `POST /v2/contracts/call-read/...` request (its path and whole body) before it
    /// goes to the node: `Some(answer)` refuses it with that answer, so invalid input gets the
    /// root's own error instead of costing the node a Clarity evaluation. The default accepts all.
    fn check_call_read(&self, path: &str, body: &Bytes) -> Option<Response> {
        let _ = (path, body);
        None
    }
}

/// A hook that does nothing: for a proxy with no ledger behind it.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoopHook;

impl BroadcastHook for NoopHook {
    fn on_broadcast(&self, _tx: BroadcastedTx) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
}
