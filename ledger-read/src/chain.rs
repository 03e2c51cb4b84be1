//! What the chain routes (blocks, burn blocks, supply, burnchain rewards, PoX) need from storage.

use std::future::Future;

use crate::ReadError;

/// A block named by height, hash or as the tip.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeightOrHash {
    /// The chain tip.
    Latest,
    /// A hash as given, `0x`-prefixed (looked up unchanged).
    Hash(String),
    /// The canonical block at this height.
    Height(u64),
}

/// A Stacks block as stored (hashes `0x`-prefixed).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BlockRecord {
    pub canonical: bool,
    pub block_height: u64,
    pub block_hash: String,
    pub index_block_hash: String,
    pub parent_block_hash: String,
    pub parent_index_block_hash: String,
    pub block_time: i64,
    pub burn_block_time: i64,
    pub burn_block_hash: String,
    pub burn_block_height: u64,
    pub miner_txid: String,
    pub parent_microblock_hash: String,
    pub parent_microblock_sequence: i64,
    pub tenure_height: Option<i64>,
    pub signer_bitvec: Option<String>,
    /// read_count, read_length, runtime, write_count, write_length.
    pub execution_cost: [i64; 5],
    pub tx_count: u64,
}

/// A block's transaction ids, newest first: a list, or the JSON array text the store keeps
/// with the block (`blocks.tx_ids`), written into a page as it is (parsing the 2,000 ids of a
/// 1M-chain `/extended/v1/block` page to write them out again was half of its CPU).
#[derive(Debug, Clone)]
pub enum TxIds {
    List(Vec<String>),
    /// Compact JSON text of an array of ids, each `0x` and 64 lowercase hex digits (nothing to
    /// escape): only [`TxIds::from_json`] makes one.
    Json(String),
}

impl TxIds {
    /// The ids of a JSON array text: kept as text when it has the shape [`TxIds::Json`]
    /// holds, else parsed (any array of strings); `Err` when it is not one.
    pub fn from_json(text: String) -> Result<TxIds, serde_json::Error> {
        if id_array_shape(text.as_bytes()) {
            Ok(TxIds::Json(text))
        } else {
            serde_json::from_str(&text).map(TxIds::List)
        }
    }

    /// The ids, in order.
    pub fn ids(&self) -> Vec<&str> {
        match self {
            TxIds::List(v) => v.iter().map(String::as_str).collect(),
            TxIds::Json(t) if t.len() > 2 => {
                t[1..t.len() - 1].split(',').map(|q| &q[1..q.len() - 1]).collect()
            }
            TxIds::Json(_) => Vec::new(),
        }
    }

    /// The JSON array text as `serde_json` writes the list.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            TxIds::Json(t) => out.extend_from_slice(t.as_bytes()),
            // Serializing a list of strings into a Vec cannot fail.
            TxIds::List(v) => {
                let _ = serde_json::to_writer(out, v);
            }
        }
    }
}

/// `[]` or `["0x…","0x…"]` with 64 lowercase hex digits per id and no spaces.
fn id_array_shape(b: &[u8]) -> bool {
    const ID: usize = 2 + 2 + 64;
    match b {
        [b'[', b']'] => true,
        [b'[', inner @ .., b']'] => {
            (inner.len() + 1) % (ID + 1) == 0
                && inner.chunks(ID + 1).all(|c| {
                    let (id, sep) = c.split_at(ID);
                    sep.iter().all(|&s| s == b',')
                        && id[0] == b'"'
                        && id[ID - 1] == b'"'
                        && &id[1..3] == b"0x"
                        && lower_hex(&id[3..ID - 1])
                })
        }
        _ => false,
    }
}

/// Whether every byte is a lowercase hex digit. Without a branch per byte, so that it compiles
/// to vector compares: this check over the 2,000 ids of a 1M-chain `/block` page was 28 % of its
/// CPU with `all` (which stops at the first miss, one branch per byte).
fn lower_hex(b: &[u8]) -> bool {
    b.iter().fold(true, |ok, &h| ok & ((h.wrapping_sub(b'0') < 10) | (h.wrapping_sub(b'a') < 6)))
}

impl Default for TxIds {
    fn default() -> Self {
        TxIds::List(Vec::new())
    }
}

impl From<Vec<String>> for TxIds {
    fn from(v: Vec<String>) -> Self {
        TxIds::List(v)
    }
}

/// The same ids in the same order, however they are held.
impl PartialEq for TxIds {
    fn eq(&self, other: &Self) -> bool {
        self.ids() == other.ids()
    }
}

impl Eq for TxIds {}

impl serde::Serialize for TxIds {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.ids())
    }
}

/// What the v1 `Block` adds to a block: its transactions and microblocks.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BlockContents {
    pub tx_ids: TxIds,
    pub microblocks_accepted: Vec<String>,
    pub microblocks_streamed: Vec<String>,
    /// Per accepted microblock, its transaction count.
    pub microblock_tx_count: Vec<(String, u64)>,
}

/// One Bitcoin output paying a PoX reward slot (`BurnBlockPoxTx`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BurnPoxTx {
    pub burn_block_hash: String,
    pub burn_block_height: u64,
    pub tx_id: String,
    pub recipient: String,
    pub utxo_idx: u64,
    pub amount: u64,
}

/// Whose PoX payout outputs a route lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PoxTxsOf {
    /// Those of one burn block.
    Burn(BurnRef),
    /// Those paid to one Bitcoin address.
    Recipient(String),
}

/// How a route names one block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlockRef {
    /// The block hash (v1 `/block/{hash}`).
    Hash(String),
    /// A block hash or an index block hash (v2).
    AnyHash(String),
    /// The canonical block at a height.
    Height(u64),
    /// The canonical tip.
    Latest,
    /// The canonical block of a burn block, by its hash.
    BurnHash(String),
    /// The canonical block of a burn block, by its height.
    BurnHeight(u64),
}

/// A burn block as the v2 routes show it: a canonical burn block that has Stacks blocks.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BurnBlockRecord {
    pub burn_block_hash: String,
    pub burn_block_height: u64,
    pub burn_block_time: i64,
    /// Newest first.
    pub stacks_blocks: Vec<String>,
    pub avg_block_time: f64,
    pub total_tx_count: u64,
}

/// How a route names a burn block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BurnRef {
    Hash(String),
    Height(u64),
    Latest,
}

/// The STX supply at a block (µSTX).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SupplyRecord {
    /// Minted minus burnt STX plus the coinbases matured at the block: the incumbent serves it
    /// as both the total and the unlocked supply (it subtracts no locked STX).
    pub total_ustx: i128,
    pub block_height: u64,
}

/// One burnchain reward payout.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BurnchainReward {
    pub canonical: bool,
    pub burn_block_hash: String,
    pub burn_block_height: u64,
    pub burn_amount: i64,
    pub reward_recipient: String,
    pub reward_amount: i64,
    pub reward_index: u64,
}

/// One reward slot holder.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RewardSlotHolder {
    pub canonical: bool,
    pub burn_block_hash: String,
    pub burn_block_height: u64,
    pub address: String,
    pub slot_index: u64,
}

/// A v2 blocks page: its blocks, newest first, and the index block hashes that start the newer
/// and the older page (`ChainReader::blocks_page`).
pub type BlocksPage = (Vec<BlockRecord>, Option<String>, Option<String>);

pub trait ChainReader: Send + Sync + 'static {
    fn block(&self, by: BlockRef) -> impl Future<Output = Result<Option<BlockRecord>, ReadError>> + Send;
    fn block_contents(
        &self,
        block: &BlockRecord,
    ) -> impl Future<Output = Result<BlockContents, ReadError>> + Send;
    /// The block's signer signatures (hex), in signing order.
    fn block_signer_signatures(
        &self,
        block: &BlockRecord,
    ) -> impl Future<Output = Result<Vec<String>, ReadError>> + Send;
    /// The canonical blocks, newest first, from `offset` (the total is the tip height).
    fn blocks(
        &self,
        limit: u32,
        offset: u64,
    ) -> impl Future<Output = Result<(u64, Vec<BlockRecord>), ReadError>> + Send;
    /// The canonical blocks at or below `height`, newest first.
    fn blocks_below(
        &self,
        height: u64,
        limit: u32,
    ) -> impl Future<Output = Result<Vec<BlockRecord>, ReadError>> + Send;
    /// A v2 list page: the canonical blocks at or below `start`, newest first (at most
    /// `limit`), and the index block hashes of the canonical blocks at `start + limit` and
    /// `start - limit` (the first blocks of the newer and older pages, their cursors).
    fn blocks_page(
        &self,
        start: u64,
        limit: u32,
    ) -> impl Future<Output = Result<BlocksPage, ReadError>> + Send {
        async move {
            // The page and the `limit` blocks above and below it (canonical blocks have
            // distinct heights).
            let around = self.blocks_below(start + u64::from(limit), 2 * limit + 1).await?;
            let at = |h: u64| around.iter().find(|b| b.block_height == h).map(|b| b.index_block_hash.clone());
            let next = at(start + u64::from(limit));
            let prev = start.checked_sub(u64::from(limit)).and_then(at);
            let page =
                around.iter().filter(|b| b.block_height <= start).take(limit as usize).cloned().collect();
            Ok((page, next, prev))
        }
    }
    /// The newest canonical block whose block time is at or before `time`.
    fn block_by_time(&self, time: i64)
        -> impl Future<Output = Result<Option<BlockRecord>, ReadError>> + Send;
    /// The canonical blocks of one burn block, newest first, and how many there are.
    fn burn_block_blocks(
        &self,
        burn_block_hash: &str,
        limit: u32,
        offset: u64,
    ) -> impl Future<Output = Result<(u64, Vec<BlockRecord>), ReadError>> + Send;
    /// The canonical blocks of one tenure at or below `height`, newest first, and the count.
    fn tenure_blocks(
        &self,
        tenure_height: u64,
        below_height: Option<u64>,
        limit: u32,
    ) -> impl Future<Output = Result<(u64, Vec<BlockRecord>), ReadError>> + Send;
    /// Per window ending at `now` (the longest last): the sum and the number of the gaps
    /// between consecutive canonical blocks of the longest window whose later block falls in
    /// the window (a block's time is its `block_time`, or its burn block's when that is 0).
    fn average_block_times(
        &self,
        now: i64,
        windows: [i64; 4],
    ) -> impl Future<Output = Result<[(i64, u64); 4], ReadError>> + Send;
    fn burn_block(
        &self,
        by: BurnRef,
    ) -> impl Future<Output = Result<Option<BurnBlockRecord>, ReadError>> + Send;
    fn burn_blocks(
        &self,
        limit: u32,
        offset: u64,
    ) -> impl Future<Output = Result<(u64, Vec<BurnBlockRecord>), ReadError>> + Send;
    /// The supply at a canonical height (the tip when `None`); `None` when there is no block.
    fn supply(
        &self,
        height: Option<u64>,
    ) -> impl Future<Output = Result<Option<SupplyRecord>, ReadError>> + Send;
    /// Reward payouts, newest first, optionally to one BTC address.
    fn burnchain_rewards(
        &self,
        recipient: Option<&str>,
        limit: u32,
        offset: u64,
    ) -> impl Future<Output = Result<Vec<BurnchainReward>, ReadError>> + Send;
    /// The total canonical reward paid to a BTC address.
    fn burnchain_reward_total(&self, recipient: &str)
        -> impl Future<Output = Result<i128, ReadError>> + Send;
    fn reward_slot_holders(
        &self,
        address: Option<&str>,
        limit: u32,
        offset: u64,
    ) -> impl Future<Output = Result<(u64, Vec<RewardSlotHolder>), ReadError>> + Send;
    /// One v1 `/block` list page: the canonical blocks at or below `height`, newest first (at
    /// most `limit`), each with its contents as the incumbent's list shows them (its list
    /// query differs from its by-id one; see the store).
    fn block_list(
        &self,
        height: u64,
        limit: u32,
    ) -> impl Future<Output = Result<Vec<(BlockRecord, BlockContents)>, ReadError>> + Send;
    /// Canonical PoX payout outputs, newest burn block first, and how many there are (an
    /// unknown burn block has none).
    fn pox_txs(
        &self,
        of: PoxTxsOf,
        limit: u32,
        offset: u64,
    ) -> impl Future<Output = Result<(u64, Vec<BurnPoxTx>), ReadError>> + Send;
}

#[cfg(test)]
mod tx_ids_tests {
    use super::TxIds;

    fn id(n: u8) -> String {
        format!("0x{}", format!("{n:02x}").repeat(32))
    }

    #[test]
    fn stored_text_is_kept_and_reads_as_the_list() {
        for ids in [vec![], vec![id(1)], vec![id(0xab), id(2), id(0xff)]] {
            let text = serde_json::to_string(&ids).unwrap();
            let t = TxIds::from_json(text.clone()).unwrap();
            assert!(matches!(t, TxIds::Json(_)), "{text}");
            assert_eq!(t, TxIds::List(ids.clone()));
            assert_eq!(serde_json::to_string(&t).unwrap(), text);
            let mut out = Vec::new();
            t.write_json(&mut out);
            assert_eq!(String::from_utf8(out).unwrap(), text);
        }
    }

    #[test]
    fn lower_hex_takes_only_lowercase_hex_digits() {
        for b in 0..=255u8 {
            let want = b.is_ascii_digit() || (b'a'..=b'f').contains(&b);
            assert_eq!(super::lower_hex(&[b'0', b, b'f']), want, "{b}");
        }
        assert!(super::lower_hex(b""));
    }

    #[test]
    fn other_texts_are_parsed_or_refused() {
        // Valid JSON of another shape (upper case, spaces, an escape): parsed into a list.
        for text in [
            format!("[\"{}\"]", id(0xab).to_uppercase().replacen("0X", "0x", 1)),
            format!("[ \"{}\" ]", id(1)),
            "[\"0x\\u0041\"]".to_string(),
            format!("[\"{}\",\"{}\"]", id(1), &id(2)[..10]),
        ] {
            let t = TxIds::from_json(text.clone()).unwrap();
            assert!(matches!(t, TxIds::List(_)), "{text}");
            let mut out = Vec::new();
            t.write_json(&mut out);
            let back: Vec<String> = serde_json::from_slice(&out).unwrap();
            assert_eq!(back, serde_json::from_str::<Vec<String>>(&text).unwrap());
        }
        for bad in ["", "[", "[\"0x01\",]", "{}", "[1]"] {
            assert!(TxIds::from_json(bad.to_string()).is_err(), "{bad}");
        }
    }
}
