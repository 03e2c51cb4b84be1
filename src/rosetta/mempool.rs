//! `/mempool` and `/mempool/transaction`: pending transactions, their operations estimated
//! from the transaction itself (no events yet), every one `pending`.

use bytes::Bytes;
use rosetta_spec::{
    MempoolResponse, MempoolTransactionRequest, MempoolTransactionResponse, NetworkRequest, Transaction,
    TransactionIdentifier,
};
use serde_json::json;

use super::block::parse_hash;
use super::error::{ErrorKind, RosettaError};
use super::ops::operations;
use super::request::parse;
use super::{Rosetta, RosettaResult};
use crate::ledger::tx::{decode, tx_fields, ChainCheck};
use ledger_read::{LedgerTx, OpRow};

pub async fn list(ctx: &Rosetta, body: &Bytes) -> RosettaResult<MempoolResponse> {
    let _: NetworkRequest = parse(body, ctx.network, &[])?;
    let ids = ctx.reader.mempool_ids().await?;
    Ok(MempoolResponse { transaction_identifiers: ids.into_iter().map(TransactionIdentifier::new).collect() })
}

pub async fn transaction(ctx: &Rosetta, body: &Bytes) -> RosettaResult<MempoolTransactionResponse> {
    let req: MempoolTransactionRequest =
        parse(body, ctx.network, &[("transaction_identifier", ErrorKind::TransactionIdentifierNull)])?;
    let tx_id = parse_hash(&req.transaction_identifier.hash, ErrorKind::InvalidTransactionHash)?;
    let Some(raw) = ctx.reader.mempool_raw(&tx_id).await? else {
        return Err(RosettaError::with_details(
            ErrorKind::TransactionNotFound,
            json!({ "transaction": tx_id }),
        ));
    };
    Ok(MempoolTransactionResponse { transaction: pending_transaction(&tx_id, &raw, ctx)?, metadata: None })
}

/// The operations a pending transaction will have, from its bytes (the same derivation as a
/// mined one, without events).
fn pending_transaction(tx_id: &str, raw: &str, ctx: &Rosetta) -> RosettaResult<Transaction> {
    let decoded = decode(raw, Some(tx_id), ctx.network, ChainCheck::Skip).map_err(|e| {
        // Stored mempool bytes were checked on arrival: failing now is our fault.
        tracing::error!(%tx_id, error = %e, "stored mempool transaction does not decode");
        RosettaError::new(ErrorKind::UnknownError)
    })?;
    let mut row = tx_fields(&decoded.tx);
    row.tx_id = tx_id.to_owned();
    row.status = "pending".into();
    let (ops, _) = crate::ledger::ops::tx_operations(&row, None, &[]);
    let stored: Vec<OpRow> = ops.into_iter().map(|o| OpRow { status: "pending".into(), ..o }).collect();
    let refs: Vec<&OpRow> = stored.iter().collect();
    let tx = LedgerTx {
        tx_id: tx_id.to_owned(),
        tx_index: 0,
        tx_type: row.tx_type.clone(),
        status: "pending".into(),
        contract_id: row.contract_id.clone(),
        function_name: row.function_name.clone(),
        raw_tx: Some(raw.to_owned()),
        raw_result: None,
    };
    Ok(Transaction {
        transaction_identifier: TransactionIdentifier::new(tx_id),
        operations: operations(&refs, Some(&tx), 0),
        metadata: None,
    })
}
