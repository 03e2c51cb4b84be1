//! `/account/balance` (from the ledger's balance rows, at any canonical block) and
//! `/account/coins` (refused: Stacks is account-based).

use bytes::Bytes;
use rosetta_spec::{
    AccountBalanceRequest, AccountBalanceResponse, AccountCoinsRequest, AccountCoinsResponse, Metadata,
};
use serde_json::json;

use super::block::{identifier, resolve};
use super::error::{ErrorKind, RosettaError};
use super::ops::{stx, stx_amount, LOCKED_SUB_ACCOUNT};
use super::request::parse;
use super::{Rosetta, RosettaResult};

/// Which balance of an account is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Balance {
    Liquid,
    Locked,
}

fn sub_account(name: Option<&str>) -> RosettaResult<Balance> {
    match name {
        None | Some("SpendableBalance") => Ok(Balance::Liquid),
        // `StackedBalance` is the incumbent's name for the same balance.
        Some(LOCKED_SUB_ACCOUNT) | Some("StackedBalance") => Ok(Balance::Locked),
        Some(other) => Err(RosettaError::with_details(
            ErrorKind::InvalidSubAccount,
            json!({ "sub_account": other, "expected": [LOCKED_SUB_ACCOUNT] }),
        )),
    }
}

/// A standard address or a contract principal. Addresses of the other network's version are
/// accepted: the ledger answers for whatever principal its operations name (genesis
/// allocations, for one, may use either version).
fn check_address(address: &str) -> RosettaResult<()> {
    address.parse::<stacks_codec::address::Principal>().map(|_| ()).map_err(|e| {
        RosettaError::with_details(
            ErrorKind::InvalidAccount,
            json!({ "address": address, "message": format!("{e}") }),
        )
    })
}

pub async fn balance(ctx: &Rosetta, body: &Bytes) -> RosettaResult<AccountBalanceResponse> {
    let req: AccountBalanceRequest =
        parse(body, ctx.network, &[("account_identifier", ErrorKind::AccountIdentifierNull)])?;
    let account = &req.account_identifier;
    check_address(&account.address)?;
    let which = sub_account(account.sub_account.as_ref().map(|s| s.address.as_str()))?;
    let block = resolve(ctx, &req.block_identifier.clone().unwrap_or_default()).await?;
    if !block.canonical {
        // Balance rows exist only along the canonical chain.
        return Err(RosettaError::with_details(
            ErrorKind::BlockNotFound,
            json!({ "message": "block is not on the canonical chain", "hash": block.block_hash }),
        ));
    }
    let at = ctx.reader.account(&account.address, Some(block.block_height)).await?;
    let value = match which {
        Balance::Liquid => at.liquid,
        Balance::Locked => at.locked,
    };
    let mut metadata = Metadata::new();
    metadata.insert("sequence_number".into(), json!(at.next_nonce));
    Ok(AccountBalanceResponse {
        block_identifier: identifier(&block),
        balances: vec![stx_amount(value)],
        coins: None,
        metadata: Some(metadata),
    })
}

/// Checks the request, then refuses it: there are no coins on an account-based chain.
pub fn coins(ctx: &Rosetta, body: &Bytes) -> RosettaResult<AccountCoinsResponse> {
    let req: AccountCoinsRequest =
        parse(body, ctx.network, &[("account_identifier", ErrorKind::AccountIdentifierNull)])?;
    check_address(&req.account_identifier.address)?;
    if let Some(c) = req.currencies.iter().flatten().find(|c| **c != stx()) {
        return Err(RosettaError::with_details(ErrorKind::UnsupportedCurrency, json!({ "currency": c })));
    }
    Err(RosettaError::new(ErrorKind::CoinsUnsupported))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sub_accounts() {
        assert_eq!(sub_account(None), Ok(Balance::Liquid));
        assert_eq!(sub_account(Some("locked")), Ok(Balance::Locked));
        assert_eq!(sub_account(Some("StackedBalance")), Ok(Balance::Locked));
        assert_eq!(sub_account(Some("vesting")).unwrap_err().kind, ErrorKind::InvalidSubAccount);
    }
}
