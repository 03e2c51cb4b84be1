//! The reads behind the NFT routes: current custody by owner (`nft_custody`) and a token's or
//! an asset's canonical events (`events`, indexed by asset and value).

use ledger_read::tokens::{NftEvent, NftHolding, TokenReader};
use ledger_read::ReadError;

use super::db_row::Cols;
use super::db_row::DbRow;
use super::explorer_contract::clarity_repr;
use super::sql::{select, Val};
use super::{Store, StoreError};

const ORDER: &str = "ORDER BY block_height DESC, tx_index DESC, event_index DESC";

fn u(r: &DbRow, col: &str) -> Result<u64, sqlx::Error> {
    Ok(u64::try_from(r.try_get::<i64, _>(col)?).unwrap_or(0))
}

fn event_row(r: &DbRow) -> Result<NftEvent, sqlx::Error> {
    let kind: String = r.try_get("kind")?;
    let hex: String = r.try_get::<Option<String>, _>("value_hex")?.unwrap_or_default();
    Ok(NftEvent {
        tx_id: r.try_get("tx_id")?,
        event_index: u(r, "event_index")?,
        asset_event_type: kind.trim_start_matches("nft_").to_string(),
        sender: r.try_get("sender")?,
        recipient: r.try_get("recipient")?,
        repr: clarity_repr(&hex),
        hex,
    })
}

fn page_vals(mut vals: Vec<Val>, limit: u32, offset: u64) -> Vec<Val> {
    vals.push(i64::from(limit).into());
    vals.push(i64::try_from(offset).unwrap_or(i64::MAX).into());
    vals
}

impl Store {
    async fn count_rows(&self, sql: &str, vals: Vec<Val>) -> Result<u64, StoreError> {
        let n: i64 = select(sql, vals).fetch_one(self).await?.try_get("n")?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    async fn holdings(
        &self,
        principal: &str,
        assets: &[String],
        limit: u32,
        offset: u64,
    ) -> Result<(u64, Vec<NftHolding>), StoreError> {
        let mut vals: Vec<Val> = vec![principal.into()];
        let mut filter = "owner = $1".to_string();
        if !assets.is_empty() {
            let list: Vec<String> = (0..assets.len()).map(|i| format!("${}", i + 2)).collect();
            filter.push_str(&format!(" AND asset_identifier IN ({})", list.join(", ")));
            vals.extend(assets.iter().map(Val::from));
        }
        // One statement: the page, the count on each row (the uncorrelated subquery is evaluated
        // once); an empty page reads it alone.
        let n = vals.len();
        let inner = format!(
            "SELECT asset_identifier, value_hex, block_height, tx_id FROM nft_custody WHERE {filter} {ORDER} \
             LIMIT ${} OFFSET ${}",
            n + 1,
            n + 2
        );
        let count = format!("(SELECT CAST(COUNT(*) AS BIGINT) FROM nft_custody WHERE {filter})");
        let sql = format!("SELECT {count} AS n, {}", &inner["SELECT ".len()..]);
        let rows = select(&sql, page_vals(vals.clone(), limit, offset)).fetch_all(self).await?;
        let total = match rows.first() {
            Some(r) => u(r, "n")?,
            None => u(&select(&format!("SELECT {count} AS n"), vals).fetch_one(self).await?, "n")?,
        };
        let out = rows
            .iter()
            .map(|r| {
                let hex = r.text("value_hex")?;
                Ok(NftHolding {
                    asset_identifier: r.text("asset_identifier")?,
                    repr: clarity_repr(&hex),
                    hex,
                    block_height: u64::try_from(r.int("block_height")?).unwrap_or(0),
                    tx_id: r.text("tx_id")?,
                })
            })
            .collect::<Result<_, sqlx::Error>>()?;
        Ok((total, out))
    }

    async fn nft_events(
        &self,
        filter: &str,
        vals: Vec<Val>,
        limit: u32,
        offset: u64,
    ) -> Result<(u64, Vec<NftEvent>), StoreError> {
        let base = format!("FROM events WHERE {filter} AND canonical = true");
        let total =
            self.count_rows(&format!("SELECT CAST(COUNT(*) AS BIGINT) AS n {base}"), vals.clone()).await?;
        let n = vals.len();
        let sql = format!(
            "SELECT tx_id, event_index, kind, sender, recipient, value_hex {base} {ORDER} LIMIT ${} OFFSET ${}",
            n + 1,
            n + 2
        );
        let rows = select(&sql, page_vals(vals, limit, offset)).fetch_all(self).await?;
        Ok((total, rows.iter().map(event_row).collect::<Result<_, _>>()?))
    }
}

impl TokenReader for Store {
    async fn nft_holdings(
        &self,
        principal: &str,
        assets: &[String],
        limit: u32,
        offset: u64,
    ) -> Result<(u64, Vec<NftHolding>), ReadError> {
        Ok(self.holdings(principal, assets, limit, offset).await?)
    }

    async fn nft_history(
        &self,
        asset_identifier: &str,
        value_hex: &str,
        limit: u32,
        offset: u64,
    ) -> Result<(u64, Vec<NftEvent>), ReadError> {
        let filter =
            "asset_identifier = $1 AND value_hex = $2 AND kind IN ('nft_transfer', 'nft_mint', 'nft_burn')";
        Ok(self.nft_events(filter, vec![asset_identifier.into(), value_hex.into()], limit, offset).await?)
    }

    async fn nft_mints(
        &self,
        asset_identifier: &str,
        limit: u32,
        offset: u64,
    ) -> Result<(u64, Vec<NftEvent>), ReadError> {
        let filter = "asset_identifier = $1 AND kind = 'nft_mint'";
        Ok(self.nft_events(filter, vec![asset_identifier.into()], limit, offset).await?)
    }
}
