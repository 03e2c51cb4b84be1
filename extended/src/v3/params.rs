//! The v3 path parameters, validated as the incumbent's v3 schemas (`schemas/v3/entities/
//! common.ts`) validate them, with its validator's messages.

use crate::error::{ApiError, In, Rule, HASH_PATTERN};
use crate::v3::cursor::contract_name;

/// `AddressSchema`: a standard address (anchored at both ends, unlike v1's).
pub const ADDRESS_PATTERN: &str = "^[0123456789ABCDEFGHJKMNPQRSTVWXYZ]{28,41}$";
/// `SmartContractIdSchema` (its `.` is the regex wildcard, kept as declared).
pub const CONTRACT_PATTERN: &str =
    "^[0123456789ABCDEFGHJKMNPQRSTVWXYZ]{28,41}.[a-zA-Z]([a-zA-Z0-9]|[-_]){0,39}$";
/// `PrincipalSchema`: either.
pub const PRINCIPAL_PATTERNS: &[&str] = &[ADDRESS_PATTERN, CONTRACT_PATTERN];

const C32: &str = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

fn c32(s: &str) -> bool {
    s.chars().all(|c| C32.contains(c))
}

/// Whether `raw` matches `PrincipalSchema`. The contract pattern's unescaped `.` matches any
/// one character, so the address part is every C32 prefix of 28 to 41 characters followed by
/// one character and a contract name.
pub fn is_principal(raw: &str) -> bool {
    if (28..=41).contains(&raw.len()) && c32(raw) {
        return true;
    }
    (28..=41).any(|k| {
        raw.get(..k).is_some_and(c32)
            && raw[k..].chars().next().is_some_and(|c| !matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}'))
            && raw[k..].chars().next().is_some_and(|c| raw.get(k + c.len_utf8()..).is_some_and(contract_name))
    })
}

/// A `principal` path parameter (`PrincipalSchema`).
pub fn principal(raw: &str) -> Result<String, ApiError> {
    principal_named(raw, "principal")
}

/// A principal path parameter named `param` (the message names it).
pub fn principal_named(raw: &str, param: &'static str) -> Result<String, ApiError> {
    if is_principal(raw) {
        Ok(raw.to_string())
    } else {
        Err(ApiError::schema(In::Path, param, Rule::Patterns(PRINCIPAL_PATTERNS)))
    }
}

/// A `tx_id` path parameter (`TransactionIdSchema`: `0x` optional): the lower-case `0x` form.
pub fn tx_id(raw: &str) -> Result<String, ApiError> {
    hash_named(raw, "tx_id")
}

/// A 64-hex-digit hash parameter named `param`, `0x` optional: the lower-case `0x` form.
pub fn hash_named(raw: &str, param: &'static str) -> Result<String, ApiError> {
    let hex = raw.strip_prefix("0x").unwrap_or(raw);
    if hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(format!("0x{}", hex.to_ascii_lowercase()))
    } else {
        Err(ApiError::schema(In::Path, param, Rule::Pattern(HASH_PATTERN)))
    }
}

/// A block named by `BlockHeightOrHashSchema`.
pub use ledger_read::chain::HeightOrHash;

/// A `height_or_hash` path parameter: `latest`, a hash (tried first, as the incumbent's union
/// does) or an integer. A negative integer passes the schema and fails the incumbent's handler
/// (`parseBlockParam`), an error of its own: here an invalid value all the same.
pub fn height_or_hash(raw: &str) -> Result<HeightOrHash, ApiError> {
    if raw == "latest" {
        return Ok(HeightOrHash::Latest);
    }
    let hex = raw.strip_prefix("0x").unwrap_or(raw);
    if hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Ok(HeightOrHash::Hash(format!("0x{hex}")));
    }
    match raw.parse::<i64>() {
        Ok(h) if h >= 0 => Ok(HeightOrHash::Height(h as u64)),
        Ok(_) => Err(ApiError::invalid("height_or_hash", "Invalid block height or hash")),
        Err(_) => Err(ApiError::schema(In::Path, "height_or_hash", Rule::HeightOrHash)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(e: ApiError) -> String {
        match e {
            ApiError::InvalidParam { message, .. } => message,
            other => panic!("{other}"),
        }
    }

    #[test]
    fn principals_follow_the_v3_patterns() {
        assert!(is_principal("ST1HB1T8WRNBYB0Y3T7WXZS38NKKPTBR3EG9EPJKR"));
        assert!(is_principal("SP000000000000000000002Q6VF78.pox-4"));
        assert!(!is_principal("SP000000000000000000002Q6VF78.4pox"));
        assert!(!is_principal("sp000000000000000000002q6vf78"));
        // Recorded (epoch-3-transition, `/extended/v3/principals/INVALID/transactions`).
        assert_eq!(
            msg(principal("INVALID").unwrap_err()),
            "params/principal must match pattern \"^[0123456789ABCDEFGHJKMNPQRSTVWXYZ]{28,41}$\", \
             params/principal must match pattern \"^[0123456789ABCDEFGHJKMNPQRSTVWXYZ]{28,41}.[a-zA-Z]\
             ([a-zA-Z0-9]|[-_]){0,39}$\", params/principal must match a schema in anyOf"
        );
    }

    #[test]
    fn tx_ids_and_blocks() {
        let id = "AB".repeat(32);
        assert_eq!(tx_id(&id).unwrap(), format!("0x{}", "ab".repeat(32)));
        assert_eq!(
            msg(tx_id("0x12").unwrap_err()),
            "params/tx_id must match pattern \"^(0x)?[a-fA-F0-9]{64}$\""
        );
        assert_eq!(height_or_hash("latest").unwrap(), HeightOrHash::Latest);
        assert_eq!(height_or_hash("12").unwrap(), HeightOrHash::Height(12));
        assert_eq!(
            height_or_hash(&"1".repeat(64)).unwrap(),
            HeightOrHash::Hash(format!("0x{}", "1".repeat(64)))
        );
        assert!(msg(height_or_hash("x").unwrap_err())
            .starts_with("params/height_or_hash must be equal to constant"));
    }
}
