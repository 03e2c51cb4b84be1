//! A bounds-checked cursor over a byte slice. Every read returns `CodecError::UnexpectedEof`
//! instead of panicking, and length prefixes are checked against what is left before any
//! allocation, so a hostile length (e.g. `0xffffffff`) costs nothing.

use crate::CodecError;

#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    pub fn position(&self) -> usize {
        self.pos
    }

    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// Fails with `TrailingBytes` unless the whole input was consumed.
    pub fn finish(&self) -> Result<(), CodecError> {
        match self.remaining() {
            0 => Ok(()),
            n => Err(CodecError::TrailingBytes(n)),
        }
    }

    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8], CodecError> {
        if n > self.remaining() {
            return Err(CodecError::UnexpectedEof { offset: self.pos, needed: n - self.remaining() });
        }
        let out = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    pub fn array<const N: usize>(&mut self) -> Result<[u8; N], CodecError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.bytes(N)?);
        Ok(out)
    }

    pub fn u8(&mut self) -> Result<u8, CodecError> {
        Ok(self.array::<1>()?[0])
    }

    pub fn u16(&mut self) -> Result<u16, CodecError> {
        Ok(u16::from_be_bytes(self.array()?))
    }

    pub fn u32(&mut self) -> Result<u32, CodecError> {
        Ok(u32::from_be_bytes(self.array()?))
    }

    pub fn u64(&mut self) -> Result<u64, CodecError> {
        Ok(u64::from_be_bytes(self.array()?))
    }

    pub fn u128(&mut self) -> Result<u128, CodecError> {
        Ok(u128::from_be_bytes(self.array()?))
    }

    pub fn i128(&mut self) -> Result<i128, CodecError> {
        Ok(i128::from_be_bytes(self.array()?))
    }

    /// Reads a big-endian u32 element count and checks it against `max`, and against the
    /// bytes left given that each element takes at least `min_elem_size` bytes.
    pub fn count_u32(
        &mut self,
        what: &'static str,
        max: u64,
        min_elem_size: usize,
    ) -> Result<usize, CodecError> {
        let n = self.u32()? as u64;
        self.check_len(what, n, max, min_elem_size)
    }

    /// Same as [`Reader::count_u32`] for a one-byte length prefix.
    pub fn count_u8(&mut self, what: &'static str, max: u64) -> Result<usize, CodecError> {
        let n = self.u8()? as u64;
        self.check_len(what, n, max, 1)
    }

    fn check_len(
        &self,
        what: &'static str,
        n: u64,
        max: u64,
        min_elem_size: usize,
    ) -> Result<usize, CodecError> {
        if n > max {
            return Err(CodecError::TooLong { what, len: n, max });
        }
        let need = n.saturating_mul(min_elem_size as u64);
        if need > self.remaining() as u64 {
            return Err(CodecError::UnexpectedEof {
                offset: self.pos,
                needed: (need - self.remaining() as u64).min(usize::MAX as u64) as usize,
            });
        }
        Ok(n as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_bounds_checked() {
        let mut r = Reader::new(&[0, 1, 2]);
        assert_eq!(r.u16().unwrap(), 1);
        assert_eq!(r.u16(), Err(CodecError::UnexpectedEof { offset: 2, needed: 1 }));
        assert_eq!(r.u8().unwrap(), 2);
        r.finish().unwrap();
    }

    #[test]
    fn hostile_counts_fail_before_allocating() {
        let mut r = Reader::new(&[0xff, 0xff, 0xff, 0xff, 0]);
        assert!(matches!(r.count_u32("list", u32::MAX as u64, 1), Err(CodecError::UnexpectedEof { .. })));
        let mut r = Reader::new(&[0, 0, 0, 9]);
        assert!(matches!(r.count_u32("list", 8, 0), Err(CodecError::TooLong { len: 9, max: 8, .. })));
    }
}
