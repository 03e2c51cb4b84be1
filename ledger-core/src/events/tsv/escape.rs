//! PostgreSQL `COPY ... (FORMAT TEXT)` field escaping.
//!
//! Encoding mirrors the server's `CopyAttributeOutText`: backslash, `\b`, `\f`, `\n`, `\r`, `\t`
//! and `\v` are escaped, every other byte is written as is. Decoding accepts those plus octal
//! (`\NNN`) and hex (`\xNN`) byte escapes. Unlike the server, any other backslash sequence is
//! rejected: COPY never writes one, so it signals a corrupt or hand-edited file, and accepting
//! it would break the byte-exact round trip.

use std::io::{self, Write};

/// The field text COPY writes for SQL NULL.
pub const NULL_MARKER: &[u8] = b"\\N";

/// Why a field could not be decoded; `offset` is the byte offset of the offending backslash
/// (or byte) within the raw field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EscapeError {
    pub offset: usize,
    pub reason: &'static str,
}

/// Writes `field` to `out` with COPY text escaping, streaming runs of plain bytes so no
/// escaped copy of a (possibly huge) field is ever built.
pub fn write_escaped<W: Write + ?Sized>(out: &mut W, field: &str) -> io::Result<()> {
    let bytes = field.as_bytes();
    let mut run_start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let Some(code) = escape_code(b) else { continue };
        out.write_all(&bytes[run_start..i])?;
        out.write_all(&[b'\\', code])?;
        run_start = i + 1;
    }
    out.write_all(&bytes[run_start..])
}

/// The letter following the backslash for bytes COPY escapes, `None` for bytes written raw.
fn escape_code(b: u8) -> Option<u8> {
    Some(match b {
        b'\\' => b'\\',
        0x08 => b'b',
        0x0c => b'f',
        b'\n' => b'n',
        b'\r' => b'r',
        b'\t' => b't',
        0x0b => b'v',
        _ => return None,
    })
}

/// Decodes `raw` (one field, without delimiters) into a new byte vector.
pub fn unescape(raw: &[u8]) -> Result<Vec<u8>, EscapeError> {
    let mut buf = raw.to_vec();
    unescape_in_place(&mut buf, 0)?;
    Ok(buf)
}

/// Decodes the field stored in `buf[from..]` and moves the result to the front of `buf`,
/// truncating it. Decoding never lengthens the text, so the write cursor never overtakes the
/// read cursor; this lets the reader decode a multi-hundred-MB payload without a second buffer.
pub fn unescape_in_place(buf: &mut Vec<u8>, from: usize) -> Result<(), EscapeError> {
    let mut read = from;
    let mut write = 0;
    let len = buf.len();
    while read < len {
        let b = buf[read];
        if b != b'\\' {
            if b == b'\r' {
                // COPY always escapes CR; a raw one means CRLF line endings or corruption.
                return Err(EscapeError { offset: read - from, reason: "unescaped carriage return" });
            }
            buf[write] = b;
            write += 1;
            read += 1;
            continue;
        }
        let offset = read - from;
        let Some(&code) = buf.get(read + 1) else {
            return Err(EscapeError { offset, reason: "backslash at end of field" });
        };
        // `consumed` counts the bytes after the backslash that belong to the escape.
        let (decoded, consumed) = match code {
            b'\\' => (b'\\', 1),
            b'b' => (0x08, 1),
            b'f' => (0x0c, 1),
            b'n' => (b'\n', 1),
            b'r' => (b'\r', 1),
            b't' => (b'\t', 1),
            b'v' => (0x0b, 1),
            b'0'..=b'7' => decode_digits(&buf[read + 1..], 8, 3),
            b'x' => {
                let (value, digits) = decode_digits(&buf[read + 2..], 16, 2);
                if digits == 0 {
                    return Err(EscapeError { offset, reason: "\\x without hex digits" });
                }
                (value, digits + 1)
            }
            b'N' => return Err(EscapeError { offset, reason: "\\N inside a field" }),
            _ => return Err(EscapeError { offset, reason: "unknown backslash escape" }),
        };
        if decoded == 0 {
            // PostgreSQL text cannot hold NUL; a decoded NUL can only come from a bad file.
            return Err(EscapeError { offset, reason: "escape decodes to a NUL byte" });
        }
        buf[write] = decoded;
        write += 1;
        read += 1 + consumed;
    }
    buf.truncate(write);
    Ok(())
}

/// Parses up to `max` digits of `radix` from the front of `digits`; returns the byte value
/// (masked to 8 bits like the server does for `\777`) and how many digits were used.
fn decode_digits(digits: &[u8], radix: u32, max: usize) -> (u8, usize) {
    let mut value: u32 = 0;
    let mut used = 0;
    for &d in digits.iter().take(max) {
        let Some(v) = char::from(d).to_digit(radix) else { break };
        value = value * radix + v;
        used += 1;
    }
    ((value & 0xff) as u8, used)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn escaped(s: &str) -> String {
        let mut out = Vec::new();
        write_escaped(&mut out, s).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn escapes_exactly_what_copy_escapes() {
        assert_eq!(escaped("a\\b\tc\nd\re"), "a\\\\b\\tc\\nd\\re");
        assert_eq!(escaped("\u{8}\u{c}\u{b}"), "\\b\\f\\v");
        // Other control characters and non-ASCII text pass through untouched.
        assert_eq!(escaped("\u{1}\u{1f}é€"), "\u{1}\u{1f}é€");
        assert_eq!(escaped(""), "");
    }

    #[test]
    fn round_trips_every_ascii_byte_and_unicode() {
        let mut s: String = (1u8..=0x7f).map(char::from).collect();
        s.push_str("ü\\\\\t\t{\"k\":\"v\\\"\"}");
        let enc = escaped(&s);
        assert!(!enc.contains('\t') && !enc.contains('\n') && !enc.contains('\r'));
        assert_eq!(unescape(enc.as_bytes()).unwrap(), s.as_bytes());
    }

    #[test]
    fn decodes_octal_and_hex() {
        assert_eq!(unescape(br"\101\x42\x4a\7z").unwrap(), b"ABJ\x07z");
        // Octal takes at most three digits, hex at most two.
        assert_eq!(unescape(br"\1011").unwrap(), b"A1");
        assert_eq!(unescape(br"\x414").unwrap(), b"A4");
        // Values above 0o377 are masked like the server does.
        assert_eq!(unescape(br"\501").unwrap(), b"A");
    }

    #[test]
    fn in_place_decoding_moves_the_field_to_the_front() {
        let mut buf = b"skip\tp\\tq\\\\".to_vec();
        unescape_in_place(&mut buf, 5).unwrap();
        assert_eq!(buf, b"p\tq\\");
    }

    #[test]
    fn rejects_bad_escapes_with_offsets() {
        let err = |raw: &[u8]| unescape(raw).unwrap_err();
        assert_eq!(err(b"ab\\"), EscapeError { offset: 2, reason: "backslash at end of field" });
        assert_eq!(err(b"a\\q").offset, 1);
        assert_eq!(err(b"a\\q").reason, "unknown backslash escape");
        assert_eq!(err(b"\\xg").reason, "\\x without hex digits");
        assert_eq!(err(b"x\\N").reason, "\\N inside a field");
        assert_eq!(err(b"\\000").reason, "escape decodes to a NUL byte");
        assert_eq!(err(b"ab\r").reason, "unescaped carriage return");
    }
}
