//! `GET /extended/v1/tx/mempool/stats`: per transaction type, the count and the p25/p50/p75/p95
//! of fee, age (blocks since receipt, the next block included) and byte size of the pending mempool, as the incumbent's
//! `mempool_stats` view computes them (PostgreSQL `percentile_cont`: linear interpolation).

use std::sync::Arc;

use serde_json::{json, Map, Value as Json};
use warp::reply::Response;

use super::reader::{MempoolStatRow, TxStatsReader};
use crate::error::ApiError;
use crate::reply::json_with_etag;

/// The types the incumbent reports, in its order.
const TYPES: [&str; 4] = ["token_transfer", "smart_contract", "contract_call", "poison_microblock"];

/// `percentile_cont(p)` of `values` (sorted here); `None` when there are none.
fn percentile_cont(values: &mut [f64], p: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(|a, b| a.total_cmp(b));
    let pos = p * (values.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    Some(values[lo] + (values[hi] - values[lo]) * (pos - lo as f64))
}

/// A number as JavaScript prints it: integral values without a fraction.
pub(crate) fn js_number(v: f64) -> Json {
    if v.fract() == 0.0 && v.abs() < 9.007_199_254_740_992e15 {
        json!(v as i64)
    } else {
        json!(v)
    }
}

fn percentiles(mut values: Vec<f64>) -> Json {
    let mut m = Map::new();
    for (name, p) in [("p25", 0.25), ("p50", 0.5), ("p75", 0.75), ("p95", 0.95)] {
        m.insert(name.into(), percentile_cont(&mut values, p).map(js_number).unwrap_or(Json::Null));
    }
    Json::Object(m)
}

/// The stats body for the pending rows, with the chain tip at `tip_height`.
pub(super) fn stats_json(rows: &[MempoolStatRow], tip_height: u64) -> Json {
    fn of<'a>(rows: &'a [MempoolStatRow], t: &'a str) -> impl Iterator<Item = &'a MempoolStatRow> {
        rows.iter().filter(move |r| r.tx_type == t)
    }
    let section = |f: &dyn Fn(&MempoolStatRow) -> f64| {
        let mut m = Map::new();
        for t in TYPES {
            m.insert(t.into(), percentiles(of(rows, t).map(f).collect()));
        }
        Json::Object(m)
    };
    let mut counts = Map::new();
    for t in TYPES {
        counts.insert(t.into(), of(rows, t).count().into());
    }
    json!({
        "tx_type_counts": counts,
        "tx_simple_fee_averages": section(&|r| r.fee as f64),
        // The incumbent counts the block being built: tip + 1 − receipt height.
        "tx_ages": section(&|r| tip_height as f64 + 1.0 - r.receipt_block_height as f64),
        "tx_byte_sizes": section(&|r| r.byte_size as f64),
    })
}

pub(super) async fn mempool_stats<R: TxStatsReader + crate::TipReader>(
    reader: Arc<R>,
) -> Result<Response, ApiError> {
    let rows = reader.mempool_stat_rows().await?;
    let tip = reader.tip().await?.map(|t| t.height()).unwrap_or(0);
    Ok(json_with_etag(&stats_json(&rows, tip), None))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(tx_type: &str, fee: u64, byte_size: u64, receipt_block_height: u64) -> MempoolStatRow {
        MempoolStatRow { tx_type: tx_type.into(), fee, byte_size, receipt_block_height }
    }

    #[test]
    fn percentiles_interpolate_like_percentile_cont() {
        // The pox-4 regtest oracle: three pending calls paying 1000, 1001 and 1002.
        let rows = [
            row("contract_call", 1002, 405, 8),
            row("contract_call", 1000, 405, 8),
            row("contract_call", 1001, 405, 8),
        ];
        let j = stats_json(&rows, 10);
        assert_eq!(j["tx_type_counts"]["contract_call"], 3);
        assert_eq!(
            j["tx_simple_fee_averages"]["contract_call"],
            json!({"p25": 1000.5, "p50": 1001, "p75": 1001.5, "p95": 1001.9})
        );
        // Tip 10, received at 8: the incumbent counts the block being built (10 + 1 − 8).
        assert_eq!(j["tx_ages"]["contract_call"]["p50"], 3);
        assert_eq!(j["tx_byte_sizes"]["contract_call"]["p95"], 405);
        assert_eq!(
            j["tx_byte_sizes"]["token_transfer"],
            json!({"p25": null, "p50": null, "p75": null, "p95": null})
        );
        assert_eq!(j["tx_type_counts"]["poison_microblock"], 0);
    }
}
