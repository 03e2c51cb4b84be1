//! Signing against `shared/vectors/signing.json` (the Construction API flows, made with
//! stacks.js 7.6.0) and the `sighash_steps` of `shared/vectors/transactions.json`: every
//! sighash, every signature byte (RFC 6979 makes them deterministic), every combined
//! transaction, and verification passing on the signed transactions and failing on tampered ones.

use std::collections::HashMap;
use std::path::PathBuf;

use serde_json::Value as Json;
use stacks_codec::address::PublicKeyBytes;
use stacks_codec::decode_hex;
use stacks_codec::sign::{
    append_origin_signature, append_public_key, initial_sighash, multisig_condition, next_presign_sighash,
    postsign_sighash, presign_sighash, recover_public_key, rsv_to_vrs, set_sponsor, sighash_after,
    sign_origin, sign_presign, sign_sponsor, single_sig_condition, splice_single_sig_signature, verify_auth,
    verify_origin, verify_sponsor, vrs_to_rsv, PrivateKey, Role, SignError, SignatureStep,
    AUTH_TYPE_SPONSORED, AUTH_TYPE_STANDARD,
};
use stacks_codec::tx::{
    AuthField, Authorization, HashMode, KeyEncoding, MultiSigSpendingCondition, SpendingCondition,
    Transaction,
};
use stacks_codec::CodecError;

/// The shared reference file, or `None` (after saying so) when it is absent outside CI.
fn load(rel: &str) -> Option<Json> {
    let path = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared")).join(rel);
    if !path.exists() {
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("{} not found: CI=true requires the shared reference data", path.display());
        }
        println!("skipping: {} not found", path.display());
        return None;
    }
    let text = std::fs::read_to_string(&path).expect("read the vectors file");
    Some(serde_json::from_str(&text).expect("vectors file is JSON"))
}

fn text<'a>(v: &'a Json, key: &str) -> &'a str {
    v[key].as_str().unwrap_or_else(|| panic!("no string {key} in {v}"))
}

fn bytes(v: &Json, key: &str) -> Vec<u8> {
    decode_hex(text(v, key)).unwrap_or_else(|e| panic!("{key}: {e}"))
}

fn h32(v: &Json, key: &str) -> [u8; 32] {
    bytes(v, key).try_into().unwrap_or_else(|_| panic!("{key} is not 32 bytes"))
}

fn h65(v: &Json, key: &str) -> [u8; 65] {
    bytes(v, key).try_into().unwrap_or_else(|_| panic!("{key} is not 65 bytes"))
}

/// Decimal integers are strings in the vectors.
fn int(v: &Json, key: &str) -> u64 {
    text(v, key).parse().unwrap_or_else(|e| panic!("{key}: {e}"))
}

fn tx(v: &Json, key: &str) -> Transaction {
    Transaction::deserialize(&bytes(v, key)).unwrap_or_else(|e| panic!("{key}: {e}"))
}

fn key(hex: &str) -> PrivateKey {
    PrivateKey::from_hex(hex).unwrap()
}

fn public_key(hex: &str) -> PublicKeyBytes {
    hex.parse().unwrap()
}

fn signature_error(result: Result<impl std::fmt::Debug, CodecError>) -> SignError {
    match result {
        Err(CodecError::Signature(e)) => e,
        other => panic!("expected a signature error, got {other:?}"),
    }
}

/// A verification failure caused by a changed byte: either no key recovers, or a different key
/// (hence a different signer hash) does.
fn assert_tampered(result: Result<impl std::fmt::Debug, CodecError>, what: &str) {
    match signature_error(result) {
        SignError::WrongSigner { .. } | SignError::Unrecoverable { .. } => {}
        other => panic!("{what}: unexpected error {other}"),
    }
}

fn single_sig_mut(tx: &mut Transaction, role: Role) -> &mut stacks_codec::tx::SingleSigSpendingCondition {
    let condition = match (&mut tx.auth, role) {
        (Authorization::Standard(o) | Authorization::Sponsored(o, _), Role::Origin) => o,
        (Authorization::Sponsored(_, s), Role::Sponsor) => s,
        _ => panic!("no {role} condition"),
    };
    match condition {
        SpendingCondition::SingleSig(c) => c,
        SpendingCondition::MultiSig(_) => panic!("{role} is multisig"),
    }
}

fn multisig_mut(tx: &mut Transaction) -> &mut MultiSigSpendingCondition {
    match &mut tx.auth {
        Authorization::Standard(SpendingCondition::MultiSig(c))
        | Authorization::Sponsored(SpendingCondition::MultiSig(c), _) => c,
        _ => panic!("origin is not multisig"),
    }
}

/// Checks a builder step against a vector step with `signing_payload_hex`, `signature_vrs`,
/// `signature_rsv` and (under `after_key`) the sighash after it.
fn assert_step(step: &SignatureStep, v: &Json, after_key: &str, what: &str) {
    assert_eq!(hex::encode(step.presign_sighash), text(v, "signing_payload_hex"), "{what}: signing payload");
    assert_eq!(hex::encode(step.signature_vrs), text(v, "signature_vrs"), "{what}: signature");
    assert_eq!(hex::encode(vrs_to_rsv(&step.signature_vrs)), text(v, "signature_rsv"), "{what}: rsv");
    assert_eq!(rsv_to_vrs(&h65(v, "signature_rsv")), h65(v, "signature_vrs"), "{what}: rsv to vrs");
    assert_eq!(hex::encode(step.next_sighash), text(v, after_key), "{what}: sighash after");
}

#[test]
fn signing_json() {
    let Some(doc) = load("vectors/signing.json") else { return };
    let vectors = doc["vectors"].as_array().expect("vectors");
    let mut passed: HashMap<&str, usize> = HashMap::new();
    for v in vectors {
        let kind = text(v, "kind");
        let name = text(v, "name");
        match kind {
            "transfer" | "call" => single_sig(v, name),
            "sponsored-transfer" => sponsored(v, name),
            "multisig-transfer" | "multisig-transfer-non-sequential" => multisig(v, name),
            other => panic!("{name}: unknown kind {other}"),
        }
        *passed.entry(kind).or_default() += 1;
    }
    let total: usize = passed.values().sum();
    println!("signing.json: {total}/{} vectors passed: {passed:?}", vectors.len());
    assert_eq!(total, 17);
    assert_eq!(passed["transfer"], 12);
    assert_eq!(passed["call"], 2);
}

/// The Construction API flow: payloads (initial + pre-sign), an external signer, combine (rsv
/// spliced in as vrs), then the same through our own signer.
fn single_sig(v: &Json, name: &str) {
    let unsigned = tx(v, "unsigned_tx_hex");
    let signed = tx(v, "signed_tx_hex");
    let (fee, nonce) = (int(v, "fee"), int(v, "nonce"));
    assert_eq!((unsigned.fee(), unsigned.nonce()), (fee, nonce), "{name}: fee and nonce");
    assert_eq!(hex::encode(initial_sighash(&unsigned)), text(v, "initial_sighash"), "{name}: initial");
    // A signed transaction has the same initial sighash: signing clears what signing fills in.
    assert_eq!(initial_sighash(&signed), initial_sighash(&unsigned), "{name}: initial of signed");

    let presign = next_presign_sighash(&unsigned, Role::Origin).unwrap();
    assert_eq!(hex::encode(presign), text(v, "signing_payload_hex"), "{name}: signing payload");
    assert_eq!(presign, presign_sighash(h32(v, "initial_sighash"), AUTH_TYPE_STANDARD, fee, nonce));

    let private_key = key(text(v, "private_key_used_for_signing"));
    assert_eq!(private_key.public_key().to_string(), text(v, "public_key"), "{name}: public key");
    let (signature, encoding) = sign_presign(presign, &private_key);
    assert_eq!(hex::encode(signature), text(v, "signature_vrs"), "{name}: signature");
    assert_eq!(hex::encode(vrs_to_rsv(&signature)), text(v, "signature_rsv"), "{name}: rsv");
    let recovered = recover_public_key(presign, &signature, encoding).unwrap();
    assert_eq!(recovered.to_string(), text(v, "recovered_public_key"), "{name}: recovered");
    let postsign = postsign_sighash(presign, encoding, &signature);
    assert_eq!(hex::encode(postsign), text(v, "postsign_sighash"), "{name}: postsign");

    // combine: the Rosetta signature arrives as r‖s‖v.
    let mut combined = unsigned.clone();
    let vrs = rsv_to_vrs(&h65(v, "signature_rsv"));
    splice_single_sig_signature(&mut combined, Role::Origin, vrs, recovered.key_encoding()).unwrap();
    assert_eq!(combined, signed, "{name}: combined");
    assert_eq!(combined.serialize(), bytes(v, "signed_tx_hex"), "{name}: combined bytes");
    assert_eq!(combined.txid_hex(), text(v, "txid"), "{name}: txid");

    // Our own signer gives the same transaction.
    let mut ours = unsigned.clone();
    let step = sign_origin(&mut ours, &private_key).unwrap();
    assert_eq!(ours, signed, "{name}: sign_origin");
    assert_eq!(hex::encode(step.cur_sighash), text(v, "initial_sighash"));
    assert_step(&step, v, "postsign_sighash", name);

    let verified = verify_origin(&signed).unwrap();
    assert_eq!(verified.signers, vec![recovered], "{name}: verified signer");
    assert_eq!(verified.next_sighash, postsign);
    assert_eq!(signed.origin_address().to_c32(), text(v, "sender_address"));
    assert_eq!(signature_error(verify_sponsor(&signed)), SignError::NotSponsored);
    assert!(verify_auth(&signed).unwrap().sponsor.is_none());

    // The unsigned transaction's zero signature does not verify.
    assert_tampered(verify_origin(&unsigned), name);
    tamper_single_sig(&signed, Role::Origin, name);

    // Keys that could only make an invalid transaction are refused: the same secret with the
    // other encoding, and a stranger's key with the right encoding.
    let with_encoding = |secret: &[u8], encoding: KeyEncoding| {
        let mut b = secret[..32].to_vec();
        if encoding == KeyEncoding::Compressed {
            b.push(0x01);
        }
        PrivateKey::from_slice(&b).unwrap()
    };
    let flipped = match encoding {
        KeyEncoding::Compressed => KeyEncoding::Uncompressed,
        KeyEncoding::Uncompressed => KeyEncoding::Compressed,
    };
    let other_encoding = with_encoding(&private_key.to_bytes(), flipped);
    assert!(matches!(
        signature_error(sign_origin(&mut unsigned.clone(), &other_encoding)),
        SignError::KeyEncodingMismatch { role: Role::Origin, .. }
    ));
    let stranger = with_encoding(&[0x11; 32], encoding);
    assert!(matches!(
        signature_error(sign_origin(&mut unsigned.clone(), &stranger)),
        SignError::WrongSigner { role: Role::Origin, .. }
    ));
    assert!(matches!(
        signature_error(splice_single_sig_signature(&mut unsigned.clone(), Role::Origin, vrs, flipped)),
        SignError::KeyEncodingMismatch { .. }
    ));
    assert_eq!(signature_error(sign_sponsor(&mut unsigned.clone(), &private_key)), SignError::NotSponsored);
    assert_eq!(
        signature_error(append_origin_signature(&mut unsigned.clone(), &private_key)),
        SignError::NotMultiSig(Role::Origin)
    );
}

/// Flipping a fee bit or a signature byte of a verified single-sig condition must break it.
fn tamper_single_sig(signed: &Transaction, role: Role, name: &str) {
    let verify = |tx: &Transaction| match role {
        Role::Origin => verify_origin(tx),
        Role::Sponsor => verify_sponsor(tx),
    };
    assert!(verify(signed).is_ok(), "{name}: {role} verifies before tampering");
    let mut fee = signed.clone();
    single_sig_mut(&mut fee, role).tx_fee ^= 1;
    assert_tampered(verify(&fee), name);
    let mut nonce = signed.clone();
    single_sig_mut(&mut nonce, role).nonce ^= 1;
    assert_tampered(verify(&nonce), name);
    for at in [1, 32, 33, 64] {
        let mut sig = signed.clone();
        single_sig_mut(&mut sig, role).signature[at] ^= 0x01;
        assert_tampered(verify(&sig), name);
    }
    let mut recovery_id = signed.clone();
    single_sig_mut(&mut recovery_id, role).signature[0] = 7;
    assert!(
        matches!(signature_error(verify(&recovery_id)), SignError::Unrecoverable { role: r, index: 0 } if r == role)
    );
    // The payload is covered too.
    let mut payload = signed.clone();
    payload.chain_id ^= 1;
    assert_tampered(verify(&payload), name);
}

fn sponsored(v: &Json, name: &str) {
    let unsigned = tx(v, "unsigned_tx_hex");
    let origin_signed = tx(v, "origin_signed_tx_hex");
    let signed = tx(v, "signed_tx_hex");
    let (origin_step, sponsor_step) = (&v["origin"], &v["sponsor"]);
    assert_eq!(hex::encode(initial_sighash(&unsigned)), text(v, "initial_sighash"), "{name}: initial");
    assert_eq!(initial_sighash(&signed), initial_sighash(&unsigned), "{name}: initial of signed");

    // Origin: auth type 0x04 although the transaction is sponsored.
    assert_eq!(text(origin_step, "auth_type_used_in_presign"), "standard (0x04)");
    let presign = presign_sighash(
        h32(v, "initial_sighash"),
        AUTH_TYPE_STANDARD,
        int(v, "origin_fee"),
        int(v, "origin_nonce"),
    );
    assert_eq!(next_presign_sighash(&unsigned, Role::Origin).unwrap(), presign);
    let origin_key = key(text(v, "origin_private_key"));
    assert_eq!(origin_key.public_key().to_string(), text(v, "origin_public_key"));
    let mut ours = unsigned.clone();
    let step = sign_origin(&mut ours, &origin_key).unwrap();
    assert_step(&step, origin_step, "postsign_sighash", name);
    assert_eq!(ours, origin_signed, "{name}: origin-signed tx");
    assert_eq!(
        recover_public_key(presign, &step.signature_vrs, step.key_encoding).unwrap(),
        origin_key.public_key()
    );

    // Sponsor: the real sponsor condition replaces the placeholder, then signs from the origin's
    // post-sign sighash with auth type 0x05.
    let sponsor_key = key(text(v, "sponsor_private_key"));
    assert_eq!(sponsor_key.public_key().to_string(), text(v, "sponsor_public_key"));
    let (sponsor_fee, sponsor_nonce) = (int(v, "sponsor_fee"), int(v, "sponsor_nonce"));
    let condition =
        single_sig_condition(HashMode::P2PKH, &sponsor_key.public_key(), sponsor_nonce, sponsor_fee).unwrap();
    set_sponsor(&mut ours, condition).unwrap();
    assert_eq!(text(sponsor_step, "auth_type_used_in_presign"), "sponsored (0x05)");
    let cur = h32(sponsor_step, "cur_sighash");
    assert_eq!(cur, h32(origin_step, "postsign_sighash"));
    assert_eq!(sighash_after(ours.origin(), initial_sighash(&ours), AUTH_TYPE_STANDARD), cur);
    let sponsor_presign = presign_sighash(cur, AUTH_TYPE_SPONSORED, sponsor_fee, sponsor_nonce);
    assert_eq!(next_presign_sighash(&ours, Role::Sponsor).unwrap(), sponsor_presign);
    let mut spliced = ours.clone();
    let step = sign_sponsor(&mut ours, &sponsor_key).unwrap();
    assert_eq!(step.cur_sighash, cur);
    assert_step(&step, sponsor_step, "postsign_sighash", name);
    assert_eq!(ours, signed, "{name}: sponsored tx");
    assert_eq!(ours.serialize(), bytes(v, "signed_tx_hex"));
    assert_eq!(ours.txid_hex(), text(v, "txid"), "{name}: txid");

    // combine for the sponsor.
    let vrs = rsv_to_vrs(&h65(sponsor_step, "signature_rsv"));
    splice_single_sig_signature(&mut spliced, Role::Sponsor, vrs, KeyEncoding::Compressed).unwrap();
    assert_eq!(spliced, signed, "{name}: spliced sponsor");

    let auth = verify_auth(&signed).unwrap();
    assert_eq!(auth.origin.signers, vec![origin_key.public_key()]);
    let sponsor = auth.sponsor.expect("sponsor verified");
    assert_eq!(sponsor.signers, vec![sponsor_key.public_key()]);
    assert_eq!(hex::encode(sponsor.next_sighash), text(sponsor_step, "postsign_sighash"));
    assert_eq!(verify_sponsor(&signed).unwrap(), sponsor);
    assert_eq!(verify_origin(&signed).unwrap(), auth.origin);

    // The origin does not sign over the sponsor, so the origin survives sponsor tampering; the
    // sponsor signs over the origin, so it does not survive origin tampering.
    tamper_single_sig(&signed, Role::Sponsor, name);
    tamper_single_sig(&signed, Role::Origin, name);
    let mut sponsor_fee_changed = signed.clone();
    single_sig_mut(&mut sponsor_fee_changed, Role::Sponsor).tx_fee += 1;
    assert!(verify_origin(&sponsor_fee_changed).is_ok());
    let mut origin_fee_changed = signed.clone();
    single_sig_mut(&mut origin_fee_changed, Role::Origin).tx_fee += 1;
    assert_tampered(verify_sponsor(&origin_fee_changed), name);
    // Before the sponsor signs, the origin already verifies.
    assert!(verify_origin(&origin_signed).is_ok());
    assert_tampered(verify_sponsor(&origin_signed), name);
}

fn multisig(v: &Json, name: &str) {
    let signed = tx(v, "signed_tx_hex");
    // The decoder refuses a multisig condition without its signatures, as stacks-core does, so
    // the unsigned transaction is the signed one with its fields cleared; it must serialize to
    // the library's unsigned bytes.
    let unsigned_bytes = bytes(v, "unsigned_tx_hex");
    assert!(Transaction::deserialize(&unsigned_bytes).is_err(), "{name}: decoder took an unsigned multisig");
    let mut unsigned = signed.clone();
    multisig_mut(&mut unsigned).fields.clear();
    assert_eq!(unsigned.serialize(), unsigned_bytes, "{name}: unsigned tx");
    let hash_mode = v["hash_mode"].as_u64().unwrap();
    let required = u16::try_from(v["signatures_required"].as_u64().unwrap()).unwrap();
    let keys: Vec<PrivateKey> =
        v["private_keys"].as_array().unwrap().iter().map(|k| key(k.as_str().unwrap())).collect();
    let public_keys: Vec<PublicKeyBytes> =
        v["public_keys"].as_array().unwrap().iter().map(|k| public_key(k.as_str().unwrap())).collect();
    let (fee, nonce) = (int(v, "fee"), int(v, "nonce"));
    let condition = unsigned.origin();
    assert_eq!(condition.hash_mode() as u64, hash_mode);
    assert_eq!((condition.tx_fee(), condition.nonce()), (fee, nonce));
    // The unsigned condition is what our constructor makes from the keys.
    let rebuilt = multisig_condition(condition.hash_mode(), required, &public_keys, nonce, fee).unwrap();
    assert_eq!(&rebuilt, condition, "{name}: multisig condition from keys");
    assert_eq!(hex::encode(initial_sighash(&unsigned)), text(v, "initial_sighash"), "{name}: initial");
    assert_eq!(initial_sighash(&signed), initial_sighash(&unsigned));

    let mut ours = unsigned.clone();
    let mut signers = Vec::new();
    for (i, step) in v["steps"].as_array().unwrap().iter().enumerate() {
        let index = step["key_index"].as_u64().unwrap() as usize;
        assert_eq!(public_keys[index].to_string(), text(step, "public_key"));
        let what = format!("{name} step {i}");
        match text(step, "action") {
            "sign" => {
                let presign = next_presign_sighash(&ours, Role::Origin).unwrap();
                assert_eq!(hex::encode(presign), text(step, "signing_payload_hex"), "{what}: payload");
                let ours_step = append_origin_signature(&mut ours, &keys[index]).unwrap();
                assert_eq!(hex::encode(ours_step.cur_sighash), text(step, "cur_sighash"), "{what}: cur");
                assert_step(&ours_step, step, "sighash_after", &what);
                signers.push(public_keys[index]);
            }
            "append_public_key" => append_public_key(&mut ours, &public_keys[index]).unwrap(),
            other => panic!("{what}: unknown action {other}"),
        }
    }
    assert_eq!(ours, signed, "{name}: multisig tx");
    assert_eq!(ours.serialize(), bytes(v, "signed_tx_hex"));
    assert_eq!(ours.txid_hex(), text(v, "txid"), "{name}: txid");
    assert_eq!(signed.origin_address().to_c32(), text(v, "sender_address"));

    let verified = verify_origin(&signed).unwrap();
    assert_eq!(verified.signers, signers, "{name}: recovered signers");
    assert_eq!(verified.public_keys, public_keys, "{name}: all keys");
    let non_sequential = signed.origin().hash_mode().is_non_sequential();
    if non_sequential {
        assert_eq!(hex::encode(verified.next_sighash), text(v, "initial_sighash"));
    }

    // Tampering: fee, each signature, and signature count.
    let mut fee_changed = signed.clone();
    multisig_mut(&mut fee_changed).tx_fee += 1;
    assert_tampered(verify_origin(&fee_changed), name);
    for field in 0..signed_fields(&signed).len() {
        if let AuthField::Signature { .. } = signed_fields(&signed)[field] {
            let mut bad = signed.clone();
            if let AuthField::Signature { signature, .. } = &mut multisig_mut(&mut bad).fields[field] {
                signature[40] ^= 0x80;
            }
            assert_tampered(verify_origin(&bad), name);
        }
    }
    // Swapping a signature for its key keeps the address but loses a signature.
    let mut fewer = signed.clone();
    let first_sig =
        signed_fields(&signed).iter().position(|f| matches!(f, AuthField::Signature { .. })).unwrap();
    multisig_mut(&mut fewer).fields[first_sig] =
        AuthField::PublicKey { key_encoding: KeyEncoding::Compressed, key: signers[0].to_compressed() };
    assert_eq!(
        signature_error(verify_origin(&fewer)),
        SignError::TooFewSignatures { role: Role::Origin, required, found: usize::from(required) - 1 }
    );
    // A sequential condition takes no signature past the required count; a non-sequential one
    // takes every key's.
    if non_sequential {
        let mut all = unsigned.clone();
        for k in &keys {
            append_origin_signature(&mut all, k).unwrap();
        }
        assert_eq!(verify_origin(&all).unwrap().signers, public_keys, "{name}: every key signed");
    } else {
        let spare = v["steps"].as_array().unwrap().iter().find(|s| text(s, "action") == "append_public_key");
        let spare_key = &keys[spare.unwrap()["key_index"].as_u64().unwrap() as usize];
        assert_eq!(
            signature_error(append_origin_signature(&mut signed.clone(), spare_key)),
            SignError::TooManySignatures { role: Role::Origin, required, found: usize::from(required) + 1 }
        );
    }
    // Single-sig helpers refuse a multisig condition.
    assert_eq!(
        signature_error(sign_origin(&mut unsigned.clone(), &keys[0])),
        SignError::NotSingleSig(Role::Origin)
    );
    assert_eq!(
        signature_error(splice_single_sig_signature(
            &mut unsigned.clone(),
            Role::Origin,
            [0; 65],
            KeyEncoding::Compressed
        )),
        SignError::NotSingleSig(Role::Origin)
    );
}

fn signed_fields(tx: &Transaction) -> &[AuthField] {
    match tx.origin() {
        SpendingCondition::MultiSig(c) => &c.fields,
        SpendingCondition::SingleSig(_) => &[],
    }
}

/// Every private key of transactions.json, by the public key it signs for (each key in both
/// encodings, since `origin_b` is used uncompressed too).
fn key_ring(keys: &Json) -> HashMap<String, PrivateKey> {
    let mut hexes: Vec<&str> = ["origin_a", "origin_b", "sponsor"].iter().map(|k| text(keys, k)).collect();
    hexes.extend(keys["multisig"].as_array().unwrap().iter().map(|k| k.as_str().unwrap()));
    let mut ring = HashMap::new();
    for hex in hexes {
        let compressed = key(hex);
        let uncompressed = PrivateKey::from_slice(&compressed.to_bytes()[..32]).unwrap();
        for k in [compressed, uncompressed] {
            ring.insert(k.public_key().to_string(), k);
        }
    }
    ring
}

/// Checks one vector step (`cur_sighash` optional, `presign_sighash`, `signature_vrs`,
/// `next_sighash`) against the chain and re-signs it with the key that made it.
fn check_step(
    step: &Json,
    cur: [u8; 32],
    presign: [u8; 32],
    signature: &[u8; 65],
    encoding: KeyEncoding,
    ring: &HashMap<String, PrivateKey>,
    what: &str,
) -> [u8; 32] {
    if step.get("cur_sighash").is_some() {
        assert_eq!(h32(step, "cur_sighash"), cur, "{what}: cur");
    }
    assert_eq!(h32(step, "presign_sighash"), presign, "{what}: presign");
    assert_eq!(&h65(step, "signature_vrs"), signature, "{what}: signature in the tx");
    let signer = recover_public_key(presign, signature, encoding).unwrap();
    let private_key = ring.get(&signer.to_string()).unwrap_or_else(|| panic!("{what}: no key for {signer}"));
    assert_eq!(&sign_presign(presign, private_key).0, signature, "{what}: re-signed");
    h32(step, "next_sighash")
}

#[test]
fn transactions_json_sighash_steps() {
    let Some(doc) = load("vectors/transactions.json") else { return };
    let ring = key_ring(&doc["keys"]);
    let cases = doc["transactions"].as_array().unwrap();
    let (mut steps, mut sponsors, mut rebuilt) = (0, 0, 0);
    for case in cases {
        let name = text(case, "name");
        let signed = tx(case, "hex");
        let sighash = &case["sighash_steps"];
        let initial = initial_sighash(&signed);
        assert_eq!(hex::encode(initial), text(sighash, "initial_sighash"), "{name}: initial");

        // The origin's chain, step by step.
        let origin = signed.origin();
        let (fee, nonce) = (origin.tx_fee(), origin.nonce());
        let signatures: Vec<(KeyEncoding, [u8; 65])> = match origin {
            SpendingCondition::SingleSig(c) => vec![(c.key_encoding, c.signature)],
            SpendingCondition::MultiSig(c) => c
                .fields
                .iter()
                .filter_map(|f| match f {
                    AuthField::Signature { key_encoding, signature } => Some((*key_encoding, *signature)),
                    AuthField::PublicKey { .. } => None,
                })
                .collect(),
        };
        let vector_steps = sighash["origin"].as_array().unwrap();
        assert_eq!(vector_steps.len(), signatures.len(), "{name}: origin signature count");
        let non_sequential = origin.hash_mode().is_non_sequential();
        let mut cur = initial;
        for (i, (step, (encoding, signature))) in vector_steps.iter().zip(&signatures).enumerate() {
            let presign = presign_sighash(cur, AUTH_TYPE_STANDARD, fee, nonce);
            let next =
                check_step(step, cur, presign, signature, *encoding, &ring, &format!("{name} origin {i}"));
            let ours = if non_sequential { cur } else { postsign_sighash(presign, *encoding, signature) };
            assert_eq!(ours, next, "{name} origin {i}: next");
            cur = next;
            steps += 1;
        }
        assert_eq!(sighash_after(origin, initial, AUTH_TYPE_STANDARD), cur, "{name}: origin chain end");

        let auth = verify_auth(&signed).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(auth.origin.next_sighash, cur);
        assert_eq!(verify_origin(&signed).unwrap(), auth.origin);
        let mut origin_keys: Vec<PublicKeyBytes> = case["build"]["origin_public_keys"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| public_key(k.as_str().unwrap()))
            .collect();
        if origin_keys.is_empty() {
            // The uncompressed P2PKH cases list no key: they are `origin_b`'s, uncompressed.
            assert_eq!(text(&case["build"], "auth"), "p2pkh-u", "{name}: no origin keys listed");
            let origin_b = key(text(&doc["keys"], "origin_b")).to_bytes();
            origin_keys.push(PrivateKey::from_slice(&origin_b[..32]).unwrap().public_key());
        }
        assert_eq!(auth.origin.public_keys, origin_keys, "{name}: origin keys");

        // The sponsor's, from where the origin's ends.
        match (signed.sponsor(), sighash.get("sponsor")) {
            (Some(SpendingCondition::SingleSig(c)), Some(step)) => {
                let presign = presign_sighash(cur, AUTH_TYPE_SPONSORED, c.tx_fee, c.nonce);
                let next = check_step(
                    step,
                    cur,
                    presign,
                    &c.signature,
                    c.key_encoding,
                    &ring,
                    &format!("{name} sponsor"),
                );
                assert_eq!(
                    postsign_sighash(presign, c.key_encoding, &c.signature),
                    next,
                    "{name} sponsor: next"
                );
                let sponsor = auth.sponsor.clone().expect("sponsor verified");
                assert_eq!(sponsor.next_sighash, next);
                assert_eq!(verify_sponsor(&signed).unwrap(), sponsor);
                sponsors += 1;
            }
            (None, None) => assert!(auth.sponsor.is_none()),
            (sponsor, step) => panic!("{name}: sponsor {sponsor:?} with steps {step:?}"),
        }

        // Rebuild the signatures with our builder from the cleared transaction.
        let mut ours = signed.clone();
        let origin_fields = signed_fields(&signed).to_vec();
        match &mut ours.auth {
            Authorization::Standard(o) | Authorization::Sponsored(o, _) => match o {
                SpendingCondition::SingleSig(c) => c.signature = [0; 65],
                SpendingCondition::MultiSig(c) => c.fields.clear(),
            },
        }
        if let Some(SpendingCondition::SingleSig(_)) = signed.sponsor() {
            single_sig_mut(&mut ours, Role::Sponsor).signature = [0; 65];
        }
        match signed.origin() {
            SpendingCondition::SingleSig(_) => {
                sign_origin(&mut ours, &ring[&auth.origin.signers[0].to_string()]).unwrap();
            }
            SpendingCondition::MultiSig(_) => {
                let mut signers = auth.origin.signers.iter();
                for (field, key) in origin_fields.iter().zip(&auth.origin.public_keys) {
                    match field {
                        AuthField::Signature { .. } => {
                            let signer = signers.next().unwrap();
                            append_origin_signature(&mut ours, &ring[&signer.to_string()]).unwrap();
                        }
                        AuthField::PublicKey { .. } => append_public_key(&mut ours, key).unwrap(),
                    }
                }
            }
        }
        if let Some(sponsor) = &auth.sponsor {
            sign_sponsor(&mut ours, &ring[&sponsor.signers[0].to_string()]).unwrap();
        }
        assert_eq!(ours.serialize(), bytes(case, "hex"), "{name}: rebuilt by our signer");
        rebuilt += 1;
    }
    println!(
        "transactions.json: {}/{} initial sighashes, {steps} origin steps, {sponsors} sponsor steps, {rebuilt} rebuilt by our signer, all verified",
        cases.len(),
        cases.len()
    );
    assert_eq!(cases.len(), 67);
}

#[test]
fn segwit_modes_refuse_uncompressed_keys() {
    let compressed = key("4aad360eaef4446290a72b49613cdfccbf598a39bb9b518d310d91137726f82a01");
    let uncompressed = PrivateKey::from_slice(&compressed.to_bytes()[..32]).unwrap();
    let keys = [compressed.public_key(), key(&format!("{}01", "22".repeat(32))).public_key()];
    let condition = multisig_condition(HashMode::P2WSH, 1, &keys, 0, 0).unwrap();
    let origin_only = |c| {
        let mut tx = Transaction::deserialize(
            &decode_hex("0x000000000104004c0c2acd49b191f554f8f125f5c5a7ee69c10156000000000000a2910000000000094cfa000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000030200000000000514c8c49a1115c9521dae5a1aed2ea05f8ad7aa97ea0000000000000001726f7365747461000000000000000000000000000000000000000000000000000000").unwrap(),
        )
        .unwrap();
        tx.auth = Authorization::Standard(c);
        tx
    };
    let mut tx = origin_only(condition);
    assert_eq!(
        signature_error(append_origin_signature(&mut tx, &uncompressed)),
        SignError::UncompressedSegwit(Role::Origin)
    );
    assert_eq!(
        signature_error(append_public_key(&mut tx, &uncompressed.public_key())),
        SignError::UncompressedSegwit(Role::Origin)
    );
    append_origin_signature(&mut tx, &compressed).unwrap();
    append_public_key(&mut tx, &keys[1]).unwrap();
    assert_eq!(verify_origin(&tx).unwrap().signers, vec![compressed.public_key()]);
    assert!(single_sig_condition(HashMode::P2WPKH, &uncompressed.public_key(), 0, 0).is_err());
    assert!(single_sig_condition(HashMode::P2SH, &compressed.public_key(), 0, 0).is_err());
    assert!(multisig_condition(HashMode::P2PKH, 1, &keys[..1], 0, 0).is_err());

    // A P2WPKH condition signed with its (compressed) key verifies; the uncompressed key is refused.
    let mut tx =
        origin_only(single_sig_condition(HashMode::P2WPKH, &compressed.public_key(), 5, 180).unwrap());
    assert!(matches!(
        signature_error(sign_origin(&mut tx, &uncompressed)),
        SignError::KeyEncodingMismatch { .. }
    ));
    sign_origin(&mut tx, &compressed).unwrap();
    assert_eq!(verify_origin(&tx).unwrap().signers, vec![compressed.public_key()]);
    let reparsed = Transaction::deserialize(&tx.serialize()).unwrap();
    assert!(verify_auth(&reparsed).is_ok());
}
