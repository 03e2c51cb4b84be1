//! The v3 cursor formats (the incumbent's `schemas/v3/cursors.ts` and `params.ts`): each one's
//! pattern, checked as its validator checks it (JavaScript regex semantics: `\d` and `[0-9]` are
//! ASCII digits, `.` any character but a line terminator) and worded as its message words it,
//! and the typed cursors the stores page by.

use std::fmt;

use crate::error::{ApiError, In, Rule};
use crate::params::Query;

/// A cursor format: the pattern as the incumbent declares it, and its matcher.
#[derive(Clone, Copy)]
pub struct Format {
    pub pattern: &'static str,
    matches: fn(&str) -> bool,
}

impl fmt::Debug for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.pattern)
    }
}

impl Format {
    pub fn matches(&self, raw: &str) -> bool {
        (self.matches)(raw)
    }
}

const C32: &str = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

fn digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}
fn hex(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_hexdigit())
}
/// JavaScript's `.`: anything but a line terminator.
fn dot(c: char) -> bool {
    !matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}')
}
/// JavaScript's `\S`.
fn non_space(c: char) -> bool {
    !(c.is_whitespace() || c == '\u{feff}')
}
fn split_first_colon(s: &str) -> Option<(&str, &str)> {
    s.split_once(':')
}
/// `[0123456789ABCDEFGHJKMNPQRSTVWXYZ]{28,41}`.
fn c32_address(s: &str) -> bool {
    (28..=41).contains(&s.len()) && s.chars().all(|c| C32.contains(c))
}
/// `[a-zA-Z]([a-zA-Z0-9]|[-_]){0,39}`.
pub(crate) fn contract_name(s: &str) -> bool {
    let mut cs = s.chars();
    cs.next().is_some_and(|c| c.is_ascii_alphabetic())
        && s.len() <= 40
        && cs.all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}
/// `^[C32]{28,41}(\.[a-zA-Z]([a-zA-Z0-9]|[-_]){0,39})?$`.
fn principal(s: &str) -> bool {
    match s.split_once('.') {
        Some((a, n)) => c32_address(a) && contract_name(n),
        None => c32_address(s),
    }
}

/// `block_height:microblock_sequence:tx_index` (transactions).
pub const TX: Format = Format {
    pattern: "^[0-9]+:[0-9]+:[0-9]+$",
    matches: |s| {
        let p: Vec<&str> = s.split(':').collect();
        p.len() == 3 && p.iter().all(|x| digits(x))
    },
};
/// `receipt_time:tx_id` (mempool transactions).
pub const MEMPOOL: Format = Format {
    pattern: r"^\d+:(0x)?[a-fA-F0-9]{64}$",
    matches: |s| {
        split_first_colon(s).is_some_and(|(t, id)| {
            let id = id.strip_prefix("0x").unwrap_or(id);
            digits(t) && id.len() == 64 && hex(id)
        })
    },
};
/// `event_index` (a transaction's events).
pub const EVENT: Format = Format { pattern: "^[0-9]+$", matches: digits };
/// `bond_index` (bonds).
pub const BOND: Format = Format { pattern: r"^\d+$", matches: digits };
/// `balance:asset_identifier` (FT balances).
pub const FT_BALANCE: Format = Format {
    pattern: r"^\d+:.+$",
    matches: |s| {
        split_first_colon(s).is_some_and(|(b, rest)| digits(b) && !rest.is_empty() && rest.chars().all(dot))
    },
};
/// `value:asset_identifier` (NFT balances; the value `0x` hex).
pub const NFT_BALANCE: Format = Format {
    pattern: "^0x[0-9a-fA-F]*:.+$",
    matches: |s| {
        s.strip_prefix("0x")
            .and_then(split_first_colon)
            .is_some_and(|(v, rest)| hex(v) && !rest.is_empty() && rest.chars().all(dot))
    },
};
/// A signer principal (staking signers).
pub const SIGNER: Format = Format {
    pattern: r"^[0123456789ABCDEFGHJKMNPQRSTVWXYZ]{28,41}(\.[a-zA-Z]([a-zA-Z0-9]|[-_]){0,39})?$",
    matches: principal,
};
/// A staker principal (a signer's stakers).
pub const STAKER: Format = SIGNER;
/// A signing key (a cycle's signers).
pub const SIGNING_KEY: Format = Format {
    pattern: "^(0x)?[0-9a-fA-F]{66}$",
    matches: |s| {
        let k = s.strip_prefix("0x").unwrap_or(s);
        k.len() == 66 && hex(k)
    },
};
/// `asset_type:asset_identifier` (one transaction's balance changes of a principal).
pub const TX_BALANCE_CHANGE: Format = Format {
    pattern: r"^[0-9]+:\S+$",
    matches: |s| {
        split_first_colon(s)
            .is_some_and(|(t, rest)| digits(t) && !rest.is_empty() && rest.chars().all(non_space))
    },
};
/// `block_height:microblock_sequence:tx_index:asset_type:asset_identifier` (a principal's
/// balance changes across transactions).
pub const BALANCE_CHANGE: Format = Format {
    pattern: r"^[0-9]+:[0-9]+:[0-9]+:[0-9]+:\S+$",
    matches: |s| {
        let p: Vec<&str> = s.splitn(5, ':').collect();
        p.len() == 5 && p[..4].iter().all(|x| digits(x)) && !p[4].is_empty() && p[4].chars().all(non_space)
    },
};

/// The request's `cursor` checked against `format` (none when absent).
pub fn read(q: &Query, format: Format) -> Result<Option<&str>, ApiError> {
    match q.get("cursor") {
        None => Ok(None),
        Some(raw) if format.matches(raw) => Ok(Some(raw)),
        Some(_) => Err(ApiError::schema(In::Query, "cursor", Rule::Pattern(format.pattern))),
    }
}

pub use ledger_read::cursor::{
    number, FtBalanceCursor, MempoolCursor, NftBalanceCursor, TxCursor, ANCHORED_SEQUENCE, MAX_TX_INDEX,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_match_as_the_incumbents_patterns() {
        assert!(
            TX.matches("12:2147483647:3")
                && !TX.matches("garbage")
                && !TX.matches("1:2")
                && !TX.matches("1:2:3:4")
        );
        assert!(!TX.matches("1::3") && !TX.matches("-1:0:0"));
        let id = "ab".repeat(32);
        assert!(MEMPOOL.matches(&format!("17:0x{id}")) && MEMPOOL.matches(&format!("17:{id}")));
        assert!(!MEMPOOL.matches(&format!("x:0x{id}")) && !MEMPOOL.matches("17:0xab"));
        assert!(EVENT.matches("0") && !EVENT.matches("") && !EVENT.matches("1a"));
        assert!(
            FT_BALANCE.matches("10:SP1.x::y") && !FT_BALANCE.matches("10:") && !FT_BALANCE.matches("a:b")
        );
        assert!(
            NFT_BALANCE.matches("0x:SP1.x::y")
                && NFT_BALANCE.matches("0x0a:z")
                && !NFT_BALANCE.matches("0a:z")
        );
        assert!(
            SIGNER.matches("ST1HB1T8WRNBYB0Y3T7WXZS38NKKPTBR3EG9EPJKR.pox-5") && !SIGNER.matches("INVALID")
        );
        assert!(SIGNING_KEY.matches(&format!("0x{}", "0".repeat(66))) && !SIGNING_KEY.matches("0x00"));
        assert!(TX_BALANCE_CHANGE.matches("1:<stx>") && !TX_BALANCE_CHANGE.matches("1:a b"));
        assert!(BALANCE_CHANGE.matches("5:0:1:2:SP1.c::t") && !BALANCE_CHANGE.matches("5:0:1:SP1"));
    }

    #[test]
    fn a_bad_cursor_is_the_validators_message() {
        let q = Query::parse("cursor=garbage");
        match read(&q, TX).unwrap_err() {
            ApiError::InvalidParam { message, .. } => {
                assert_eq!(message, r#"querystring/cursor must match pattern "^[0-9]+:[0-9]+:[0-9]+$""#)
            }
            e => panic!("{e}"),
        }
        assert_eq!(read(&Query::parse("cursor=3:0:1"), TX).unwrap(), Some("3:0:1"));
        assert_eq!(read(&Query::parse(""), TX).unwrap(), None);
    }

    #[test]
    fn transaction_cursors_round_trip() {
        let c = TxCursor::parse("7:2147483647:12");
        assert_eq!(c, TxCursor { block_height: 7, microblock_sequence: ANCHORED_SEQUENCE, tx_index: 12 });
        assert_eq!(c.to_string(), "7:2147483647:12");
        assert!(TxCursor::parse("7:0:0").may_name_block());
        assert!(TxCursor::block_end(7) > c);
        assert_eq!(TxCursor::parse("99999999999999999999999:0:0").block_height, u64::MAX);
        let m = MempoolCursor::parse(&format!("17:{}", "AB".repeat(32)));
        assert_eq!(m.to_string(), format!("17:0x{}", "ab".repeat(32)));
    }

    #[test]
    fn balance_cursors_split_at_the_first_colon() {
        let c = FtBalanceCursor::parse("0042:SP1.t::tok");
        assert_eq!((c.balance, c.asset_identifier.as_str()), (42, "SP1.t::tok"));
        assert_eq!(FtBalanceCursor::parse(&format!("{}0:x", u128::MAX)).balance, u128::MAX);
        let n = NftBalanceCursor::parse("0x0a:SP1.n::m");
        assert_eq!((n.value.as_str(), n.asset_identifier.as_str()), ("0x0a", "SP1.n::m"));
    }
}
