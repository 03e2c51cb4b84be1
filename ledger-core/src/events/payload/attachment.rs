//! `/attachments/new`: Atlas attachments (BNS zonefiles) the node fetched.

use serde::Deserialize;

use super::num::u64_flex;

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct AttachmentsNew {
    pub attachments: Vec<Attachment>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Attachment {
    #[serde(deserialize_with = "u64_flex")]
    pub attachment_index: u64,
    pub index_block_hash: String,
    /// Number on current nodes; some older ones quoted it.
    #[serde(deserialize_with = "u64_flex")]
    pub block_height: u64,
    pub content_hash: String,
    /// Contract that registered the attachment (the BNS contract for zonefiles).
    pub contract_id: String,
    /// 0x hex of a consensus-serialised Clarity value (BNS op metadata).
    pub metadata: String,
    pub tx_id: String,
    /// 0x hex of the attachment bytes (the zonefile).
    pub content: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_height_as_number_or_string() {
        let one = |h: &str| {
            format!(
                r#"{{"attachment_index":1,"index_block_hash":"0xaa","block_height":{h},"content_hash":"0xbb",
                "contract_id":"SP000000000000000000002Q6VF78.bns","metadata":"0x0c","tx_id":"0xcc","content":"0x"}}"#
            )
        };
        let json = format!("[{},{}]", one("17"), one("\"18\""));
        let a: AttachmentsNew = serde_json::from_str(&json).unwrap();
        assert_eq!(a.attachments.iter().map(|a| a.block_height).collect::<Vec<_>>(), [17, 18]);
    }
}
