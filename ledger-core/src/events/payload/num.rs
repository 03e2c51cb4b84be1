//! Number fields the node sends as decimal strings.
//!
//! Clarity amounts are `u128` and the node writes them as strings ("100000000"). We also take
//! a JSON integer up to `u64::MAX`, but refuse a larger JSON number: serde_json (without
//! `arbitrary_precision`) would already have rounded it to `f64`, and silently using a rounded
//! amount is worse than failing. Fields that the node writes as large JSON numbers (burnchain
//! op amounts) are plain `u128` fields instead, which serde_json parses exactly.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserializer, Unexpected, Visitor};

/// `u128` from a decimal string or a JSON integer.
pub fn u128_dec<'de, D: Deserializer<'de>>(d: D) -> Result<u128, D::Error> {
    d.deserialize_any(Decimal::<u128>(PhantomData))
}

/// `Option<u128>` from a decimal string, a JSON integer or `null` (use with `#[serde(default)]`).
pub fn opt_u128_dec<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u128>, D::Error> {
    d.deserialize_option(OptDecimal::<u128>(PhantomData))
}

/// `u64` from a JSON integer or a decimal string.
pub fn u64_flex<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    d.deserialize_any(Decimal::<u64>(PhantomData))
}

/// Parses canonical unsigned decimal text (`u128::from_str` would also take a leading `+`).
fn parse_decimal(s: &str) -> Option<u128> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

struct Decimal<T>(PhantomData<T>);

impl<'de, T: TryFrom<u128>> Visitor<'de> for Decimal<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an unsigned integer (decimal string or JSON integer) fitting {}", short_type::<T>())
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        parse_decimal(v)
            .and_then(|n| T::try_from(n).ok())
            .ok_or_else(|| E::invalid_value(Unexpected::Str(v), &self))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        T::try_from(u128::from(v)).map_err(|_| E::invalid_value(Unexpected::Unsigned(v), &self))
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<T, E> {
        T::try_from(v).map_err(|_| E::invalid_value(Unexpected::Other("large integer"), &self))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        u64::try_from(v)
            .ok()
            .and_then(|n| T::try_from(u128::from(n)).ok())
            .ok_or_else(|| E::invalid_value(Unexpected::Signed(v), &self))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<T, E> {
        Err(E::invalid_type(Unexpected::Float(v), &self))
    }
}

fn short_type<T>() -> &'static str {
    let name = std::any::type_name::<T>();
    name.rsplit("::").next().unwrap_or(name)
}

struct OptDecimal<T>(PhantomData<T>);

impl<'de, T: TryFrom<u128>> Visitor<'de> for OptDecimal<T> {
    type Value = Option<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("null or an unsigned integer")
    }

    fn visit_none<E: de::Error>(self) -> Result<Option<T>, E> {
        Ok(None)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Option<T>, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Option<T>, D::Error> {
        d.deserialize_any(Decimal::<T>(PhantomData)).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    struct Amounts {
        #[serde(deserialize_with = "super::u128_dec")]
        a: u128,
        #[serde(default, deserialize_with = "super::opt_u128_dec")]
        b: Option<u128>,
        #[serde(deserialize_with = "super::u64_flex")]
        c: u64,
    }

    fn parse(json: &str) -> Result<Amounts, serde_json::Error> {
        serde_json::from_str(json)
    }

    #[test]
    fn accepts_strings_and_integers() {
        let max = u128::MAX.to_string();
        let v = parse(&format!(r#"{{"a":"{max}","b":"5","c":"7"}}"#)).unwrap();
        assert_eq!((v.a, v.b, v.c), (u128::MAX, Some(5), 7));
        let v = parse(r#"{"a":18446744073709551615,"b":null,"c":3}"#).unwrap();
        assert_eq!((v.a, v.b, v.c), (u128::from(u64::MAX), None, 3));
        assert_eq!(parse(r#"{"a":"1","c":1}"#).unwrap().b, None);
    }

    #[test]
    fn rejects_lossy_or_malformed_numbers() {
        // Beyond u64 as a JSON number: would have been rounded, so it is refused.
        assert!(parse(r#"{"a":18446744073709551616,"c":1}"#).is_err());
        for bad in [r#""+1""#, r#""-1""#, r#""""#, r#""1.0""#, "-1", "1.5", "true"] {
            let json = format!(r#"{{"a":{bad},"c":1}}"#);
            assert!(parse(&json).is_err(), "{json}");
        }
        let err = parse(r#"{"a":"1","c":"18446744073709551616"}"#).unwrap_err();
        assert!(err.to_string().contains("fitting u64"), "{err}");
    }
}
