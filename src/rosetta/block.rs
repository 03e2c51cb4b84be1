//! `/block` and `/block/transaction`.

use bytes::Bytes;
use rosetta_spec::{
    Block, BlockIdentifier, BlockRequest, BlockResponse, BlockTransactionRequest, BlockTransactionResponse,
    Metadata, PartialBlockIdentifier,
};
use serde_json::json;

use super::error::{ErrorKind, RosettaError};
use super::ops::transactions;
use super::request::parse;
use super::{Rosetta, RosettaResult};
use ledger_read::{BlockContents, LedgerBlock};

/// A block or transaction hash: `0x` and 64 hex digits (the prefix may be omitted).
pub fn parse_hash(hash: &str, kind: ErrorKind) -> RosettaResult<String> {
    let body = hash.strip_prefix("0x").or_else(|| hash.strip_prefix("0X")).unwrap_or(hash);
    if body.len() != 64 || !body.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(RosettaError::with_message(kind, format!("`{hash}` is not 32 bytes of hex")));
    }
    Ok(format!("0x{}", body.to_ascii_lowercase()))
}

pub fn identifier(b: &LedgerBlock) -> BlockIdentifier {
    BlockIdentifier::new(b.block_height, &b.block_hash)
}

/// The parent as the incumbent reports it: the block itself at the genesis height.
pub fn parent_identifier(b: &LedgerBlock) -> BlockIdentifier {
    if b.block_height <= 1 {
        identifier(b)
    } else {
        BlockIdentifier::new(b.block_height - 1, &b.parent_block_hash)
    }
}

/// Resolves a partial identifier: the tip when empty, the canonical block at an index, the
/// block with a hash (any fork). Only final (materialized) blocks are served, so the answer
/// for a hash never changes.
pub async fn resolve(ctx: &Rosetta, id: &PartialBlockIdentifier) -> RosettaResult<LedgerBlock> {
    let found = match (&id.index, &id.hash) {
        (None, None) => ctx.reader.tip().await?.map(|t| t.block),
        (index, Some(hash)) => {
            let hash = parse_hash(hash, ErrorKind::InvalidBlockHash)?;
            let b = ctx.reader.block_by_hash(&hash).await?;
            if let (Some(b), Some(i)) = (&b, index) {
                if b.block_height != *i {
                    return Err(RosettaError::with_details(
                        ErrorKind::InvalidBlockHash,
                        json!({ "message": "hash and index name different blocks", "index": i, "hash": hash }),
                    ));
                }
            }
            b
        }
        (Some(i), None) if *i < 0 => {
            return Err(RosettaError::with_message(
                ErrorKind::InvalidBlockIndex,
                format!("index {i} is negative"),
            ))
        }
        (Some(i), None) => ctx.reader.block_at(*i).await?,
    };
    match found {
        Some(b) if b.materialized => Ok(b),
        Some(b) => Err(RosettaError::with_details(
            ErrorKind::BlockNotFound,
            json!({ "message": "block not final yet (never on the canonical chain)", "hash": b.block_hash }),
        )),
        None => Err(RosettaError::with_details(ErrorKind::BlockNotFound, json!({ "block_identifier": id }))),
    }
}

/// `/block` as JSON bytes, rendered from the stored rows by [`super::block_view`].
pub async fn block_json(ctx: &Rosetta, body: &Bytes) -> RosettaResult<Vec<u8>> {
    let req: BlockRequest =
        parse(body, ctx.network, &[("block_identifier", ErrorKind::BlockIdentifierNull)])?;
    let b = resolve(ctx, &req.block_identifier).await?;
    let contents = ctx.reader.block_contents(&b.index_block_hash).await?;
    super::block_view::render(&b, &contents).map_err(|e| {
        tracing::error!(error = %e, block = %b.index_block_hash, "rosetta: /block does not serialize");
        RosettaError::new(ErrorKind::UnknownError)
    })
}

/// `/block` as the `rosetta-spec` model: the reference [`block_json`] is checked against
/// (`tests/rosetta_block_view.rs`).
pub fn block_model(b: &LedgerBlock, contents: &BlockContents) -> BlockResponse {
    let mut metadata = Metadata::new();
    metadata.insert("burn_block_height".into(), json!(b.burn_block_height));
    BlockResponse {
        block: Some(Block {
            block_identifier: identifier(b),
            parent_block_identifier: parent_identifier(b),
            timestamp: b.timestamp_ms,
            transactions: transactions(contents, &b.index_block_hash),
            metadata: Some(metadata),
        }),
        other_transactions: None,
    }
}

pub async fn transaction(ctx: &Rosetta, body: &Bytes) -> RosettaResult<BlockTransactionResponse> {
    let req: BlockTransactionRequest = parse(
        body,
        ctx.network,
        &[
            ("block_identifier", ErrorKind::BlockIdentifierNull),
            ("transaction_identifier", ErrorKind::TransactionIdentifierNull),
        ],
    )?;
    let tx_hash = parse_hash(&req.transaction_identifier.hash, ErrorKind::InvalidTransactionHash)?;
    let b = resolve(ctx, &req.block_identifier.clone().into()).await?;
    let contents = ctx.reader.block_contents(&b.index_block_hash).await?;
    transactions(&contents, &b.index_block_hash)
        .into_iter()
        .find(|t| t.transaction_identifier.hash == tx_hash)
        .map(|transaction| BlockTransactionResponse { transaction })
        .ok_or_else(|| {
            RosettaError::with_details(
                ErrorKind::TransactionNotFound,
                json!({ "transaction": tx_hash, "block": req.block_identifier }),
            )
        })
}
