//! `/extended/v1/tokens/ft/{token}/holders`: the incumbent's `ft_balances` rows of a token,
//! largest balance first. It keeps a row for every account a transaction or event ever touched
//! (at 0 once emptied, negative on a chain history that starts mid-chain), so we list the 'stx'
//! accounts of `stx_holders` and the FT rows of `ft_balances` including their zero and negative
//! balances, ordered by value.

use super::db_row::DbRow;
use ledger_read::address::FtHolder;

use super::amount::ft_parse;
use super::sql::{select, Val};
use super::{Store, StoreError};

impl Store {
    /// The 'stx' holders: every account of `stx_holders` with its tip balance (0 without one);
    /// the supply sums the tip balances.
    pub(super) async fn stx_holder_page(
        &self,
        page: Vec<Val>,
    ) -> Result<(u64, i128, Vec<FtHolder>), StoreError> {
        let n: i64 = select("SELECT CAST(COUNT(*) AS BIGINT) AS n FROM stx_holders", vec![])
            .fetch_one(self)
            .await?
            .try_get("n")?;
        let supply: i64 = select(
            "SELECT CAST(COALESCE(SUM(liquid + locked), 0) AS BIGINT) AS supply FROM stx_accounts",
            vec![],
        )
        .fetch_one(self)
        .await?
        .try_get("supply")?;
        let rows = select(
            "SELECT h.account AS account, CAST(COALESCE(a.liquid + a.locked, 0) AS BIGINT) AS balance \
             FROM stx_holders h LEFT JOIN stx_accounts a ON a.account = h.account \
             ORDER BY balance DESC, h.account LIMIT $1 OFFSET $2",
            page,
        )
        .fetch_all(self)
        .await?;
        let holders = rows
            .iter()
            .map(|r| {
                Ok(FtHolder {
                    address: r.try_get("account")?,
                    balance: i128::from(r.try_get::<i64, _>("balance")?),
                })
            })
            .collect::<Result<_, sqlx::Error>>()?;
        Ok((u64::try_from(n).unwrap_or(0), i128::from(supply), holders))
    }

    /// The negative FT balances of `token` that fall in a page starting at row `offset` of `limit`
    /// rows, when the first `non_negative` rows are the non-negative ones. Balances are
    /// fixed-width text, so negatives sort last descending but among themselves backwards;
    /// ascending text is their descending value order.
    pub(super) async fn ft_negative_holders(
        &self,
        token: &str,
        non_negative: u64,
        limit: u32,
        offset: u64,
        got: usize,
    ) -> Result<Vec<FtHolder>, StoreError> {
        let want = u64::from(limit).saturating_sub(got as u64);
        if want == 0 || offset + u64::from(limit) <= non_negative {
            return Ok(vec![]);
        }
        let skip = offset.saturating_sub(non_negative);
        let rows = select(
            "SELECT account, balance FROM ft_balances WHERE asset_identifier = $1 AND balance LIKE '-%' \
             ORDER BY balance, account LIMIT $2 OFFSET $3",
            vec![
                token.into(),
                i64::try_from(want).unwrap_or(i64::MAX).into(),
                i64::try_from(skip).unwrap_or(i64::MAX).into(),
            ],
        )
        .fetch_all(self)
        .await?;
        Ok(ft_holders(&rows)?)
    }
}

/// `ft_balances` rows (`account`, `balance` as u128 text) as holders.
pub(super) fn ft_holders(rows: &[DbRow]) -> Result<Vec<FtHolder>, sqlx::Error> {
    rows.iter()
        .map(|r| {
            Ok(FtHolder {
                address: r.try_get("account")?,
                balance: ft_parse(&r.try_get::<String, _>("balance")?),
            })
        })
        .collect()
}
