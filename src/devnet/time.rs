//! Receive timestamps for the generated event log, as PostgreSQL prints `timestamptz` in UTC
//! (`2024-01-01 00:10:00.123456+00`, trailing zeros of the fraction dropped), so a generated
//! TSV looks exactly like an `export-events` file.

/// A monotonic clock in microseconds since the Unix epoch.
#[derive(Debug, Clone)]
pub struct Clock {
    micros: u64,
}

impl Clock {
    pub fn starting_at(unix_secs: u64) -> Clock {
        Clock { micros: unix_secs * 1_000_000 }
    }

    /// Advances by `step_micros` (at least 1 µs, so ids and timestamps stay in the same order),
    /// jumping forward to `not_before_secs` if the clock is behind it, and returns the new time.
    pub fn advance(&mut self, step_micros: u64, not_before_secs: u64) -> String {
        self.micros = (self.micros + step_micros.max(1)).max(not_before_secs * 1_000_000);
        format_timestamptz(self.micros)
    }
}

/// `YYYY-MM-DD HH:MM:SS[.ffffff]+00`, the fraction without trailing zeros (PostgreSQL's output).
pub fn format_timestamptz(micros: u64) -> String {
    let secs = micros / 1_000_000;
    let frac = micros % 1_000_000;
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    let tod = secs % 86_400;
    let mut s = format!("{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}", tod / 3600, tod / 60 % 60, tod % 60);
    if frac != 0 {
        let digits = format!("{frac:06}");
        s.push('.');
        s.push_str(digits.trim_end_matches('0'));
    }
    s.push_str("+00");
    s
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
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
    use super::*;

    #[test]
    fn formats_like_postgres() {
        assert_eq!(format_timestamptz(0), "1970-01-01 00:00:00+00");
        // 2022-10-05 16:20:34.244945 UTC, a timestamp from mocknet.tsv.
        assert_eq!(format_timestamptz(1_664_986_834_244_945), "2022-10-05 16:20:34.244945+00");
        assert_eq!(format_timestamptz(1_663_027_945_664_410), "2022-09-13 00:12:25.66441+00");
        assert_eq!(format_timestamptz(951_782_400_500_000), "2000-02-29 00:00:00.5+00");
    }

    #[test]
    fn clock_is_monotonic_and_honours_floors() {
        let mut c = Clock::starting_at(100);
        assert_eq!(c.advance(0, 0), "1970-01-01 00:01:40.000001+00");
        assert_eq!(c.advance(10, 200), "1970-01-01 00:03:20+00");
        assert_eq!(c.advance(250_000, 0), "1970-01-01 00:03:20.25+00");
    }
}
