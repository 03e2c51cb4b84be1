//! An account's STX state, the one read behind every surface's balance of an account
//! ([`AccountReader`]): the balance index the write path keeps from the account's operations,
//! and its nonces.

use ledger_read::{AccountReader, AccountState, ReadFuture};

use super::{Store, StoreError};

impl Store {
    /// `account`'s balances, lock and next nonce after the canonical block at `height` (the
    /// tip when `None`).
    pub async fn account_state(
        &self,
        account: &str,
        height: Option<i64>,
    ) -> Result<AccountState, StoreError> {
        let balance = self.balance_row(account, height).await?.unwrap_or_default();
        let next_nonce = match height {
            None => self.next_nonce(account).await?,
            Some(h) => {
                let (origin, sponsor) = self.nonces_at(account, h).await?;
                origin.max(sponsor).map_or(0, |n| n + 1)
            }
        };
        Ok(AccountState {
            liquid: balance.liquid,
            locked: balance.locked,
            // The row keeps the last lock's end after it unlocked.
            unlock_height: if balance.locked == 0 { 0 } else { balance.unlock_burn_height },
            next_nonce,
        })
    }
}

impl AccountReader for Store {
    fn account<'a>(&'a self, account: &'a str, height: Option<i64>) -> ReadFuture<'a, AccountState> {
        Box::pin(async move { Ok(self.account_state(account, height).await?) })
    }
}
