//! The raw event log as TSV: `id \t receive_timestamp \t event_path \t payload`, one event per
//! line, with PostgreSQL text-COPY escaping. This is what the incumbent API's `export-events`
//! writes (a COPY of `event_observer_requests`), so operators can move logs in both directions.
//!
//! A `/new_block` payload can be hundreds of MB (the mainnet genesis block), so the reader
//! decodes each line in place: at most one line buffer plus its slack is held per event.

mod escape;

use std::fmt;
use std::io::{self, BufRead, Write};

use serde::de::IgnoredAny;
use thiserror::Error;

pub use escape::{unescape, write_escaped, EscapeError, NULL_MARKER};

/// Spare buffer capacity above which a decoded payload is shrunk.
const SHRINK_SLACK: usize = 1 << 20;

/// One stored event-observer request, exactly as in the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawEvent {
    pub id: i64,
    /// `timestamptz` text as PostgreSQL printed it (e.g. `2024-01-01 00:00:00.123+00`); kept
    /// verbatim so an export re-imports byte for byte.
    pub receive_timestamp: String,
    /// Request path, e.g. `/new_block`.
    pub path: String,
    /// The JSON request body, unescaped.
    pub payload: String,
}

impl RawEvent {
    /// The TSV line for this event, including the trailing newline.
    pub fn to_line(&self) -> String {
        let mut out = Vec::with_capacity(self.payload.len() + self.path.len() + 64);
        // Writing to a Vec cannot fail.
        let _ = write_event(&mut out, self);
        // Escaping only inserts ASCII into valid UTF-8, so the result stays valid.
        String::from_utf8(out).unwrap_or_default()
    }
}

/// The four TSV columns, for error reporting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Column {
    Id,
    ReceiveTimestamp,
    Path,
    Payload,
}

impl fmt::Display for Column {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Column::Id => "id",
            Column::ReceiveTimestamp => "receive_timestamp",
            Column::Path => "event_path",
            Column::Payload => "payload",
        })
    }
}

/// A TSV line that could not be read as an event; `line` is 1-based.
#[derive(Debug, Error)]
pub enum TsvError {
    #[error("line {line}: read failed: {source}")]
    Io {
        line: u64,
        #[source]
        source: io::Error,
    },
    #[error("line {line}: expected 4 tab-separated columns, found {found}")]
    ColumnCount { line: u64, found: usize },
    #[error("line {line}: column `{column}` is NULL")]
    NullColumn { line: u64, column: Column },
    #[error("line {line}: invalid id `{text}`")]
    BadId { line: u64, text: String },
    #[error("line {line}: invalid escape in column `{column}` at byte {offset}: {reason}")]
    InvalidEscape { line: u64, column: Column, offset: usize, reason: &'static str },
    #[error("line {line}: column `{column}` is not valid UTF-8")]
    InvalidUtf8 { line: u64, column: Column },
    #[error("line {line}: payload is not valid JSON: {source}")]
    InvalidJson {
        line: u64,
        #[source]
        source: serde_json::Error,
    },
}

impl TsvError {
    /// The 1-based line number the error refers to.
    pub fn line(&self) -> u64 {
        match *self {
            TsvError::Io { line, .. }
            | TsvError::ColumnCount { line, .. }
            | TsvError::NullColumn { line, .. }
            | TsvError::BadId { line, .. }
            | TsvError::InvalidEscape { line, .. }
            | TsvError::InvalidUtf8 { line, .. }
            | TsvError::InvalidJson { line, .. } => line,
        }
    }
}

/// Parses one line (a trailing `\n` is allowed and ignored).
pub fn parse_line(line: &str, line_no: u64) -> Result<RawEvent, TsvError> {
    let text = line.strip_suffix('\n').unwrap_or(line);
    parse_owned_line(text.as_bytes().to_vec(), line_no)
}

/// Parses a line that the caller hands over; the payload is decoded inside `line`'s buffer.
fn parse_owned_line(mut line: Vec<u8>, line_no: u64) -> Result<RawEvent, TsvError> {
    // Escaped fields never contain a raw tab, so every tab is a delimiter.
    let mut tabs = line.iter().enumerate().filter(|(_, &b)| b == b'\t').map(|(i, _)| i);
    let (Some(t1), Some(t2), Some(t3)) = (tabs.next(), tabs.next(), tabs.next()) else {
        let found = 1 + line.iter().filter(|&&b| b == b'\t').count();
        return Err(TsvError::ColumnCount { line: line_no, found });
    };
    let extra = tabs.count();
    if extra > 0 {
        return Err(TsvError::ColumnCount { line: line_no, found: 4 + extra });
    }
    let id = parse_id(&line[..t1], line_no)?;
    let receive_timestamp = decode_small(&line[t1 + 1..t2], Column::ReceiveTimestamp, line_no)?;
    let path = decode_small(&line[t2 + 1..t3], Column::Path, line_no)?;
    let payload_col = Column::Payload;

    if line[t3 + 1..] == *NULL_MARKER {
        return Err(TsvError::NullColumn { line: line_no, column: payload_col });
    }
    escape::unescape_in_place(&mut line, t3 + 1).map_err(|e| escape_error(e, payload_col, line_no))?;
    // `read_until` may have left up to a line's worth of spare capacity; give a large slack
    // back since the payload is kept in the event.
    if line.capacity() - line.len() > SHRINK_SLACK {
        line.shrink_to_fit();
    }
    let payload =
        String::from_utf8(line).map_err(|_| TsvError::InvalidUtf8 { line: line_no, column: payload_col })?;
    // Validate without building a tree: the payload may be huge.
    serde_json::from_str::<IgnoredAny>(&payload)
        .map_err(|source| TsvError::InvalidJson { line: line_no, source })?;
    Ok(RawEvent { id, receive_timestamp, path, payload })
}

/// Accepts only the canonical bigint text COPY writes (`-?[0-9]+`, no leading zeros), so an
/// accepted id always re-serialises to the same bytes.
fn parse_id(raw: &[u8], line_no: u64) -> Result<i64, TsvError> {
    if raw == NULL_MARKER {
        return Err(TsvError::NullColumn { line: line_no, column: Column::Id });
    }
    let bad = || {
        let shown = &raw[..raw.len().min(64)];
        TsvError::BadId { line: line_no, text: String::from_utf8_lossy(shown).into_owned() }
    };
    let digits = raw.strip_prefix(b"-").unwrap_or(raw);
    let canonical = !digits.is_empty()
        && digits.iter().all(u8::is_ascii_digit)
        && (digits == b"0" || digits[0] != b'0')
        && raw != b"-0";
    if !canonical {
        return Err(bad());
    }
    std::str::from_utf8(raw).ok().and_then(|s| s.parse().ok()).ok_or_else(bad)
}

fn decode_small(raw: &[u8], column: Column, line_no: u64) -> Result<String, TsvError> {
    if raw == NULL_MARKER {
        return Err(TsvError::NullColumn { line: line_no, column });
    }
    let bytes = escape::unescape(raw).map_err(|e| escape_error(e, column, line_no))?;
    String::from_utf8(bytes).map_err(|_| TsvError::InvalidUtf8 { line: line_no, column })
}

fn escape_error(e: EscapeError, column: Column, line_no: u64) -> TsvError {
    TsvError::InvalidEscape { line: line_no, column, offset: e.offset, reason: e.reason }
}

/// Streams events from a TSV log. A malformed line yields an error and reading continues
/// with the next line; an I/O error ends the stream.
pub struct TsvReader<R> {
    inner: R,
    line_no: u64,
    done: bool,
}

impl<R: BufRead> TsvReader<R> {
    pub fn new(inner: R) -> Self {
        TsvReader { inner, line_no: 0, done: false }
    }

    /// Number of lines read so far.
    pub fn line_number(&self) -> u64 {
        self.line_no
    }
}

impl<R: BufRead> Iterator for TsvReader<R> {
    type Item = Result<RawEvent, TsvError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        // A fresh buffer per line: it becomes the event's payload without another copy.
        let mut line = Vec::new();
        let read = self.inner.read_until(b'\n', &mut line);
        self.line_no += 1;
        match read {
            Err(source) => {
                self.done = true;
                Some(Err(TsvError::Io { line: self.line_no, source }))
            }
            Ok(0) => {
                self.done = true;
                None
            }
            Ok(_) => {
                if line.last() == Some(&b'\n') {
                    line.pop();
                }
                // `\.` is COPY's end-of-data marker.
                if line == b"\\." {
                    self.done = true;
                    return None;
                }
                Some(parse_owned_line(line, self.line_no))
            }
        }
    }
}

/// Writes one event as a TSV line (with trailing newline).
pub fn write_event<W: Write + ?Sized>(out: &mut W, event: &RawEvent) -> io::Result<()> {
    write!(out, "{}\t", event.id)?;
    write_escaped(out, &event.receive_timestamp)?;
    out.write_all(b"\t")?;
    write_escaped(out, &event.path)?;
    out.write_all(b"\t")?;
    write_escaped(out, &event.payload)?;
    out.write_all(b"\n")
}

/// Writes events as TSV lines. Wrap the sink in a `BufWriter` for files: fields are written
/// in pieces between escapes.
pub struct TsvWriter<W: Write> {
    inner: W,
}

impl<W: Write> TsvWriter<W> {
    pub fn new(inner: W) -> Self {
        TsvWriter { inner }
    }

    pub fn write_event(&mut self, event: &RawEvent) -> io::Result<()> {
        write_event(&mut self.inner, event)
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }

    pub fn into_inner(self) -> W {
        self.inner
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(payload: &str) -> RawEvent {
        RawEvent {
            id: 7,
            receive_timestamp: "2024-01-01 00:00:00.123+00".into(),
            path: "/new_block".into(),
            payload: payload.into(),
        }
    }

    fn read_all(input: &str) -> Vec<Result<RawEvent, TsvError>> {
        TsvReader::new(input.as_bytes()).collect()
    }

    #[test]
    fn writes_and_reads_escaped_payloads() {
        // A JSON string holding a quote, a backslash and an escaped tab: the JSON text
        // contains backslashes, which COPY doubles.
        let ev = event(r#"{"vm_error":"say \"hi\"\\ \t"}"#);
        let line = ev.to_line();
        assert_eq!(
            line,
            "7\t2024-01-01 00:00:00.123+00\t/new_block\t{\"vm_error\":\"say \\\\\"hi\\\\\"\\\\\\\\ \\\\t\"}\n"
        );
        assert_eq!(parse_line(&line, 1).unwrap(), ev);
        assert_eq!(read_all(&line).into_iter().map(Result::unwrap).collect::<Vec<_>>(), vec![ev]);
    }

    #[test]
    fn raw_control_characters_in_json_whitespace_round_trip() {
        // Pretty-printed JSON carries real newlines and tabs; they are escaped in the file.
        let ev = event("{\n\t\"a\": 1\r\n}");
        let line = ev.to_line();
        assert_eq!(line.matches('\n').count(), 1);
        assert_eq!(line.matches('\t').count(), 3);
        assert_eq!(parse_line(&line, 1).unwrap(), ev);
    }

    #[test]
    fn writer_matches_to_line() {
        let events = [event("[]"), event("{\"x\":\"\\\\\"}")];
        let mut w = TsvWriter::new(Vec::new());
        for ev in &events {
            w.write_event(ev).unwrap();
        }
        let out = String::from_utf8(w.into_inner()).unwrap();
        assert_eq!(out, events.iter().map(RawEvent::to_line).collect::<String>());
    }

    #[test]
    fn malformed_lines_report_typed_errors_with_line_numbers() {
        let input = [
            "1\tts\t/new_block\t{}",              // 1 ok
            "2\tts\t/new_block",                  // 2 three columns
            "3\tts\t/new_block\t{}\textra",       // 3 five columns
            "x3\tts\t/new_block\t{}",             // 4 bad id
            "05\tts\t/new_block\t{}",             // 5 non-canonical id
            "6\tts\t/new_block\t{\"a\":\"\\q\"}", // 6 invalid escape in payload
            "7\tts\t/new_block\t{\"a\":",         // 7 truncated JSON
            "8\t\\N\t/new_block\t{}",             // 8 NULL timestamp
            "9\tts\t/new_block\t\\N",             // 9 NULL payload
            "10\tts\t/new_block\t\"\\377\"",      // 10 invalid UTF-8 after decoding
            "",                                   // 11 empty line
            "99999999999999999999\tts\t/p\t{}",   // 12 id overflow
            "-13\tts\t/new_burn_block\t[1, 2]\r", // 13 CRLF line ending
            "14\tts\t/new_burn_block\t{} ",       // 14 ok (trailing JSON whitespace)
        ]
        .join("\n");
        let results = read_all(&input);
        assert_eq!(results.len(), 14);
        assert_eq!(results[0].as_ref().unwrap().id, 1);
        assert_eq!(results[13].as_ref().unwrap().payload, "{} ");
        let err = |i: usize| results[i].as_ref().unwrap_err();
        assert!(matches!(err(1), TsvError::ColumnCount { line: 2, found: 3 }), "{:?}", err(1));
        assert!(matches!(err(2), TsvError::ColumnCount { line: 3, found: 5 }));
        assert!(matches!(err(3), TsvError::BadId { line: 4, text } if text == "x3"));
        assert!(matches!(err(4), TsvError::BadId { line: 5, .. }));
        assert!(matches!(
            err(5),
            TsvError::InvalidEscape { line: 6, column: Column::Payload, offset: 6, reason: _ }
        ));
        assert!(matches!(err(6), TsvError::InvalidJson { line: 7, .. }));
        assert!(matches!(err(7), TsvError::NullColumn { line: 8, column: Column::ReceiveTimestamp }));
        assert!(matches!(err(8), TsvError::NullColumn { line: 9, column: Column::Payload }));
        assert!(matches!(err(9), TsvError::InvalidUtf8 { line: 10, column: Column::Payload }));
        assert!(matches!(err(10), TsvError::ColumnCount { line: 11, found: 1 }));
        assert!(matches!(err(11), TsvError::BadId { line: 12, .. }));
        assert!(matches!(err(12), TsvError::InvalidEscape { line: 13, column: Column::Payload, .. }));
        for (i, r) in results.iter().enumerate() {
            if let Err(e) = r {
                assert_eq!(e.line(), i as u64 + 1);
                assert!(e.to_string().starts_with(&format!("line {}: ", i + 1)), "{e}");
            }
        }
    }

    #[test]
    fn negative_ids_and_missing_final_newline_are_accepted() {
        let results = read_all("-5\tts\t/p\tnull");
        let ev = results[0].as_ref().unwrap();
        assert_eq!(ev.id, -5);
        assert_eq!(ev.to_line(), "-5\tts\t/p\tnull\n");
    }

    #[test]
    fn end_of_data_marker_stops_the_stream() {
        let results = read_all("1\tts\t/p\t{}\n\\.\n2\tts\t/p\t{}\n");
        assert_eq!(results.len(), 1);
    }

    #[test]
    fn io_errors_end_the_stream_with_the_line_number() {
        struct Failing(usize);
        impl io::Read for Failing {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                if self.0 == 0 {
                    return Err(io::Error::other("disk gone"));
                }
                self.0 = 0;
                let line = b"1\tts\t/p\t{}\n";
                buf[..line.len()].copy_from_slice(line);
                Ok(line.len())
            }
        }
        let mut reader = TsvReader::new(io::BufReader::new(Failing(1)));
        assert!(reader.next().unwrap().is_ok());
        assert!(matches!(reader.next(), Some(Err(TsvError::Io { line: 2, .. }))));
        assert!(reader.next().is_none());
        assert_eq!(reader.line_number(), 2);
    }
}
