//! The `/extended/v1/ws` endpoint: one task per connection reads requests, forwards the
//! notifications the hub delivers for its subscriptions (each batch written with one flush),
//! pings, and drops dead or slow peers with a close reason.

use std::sync::Arc;
use std::time::Duration;

use futures_util::stream::SplitSink;
use futures_util::{SinkExt, StreamExt};
use tokio::time::{timeout, Instant};
use warp::filters::ws::{Message, WebSocket, Ws};
use warp::{Filter, Rejection, Reply};

use crate::config::LiveConfig;
use crate::hub::{Hub, RecvError};
use crate::jsonrpc::{notification_frame, Connection};

/// Largest request frame accepted (a batch of subscriptions fits easily).
const MAX_REQUEST: usize = 1 << 20;
/// Close codes (RFC 6455): policy violation for slow consumers, going away for dead peers.
const CLOSE_SLOW: u16 = 1008;
const CLOSE_TIMEOUT: u16 = 1001;

/// `GET /extended/v1/ws` upgraded to a WebSocket.
pub fn route(
    hub: Arc<Hub>,
    config: LiveConfig,
) -> impl Filter<Extract = (impl Reply,), Error = Rejection> + Clone {
    warp::path!("extended" / "v1" / "ws").and(warp::ws()).map(move |ws: Ws| {
        let (hub, config) = (Arc::clone(&hub), config.clone());
        ws.max_message_size(MAX_REQUEST).on_upgrade(move |socket| serve(socket, hub, config))
    })
}

type Sink = SplitSink<WebSocket, Message>;

async fn send(socket: &mut Sink, msg: Message, limit: Duration) -> bool {
    matches!(timeout(limit, socket.send(msg)).await, Ok(Ok(())))
}

/// Writes `msgs` and flushes once; false when that failed or took longer than `limit`.
async fn send_all(socket: &mut Sink, msgs: impl IntoIterator<Item = Message>, limit: Duration) -> bool {
    let write = async {
        for m in msgs {
            socket.feed(m).await?;
        }
        socket.flush().await
    };
    matches!(timeout(limit, write).await, Ok(Ok(())))
}

/// Serves one connection until the peer leaves, stops answering, or falls too far behind.
pub async fn serve(socket: WebSocket, hub: Arc<Hub>, config: LiveConfig) {
    let (mut socket, mut stream) = socket.split();
    // Reading has its own task, woken only when the peer sent something: polling the stream
    // attempts a read, and tungstenite zeroes its read buffer (128 KiB) for each attempt, so it
    // must not be polled every time a notification wakes this task (10,000 connections × every
    // block was most of the server's CPU).
    let (frames_tx, mut frames) = tokio::sync::mpsc::channel::<Result<Message, String>>(16);
    let reader = tokio::spawn(async move {
        while let Some(frame) = stream.next().await {
            let last = !matches!(&frame, Ok(m) if !m.is_close());
            if frames_tx.send(frame.map_err(|e| e.to_string())).await.is_err() || last {
                break;
            }
        }
    });
    let mut conn = Connection::new(&hub);
    let mut ping = tokio::time::interval_at(Instant::now() + config.ping_interval, config.ping_interval);
    let mut last_heard = Instant::now();
    let reason = loop {
        tokio::select! {
            frame = frames.recv() => {
                let msg = match frame {
                    Some(Ok(m)) => m,
                    Some(Err(e)) => break format!("read error: {e}"),
                    None => break "peer closed".into(),
                };
                last_heard = Instant::now();
                if msg.is_close() {
                    break "peer closed".into();
                }
                let Ok(text) = msg.to_str() else { continue };
                let replies: Vec<Message> =
                    conn.handle_text(&hub, text).into_iter().map(|out| Message::text(out.to_string())).collect();
                if !send_all(&mut socket, replies, config.message_timeout).await {
                    break "write timed out".into();
                }
            }
            batch = conn.next_batch() => match batch {
                Ok(batch) => {
                    // The shared frames: cloning one shares its text.
                    let frames: Vec<Message> = batch.iter().map(|n| notification_frame(n).clone()).collect();
                    if !frames.is_empty() && !send_all(&mut socket, frames, config.message_timeout).await {
                        break "write timed out".into();
                    }
                }
                Err(RecvError::Lagged(k)) => {
                    let why = format!("slow consumer: fell {k} notifications behind (queue {})", config.queue);
                    let _ = send(&mut socket, Message::close_with(CLOSE_SLOW, why.clone()), config.message_timeout).await;
                    break why;
                }
                Err(RecvError::Closed) => break "server shutting down".into(),
            },
            _ = ping.tick() => {
                if last_heard.elapsed() > config.ping_interval + config.ping_timeout {
                    let why = "ping timeout: no frame from the peer".to_string();
                    let _ = send(&mut socket, Message::close_with(CLOSE_TIMEOUT, why.clone()), config.message_timeout).await;
                    break why;
                }
                if !send(&mut socket, Message::ping(Vec::new()), config.message_timeout).await {
                    break "write timed out".into();
                }
            }
        }
    };
    tracing::debug!(%reason, "live websocket closed");
    reader.abort();
    let _ = timeout(config.message_timeout, socket.close()).await;
}
