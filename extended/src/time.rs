//! `*_iso` timestamps as the incumbent serves them (JavaScript's `toISOString`).

/// Unix seconds as `YYYY-MM-DDTHH:MM:SS.000Z` (UTC), with millisecond precision.
pub fn iso8601(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.000Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// [`iso8601`] written into `buf` without formatting machinery (three per transaction of a
/// list page): the text, or `None` for a year outside 0..=9999, which [`iso8601`] writes with
/// another width.
pub fn iso8601_into(secs: i64, buf: &mut [u8; 24]) -> Option<&str> {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    let y = u32::try_from(y).ok().filter(|y| *y <= 9999)?;
    let two = |out: &mut [u8], v: u32| {
        out[0] = b'0' + (v / 10) as u8;
        out[1] = b'0' + (v % 10) as u8;
    };
    two(&mut buf[0..2], y / 100);
    two(&mut buf[2..4], y % 100);
    buf[4] = b'-';
    two(&mut buf[5..7], m);
    buf[7] = b'-';
    two(&mut buf[8..10], d);
    buf[10] = b'T';
    let rem = rem as u32;
    two(&mut buf[11..13], rem / 3600);
    buf[13] = b':';
    two(&mut buf[14..16], rem % 3600 / 60);
    buf[16] = b':';
    two(&mut buf[17..19], rem % 60);
    buf[19..24].copy_from_slice(b".000Z");
    std::str::from_utf8(&buf[..]).ok()
}

/// Howard Hinnant's days-to-civil conversion (proleptic Gregorian calendar).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::{iso8601, iso8601_into};

    #[test]
    fn the_buffer_writer_equals_the_formatted_text() {
        let mut buf = [0u8; 24];
        let mut secs: i64 = -62_167_219_200; // 0000-01-01
        while secs < 253_402_300_800 {
            // 9999-12-31 and beyond
            assert_eq!(iso8601_into(secs, &mut buf), Some(iso8601(secs).as_str()), "{secs}");
            secs += 7_919_993;
        }
        for secs in [0, 59, 86_399, 86_400, 951_782_400, 1_795_319_745, 253_402_300_799] {
            assert_eq!(iso8601_into(secs, &mut buf), Some(iso8601(secs).as_str()), "{secs}");
        }
        assert_eq!(iso8601_into(253_402_300_800, &mut buf), None);
        assert_eq!(iso8601_into(-62_167_219_201, &mut buf), None);
    }

    #[test]
    fn matches_javascript_to_iso_string() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(1_664_986_861), "2022-10-05T16:21:01.000Z");
        assert_eq!(iso8601(1_710_344_070), "2024-03-13T15:34:30.000Z");
        assert_eq!(iso8601(1_710_344_228), "2024-03-13T15:37:08.000Z");
        assert_eq!(iso8601(951_782_400), "2000-02-29T00:00:00.000Z");
        assert_eq!(iso8601(1_795_319_745), "2026-11-22T03:55:45.000Z");
    }
}
