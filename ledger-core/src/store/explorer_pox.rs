//! The reads behind `/extended/v1/{pox2,pox3,pox4}/*`.

use ledger_read::pox::{
    CycleSigner, CycleStacker, PoolDelegation, PoxCycleReader, PoxCycleRecord, PoxEventRecord, PoxReader,
};
use ledger_read::{Paging, ReadError};
use stacks_codec::address::StacksAddress;

use super::db_row::DbRow;
use super::sql::select;
use super::{Store, StoreError};

const COLUMNS: &str = "block_height, tx_id, tx_index, event_index, stacker, locked, balance, \
    burnchain_unlock_height, pox_addr, pox_addr_raw, name, data";

/// The incumbent's order: newest first (the tx index already orders microblock transactions).
const ORDER: &str = "block_height DESC, tx_index DESC, event_index DESC";

fn u(v: i64) -> u64 {
    u64::try_from(v).unwrap_or_default()
}

fn record(r: &DbRow) -> Result<PoxEventRecord, sqlx::Error> {
    Ok(PoxEventRecord {
        block_height: u(r.try_get("block_height")?),
        tx_id: r.try_get("tx_id")?,
        tx_index: u32::try_from(r.try_get::<i64, _>("tx_index")?).unwrap_or_default(),
        event_index: u32::try_from(r.try_get::<i64, _>("event_index")?).unwrap_or_default(),
        stacker: r.try_get("stacker")?,
        locked: r.try_get::<Option<String>, _>("locked")?.unwrap_or_else(|| "0".into()),
        balance: r.try_get::<Option<String>, _>("balance")?.unwrap_or_else(|| "0".into()),
        burnchain_unlock_height: r.try_get::<Option<i64>, _>("burnchain_unlock_height")?.map(u).unwrap_or(0),
        pox_addr: r.try_get("pox_addr")?,
        pox_addr_raw: r.try_get("pox_addr_raw")?,
        name: r.try_get("name")?,
        data: r.try_get("data")?,
    })
}

fn records(rows: &[DbRow]) -> Result<Vec<PoxEventRecord>, StoreError> {
    Ok(rows.iter().map(record).collect::<Result<_, _>>()?)
}

/// The rows of one contract. The tx and stacker lookups filter the contract here, not in SQL,
/// so the planner seeks on the tx or stacker index instead of ranging over the contract's
/// whole event history.
fn of_contract(rows: &[DbRow], contract: &str) -> Result<Vec<DbRow>, StoreError> {
    let mut out = Vec::new();
    for r in rows {
        if r.try_get::<String, _>("pox_contract")? == contract {
            out.push(r.clone());
        }
    }
    Ok(out)
}

impl PoxReader for Store {
    async fn pox_events(&self, contract: &str, paging: Paging) -> Result<Vec<PoxEventRecord>, ReadError> {
        let rows = select(
            &format!(
                "SELECT {COLUMNS} FROM pox_events WHERE pox_contract = $1 AND canonical = true \
                 ORDER BY {ORDER} LIMIT $2 OFFSET $3"
            ),
            vec![
                contract.into(),
                i64::from(paging.limit).into(),
                i64::try_from(paging.offset).unwrap_or(i64::MAX).into(),
            ],
        )
        .fetch_all(self)
        .await
        .map_err(StoreError::from)?;
        Ok(records(&rows)?)
    }

    async fn pox_events_of_tx(
        &self,
        contract: &str,
        tx_id: &str,
    ) -> Result<Option<Vec<PoxEventRecord>>, ReadError> {
        let known = select("SELECT 1 AS one FROM txs WHERE tx_id = $1 LIMIT 1", vec![tx_id.into()])
            .fetch_optional(self)
            .await
            .map_err(StoreError::from)?;
        if known.is_none() {
            return Ok(None);
        }
        let rows = select(
            &format!("SELECT {COLUMNS}, pox_contract FROM pox_events WHERE tx_id = $1 AND canonical = true ORDER BY {ORDER}"),
            vec![tx_id.into()],
        )
        .fetch_all(self)
        .await
        .map_err(StoreError::from)?;
        Ok(Some(records(&of_contract(&rows, contract)?)?))
    }

    async fn pox_events_of_stacker(
        &self,
        contract: &str,
        stacker: &str,
    ) -> Result<Vec<PoxEventRecord>, ReadError> {
        let rows = select(
            &format!(
                "SELECT {COLUMNS}, pox_contract FROM pox_events WHERE stacker = $1 AND canonical = true ORDER BY {ORDER}"
            ),
            vec![stacker.into()],
        )
        .fetch_all(self)
        .await
        .map_err(StoreError::from)?;
        Ok(records(&of_contract(&rows, contract)?)?)
    }

    async fn pool_delegations(
        &self,
        contract: &str,
        pool: &str,
        height: Option<u64>,
        after_block: u64,
        paging: Paging,
    ) -> Result<Option<(u64, Vec<PoolDelegation>)>, ReadError> {
        let Some((height, burn_height)) = self.canonical_heights(height).await? else { return Ok(None) };
        let all = self.delegations_to(contract, pool, height, after_block, burn_height).await?;
        let total = all.len() as u64;
        let page = all
            .into_iter()
            .skip(usize::try_from(paging.offset).unwrap_or(usize::MAX))
            .take(paging.limit as usize)
            .collect();
        Ok(Some((total, page)))
    }
}

/// `(some u150)` / `u150` → 150; `none` (an open-ended delegation) → `None`.
fn optional_uint(repr: &str) -> Option<u64> {
    let r = repr.trim();
    let r = r.strip_prefix("(some ").and_then(|s| s.strip_suffix(')')).unwrap_or(r);
    r.strip_prefix('u')?.parse().ok()
}

impl Store {
    /// `(block_height, burn_block_height)` of the canonical block at `height`, or of the tip.
    async fn canonical_heights(&self, height: Option<u64>) -> Result<Option<(i64, i64)>, StoreError> {
        let (sql, vals) = match height {
            Some(h) => (
                "SELECT block_height, burn_block_height FROM blocks WHERE canonical = true AND block_height = $1 LIMIT 1",
                vec![i64::try_from(h).unwrap_or(i64::MAX).into()],
            ),
            None => (
                "SELECT block_height, burn_block_height FROM blocks WHERE canonical = true \
                 ORDER BY block_height DESC LIMIT 1",
                vec![],
            ),
        };
        let row = select(sql, vals).fetch_optional(self).await?;
        Ok(match row {
            Some(r) => Some((r.try_get("block_height")?, r.try_get("burn_block_height")?)),
            None => None,
        })
    }

    /// Each stacker whose latest canonical `delegate-stx` or `revoke-delegate-stx` naming `pool`
    /// in `(after_block, height]` (delegations whose unlock height is at or below `burn_height`
    /// left out first) is a delegation, newest first: the incumbent's `DISTINCT ON (stacker)`
    /// over the events in force, ordered by chain position.
    async fn delegations_to(
        &self,
        contract: &str,
        pool: &str,
        height: i64,
        after_block: u64,
        burn_height: i64,
    ) -> Result<Vec<PoolDelegation>, StoreError> {
        let rows = select(
            &format!(
                "SELECT stacker, pox_addr, amount_ustx, data, block_height, tx_id, pox_contract, name \
                 FROM pox_events WHERE delegate_to = $1 AND canonical = true AND block_height <= $2 \
                 AND block_height > $3 ORDER BY {ORDER}"
            ),
            vec![pool.into(), height.into(), i64::try_from(after_block).unwrap_or(i64::MAX).into()],
        )
        .fetch_all(self)
        .await?;
        let mut seen = std::collections::HashSet::new();
        let mut out = Vec::new();
        for r in of_contract(&rows, contract)? {
            let name: String = r.try_get("name")?;
            let revoke = match name.as_str() {
                "delegate-stx" => false,
                "revoke-delegate-stx" => true,
                _ => continue,
            };
            let data: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(&r.try_get::<String, _>("data")?).unwrap_or_default();
            let unlock = data.get("unlock-burn-height").and_then(|v| v.as_str()).and_then(optional_uint);
            if unlock.is_some_and(|u| i64::try_from(u).unwrap_or(i64::MAX) <= burn_height) {
                continue;
            }
            let stacker: String = r.try_get("stacker")?;
            // A later revocation of the delegation to this pool hides it (the incumbent keeps a
            // stacker only when its latest delegate-or-revoke event is a delegation).
            if !seen.insert(stacker.clone()) || revoke {
                continue;
            }
            out.push(PoolDelegation {
                stacker,
                pox_addr: r.try_get::<Option<String>, _>("pox_addr")?.filter(|a| !a.is_empty()),
                amount_ustx: r.try_get::<Option<String>, _>("amount_ustx")?.unwrap_or_else(|| "0".into()),
                burn_block_unlock_height: unlock.filter(|u| *u != 0),
                block_height: u(r.try_get("block_height")?),
                tx_id: r.try_get("tx_id")?,
            });
        }
        Ok(out)
    }
}

/// The network's single-sig (P2PKH) address of a compressed public key in `0x` hex.
fn signer_address(key_hex: &str, mainnet: bool) -> String {
    let Ok(key) = stacks_codec::decode_hex(key_hex) else { return String::new() };
    let version = if mainnet { 22 } else { 26 };
    StacksAddress::new(version, stacks_codec::hash::hash160(&key)).to_string()
}

impl Store {
    /// The cycle announced by the canonical block at `height` with its signers parsed from the
    /// stored reward set.
    async fn cycle_at(&self, cycle: i64, height: i64) -> Result<Option<PoxCycleRecord>, StoreError> {
        let row = select(
            "SELECT index_block_hash, reward_set FROM blocks WHERE cycle_number = $1 AND canonical = true \
             AND block_height = $2 AND reward_set IS NOT NULL LIMIT 1",
            vec![cycle.into(), height.into()],
        )
        .fetch_optional(self)
        .await?;
        let Some(r) = row else { return Ok(None) };
        let reward_set: String = r.try_get("reward_set")?;
        let parsed: serde_json::Value = serde_json::from_str(&reward_set).unwrap_or_default();
        let mainnet = self.network.is_mainnet();
        let signers = parsed["signers"]
            .as_array()
            .map(|a| a.as_slice())
            .unwrap_or_default()
            .iter()
            .map(|s| {
                let signing_key = s["signing_key"].as_str().unwrap_or_default().to_string();
                CycleSigner {
                    signer_address: signer_address(&signing_key, mainnet),
                    signing_key,
                    weight: s["weight"].as_u64().unwrap_or_default(),
                    stacked_amount: s["stacked_amt"]
                        .as_str()
                        .and_then(|v| v.parse().ok())
                        .unwrap_or_default(),
                }
            })
            .collect();
        Ok(Some(PoxCycleRecord {
            block_height: u(height),
            index_block_hash: r.try_get("index_block_hash")?,
            cycle_number: u(cycle),
            signers,
        }))
    }
}

/// The canonical blocks that announced a reward set: the first one per cycle.
/// (`cycle_number >= 0` with the other conditions inside the aggregate makes it a range of the
/// `blocks_cycle` index rather than a walk of every canonical block.)
const CYCLES: &str = "SELECT cycle_number, \
    MIN(CASE WHEN canonical = true AND reward_set IS NOT NULL THEN block_height END) AS block_height \
    FROM blocks WHERE cycle_number >= 0 GROUP BY cycle_number \
    HAVING MIN(CASE WHEN canonical = true AND reward_set IS NOT NULL THEN block_height END) IS NOT NULL";

impl PoxCycleReader for Store {
    async fn pox_cycles(&self, paging: Paging) -> Result<(u64, Vec<PoxCycleRecord>), ReadError> {
        let n = select(&format!("SELECT COUNT(*) AS n FROM ({CYCLES}) c"), vec![])
            .fetch_one(self)
            .await
            .map_err(StoreError::from)?;
        let total = u(n.try_get("n").map_err(StoreError::from)?);
        let rows = select(
            &format!("{CYCLES} ORDER BY cycle_number DESC LIMIT $1 OFFSET $2"),
            vec![i64::from(paging.limit).into(), i64::try_from(paging.offset).unwrap_or(i64::MAX).into()],
        )
        .fetch_all(self)
        .await
        .map_err(StoreError::from)?;
        let mut out = Vec::with_capacity(rows.len());
        for r in &rows {
            let cycle: i64 = r.try_get("cycle_number").map_err(StoreError::from)?;
            let height: i64 = r.try_get("block_height").map_err(StoreError::from)?;
            out.extend(self.cycle_at(cycle, height).await?);
        }
        Ok((total, out))
    }

    async fn pox_cycle(&self, cycle: u64) -> Result<Option<PoxCycleRecord>, ReadError> {
        let cycle = i64::try_from(cycle).unwrap_or(i64::MAX);
        let row = select(
            "SELECT MIN(block_height) AS block_height FROM blocks WHERE cycle_number = $1 AND canonical = true \
             AND reward_set IS NOT NULL",
            vec![cycle.into()],
        )
        .fetch_one(self)
        .await
        .map_err(StoreError::from)?;
        let Some(height) = row.try_get::<Option<i64>, _>("block_height").map_err(StoreError::from)? else {
            return Ok(None);
        };
        Ok(self.cycle_at(cycle, height).await?)
    }

    async fn cycle_stackers(&self, cycle: u64) -> Result<Vec<CycleStacker>, ReadError> {
        let cycle = i64::try_from(cycle).unwrap_or(i64::MAX);
        // Each stacker's latest pox-4 event that covers the cycle, solo and pooled apart (the
        // incumbent's solo names include a misspelt `stacks-increase`, so stack-increase
        // events never count as the latest solo event).
        let rows = select(
            "SELECT stacker, name, signer_key, locked, amount_ustx, pox_addr, data FROM pox_events \
             WHERE pox_contract = 'pox-4' AND canonical = true AND start_cycle_id <= $1 AND end_cycle_id > $1 \
             AND name IN ('stack-stx', 'stack-extend', 'delegate-stack-stx', 'delegate-stack-increase', \
             'delegate-stack-extend') ORDER BY stacker, block_height DESC, tx_index DESC, event_index DESC",
            vec![cycle.into()],
        )
        .fetch_all(self)
        .await
        .map_err(StoreError::from)?;
        // Pools sign with the key of their aggregation commit for exactly this cycle.
        let commits = select(
            "SELECT stacker, signer_key FROM pox_events WHERE pox_contract = 'pox-4' AND canonical = true \
             AND name IN ('stack-aggregation-commit', 'stack-aggregation-commit-indexed') \
             AND start_cycle_id = $1 AND end_cycle_id = $2 ORDER BY stacker, block_height DESC, tx_index DESC, event_index DESC",
            vec![cycle.into(), cycle.saturating_add(1).into()],
        )
        .fetch_all(self)
        .await
        .map_err(StoreError::from)?;
        let mut pool_keys: std::collections::HashMap<String, Option<String>> = Default::default();
        for r in &commits {
            let stacker: String = r.try_get("stacker").map_err(StoreError::from)?;
            let key: Option<String> = r.try_get("signer_key").map_err(StoreError::from)?;
            pool_keys.entry(stacker).or_insert(key);
        }
        let mut seen: std::collections::HashSet<(String, bool)> = Default::default();
        let mut out = Vec::new();
        for r in &rows {
            let stacker: String = r.try_get("stacker").map_err(StoreError::from)?;
            let name: String = r.try_get("name").map_err(StoreError::from)?;
            let pooled = name.starts_with("delegate-");
            if !seen.insert((stacker.clone(), pooled)) {
                continue;
            }
            let signer_key = if pooled {
                let data: String = r.try_get("data").map_err(StoreError::from)?;
                let data: serde_json::Value = serde_json::from_str(&data).unwrap_or_default();
                let delegator = data["delegator"].as_str().unwrap_or_default().trim_start_matches('\'');
                pool_keys.get(delegator).cloned().flatten()
            } else {
                r.try_get("signer_key").map_err(StoreError::from)?
            };
            // The print carries the state before the operation: the amount locked after it.
            let locked: Option<String> = r.try_get("locked").map_err(StoreError::from)?;
            let mut locked: u128 = locked.and_then(|l| l.parse().ok()).unwrap_or_default();
            let amount: Option<String> = r.try_get("amount_ustx").map_err(StoreError::from)?;
            let amount: Option<u128> = amount.and_then(|a| a.parse().ok());
            match name.as_str() {
                "stack-stx" | "delegate-stack-stx" => locked = amount.unwrap_or(locked),
                "delegate-stack-increase" => {
                    let data: String = r.try_get("data").map_err(StoreError::from)?;
                    let data: serde_json::Value = serde_json::from_str(&data).unwrap_or_default();
                    let by = data["increase-by"]
                        .as_str()
                        .and_then(|v| v.trim_start_matches('u').parse::<u128>().ok());
                    locked = locked.saturating_add(by.unwrap_or_default());
                }
                _ => {}
            }
            out.push(CycleStacker {
                stacker,
                signer_key,
                locked,
                pox_addr: r.try_get("pox_addr").map_err(StoreError::from)?,
                pooled,
            });
        }
        Ok(out)
    }
}
