//! `/call`: no network-specific procedures are offered (`allow.call_methods` is empty), so
//! every well-formed call is refused with 650 naming the method.

use bytes::Bytes;
use rosetta_spec::{CallRequest, CallResponse};
use serde_json::json;

use super::error::{ErrorKind, RosettaError};
use super::network::CALL_METHODS;
use super::request::parse;
use super::{Rosetta, RosettaResult};

pub fn call(ctx: &Rosetta, body: &Bytes) -> RosettaResult<CallResponse> {
    let req: CallRequest = parse(body, ctx.network, &[])?;
    Err(RosettaError::with_details(
        ErrorKind::UnknownCallMethod,
        json!({ "method": req.method, "supported": CALL_METHODS }),
    ))
}
