//! c32check for addresses, written out by hand.
//!
//! Why not the `c32` crate: its decoder panics on short inputs (`c32::decode_check_prefixed("SP0", 'S')`
//! underflows computing the checksum offset) and it case-folds lowercase, which we reject.
//!
//! Format: `S`, one c32 character for the version, then the c32 encoding of `hash160 ‖ checksum`
//! where checksum = `sha256(sha256(version ‖ hash160))[..4]`. The c32 part is the big-endian number
//! in base 32 without leading zero digits, preceded by one `0` per leading zero byte.

use crate::hash::sha256;
use crate::CodecError;

const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// `hash160 ‖ checksum`.
const PAYLOAD_LEN: usize = 24;

/// The longest address text: `S`, the version, and 39 digits (192 bits, no leading zero bytes).
pub(crate) const MAX_ADDRESS_LEN: usize = 41;

/// The value of one c32 character. Uppercase only; `O` reads as 0 and `I`/`L` as 1, which every
/// reference library (c32check, the native decoder, stacks.js) accepts too.
fn digit(c: u8) -> Option<u8> {
    match c {
        b'O' => Some(0),
        b'I' | b'L' => Some(1),
        _ => ALPHABET.iter().position(|&a| a == c).and_then(|p| u8::try_from(p).ok()),
    }
}

fn checksum(version: u8, hash: &[u8; 20]) -> [u8; 4] {
    let mut data = [0u8; 21];
    data[0] = version;
    data[1..].copy_from_slice(hash);
    let h = sha256(&sha256(&data));
    [h[0], h[1], h[2], h[3]]
}

/// Encodes the address text. The version must be below 32; callers mask it (see `to_c32`).
pub(crate) fn encode(version: u8, hash: &[u8; 20]) -> String {
    let version = version & 0x1f;
    let mut payload = [0u8; PAYLOAD_LEN];
    payload[..20].copy_from_slice(hash);
    payload[20..].copy_from_slice(&checksum(version, hash));

    // Little-endian base-32 digits of the payload as one big number.
    let mut digits: Vec<u8> = Vec::with_capacity(MAX_ADDRESS_LEN);
    let (mut carry, mut bits) = (0u16, 0u32);
    for &b in payload.iter().rev() {
        carry |= u16::from(b) << bits;
        bits += 8;
        while bits >= 5 {
            digits.push((carry & 0x1f) as u8);
            carry >>= 5;
            bits -= 5;
        }
    }
    if bits > 0 {
        digits.push((carry & 0x1f) as u8);
    }
    while digits.last() == Some(&0) {
        digits.pop();
    }
    let leading_zero_bytes = payload.iter().take_while(|&&b| b == 0).count();
    digits.extend(std::iter::repeat_n(0, leading_zero_bytes));

    let mut out = String::with_capacity(2 + digits.len());
    out.push('S');
    out.push(char::from(ALPHABET[usize::from(version)]));
    out.extend(digits.iter().rev().map(|&d| char::from(ALPHABET[usize::from(d & 0x1f)])));
    out
}

/// Decodes address text strictly: leading `S`, uppercase c32 only, a 20-byte hash, a valid checksum.
pub(crate) fn decode(s: &str) -> Result<(u8, [u8; 20]), CodecError> {
    let err = |reason: &str| CodecError::Address(format!("{s}: {reason}"));
    if s.len() > MAX_ADDRESS_LEN {
        return Err(CodecError::Address(format!(
            "{} characters is longer than any address ({MAX_ADDRESS_LEN})",
            s.len()
        )));
    }
    let bytes = s.as_bytes();
    let (&first, rest) = bytes.split_first().ok_or_else(|| err("empty"))?;
    if first != b'S' {
        return Err(err("must start with 'S'"));
    }
    let (&version_char, body) = rest.split_first().ok_or_else(|| err("missing version character"))?;
    let version = digit(version_char).ok_or_else(|| err("invalid c32 character"))?;
    let mut digits = Vec::with_capacity(body.len());
    for (i, &c) in body.iter().enumerate() {
        let d = digit(c).ok_or_else(|| err(&format!("invalid c32 character at position {}", i + 2)))?;
        digits.push(d);
    }

    // Big-endian bytes of the number, then one zero byte per leading zero digit.
    let mut le: Vec<u8> = Vec::with_capacity(PAYLOAD_LEN + 1);
    let (mut carry, mut bits) = (0u16, 0u32);
    for &d in digits.iter().rev() {
        carry |= u16::from(d) << bits;
        bits += 5;
        if bits >= 8 {
            le.push((carry & 0xff) as u8);
            carry >>= 8;
            bits -= 8;
        }
    }
    if bits > 0 {
        le.push((carry & 0xff) as u8);
    }
    while le.last() == Some(&0) {
        le.pop();
    }
    let leading_zero_digits = digits.iter().take_while(|&&d| d == 0).count();
    le.extend(std::iter::repeat_n(0, leading_zero_digits));
    le.reverse();
    let payload = le;

    let payload: [u8; PAYLOAD_LEN] = payload.as_slice().try_into().map_err(|_| {
        err(&format!("expected a 20-byte hash, got {} bytes", payload.len().saturating_sub(4)))
    })?;
    let mut hash = [0u8; 20];
    hash.copy_from_slice(&payload[..20]);
    if payload[20..] != checksum(version, &hash) {
        return Err(err("checksum mismatch"));
    }
    Ok((version, hash))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_encodings() {
        assert_eq!(encode(22, &[0; 20]), "SP000000000000000000002Q6VF78");
        assert_eq!(encode(26, &[0xff; 20]), "ST3ZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZX943WZ1");
    }

    #[test]
    fn round_trips_every_leading_zero_count_and_version() {
        for zeros in 0..=20 {
            for version in [0u8, 1, 20, 21, 22, 26, 31] {
                let mut hash = [0u8; 20];
                for (i, b) in hash.iter_mut().enumerate().skip(zeros) {
                    *b = (i as u8).wrapping_mul(37).wrapping_add(version) | 1;
                }
                let text = encode(version, &hash);
                assert!(text.len() <= MAX_ADDRESS_LEN, "{text}");
                assert_eq!(decode(&text).unwrap(), (version, hash), "{text}");
            }
        }
    }

    #[test]
    fn rejects_without_panicking() {
        for s in ["", "S", "SP", "SP0", "SPZ", "SP00000", "Sp000000000000000000002Q6VF78", "SP\u{e9}"] {
            assert!(decode(s).is_err(), "{s:?}");
        }
        let long = "S".repeat(1 << 20);
        assert!(decode(&long).is_err());
    }

    #[test]
    fn reads_o_i_l_as_digits() {
        assert_eq!(decode("SPOOOOOOOOOOOOOOOOOOOO2Q6VF78").unwrap(), (22, [0; 20]));
    }
}
