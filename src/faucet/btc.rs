//! The BTC faucet (regtest), through bitcoind's JSON-RPC.
//!
//! The incumbent finds the faucet address's spendable outputs (`scantxoutset`, less those its
//! mempool transactions spend, with more than one confirmation), selects inputs at 50 sat/vB,
//! signs locally with BTC_FAUCET_PK and sends with `sendrawtransaction`. We do the same, except
//! that bitcoind builds and signs: `createrawtransaction` then `signrawtransactionwithkey` with
//! the same key (as WIF). That keeps Bitcoin transaction serialisation and sighash code out of
//! this project; the key only travels to the bitcoind the faucet already trusts with its funds.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Value};
use tokio::sync::Mutex;

use super::btc_address::{p2pkh_address, wif};
use super::config::{btc_private_key, BtcRpc};
use super::FaucetError;

/// The incumbent's regtest fee rate, sat/vB.
pub const FEE_RATE: u64 = 50;
/// Outputs need more than this many confirmations to be spent (the incumbent's rule).
pub const MIN_CONFIRMATIONS: i64 = 1;
/// Change below this is left to the fee rather than making an unspendable output.
const DUST: u64 = 546;
const TIMEOUT: Duration = Duration::from_secs(120);

/// The three amounts, in satoshis: 0.0001, 0.01 (`large`), 0.5 BTC (`xlarge`).
pub const AMOUNT_SATS: u64 = 10_000;
pub const LARGE_SATS: u64 = 1_000_000;
pub const XLARGE_SATS: u64 = 50_000_000;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BtcSent {
    pub txid: String,
    pub raw_tx: String,
}

pub struct BtcFaucet {
    http: reqwest::Client,
    rpc: BtcRpc,
    /// The faucet key (None: not configured) and its address.
    key: Option<([u8; 32], String)>,
    /// One send at a time: two concurrent sends would pick the same outputs.
    sending: Mutex<()>,
}

#[derive(Deserialize)]
struct Unspent {
    txid: String,
    vout: u32,
    #[serde(rename = "scriptPubKey")]
    script_pub_key: String,
    amount: f64,
    height: i64,
}

#[derive(Deserialize)]
struct TxOutSet {
    success: bool,
    height: i64,
    total_amount: f64,
    unspents: Vec<Unspent>,
}

impl BtcFaucet {
    pub fn new(http: reqwest::Client, rpc: BtcRpc, key: Option<[u8; 32]>) -> Result<BtcFaucet, FaucetError> {
        let key = key
            .map(|secret| {
                let k = btc_private_key(&secret)
                    .map_err(|e| FaucetError::Failed(format!("BTC faucet key: {e}")))?;
                Ok::<_, FaucetError>((secret, p2pkh_address(&k)))
            })
            .transpose()?;
        Ok(BtcFaucet { http, rpc, key, sending: Mutex::new(()) })
    }

    /// The faucet's own address, when configured.
    pub fn address(&self) -> Option<&str> {
        self.key.as_ref().map(|(_, a)| a.as_str())
    }

    fn configured(&self) -> Result<&([u8; 32], String), FaucetError> {
        self.key
            .as_ref()
            .ok_or_else(|| FaucetError::Failed("BTC faucet is not configured (BTC_FAUCET_PK)".into()))
    }

    /// Confirmed balance of `address`, in BTC (`scantxoutset` total).
    pub async fn balance(&self, address: &str) -> Result<f64, FaucetError> {
        self.configured()?;
        Ok(self.scan(address).await?.total_amount)
    }

    /// Sends `amount` satoshis to `address` (already validated).
    pub async fn send(&self, address: &str, amount: u64) -> Result<BtcSent, FaucetError> {
        let (secret, faucet_address) = self.configured()?;
        let _one_at_a_time = self.sending.lock().await;
        let set = self.scan(faucet_address).await?;
        let spent = self.mempool_spends().await?;
        let mut spendable: Vec<&Unspent> = set
            .unspents
            .iter()
            .filter(|u| {
                set.height - u.height > MIN_CONFIRMATIONS && !spent.contains(&(u.txid.clone(), u.vout))
            })
            .collect();
        // Largest first: the fewest inputs.
        spendable.sort_by(|a, b| b.amount.total_cmp(&a.amount));
        let total: u64 = spendable.iter().map(|u| sats(u.amount)).sum();
        if total < amount {
            return Err(FaucetError::OutOfFunds(format!(
                "not enough total amount in utxo set: {total} sats"
            )));
        }
        let (mut inputs, mut value) = (Vec::new(), 0u64);
        let fee = |n_inputs: usize| FEE_RATE * (10 + 148 * n_inputs as u64 + 34 * 2);
        for u in spendable {
            if value >= amount + fee(inputs.len()) {
                break;
            }
            value += sats(u.amount);
            inputs.push(u);
        }
        let fee = fee(inputs.len());
        if value < amount + fee {
            return Err(FaucetError::OutOfFunds(format!(
                "not enough total amount in utxo set: {value} sats for {amount} plus a {fee} fee"
            )));
        }
        let mut outputs = vec![json!({ (address): btc(amount) })];
        let change = value - amount - fee;
        if change >= DUST {
            outputs.push(json!({ (faucet_address.as_str()): btc(change) }));
        }
        let vins: Vec<Value> = inputs.iter().map(|u| json!({"txid": u.txid, "vout": u.vout})).collect();
        let unsigned = self.call("createrawtransaction", json!([vins, outputs])).await?;
        let prevtxs: Vec<Value> = inputs
            .iter()
            .map(|u| json!({"txid": u.txid, "vout": u.vout, "scriptPubKey": u.script_pub_key, "amount": u.amount}))
            .collect();
        let signed =
            self.call("signrawtransactionwithkey", json!([unsigned, [wif(secret)], prevtxs])).await?;
        if signed.get("complete").and_then(Value::as_bool) != Some(true) {
            return Err(FaucetError::Failed(format!(
                "bitcoind could not sign the faucet transaction: {signed}"
            )));
        }
        let raw_tx = signed
            .get("hex")
            .and_then(Value::as_str)
            .ok_or_else(|| FaucetError::Failed("signrawtransactionwithkey returned no hex".into()))?
            .to_owned();
        let txid = self.call("sendrawtransaction", json!([raw_tx])).await?;
        let txid = txid
            .as_str()
            .ok_or_else(|| FaucetError::Failed(format!("sendrawtransaction returned {txid}")))?
            .to_owned();
        tracing::info!(%txid, %address, amount, "BTC faucet sent");
        Ok(BtcSent { txid, raw_tx })
    }

    async fn scan(&self, address: &str) -> Result<TxOutSet, FaucetError> {
        let v = self.call("scantxoutset", json!(["start", [format!("addr({address})")]])).await?;
        let set: TxOutSet =
            serde_json::from_value(v).map_err(|e| FaucetError::Failed(format!("scantxoutset: {e}")))?;
        if !set.success {
            return Err(FaucetError::Unavailable("scantxoutset did not complete".into()));
        }
        Ok(set)
    }

    /// Outputs spent by transactions in bitcoind's mempool.
    async fn mempool_spends(&self) -> Result<Vec<(String, u32)>, FaucetError> {
        let ids = self.call("getrawmempool", json!([])).await?;
        let mut spent = Vec::new();
        for id in ids.as_array().into_iter().flatten() {
            let tx = self.call("getrawtransaction", json!([id, true])).await?;
            for vin in tx.get("vin").and_then(Value::as_array).into_iter().flatten() {
                if let (Some(txid), Some(vout)) = (vin.get("txid").and_then(Value::as_str), vin.get("vout")) {
                    spent.push((txid.to_owned(), vout.as_u64().unwrap_or(u64::MAX) as u32));
                }
            }
        }
        Ok(spent)
    }

    /// One JSON-RPC call: its `result`, or the error bitcoind gave.
    async fn call(&self, method: &str, params: Value) -> Result<Value, FaucetError> {
        let body =
            json!({"jsonrpc": "1.0", "id": "stacks-ledger-faucet", "method": method, "params": params});
        let res = self
            .http
            .post(&self.rpc.url)
            .basic_auth(&self.rpc.user, Some(&self.rpc.password))
            .json(&body)
            .timeout(TIMEOUT)
            .send()
            .await
            .map_err(|e| FaucetError::Unavailable(format!("bitcoind: {e}")))?;
        let status = res.status();
        // bitcoind answers RPC errors with HTTP 500 and a JSON body; other statuses
        // (401 bad credentials, 503 warming up) have no JSON.
        let text = res.text().await.map_err(|e| FaucetError::Unavailable(format!("bitcoind: {e}")))?;
        let reply: Value = match serde_json::from_str(&text) {
            Ok(v) => v,
            Err(_) if status == reqwest::StatusCode::SERVICE_UNAVAILABLE => {
                return Err(FaucetError::Unavailable(format!("bitcoind {method}: {status}")))
            }
            Err(_) => return Err(FaucetError::Failed(format!("bitcoind {method}: {status} {text}"))),
        };
        match reply.get("error") {
            Some(e) if !e.is_null() => {
                let message = e.get("message").and_then(Value::as_str).unwrap_or_default();
                if message.contains("Insufficient funds") {
                    return Err(FaucetError::OutOfFunds(format!("bitcoind {method}: {message}")));
                }
                Err(FaucetError::Failed(format!("bitcoind {method}: {e}")))
            }
            _ => Ok(reply.get("result").cloned().unwrap_or(Value::Null)),
        }
    }
}

/// BTC (a JSON number from bitcoind) to satoshis.
fn sats(btc: f64) -> u64 {
    (btc * 1e8).round() as u64
}

/// Satoshis to a BTC JSON number with at most 8 decimals.
fn btc(sats: u64) -> Value {
    // Printed from the exact decimal text, so no binary rounding leaks into the amount.
    let text = format!("{}.{:08}", sats / 100_000_000, sats % 100_000_000);
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_convert_exactly() {
        assert_eq!(sats(0.0001), AMOUNT_SATS);
        assert_eq!(sats(0.01), LARGE_SATS);
        assert_eq!(sats(0.5), XLARGE_SATS);
        assert_eq!(btc(AMOUNT_SATS).to_string(), "0.0001");
        assert_eq!(btc(123_456_789).to_string(), "1.23456789");
        assert_eq!(sats(btc(123_456_789).as_f64().unwrap()), 123_456_789);
    }
}
