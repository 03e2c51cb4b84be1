//! `*_iso` timestamps as the incumbent serves them (JavaScript's `Date.prototype.toISOString`),
//! written by the `time` crate's ISO 8601 formatter.

use std::num::NonZeroU8;

use time::format_description::well_known::iso8601::{Config, EncodedConfig, TimePrecision};
use time::format_description::well_known::Iso8601;
use time::OffsetDateTime;

/// Whole seconds with three decimals, as `toISOString` writes milliseconds.
const MILLIS: TimePrecision = TimePrecision::Second { decimal_digits: NonZeroU8::new(3) };
/// `YYYY-MM-DDTHH:MM:SS.sssZ`: JavaScript's form for the years 0 to 9999.
const JS: EncodedConfig = Config::DEFAULT.set_time_precision(MILLIS).encode();
/// `±YYYYYY-MM-DDTHH:MM:SS.sssZ`: its expanded form for the years outside them.
const JS_EXPANDED: EncodedConfig =
    Config::DEFAULT.set_time_precision(MILLIS).set_year_is_six_digits(true).encode();
/// The range of a JavaScript `Date`: ±8.64e15 ms around the epoch. `toISOString` throws
/// beyond it; a time outside is written as the nearest end.
const JS_LIMIT_SECS: i64 = 8_640_000_000_000;

/// Unix seconds as `YYYY-MM-DDTHH:MM:SS.000Z` (UTC), with millisecond precision.
pub fn iso8601(secs: i64) -> String {
    let mut out = Vec::with_capacity(24);
    iso8601_into(secs, &mut out);
    // The formatter writes ASCII only.
    String::from_utf8(out).unwrap_or_default()
}

/// [`iso8601`] appended to `out` without an intermediate `String` (three per transaction of
/// a list page). The text needs no JSON escapes.
pub fn iso8601_into(secs: i64, out: &mut Vec<u8>) {
    let secs = secs.clamp(-JS_LIMIT_SECS, JS_LIMIT_SECS);
    // Within the crate's range (±999,999 years with `large-dates`) by the clamp above.
    let Ok(at) = OffsetDateTime::from_unix_timestamp(secs) else { return };
    let written = if (0..=9999).contains(&at.year()) {
        at.format_into(out, &Iso8601::<JS>)
    } else {
        at.format_into(out, &Iso8601::<JS_EXPANDED>)
    };
    debug_assert!(written.is_ok(), "{secs}: {written:?}");
}

#[cfg(test)]
mod tests {
    use super::{iso8601, iso8601_into};

    #[test]
    fn the_buffer_writer_equals_the_formatted_text() {
        let mut secs: i64 = -62_167_219_200 - 7_919_993 * 3; // before 0000-01-01
        while secs < 253_402_300_800 + 7_919_993 * 3 {
            // 9999-12-31 and beyond
            let mut buf = b"x".to_vec();
            iso8601_into(secs, &mut buf);
            assert_eq!(&buf[1..], iso8601(secs).as_bytes(), "{secs}");
            secs += 7_919_993;
        }
    }

    #[test]
    fn matches_javascript_to_iso_string() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(1_664_986_861), "2022-10-05T16:21:01.000Z");
        assert_eq!(iso8601(1_710_344_070), "2024-03-13T15:34:30.000Z");
        assert_eq!(iso8601(1_710_344_228), "2024-03-13T15:37:08.000Z");
        assert_eq!(iso8601(951_782_400), "2000-02-29T00:00:00.000Z");
        assert_eq!(iso8601(1_795_319_745), "2026-11-22T03:55:45.000Z");
        assert_eq!(iso8601(-1), "1969-12-31T23:59:59.000Z");
        // new Date(-62167219200000).toISOString(), and the years JavaScript writes expanded.
        assert_eq!(iso8601(-62_167_219_200), "0000-01-01T00:00:00.000Z");
        assert_eq!(iso8601(253_402_300_799), "9999-12-31T23:59:59.000Z");
        assert_eq!(iso8601(253_402_300_800), "+010000-01-01T00:00:00.000Z");
        assert_eq!(iso8601(-62_167_219_201), "-000001-12-31T23:59:59.000Z");
        assert_eq!(iso8601(400_000_000_000), "+014645-06-30T15:06:40.000Z");
        // new Date(8.64e15).toISOString(): the last time a Date holds; beyond it, the same.
        assert_eq!(iso8601(8_640_000_000_000), "+275760-09-13T00:00:00.000Z");
        assert_eq!(iso8601(i64::MAX), "+275760-09-13T00:00:00.000Z");
        assert_eq!(iso8601(i64::MIN), "-271821-04-20T00:00:00.000Z");
    }
}
