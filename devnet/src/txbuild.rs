//! Building and signing transactions with the codec: standard and sponsored single-sig P2PKH,
//! plus the unsigned boot transactions of block 0 and the SIP-018 signer signature `stack-stx`
//! takes.

use stacks_codec::clarity::Value;
use stacks_codec::hash::sha256;
use stacks_codec::sign::{next_presign_sighash, sign_presign, splice_single_sig_signature, vrs_to_rsv, Role};
use stacks_codec::tx::{
    AnchorMode, Authorization, HashMode, KeyEncoding, Payload, PostCondition, PostConditionMode,
    SingleSigSpendingCondition, SpendingCondition, Transaction,
};
use stacks_codec::CodecError;

use super::config::Ctx;
use super::keys::DevKey;

/// A signed transaction in the forms the events need.
#[derive(Debug, Clone)]
pub struct Signed {
    pub txid: String,
    pub raw_hex: String,
}

/// Who signs and pays.
pub struct Signers<'a> {
    pub origin: &'a DevKey,
    pub origin_nonce: u64,
    /// Sponsor and its nonce; the sponsor pays the fee.
    pub sponsor: Option<(&'a DevKey, u64)>,
    pub fee: u64,
}

fn condition(key: &DevKey, nonce: u64, tx_fee: u64) -> SpendingCondition {
    // The signer hash is the key's hash160 (P2PKH), cached in the address.
    SpendingCondition::SingleSig(SingleSigSpendingCondition {
        hash_mode: HashMode::P2PKH,
        signer: key.address.hash160,
        nonce,
        tx_fee,
        key_encoding: KeyEncoding::Compressed,
        signature: [0; 65],
    })
}

/// Builds and signs (origin, then sponsor) a transaction.
pub fn sign(
    ctx: &Ctx,
    signers: &Signers<'_>,
    anchor_mode: AnchorMode,
    post_conditions: Vec<PostCondition>,
    payload: Payload,
) -> Result<Signed, CodecError> {
    let auth = match signers.sponsor {
        None => Authorization::Standard(condition(signers.origin, signers.origin_nonce, signers.fee)),
        Some((sponsor, nonce)) => Authorization::Sponsored(
            condition(signers.origin, signers.origin_nonce, 0),
            condition(sponsor, nonce, signers.fee),
        ),
    };
    let post_condition_mode =
        if post_conditions.is_empty() { PostConditionMode::Allow } else { PostConditionMode::Deny };
    let mut tx = Transaction {
        version: ctx.tx_version,
        chain_id: ctx.chain_id,
        auth,
        anchor_mode,
        post_condition_mode,
        post_conditions,
        payload,
    };
    sign_role(&mut tx, Role::Origin, signers.origin)?;
    if let Some((sponsor, _)) = signers.sponsor {
        sign_role(&mut tx, Role::Sponsor, sponsor)?;
    }
    Ok(finish(&tx))
}

/// Signs one condition through the codec's sighash chain. (`sign_presign` over the codec's
/// pre-sign hash, rather than `sign_origin`, skips re-deriving the public key per signature.)
fn sign_role(tx: &mut Transaction, role: Role, key: &DevKey) -> Result<(), CodecError> {
    let presign = next_presign_sighash(tx, role)?;
    let (signature, encoding) = sign_presign(presign, &key.private_key);
    splice_single_sig_signature(tx, role, signature, encoding)
}

fn finish(tx: &Transaction) -> Signed {
    let raw = tx.serialize();
    Signed {
        txid: stacks_codec::to_hex_prefixed(&stacks_codec::tx::txid_of(&raw)),
        raw_hex: stacks_codec::to_hex_prefixed(&raw),
    }
}

/// A block-0 boot transaction: sent by the boot address with an empty signature, fee and nonce
/// 0, an uncompressed-key encoding and chain id 0: byte for byte what the recorded genesis
/// blocks of mainnet and regtest carry.
pub fn boot_tx(ctx: &Ctx, payload: Payload) -> Signed {
    let tx = Transaction {
        version: ctx.tx_version,
        chain_id: 0,
        auth: Authorization::Standard(SpendingCondition::SingleSig(SingleSigSpendingCondition {
            hash_mode: HashMode::P2PKH,
            signer: [0; 20],
            nonce: 0,
            tx_fee: 0,
            key_encoding: KeyEncoding::Uncompressed,
            signature: [0; 65],
        })),
        anchor_mode: AnchorMode::Any,
        post_condition_mode: PostConditionMode::Deny,
        post_conditions: Vec::new(),
        payload,
    };
    finish(&tx)
}

/// `{ hashbytes: <hash160>, version: 0x00 }`: a P2PKH PoX reward address.
pub fn pox_addr(key: &DevKey) -> Value {
    Value::Tuple(vec![
        ("hashbytes".into(), Value::Buffer(key.address.hash160.to_vec())),
        ("version".into(), Value::Buffer(vec![0x00])),
    ])
}

/// What a pox-4 signer authorises for `stack-stx`.
pub struct SignerGrant<'a> {
    pub pox_addr: &'a Value,
    pub reward_cycle: u64,
    pub period: u64,
    pub max_amount: u128,
    pub auth_id: u128,
}

/// The pox-4 signer-key signature (`verify-signer-key-sig`): an RSV secp256k1 signature over
/// [`signer_message_hash`] of the grant.
pub fn pox4_signer_signature(ctx: &Ctx, signer: &DevKey, grant: &SignerGrant<'_>) -> [u8; 65] {
    let (vrs, _) = sign_presign(signer_message_hash(ctx.chain_id, "stack-stx", grant), &signer.private_key);
    vrs_to_rsv(&vrs)
}

/// pox-4's `get-signer-key-message-hash`: the SIP-018 structured-data hash of a grant for
/// `topic`, in the domain `{name: "pox-4-signer", version: "1.0.0", chain-id}`.
pub fn signer_message_hash(chain_id: u32, topic: &str, grant: &SignerGrant<'_>) -> [u8; 32] {
    let ascii = |s: &str| Value::StringAscii(s.as_bytes().to_vec());
    let domain = Value::Tuple(vec![
        ("chain-id".into(), Value::UInt(u128::from(chain_id))),
        ("name".into(), ascii("pox-4-signer")),
        ("version".into(), ascii("1.0.0")),
    ]);
    let message = Value::Tuple(vec![
        ("auth-id".into(), Value::UInt(grant.auth_id)),
        ("max-amount".into(), Value::UInt(grant.max_amount)),
        ("period".into(), Value::UInt(u128::from(grant.period))),
        ("pox-addr".into(), grant.pox_addr.canonical()),
        ("reward-cycle".into(), Value::UInt(u128::from(grant.reward_cycle))),
        ("topic".into(), ascii(topic)),
    ]);
    let mut preimage = b"SIP018".to_vec();
    preimage.extend_from_slice(&sha256(&domain.serialize()));
    preimage.extend_from_slice(&sha256(&message.serialize()));
    sha256(&preimage)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::DevnetConfig;
    use stacks_codec::address::Principal;
    use stacks_codec::sign::{verify_origin, verify_sponsor};

    fn ctx() -> Ctx {
        Ctx::new(DevnetConfig { accounts: 3, miners: 2, ..DevnetConfig::default() }).unwrap()
    }

    fn transfer(ctx: &Ctx) -> Payload {
        Payload::TokenTransfer {
            recipient: Principal::Standard(ctx.key(1).address),
            amount: 5,
            memo: [0; 34],
        }
    }

    #[test]
    fn standard_and_sponsored_signatures_verify() {
        let ctx = ctx();
        let standard = Signers { origin: ctx.key(0), origin_nonce: 3, sponsor: None, fee: 180 };
        let s = sign(&ctx, &standard, AnchorMode::Any, vec![], transfer(&ctx)).unwrap();
        let tx = Transaction::deserialize(&stacks_codec::decode_hex(&s.raw_hex).unwrap()).unwrap();
        assert_eq!(tx.txid_hex(), s.txid);
        assert_eq!((tx.nonce(), tx.fee(), tx.chain_id), (3, 180, 0x8000_0000));
        verify_origin(&tx).unwrap();

        let sponsored =
            Signers { origin: ctx.key(0), origin_nonce: 4, sponsor: Some((ctx.key(2), 9)), fee: 300 };
        let s = sign(&ctx, &sponsored, AnchorMode::OnChainOnly, vec![], transfer(&ctx)).unwrap();
        let tx = Transaction::deserialize(&stacks_codec::decode_hex(&s.raw_hex).unwrap()).unwrap();
        verify_origin(&tx).unwrap();
        verify_sponsor(&tx).unwrap();
        assert_eq!((tx.fee(), tx.sponsor_nonce(), tx.origin().tx_fee()), (300, Some(9), 0));
        assert_eq!(tx.sponsor_address(), Some(ctx.key(2).address));
    }

    #[test]
    fn boot_transactions_match_the_recorded_genesis_txids() {
        use crate::contracts::{GENESIS_NAME, GENESIS_SOURCE};
        let deploy = |_: &Ctx| Payload::SmartContract {
            name: GENESIS_NAME.into(),
            code_body: GENESIS_SOURCE.into(),
            clarity_version: None,
        };
        let mint_carrier = |ctx: &Ctx| Payload::TokenTransfer {
            recipient: Principal::Standard(ctx.boot),
            amount: 0,
            memo: [0; 34],
        };
        // regtest-env-pox-4-...-S1.tsv and mocknet.tsv (testnet), mainnet-block0.tsv (mainnet).
        let t = ctx();
        assert_eq!(
            boot_tx(&t, deploy(&t)).txid,
            "0xb3847b7e852b0d731061ff144e4467065c6e7b159a9eee2f883fdc41f261ee13"
        );
        assert_eq!(
            boot_tx(&t, mint_carrier(&t)).txid,
            "0xcba511741b230bd85cb5b3b10d26e0b92695d4a83f95c260cad82a40cd764235"
        );
        let m = Ctx::new(DevnetConfig { network: super::super::Network::Mainnet, ..DevnetConfig::default() })
            .unwrap();
        assert_eq!(
            boot_tx(&m, deploy(&m)).txid,
            "0xa57c1b5e787712d833a330647e3efee17f6bb24de48044ea44c10fdf4f82ef23"
        );
        assert_eq!(
            boot_tx(&m, mint_carrier(&m)).txid,
            "0x2f079994c9bd92b2272258b9de73e278824d76efe1b5a83a3b00941f9559de8a"
        );
    }

    #[test]
    fn signer_signature_recovers_the_signer_key() {
        use stacks_codec::sign::{recover_public_key, rsv_to_vrs};
        let ctx = ctx();
        let key = ctx.key(1);
        let addr = pox_addr(key);
        let grant = SignerGrant { pox_addr: &addr, reward_cycle: 5, period: 2, max_amount: 7, auth_id: 11 };
        let rsv = pox4_signer_signature(&ctx, key, &grant);
        // Recompute the SIP-018 hash independently of the helper's tuple order.
        let ascii = |s: &str| Value::StringAscii(s.as_bytes().to_vec());
        let domain = Value::Tuple(vec![
            ("version".into(), ascii("1.0.0")),
            ("name".into(), ascii("pox-4-signer")),
            ("chain-id".into(), Value::UInt(0x8000_0000)),
        ])
        .canonical();
        let message = Value::Tuple(vec![
            ("topic".into(), ascii("stack-stx")),
            ("reward-cycle".into(), Value::UInt(5)),
            ("pox-addr".into(), addr.clone()),
            ("period".into(), Value::UInt(2)),
            ("max-amount".into(), Value::UInt(7)),
            ("auth-id".into(), Value::UInt(11)),
        ])
        .canonical();
        let mut pre = b"SIP018".to_vec();
        pre.extend_from_slice(&sha256(&domain.serialize()));
        pre.extend_from_slice(&sha256(&message.serialize()));
        let recovered = recover_public_key(sha256(&pre), &rsv_to_vrs(&rsv), KeyEncoding::Compressed).unwrap();
        assert_eq!(recovered, key.public_key);
    }
}
