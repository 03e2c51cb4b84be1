//! Reading a request body once, into the buffer that becomes the event's payload.
//!
//! Block bodies reach hundreds of MB, so the body is neither collected into `Bytes` and then
//! copied, nor copied again into a `String`: chunks are appended to one `Vec` sized from
//! `Content-Length`, and the `Vec` becomes the `String` in place.

use std::pin::pin;

use bytes::Buf;
use tokio_stream::{Stream, StreamExt};

use super::error::ObserverError;

pub(crate) async fn read_body<St, B>(
    body: St,
    content_length: Option<u64>,
    limit: u64,
) -> Result<String, ObserverError>
where
    St: Stream<Item = Result<B, warp::Error>>,
    B: Buf,
{
    if content_length.is_some_and(|len| len > limit) {
        return Err(ObserverError::PayloadTooLarge { limit });
    }
    // Within the limit (checked above), so reserving it up front is bounded; without it the
    // buffer would be re-allocated and copied as it grows.
    let reserve = content_length.and_then(|len| usize::try_from(len).ok()).unwrap_or(0);
    let mut buf = Vec::with_capacity(reserve);
    let mut body = pin!(body);
    while let Some(chunk) = body.next().await {
        let mut chunk = chunk.map_err(ObserverError::BodyRead)?;
        // Also enforced without (or against a lying) Content-Length.
        if (buf.len() + chunk.remaining()) as u64 > limit {
            return Err(ObserverError::PayloadTooLarge { limit });
        }
        while chunk.has_remaining() {
            let part = chunk.chunk();
            buf.extend_from_slice(part);
            let n = part.len();
            chunk.advance(n);
        }
    }
    String::from_utf8(buf).map_err(|e| ObserverError::InvalidUtf8(e.utf8_error()))
}
