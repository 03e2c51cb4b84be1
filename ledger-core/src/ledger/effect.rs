//! The one rule that says what an operation does to its account, for every asset: STX
//! operations (`fee`, `token_transfer`, `mint`, `burn`, `miner_reward`, locks) and token
//! operations (`ft_*`, `nft_*`). Ingestion (FT balances), the kept totals, the reorg flip
//! (which subtracts the same effects) and the balance-change reads all go through [`effect`],
//! so they cannot disagree about a sign or an operation type.

use super::rows::OpRow;

/// What one operation does: amounts are magnitudes (µSTX, FT units, or NFT tokens).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Effect {
    pub sent: u128,
    pub received: u128,
    /// A transaction fee paid (STX only; the balance-change views count it as sent).
    pub fee: u128,
    pub miner_reward: u128,
    /// Change of the locked STX balance.
    pub locked: i128,
}

impl Effect {
    /// Change of the liquid balance.
    pub fn balance(&self) -> i128 {
        self.received as i128 + self.miner_reward as i128 - self.sent as i128 - self.fee as i128
    }
}

/// The asset an operation moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AssetClass {
    Stx,
    Ft,
    Nft,
}

pub fn asset_class(op_type: &str) -> AssetClass {
    if op_type.starts_with("ft_") {
        AssetClass::Ft
    } else if op_type.starts_with("nft_") {
        AssetClass::Nft
    } else {
        AssetClass::Stx
    }
}

/// The effect of an operation given its stored fields. Only `success` operations have one (a
/// failed transfer keeps its intent with no effect; fees are always `success`).
pub fn effect(
    op_type: &str,
    status: &str,
    amount: Option<i64>,
    token_amount: Option<&str>,
    locked_delta: i64,
) -> Effect {
    let mut e = Effect::default();
    if status != "success" {
        return e;
    }
    if asset_class(op_type) != AssetClass::Stx {
        let t = token_amount.unwrap_or("0");
        let (debit, units) = match t.strip_prefix('-') {
            Some(u) => (true, u),
            None => (false, t),
        };
        let units: u128 = units.parse().unwrap_or(0);
        if debit {
            e.sent = units;
        } else {
            e.received = units;
        }
        return e;
    }
    let a = i128::from(amount.unwrap_or(0));
    let (minus, plus) = ((-a).max(0) as u128, a.max(0) as u128);
    match op_type {
        "token_transfer" => (e.sent, e.received) = (minus, plus),
        "mint" => e.received = plus,
        "burn" => e.sent = minus,
        "fee" => e.fee = minus,
        "miner_reward" => e.miner_reward = plus,
        "stx_lock" | "stx_unlock" => e.locked = i128::from(locked_delta),
        _ => {}
    }
    e
}

/// [`effect`] of a row.
pub fn of(o: &OpRow) -> Effect {
    effect(&o.op_type, &o.status, o.amount, o.token_amount.as_deref(), o.locked_delta)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stx_and_token_effects() {
        let fee = effect("fee", "success", Some(-7), None, 0);
        assert_eq!((fee.fee, fee.balance()), (7, -7));
        let t = effect("token_transfer", "success", Some(-5), None, 0);
        assert_eq!((t.sent, t.received, t.balance()), (5, 0, -5));
        assert_eq!(effect("token_transfer", "abort_by_response", Some(-5), None, 0), Effect::default());
        let big = effect("ft_transfer", "success", None, Some("-340282366920938463463374607431768211455"), 0);
        assert_eq!(big.sent, u128::MAX);
        assert_eq!(effect("nft_mint", "success", None, Some("1"), 0).received, 1);
        assert_eq!(effect("stx_lock", "success", Some(0), None, 9).locked, 9);
        assert_eq!(asset_class("nft_burn"), AssetClass::Nft);
    }
}
