//! The HTTP side of the devnet node (`devnet --post URL --serve-node ADDR`): the generated chain
//! is posted to the event observer first; then the node answers the RPC calls the Rosetta
//! Construction API makes (`POST /v2/transactions`, `GET /v2/accounts/{principal}`,
//! `/v2/fees/transfer`, `/v2/info`, `/v2/pox`) and mines what it accepted into a block every
//! `block_time`, empty or not, as a mocknet miner does (so the burn chain advances, reward
//! cycles pass and locks expire while nobody submits anything). Every event (`/new_mempool_tx` on
//! arrival, then `/new_burn_block` and `/new_block`) goes to the observer in order through one
//! poster task, the path a real node's events take.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use serde_json::{json, Value as Json};
use tokio::sync::mpsc;
use warp::http::StatusCode;
use warp::reply::Response;
use warp::{Filter, Reply};

use super::node::{self, MIN_FEE_RATE};
use super::{post_events, DevnetError, DevnetEvent, Generator};

struct Node {
    generator: Mutex<Generator>,
    /// To the poster task, in the order the generator built them.
    events: mpsc::UnboundedSender<DevnetEvent>,
}

impl Node {
    /// Runs `f` on the generator, then queues every event it built (under the lock, so the
    /// order is the generator's).
    fn with<T>(&self, f: impl FnOnce(&mut Generator) -> T) -> T {
        let mut generator = self.generator.lock().unwrap_or_else(|e| e.into_inner());
        let out = f(&mut generator);
        for event in generator.take_events() {
            // The poster only stops when the process does.
            let _ = self.events.send(event);
        }
        out
    }
}

/// Posts the generated chain to `observer`, then serves as a node on `bind` until `shutdown`.
/// `ready` gets the bound address and some funded accounts ([`super::funded_accounts`]) once
/// the chain is posted.
pub async fn serve(
    mut generator: Generator,
    observer: String,
    bind: SocketAddr,
    block_time: Duration,
    ready: impl FnOnce(SocketAddr, Vec<Json>),
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), DevnetError> {
    post_events(&mut generator, &observer).await?;
    generator.start_node_mode();
    let accounts = super::funded_accounts(&generator, 5);
    let (tx, mut rx) = mpsc::unbounded_channel::<DevnetEvent>();
    let node = Arc::new(Node { generator: Mutex::new(generator), events: tx });

    let poster = tokio::spawn(async move {
        while let Some(event) = rx.recv().await {
            let (path, id) = (event.path, event.id);
            if let Err(e) = post_events(std::iter::once(Ok(event)), &observer).await {
                tracing::error!(path = path.as_str(), id, error = %e, "devnet node: event not delivered");
            }
        }
    });
    let miner_node = Arc::clone(&node);
    let miner = tokio::spawn(async move {
        // The first block one block time after start (an interval's first tick is at once).
        let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + block_time, block_time);
        loop {
            tick.tick().await;
            let mined = miner_node.with(|g| {
                let n = g.pending_submitted();
                g.mine().map(|()| (n, g.canonical_tip().height))
            });
            match mined {
                Ok((0, height)) => tracing::debug!("devnet node: mined empty block {height}"),
                Ok((n, height)) => {
                    tracing::info!("devnet node: mined block {height} with {n} submitted tx(s)")
                }
                Err(e) => tracing::error!(error = %e, "devnet node: mining failed"),
            }
        }
    });

    let listener = tokio::net::TcpListener::bind(bind)
        .await
        .map_err(|e| DevnetError::Config(format!("cannot listen on {bind}: {e}")))?;
    let addr = listener.local_addr().map_err(|e| DevnetError::Config(format!("listening on {bind}: {e}")))?;
    ready(addr, accounts);
    warp::serve(routes(node)).incoming(listener).graceful(shutdown).run().await;
    miner.abort();
    poster.abort();
    Ok(())
}

fn routes(node: Arc<Node>) -> impl Filter<Extract = (Response,), Error = warp::Rejection> + Clone {
    let with_node = warp::any().map(move || Arc::clone(&node));
    let submit = warp::path!("v2" / "transactions")
        .and(warp::post())
        .and(warp::header::optional::<String>("content-type"))
        .and(warp::body::content_length_limit(4 * 1024 * 1024))
        .and(warp::body::bytes())
        .and(with_node.clone())
        .map(|content_type: Option<String>, body: Bytes, node: Arc<Node>| submit(&node, content_type, &body));
    let accounts = warp::path!("v2" / "accounts" / String).and(warp::get()).and(with_node.clone()).map(
        |principal: String, node: Arc<Node>| {
            let body = node.with(|g| node::account_json(g.ctx_ref(), g.world_ref(), &principal));
            warp::reply::json(&body).into_response()
        },
    );
    let fee = warp::path!("v2" / "fees" / "transfer")
        .and(warp::get())
        .map(|| warp::reply::json(&MIN_FEE_RATE).into_response());
    let info = warp::path!("v2" / "info").and(warp::get()).and(with_node.clone()).map(|node: Arc<Node>| {
        let body = node.with(|g| {
            let tip = g.canonical_tip();
            json!({
                "peer_version": 4207599113u32,
                "network_id": g.ctx_ref().chain_id,
                "server_version": "stacks-ledger devnet node",
                "burn_block_height": g.burn_height(),
                "stacks_tip_height": tip.height,
                "stacks_tip": tip.block_hash.trim_start_matches("0x"),
                "unanchored_tip": null,
            })
        });
        warp::reply::json(&body).into_response()
    });
    let pox = warp::path!("v2" / "pox").and(warp::get()).and(with_node).map(|node: Arc<Node>| {
        let body = node.with(|g| node::pox_json(g.ctx_ref(), g.burn_height()));
        warp::reply::json(&body).into_response()
    });
    submit.or(accounts).unify().or(fee).unify().or(info).unify().or(pox).unify()
}

/// `POST /v2/transactions`: the raw bytes (`application/octet-stream`), or `{"tx": hex}`.
fn submit(node: &Node, content_type: Option<String>, body: &[u8]) -> Response {
    let raw = if content_type.is_some_and(|c| c.starts_with("application/json")) {
        serde_json::from_slice::<Json>(body)
            .ok()
            .and_then(|v| v.get("tx").and_then(Json::as_str).map(str::to_owned))
            .and_then(|hex| stacks_codec::decode_hex(&hex).ok())
    } else {
        Some(body.to_vec())
    };
    let Some(raw) = raw else {
        let body = json!({"error": "transaction rejected", "reason": "Deserialization", "message": "expected {\"tx\": hex}"});
        return warp::reply::with_status(warp::reply::json(&body), StatusCode::BAD_REQUEST).into_response();
    };
    let admitted = node.with(|g| {
        let env = g.next_env();
        let (ctx, world, queue) = g.node_parts();
        let tx = node::admit(ctx, world, env, &raw)?;
        let (txid, raw_hex) = (tx.receipt.txid.clone(), tx.receipt.raw_tx.clone());
        queue.push(tx);
        g.announce(&raw_hex);
        Ok::<_, Box<node::Rejection>>(txid)
    });
    match admitted {
        // The node answers the txid as a JSON string, without 0x.
        Ok(txid) => warp::reply::json(&txid.trim_start_matches("0x")).into_response(),
        Err(rejection) => {
            tracing::info!(reason = rejection.reason, message = %rejection.message, "devnet node: transaction rejected");
            warp::reply::with_status(warp::reply::json(&rejection.to_json()), StatusCode::BAD_REQUEST)
                .into_response()
        }
    }
}
