//! Receive timestamps for the generated event log, as PostgreSQL prints `timestamptz` in UTC
//! (`2024-01-01 00:10:00.123456+00`, trailing zeros of the fraction dropped), so a generated
//! TSV looks exactly like an `export-events` file.

use ledger_core::timestamp::format_pg_timestamp_micros;

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
        format_pg_timestamp_micros(i64::try_from(self.micros).unwrap_or(i64::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_is_monotonic_and_honours_floors() {
        let mut c = Clock::starting_at(100);
        assert_eq!(c.advance(0, 0), "1970-01-01 00:01:40.000001+00");
        assert_eq!(c.advance(10, 200), "1970-01-01 00:03:20+00");
        assert_eq!(c.advance(250_000, 0), "1970-01-01 00:03:20.25+00");
    }
}
