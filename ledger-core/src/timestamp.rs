//! Receive timestamps as PostgreSQL prints a `timestamptz` in UTC (`2024-01-01 00:10:00.123456+00`,
//! the fraction's trailing zeros dropped): the raw event log's form, and an `export-events`
//! file's. Calendar and text through the `time` crate.
//!
//! A module of its own, under both the store (the raw event log) and ingestion (the inbox stamps
//! a live event as it arrives), so that ingestion need not depend on the store.

use std::time::{SystemTime, UNIX_EPOCH};

use time::format_description::FormatItem;
use time::macros::format_description;
use time::{OffsetDateTime, PrimitiveDateTime, UtcOffset};

const WHOLE: &[FormatItem<'_>] = format_description!("[year]-[month]-[day] [hour]:[minute]:[second]+00");
const FRACTION: &[FormatItem<'_>] =
    format_description!("[year]-[month]-[day] [hour]:[minute]:[second].[subsecond digits:1+]+00");
const WITH_OFFSET: &[FormatItem<'_>] = format_description!(
    "[year]-[month]-[day] [hour]:[minute]:[second][optional [.[subsecond]]]\
     [offset_hour sign:mandatory][optional [:[offset_minute][optional [:[offset_second]]]]]"
);
const WITHOUT_OFFSET: &[FormatItem<'_>] =
    format_description!("[year]-[month]-[day] [hour]:[minute]:[second][optional [.[subsecond]]]");

/// The current Unix time in seconds (a live event's receive time).
pub fn now_unix() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0)
}

/// `YYYY-MM-DD HH:MM:SS+00`, whole seconds.
pub fn format_pg_timestamp(unix: i64) -> String {
    format(unix, 0)
}

/// `YYYY-MM-DD HH:MM:SS[.ffffff]+00` of microseconds since the epoch, the fraction without
/// trailing zeros and left out when zero (PostgreSQL's output).
pub fn format_pg_timestamp_micros(micros: i64) -> String {
    format(micros.div_euclid(1_000_000), micros.rem_euclid(1_000_000) as u32)
}

fn format(unix: i64, micros: u32) -> String {
    // Beyond the crate's range (±999,999 years): its nearest end.
    let range = PrimitiveDateTime::MIN.assume_utc().unix_timestamp()
        ..=PrimitiveDateTime::MAX.assume_utc().unix_timestamp();
    let unix = unix.clamp(*range.start(), *range.end());
    let text = OffsetDateTime::from_unix_timestamp(unix)
        .and_then(|at| at.replace_microsecond(micros))
        .map_err(time::error::Format::from)
        .and_then(|at| if micros == 0 { at.format(WHOLE) } else { at.format(FRACTION) });
    // In range by the clamp, and every component these descriptions name is known.
    text.unwrap_or_default()
}

/// Unix seconds of a `YYYY-MM-DD HH:MM:SS[.ffffff][±HH[:MM[:SS]]]` text (no offset: UTC), the
/// fraction dropped.
pub fn parse_pg_timestamp(s: &str) -> Option<i64> {
    let at = match OffsetDateTime::parse(s, WITH_OFFSET) {
        Ok(at) => at,
        Err(_) => PrimitiveDateTime::parse(s, WITHOUT_OFFSET).ok()?.assume_offset(UtcOffset::UTC),
    };
    Some(at.unix_timestamp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_postgres() {
        assert_eq!(format_pg_timestamp(1_610_645_304), "2021-01-14 17:28:24+00");
        assert_eq!(format_pg_timestamp(-1), "1969-12-31 23:59:59+00");
        assert_eq!(format_pg_timestamp_micros(0), "1970-01-01 00:00:00+00");
        // 2022-10-05 16:20:34.244945 UTC, a timestamp from mocknet.tsv.
        assert_eq!(format_pg_timestamp_micros(1_664_986_834_244_945), "2022-10-05 16:20:34.244945+00");
        assert_eq!(format_pg_timestamp_micros(1_663_027_945_664_410), "2022-09-13 00:12:25.66441+00");
        assert_eq!(format_pg_timestamp_micros(951_782_400_500_000), "2000-02-29 00:00:00.5+00");
        assert_eq!(format_pg_timestamp_micros(951_782_400_000_001), "2000-02-29 00:00:00.000001+00");
        assert_eq!(format_pg_timestamp_micros(-1), "1969-12-31 23:59:59.999999+00");
    }

    #[test]
    fn pg_timestamps_round_trip() {
        for t in [0, 1_610_645_304, 1_795_319_244, 951_782_400, -86_401] {
            assert_eq!(parse_pg_timestamp(&format_pg_timestamp(t)), Some(t));
        }
        assert_eq!(parse_pg_timestamp("2021-01-14 17:28:24.123456+00"), Some(1_610_645_304));
        assert_eq!(parse_pg_timestamp("2021-01-14 17:28:24.5"), Some(1_610_645_304));
        assert_eq!(parse_pg_timestamp("2021-01-14 19:28:24+02"), Some(1_610_645_304));
        assert_eq!(parse_pg_timestamp("2021-01-14 12:58:24-04:30"), Some(1_610_645_304));
        assert_eq!(parse_pg_timestamp("2021-01-14 17:28:24.1+00:00:00"), Some(1_610_645_304));
        for bad in ["", "2021-01-14", "2021-13-14 17:28:24+00", "2021-01-14T17:28:24Z", "x 17:28:24+00"] {
            assert_eq!(parse_pg_timestamp(bad), None, "{bad}");
        }
    }
}
