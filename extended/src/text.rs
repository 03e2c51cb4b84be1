//! JSON objects written as text straight into a page's buffer, for list pages whose rows would
//! otherwise be built as `Value` trees (an `IndexMap` insert per member, a key `String` each)
//! and serialized again: the same bytes as `serde_json` writes for those trees (keys in
//! insertion order, `preserve_order`), without the tree.

use serde::Serialize;

use crate::time::iso8601_into;

/// The five execution-cost members of a block or a transaction, in the order the incumbent
/// writes them (the order of the record's `execution_cost` array).
pub(crate) const EXECUTION_COST_NAMES: [&str; 5] = [
    "execution_cost_read_count",
    "execution_cost_read_length",
    "execution_cost_runtime",
    "execution_cost_write_count",
    "execution_cost_write_length",
];

/// One JSON object being written into `out`: members appended with their commas.
pub(crate) struct Obj<'a> {
    out: &'a mut Vec<u8>,
    first: bool,
}

impl<'a> Obj<'a> {
    pub(crate) fn open(out: &'a mut Vec<u8>) -> Self {
        out.push(b'{');
        Obj { out, first: true }
    }

    /// `"key":` with the comma before it unless first. Keys are this crate's own literals
    /// (nothing to escape).
    fn key(&mut self, key: &str) {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
        self.out.push(b'"');
        self.out.extend_from_slice(key.as_bytes());
        self.out.extend_from_slice(b"\":");
    }

    /// `"key":value`, the value as `serde_json` serializes it (strings escaped).
    pub(crate) fn member(&mut self, key: &str, value: impl Serialize) {
        self.key(key);
        // Serializing strings, numbers, bools, options and lists of them into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut *self.out, &value);
    }

    /// `"key":` followed by the value's JSON text, which `write` appends as it is.
    pub(crate) fn raw_member(&mut self, key: &str, write: impl FnOnce(&mut Vec<u8>)) {
        self.key(key);
        write(self.out);
    }

    /// An `*_iso` member: [`crate::time::iso8601`] of `secs`, written straight into the buffer (its text
    /// needs no escapes).
    pub(crate) fn iso(&mut self, key: &str, secs: i64) {
        self.key(key);
        self.out.push(b'"');
        iso8601_into(secs, self.out);
        self.out.push(b'"');
    }

    /// `"key":` followed by a nested object the caller writes (and closes) into the buffer.
    pub(crate) fn object(&mut self, key: &str) -> Obj<'_> {
        self.key(key);
        Obj::open(&mut *self.out)
    }

    /// A member whose key is data (escaped as a JSON string), e.g. a map keyed by hash.
    pub(crate) fn data_key_member(&mut self, key: &str, value: impl Serialize) {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
        let _ = serde_json::to_writer(&mut *self.out, key);
        self.out.push(b':');
        let _ = serde_json::to_writer(&mut *self.out, &value);
    }

    pub(crate) fn close(self) {
        self.out.push(b'}');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::iso8601;

    #[test]
    fn objects_are_written_as_serde_json_writes_the_tree() {
        let mut out = Vec::new();
        let mut o = Obj::open(&mut out);
        o.member("a", "x\"y\u{1}é");
        o.member("b", -3i64);
        o.member("c", Option::<String>::None);
        o.member("d", ["0x01".to_string(), "0x02".to_string()]);
        o.iso("e", 1_700_000_000);
        o.iso("f", 0);
        o.iso("g", 400_000_000_000);
        let mut inner = o.object("h");
        inner.data_key_member("k\"1", 5u64);
        inner.data_key_member("k2", 6u64);
        inner.close();
        let empty = o.object("i");
        empty.close();
        o.close();
        let tree = serde_json::json!({
            "a": "x\"y\u{1}é",
            "b": -3,
            "c": null,
            "d": ["0x01", "0x02"],
            "e": iso8601(1_700_000_000),
            "f": iso8601(0),
            "g": iso8601(400_000_000_000),
            "h": { "k\"1": 5, "k2": 6 },
            "i": {},
        });
        assert_eq!(String::from_utf8(out).unwrap(), serde_json::to_string(&tree).unwrap());
    }
}
