//! How token amounts are stored as text (u128 exceeds both engines' integers): a leaf module,
//! so the write path, the maintained totals and the readers share it without depending on
//! each other.

/// FT balances are u128 text (zero-padded to sort numerically); negative only when the
/// history starts mid-chain.
pub(super) fn ft_text(v: i128) -> String {
    if v < 0 {
        format!("-{:039}", v.unsigned_abs())
    } else {
        format!("{v:039}")
    }
}

/// An amount stored by [`ft_text`] (or a plain integer); 0 when unreadable.
pub fn ft_parse(s: &str) -> i128 {
    s.parse().unwrap_or(0)
}
