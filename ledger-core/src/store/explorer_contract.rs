//! The reads behind the contract routes: deployments, `print` logs (newest first, keyset
//! paging on the chain position) and deployment status.

use ledger_read::contract::{ContractLog, ContractReader, DeployStatus, LogKey, SmartContract};
use ledger_read::ReadError;
use serde_json::Value;

use super::db_row::DbRow;
use super::explorer_tx::{shown_index_sql, CONTRACT_ORDER};
use super::sql::{get_bool, select, Val};
use super::{Store, StoreError};

/// `repr` of a Clarity value given as hex; empty when it does not decode.
pub(super) fn clarity_repr(hex: &str) -> String {
    stacks_codec::decode_hex(hex)
        .ok()
        .and_then(|b| stacks_codec::clarity::Value::deserialize(&b).ok())
        .map(|v| v.repr())
        .unwrap_or_default()
}

/// PostgreSQL's `jsonb @>`: every part of `needle` is somewhere in `hay`.
fn json_contains(hay: &Value, needle: &Value) -> bool {
    match (hay, needle) {
        (Value::Object(h), Value::Object(n)) => {
            n.iter().all(|(k, nv)| h.get(k).is_some_and(|hv| json_contains(hv, nv)))
        }
        (Value::Array(h), Value::Array(n)) => n.iter().all(|nv| h.iter().any(|hv| json_contains(hv, nv))),
        (h, n) => h == n,
    }
}

const SEQ: &str = "COALESCE(t.microblock_sequence, 2147483647)";
/// The ABI is served in the incumbent's jsonb key order (`abi_jsonb`, derived at ingest).
const CONTRACT_COLS: &str = "contract_id, tx_id, block_height, clarity_version, source_code, \
    abi_jsonb AS abi, (CASE WHEN canonical THEN 1 ELSE 0 END) AS canonical";

fn contract_row(r: &DbRow) -> Result<SmartContract, sqlx::Error> {
    Ok(SmartContract {
        tx_id: r.try_get("tx_id")?,
        canonical: get_bool(r, "canonical")?,
        contract_id: r.try_get("contract_id")?,
        block_height: u64::try_from(r.try_get::<i64, _>("block_height")?).unwrap_or(0),
        clarity_version: r.try_get("clarity_version")?,
        source_code: r.try_get("source_code")?,
        abi: r.try_get("abi")?,
    })
}

fn log_row(r: &DbRow) -> Result<ContractLog, sqlx::Error> {
    let u = |c: &str| r.try_get::<i64, _>(c).map(|v| u64::try_from(v).unwrap_or(0));
    let seq = u("seq")?;
    let hex: String = r.try_get::<Option<String>, _>("value_hex")?.unwrap_or_default();
    Ok(ContractLog {
        tx_id: r.try_get("tx_id")?,
        event_index: u("event_index")?,
        block_height: u("block_height")?,
        microblock_sequence: (seq != i32::MAX as u64).then_some(seq),
        tx_index: u("tx_index")?,
        contract_id: r.try_get::<Option<String>, _>("contract_identifier")?.unwrap_or_default(),
        topic: r.try_get::<Option<String>, _>("topic")?.unwrap_or_default(),
        repr: clarity_repr(&hex),
        hex,
    })
}

fn key_vals(k: LogKey) -> Vec<Val> {
    [k.0, k.1, k.2, k.3].iter().map(|v| Val::I(i64::try_from(*v).unwrap_or(i64::MAX))).collect()
}

impl Store {
    async fn logs_page(
        &self,
        contract_id: &str,
        below: Option<LogKey>,
        limit: u32,
        offset: u64,
    ) -> Result<(u64, Vec<ContractLog>), StoreError> {
        let base =
            "FROM events e JOIN txs t ON t.tx_id = e.tx_id AND t.index_block_hash = e.index_block_hash \
            AND t.microblock_hash = e.microblock_hash \
            WHERE e.contract_identifier = $1 AND e.canonical = true AND e.kind = 'contract_log'";
        // The incumbent's `total` is its per-contract log counter, which the boot block's
        // (block 0's) logs never enter although it lists them (epoch-3-transition, pox-4 regtest:
        // the genesis contract's boot log with `total` 0); we keep those in block 1 (`BootShift`).
        let shift = self.boot_shift(None).await?;
        let boot = match shift {
            Some(s) => format!(" AND NOT (e.block_height = 1 AND e.tx_index >= {})", s.own),
            None => String::new(),
        };
        // Block 1's rows by the index the incumbent shows (and puts in its cursors).
        let idx = shown_index_sql(shift);
        let total: i64 =
            select(&format!("SELECT CAST(COUNT(*) AS BIGINT) AS n {base}{boot}"), vec![contract_id.into()])
                .fetch_one(self)
                .await?
                .try_get("n")?;
        let mut vals: Vec<Val> = vec![contract_id.into()];
        let mut filter = String::new();
        if let Some(k) = below {
            filter = format!(" AND (e.block_height, {SEQ}, {idx}, e.event_index) <= ($2, $3, $4, $5)");
            vals.extend(key_vals(k));
        }
        let n = vals.len();
        let sql = format!(
            "SELECT e.tx_id, e.event_index, e.block_height, {idx} AS tx_index, e.contract_identifier, e.topic, \
             e.value_hex, {SEQ} AS seq {base}{filter} \
             ORDER BY e.block_height DESC, seq DESC, {idx} DESC, e.tx_index DESC, e.event_index DESC \
             LIMIT ${} OFFSET ${}",
            n + 1,
            n + 2
        );
        vals.push(i64::from(limit).into());
        vals.push(i64::try_from(offset).unwrap_or(i64::MAX).into());
        let rows = select(&sql, vals).fetch_all(self).await?;
        let logs = rows.iter().map(log_row).collect::<Result<_, _>>()?;
        Ok((u64::try_from(total).unwrap_or(0), logs))
    }

    async fn logs_above(
        &self,
        contract_id: &str,
        key: LogKey,
        limit: u32,
    ) -> Result<Vec<ContractLog>, StoreError> {
        let mut vals: Vec<Val> = vec![contract_id.into()];
        vals.extend(key_vals(key));
        vals.push(i64::from(limit).into());
        let idx = shown_index_sql(self.boot_shift(None).await?);
        let sql = format!(
            "SELECT e.tx_id, e.event_index, e.block_height, {idx} AS tx_index, e.contract_identifier, e.topic, \
             e.value_hex, {SEQ} AS seq FROM events e JOIN txs t ON t.tx_id = e.tx_id \
             AND t.index_block_hash = e.index_block_hash AND t.microblock_hash = e.microblock_hash \
             WHERE e.contract_identifier = $1 AND e.canonical = true AND e.kind = 'contract_log' \
             AND (e.block_height, {SEQ}, {idx}, e.event_index) > ($2, $3, $4, $5) \
             ORDER BY e.block_height, seq, {idx}, e.tx_index, e.event_index LIMIT $6"
        );
        let rows = select(&sql, vals).fetch_all(self).await?;
        Ok(rows.iter().map(log_row).collect::<Result<_, _>>()?)
    }
}

impl ContractReader for Store {
    async fn contract(&self, contract_id: &str) -> Result<Option<SmartContract>, ReadError> {
        let sql = format!(
            "SELECT {CONTRACT_COLS} FROM smart_contracts WHERE contract_id = $1 \
             ORDER BY {CONTRACT_ORDER} LIMIT 1"
        );
        let r =
            select(&sql, vec![contract_id.into()]).fetch_optional(self).await.map_err(StoreError::from)?;
        Ok(r.as_ref().map(contract_row).transpose().map_err(StoreError::from)?)
    }

    async fn contract_logs(
        &self,
        contract_id: &str,
        below: Option<LogKey>,
        limit: u32,
        offset: u64,
    ) -> Result<(u64, Vec<ContractLog>), ReadError> {
        Ok(self.logs_page(contract_id, below, limit, offset).await?)
    }

    async fn contract_logs_above(
        &self,
        contract_id: &str,
        key: LogKey,
        limit: u32,
    ) -> Result<Vec<ContractLog>, ReadError> {
        Ok(self.logs_above(contract_id, key, limit).await?)
    }

    async fn deploy_status(&self, contract_id: &str) -> Result<Option<DeployStatus>, ReadError> {
        let mined = select(
            "SELECT tx_id, status, block_height FROM txs WHERE contract_id = $1 AND tx_type = 'smart_contract' \
             AND index_block_hash <> '' ORDER BY canonical DESC, block_height DESC LIMIT 1",
            vec![contract_id.into()],
        )
        .fetch_optional(self)
        .await
        .map_err(StoreError::from)?;
        if let Some(r) = mined {
            let status = DeployStatus {
                status: r.try_get("status").map_err(StoreError::from)?,
                tx_id: r.try_get("tx_id").map_err(StoreError::from)?,
                block_height: u64::try_from(r.try_get::<i64, _>("block_height").map_err(StoreError::from)?)
                    .ok(),
            };
            return Ok(Some(status));
        }
        let pending = select(
            "SELECT tx_id FROM mempool_txs WHERE contract_id = $1 AND tx_type = 'smart_contract' AND pruned = false LIMIT 1",
            vec![contract_id.into()],
        )
        .fetch_optional(self)
        .await
        .map_err(StoreError::from)?;
        Ok(pending
            .map(|r| r.try_get("tx_id"))
            .transpose()
            .map_err(StoreError::from)?
            .map(|tx_id| DeployStatus { status: "pending".into(), tx_id, block_height: None }))
    }

    async fn contracts_by_trait(
        &self,
        functions: &Value,
        limit: u32,
        offset: u64,
    ) -> Result<Vec<SmartContract>, ReadError> {
        // As the incumbent's JSON containment query, this reads every canonical ABI.
        let sql = format!(
            "SELECT {CONTRACT_COLS} FROM smart_contracts WHERE canonical = true AND abi IS NOT NULL \
             ORDER BY block_height DESC, contract_id"
        );
        let rows = select(&sql, vec![]).fetch_all(self).await.map_err(StoreError::from)?;
        let mut out = Vec::new();
        for r in &rows {
            let c = contract_row(r).map_err(StoreError::from)?;
            let abi: Value =
                c.abi.as_deref().and_then(|a| serde_json::from_str(a).ok()).unwrap_or(Value::Null);
            if json_contains(abi.get("functions").unwrap_or(&Value::Array(vec![])), functions) {
                out.push(c);
            }
        }
        Ok(out.into_iter().skip(usize::try_from(offset).unwrap_or(usize::MAX)).take(limit as usize).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn containment_is_postgres_jsonb_containment() {
        let hay = json!([{"name": "get-name", "access": "read_only", "args": []}, {"name": "x"}]);
        assert!(json_contains(&hay, &json!([{"name": "get-name", "args": []}])));
        assert!(json_contains(&hay, &json!([])));
        assert!(!json_contains(&hay, &json!([{"name": "get-symbol"}])));
        assert!(!json_contains(&json!([]), &json!([{"name": "x"}])));
    }
}
