//! `/extended/v3`: the incumbent's newest route generation, cursor-paged.
//!
//! # The skeleton every v3 route family builds on
//! * A family is a sub-module with `pub(crate) fn routes<R: ExtendedReader>(reader: Arc<R>) ->
//!   impl Filter<Extract = (impl Reply,), Error = Rejection> + Clone`, or'ed in [`routes`] below
//!   (one line per family). Its reads are a trait of its own in `ledger-read` (no SQL in
//!   this crate), added to [`crate::ExtendedReader`] in lib.rs, implemented in ledger-core/src/store.
//! * [`page`]: the envelope [`page::CursorPage`] `{total, limit, cursor: {next, previous,
//!   current}, results}` (build it with `CursorPage::new`, render rows with `map`/`try_map`,
//!   [`page::Cursors`] all `None` on an empty page), the limit rules ([`page::TX`],
//!   [`page::EVENT`], [`page::FT_BALANCE`], [`page::NFT_BALANCE`], [`page::SIGNER`]) and
//!   [`page::limit`] (absent: default; 0, above max, not an integer: the validator's message);
//!   [`page::paged`] pages a list read whole, its `previous` cursor by one of the incumbent's two
//!   lookups ([`page::Previous`]).
//! * [`cursor`]: one [`cursor::Format`] per cursor schema of the incumbent ([`cursor::TX`],
//!   [`cursor::MEMPOOL`], [`cursor::EVENT`], [`cursor::BOND`], [`cursor::FT_BALANCE`],
//!   [`cursor::NFT_BALANCE`], [`cursor::SIGNER`], [`cursor::STAKER`], [`cursor::SIGNING_KEY`],
//!   [`cursor::TX_BALANCE_CHANGE`], [`cursor::BALANCE_CHANGE`]); [`cursor::read`] validates the
//!   request's `cursor` against one (the message quotes its pattern); typed cursors
//!   [`cursor::TxCursor`] (`height:microblock_sequence:tx_index`, [`cursor::ANCHORED_SEQUENCE`]
//!   for anchored transactions, `H:0:0` naming block H: `may_name_block`, `block_end`) and
//!   [`cursor::MempoolCursor`] (`receipt_time:tx_id`), both `Display` as the incumbent encodes;
//!   [`cursor::FtBalanceCursor`] and [`cursor::NftBalanceCursor`] (split at the first colon).
//! * [`params`]: path parameters with the v3 schemas' messages: [`params::principal`] (v3's
//!   anchored address pattern), [`params::tx_id`] / [`params::hash_named`] (lower-case `0x`
//!   form), [`params::height_or_hash`] ([`params::HeightOrHash`]).
//! * Errors: return [`crate::error::ApiError`]; `ApiError::schema(In::Query, "x", Rule::..)` for
//!   what the incumbent's validator rejects (its 400 `FST_ERR_VALIDATION`, our 500 keeping
//!   `message` and `code`), `ApiError::invalid(param, "its text")` for its handlers' 400s
//!   (`Transaction not found` on events), `ApiError::NotFound("Transaction not found")` for its
//!   404s (`{statusCode, error: "Not Found", message}`).
//! * [`etag`]: [`etag::Kind`] (chain tip, transaction, block, principal, principal + mempool),
//!   [`etag::value`] computes one, [`etag::cached`] answers the 304 or adds the header.
//! * [`tx`] (the first family): [`tx::V3TxReader`], the entity renderers in [`tx::render`]
//!   (`mined_summary_text` writes the `TransactionSummary` every transaction list shows as JSON
//!   text, `summary_json` is the same as a value, `transaction_json`,
//!   the mempool ones, `event_json`, `memo_repr`), [`tx::tx_page`], the incumbent's transaction
//!   paging (`limit + 1` rows, `previous` by an ascending read, `H:0:0`), and [`tx::mempool_page`],
//!   its mempool paging (all pending transactions or a principal's, [`tx::MempoolScope`]).
//! * [`staking`]: PoX-5 staking (bonds, signers, a principal's staking), read from one
//!   [`staking::StakingState`] folded by the ledger from the canonical pox-5 events.
//! * OpenAPI: declare routes in `openapi/registry/v3.rs` (builder `.cursor_paged(rule,
//!   cursor::FORMAT)`) and schemas in `openapi/schemas/v3.rs` (`cursor_page(item)`), one
//!   function per family.

pub mod cursor;
pub mod etag;
pub mod page;
pub mod params;
pub mod principals;
pub mod staking;
pub mod tx;

use std::sync::Arc;

use warp::reply::Response;
use warp::{Filter, Rejection, Reply};

use crate::ExtendedReader;

/// The filter every family is or'ed onto: it matches nothing, so a request no family answers
/// falls through to the caller's fallback.
fn none() -> impl Filter<Extract = (Response,), Error = Rejection> + Clone {
    warp::any().and_then(|| async { Err::<Response, Rejection>(warp::reject::not_found()) })
}

/// Every `/extended/v3` route.
pub fn routes<R: ExtendedReader>(
    reader: Arc<R>,
) -> impl Filter<Extract = (impl Reply,), Error = Rejection> + Clone {
    none()
        .or(tx::routes::routes(reader.clone()))
        .or(principals::routes(reader.clone()))
        .or(staking::routes(reader))
}
