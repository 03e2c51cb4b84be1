//! v2 `/burn-blocks/*` and v1 `/burnchain/*` (reward payouts and reward slot holders).

use serde_json::json;
use stacks_codec::address::StacksAddress;
use stacks_codec::bech32::decode_segwit;
use warp::reply::Response;

use super::reader::{BlockRef, BurnPoxTx, BurnRef, ChainReader, PoxTxsOf};
use super::render::{block_v2, burn_block, burnchain_reward, reward_slot_holder};
use super::{hash_param, json, tip_cached, Req};
use crate::error::{ApiError, In, Rule};
use crate::params::{LimitRule, Page};
use crate::reader::TipReader;

pub(crate) const BURN_BLOCK_LIMIT: LimitRule = LimitRule::new(20, 30);
pub(crate) const BURNCHAIN_LIMIT: LimitRule = LimitRule::new(96, 250);

type Answer = Result<Response, ApiError>;

fn burn_ref(v: &str) -> Result<BurnRef, ApiError> {
    if v == "latest" {
        return Ok(BurnRef::Latest);
    }
    if let Some(hash) = hash_param(v) {
        return Ok(BurnRef::Hash(hash));
    }
    v.parse::<u64>()
        .map(BurnRef::Height)
        .map_err(|_| ApiError::schema(In::Path, "height_or_hash", Rule::HeightOrHash))
}

/// `/extended/v2/burn-blocks/...`.
pub(crate) async fn burn_blocks<R: TipReader + ChainReader>(
    r: &R,
    req: &Req,
    rest: &[&str],
) -> Option<Answer> {
    Some(match rest {
        [] => {
            tip_cached(r, req, async {
                let paging = req.query.paging(BURN_BLOCK_LIMIT)?;
                let (total, blocks) = r.burn_blocks(paging.limit, paging.offset).await?;
                let results: Vec<_> = blocks.iter().map(burn_block).collect();
                Ok(json(&json!(Page::new(paging, total, results))))
            })
            .await
        }
        [id] => match burn_ref(id) {
            Ok(by) => {
                tip_cached(r, req, async {
                    let b = r.burn_block(by).await?.ok_or_else(|| ApiError::NotFound("Not found".into()))?;
                    Ok(json(&burn_block(&b)))
                })
                .await
            }
            Err(e) => Err(e),
        },
        [id, "blocks"] => match burn_ref(id) {
            Ok(by) => {
                tip_cached(r, req, async {
                    let paging = req.query.paging(BURN_BLOCK_LIMIT)?;
                    let hash = match by {
                        BurnRef::Hash(h) => h,
                        BurnRef::Height(h) => match r.block(BlockRef::BurnHeight(h)).await? {
                            Some(b) => b.burn_block_hash,
                            None => return Err(ApiError::NotFound("Burn block not found".into())),
                        },
                        BurnRef::Latest => match r.block(BlockRef::Latest).await? {
                            Some(b) => b.burn_block_hash,
                            None => return Err(ApiError::NotFound("Burn block not found".into())),
                        },
                    };
                    let (total, blocks) = r.burn_block_blocks(&hash, paging.limit, paging.offset).await?;
                    if total == 0 {
                        return Err(ApiError::NotFound("Burn block not found".into()));
                    }
                    let results: Vec<_> = blocks.iter().map(block_v2).collect();
                    Ok(json(&json!(Page::first_row_total(paging, total, results))))
                })
                .await
            }
            Err(e) => Err(e),
        },
        [id, "pox-transactions"] => match burn_ref(id) {
            Ok(by) => pox_txs(r, req, PoxTxsOf::Burn(by)).await,
            Err(e) => Err(e),
        },
        _ => return None,
    })
}

/// `/extended/v2/addresses/{btc address}/pox-transactions`.
pub(crate) async fn address_pox_txs<R: TipReader + ChainReader>(r: &R, req: &Req, address: &str) -> Answer {
    pox_txs(r, req, PoxTxsOf::Recipient(address.to_string())).await
}

/// A page of PoX payout outputs (`BurnBlockPoxTx`); none is an empty page, as the incumbent.
async fn pox_txs<R: TipReader + ChainReader>(r: &R, req: &Req, of: PoxTxsOf) -> Answer {
    tip_cached(r, req, async {
        let paging = req.query.paging(BURN_BLOCK_LIMIT)?;
        let (total, txs) = r.pox_txs(of, paging.limit, paging.offset).await?;
        let results: Vec<_> = txs.iter().map(pox_tx_json).collect();
        Ok(json(&json!(Page::first_row_total(paging, total, results))))
    })
    .await
}

fn pox_tx_json(t: &BurnPoxTx) -> serde_json::Value {
    json!({
        "burn_block_hash": t.burn_block_hash,
        "burn_block_height": t.burn_block_height,
        "tx_id": t.tx_id,
        "recipient": t.recipient,
        "utxo_idx": t.utxo_idx,
        "amount": t.amount.to_string(),
    })
}

/// A Bitcoin address as given, or the Bitcoin form of a Stacks address (same hash).
fn btc_address(v: &str, whole_message: bool) -> Result<String, ApiError> {
    if let Ok(addr) = v.parse::<StacksAddress>() {
        return Ok(addr.to_b58());
    }
    let b58_ok = StacksAddress::from_b58(v).is_ok();
    // Segwit on mainnet, testnet or regtest, checksum and program checked (as base58check's is).
    let bech32_ok = decode_segwit(v).is_ok_and(|s| matches!(s.hrp.as_str(), "bc" | "tb" | "bcrt"));
    if b58_ok || bech32_ok {
        return Ok(v.to_string());
    }
    let reason = if whole_message {
        format!("Address {v} is not a valid Bitcoin or STX address.")
    } else {
        "Address is not a valid Bitcoin or STX address.".into()
    };
    Err(ApiError::invalid("address", reason))
}

/// `/extended/v1/burnchain/...` (no ETag, as the incumbent).
pub(crate) async fn burnchain<R: ChainReader>(r: &R, req: &Req, rest: &[&str]) -> Option<Answer> {
    let rewards_page = |recipient: Option<String>| async move {
        let paging = req.query.paging(BURNCHAIN_LIMIT)?;
        let rows = r.burnchain_rewards(recipient.as_deref(), paging.limit, paging.offset).await?;
        let results: Vec<_> = rows.iter().map(burnchain_reward).collect();
        // The incumbent's rewards envelope has no `total`.
        Ok::<_, ApiError>(json(
            &json!({ "limit": paging.limit, "offset": paging.offset, "results": results }),
        ))
    };
    let holders_page = |address: Option<String>| async move {
        let paging = req.query.paging(BURNCHAIN_LIMIT)?;
        let (total, rows) = r.reward_slot_holders(address.as_deref(), paging.limit, paging.offset).await?;
        let results: Vec<_> = rows.iter().map(reward_slot_holder).collect();
        Ok::<_, ApiError>(json(&json!(Page::first_row_total(paging, total, results))))
    };
    Some(match rest {
        ["rewards"] => rewards_page(None).await,
        ["rewards", addr] => match btc_address(addr, false) {
            Ok(a) => rewards_page(Some(a)).await,
            Err(e) => Err(e),
        },
        ["rewards", addr, "total"] => match btc_address(addr, true) {
            Ok(a) => match r.burnchain_reward_total(&a).await {
                Ok(total) => Ok(json(&json!({ "reward_recipient": a, "reward_amount": total.to_string() }))),
                Err(e) => Err(e.into()),
            },
            Err(e) => Err(e),
        },
        ["reward_slot_holders"] => holders_page(None).await,
        ["reward_slot_holders", addr] => match btc_address(addr, true) {
            Ok(a) => holders_page(Some(a)).await,
            Err(e) => Err(e),
        },
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stacks_addresses_become_their_bitcoin_form() {
        assert_eq!(
            btc_address("ST16G69GQBDPMRY6308JN0GDTYF265JX3KQ6C0VEH", false).unwrap(),
            "mnYA6cACUX212iNyKRnQD6DbsWMBu7nFkK"
        );
        assert_eq!(
            btc_address("miJfo2mKvRhvpxnRyJE17VBr12xn3FrkZW", false).unwrap(),
            "miJfo2mKvRhvpxnRyJE17VBr12xn3FrkZW"
        );
        for segwit in [
            "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4",
            "tb1pqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesf3hn0c",
            "bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080",
        ] {
            assert_eq!(btc_address(segwit, false).unwrap(), segwit);
        }
        for bad in [
            "notanaddress",
            // A bad checksum, and a segwit address of another chain (Litecoin's `ltc`).
            "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t5",
            "ltc1qw508d6qejxtdg4y5r3zarvary0c5xw7kgmn4n9",
            "mvtMXL9MYH8HYMY6xqgSbwk3cNYCsY6q7D",
            "SP3K8BC0PPEVCV7NZ6QSRWPQ2JE9E5B6N3PA0KBR9.fwp-wstx-alex-tranched-64",
        ] {
            let e = btc_address(bad, true).unwrap_err();
            assert!(matches!(e, ApiError::InvalidParam { param: "address", .. }), "{bad}");
        }
    }
}
