//! Consensus (de)serialization of transactions: SIP-005, the Nakamoto payloads (0x06 versioned
//! contract, 0x07 tenure change, 0x08 Nakamoto coinbase) and SIP-027 non-sequential multisig.
//!
//! Decoding is strict about *format*: every enum byte must be known, the whole input must be
//! consumed, counts are checked against the bytes left before anything is allocated, and the
//! structural checks stacks-core makes while decoding are repeated (multisig signature count,
//! compressed keys for segwit modes, public keys on the curve). It does not repeat the chain's
//! *validity* rules that the reference decoder (the one the Hiro API uses) skips, so the API
//! can still show such transactions: coinbase / poison-microblock anchor mode, and the
//! "two headers identify a fork" rule of poison microblocks.
//!
//! Newer bytes that stacks.js 7 builds and the 1.2.0 native decoder rejects are accepted:
//! post-condition mode 0x03 (`originator`) and NFT condition code 0x12 (`maybe-sent`), both
//! from SIP-034 era chains. Staking/PoX post-condition types (0x03 / 0x04) are not modelled yet
//! and are rejected as unknown.

use super::*;
use crate::address::ContractId;
use crate::clarity::{
    read_address, read_clarity_name, read_contract_name, read_principal, type_id as t, write_address,
    write_principal,
};
use crate::reader::Reader;
use crate::CodecError;

/// Auth type bytes.
pub const AUTH_STANDARD: u8 = 0x04;
pub const AUTH_SPONSORED: u8 = 0x05;

/// Payload type bytes.
pub mod payload_id {
    pub const TOKEN_TRANSFER: u8 = 0x00;
    pub const SMART_CONTRACT: u8 = 0x01;
    pub const CONTRACT_CALL: u8 = 0x02;
    pub const POISON_MICROBLOCK: u8 = 0x03;
    pub const COINBASE: u8 = 0x04;
    pub const COINBASE_TO_ALT_RECIPIENT: u8 = 0x05;
    pub const VERSIONED_SMART_CONTRACT: u8 = 0x06;
    pub const TENURE_CHANGE: u8 = 0x07;
    pub const NAKAMOTO_COINBASE: u8 = 0x08;
}

/// Post-condition asset type bytes.
pub mod asset_info_id {
    pub const STX: u8 = 0x00;
    pub const FUNGIBLE: u8 = 0x01;
    pub const NONFUNGIBLE: u8 = 0x02;
}

/// Post-condition principal type bytes.
pub mod pc_principal_id {
    pub const ORIGIN: u8 = 0x01;
    pub const STANDARD: u8 = 0x02;
    pub const CONTRACT: u8 = 0x03;
}

/// Smallest encodings, used to bound counts by the bytes left before allocating.
const MIN_AUTH_FIELD_LEN: usize = 1 + 33;
/// An STX condition on the origin: type, principal, code, amount.
const MIN_POST_CONDITION_LEN: usize = 1 + 1 + 1 + 8;
/// Smart-contract bodies: the chain bounds the whole transaction by its block size.
const MAX_CODE_BODY_LEN: u64 = 2 * 1024 * 1024;

impl Transaction {
    /// Decodes exactly one transaction that fills `bytes`.
    pub fn deserialize(bytes: &[u8]) -> Result<Transaction, CodecError> {
        let mut r = Reader::new(bytes);
        let tx = Transaction::read(&mut r)?;
        r.finish()?;
        Ok(tx)
    }

    /// Decodes a transaction that may still be collecting multisig signatures: a multisig
    /// condition may hold fewer signatures than it requires (never more, in a sequential mode).
    /// The Construction API passes such transactions between its signing rounds; a node would
    /// refuse them, so everything else decodes with [`Transaction::deserialize`].
    pub fn deserialize_partially_signed(bytes: &[u8]) -> Result<Transaction, CodecError> {
        let mut r = Reader::new(bytes);
        let tx = Transaction::read_with(&mut r, Signatures::AtMostRequired)?;
        r.finish()?;
        Ok(tx)
    }

    /// Decodes one transaction from the reader, leaving the rest (blocks and microblocks carry
    /// transactions back to back).
    pub fn read(r: &mut Reader<'_>) -> Result<Transaction, CodecError> {
        Transaction::read_with(r, Signatures::Complete)
    }

    fn read_with(r: &mut Reader<'_>, signatures: Signatures) -> Result<Transaction, CodecError> {
        let version = TransactionVersion::from_u8(r.u8()?)?;
        let chain_id = r.u32()?;
        let auth = Authorization::read_with(r, signatures)?;
        let anchor_mode = AnchorMode::from_u8(r.u8()?)?;
        let post_condition_mode = PostConditionMode::from_u8(r.u8()?)?;
        let n = r.count_u32("post-condition count", u32::MAX as u64, MIN_POST_CONDITION_LEN)?;
        let mut post_conditions = Vec::with_capacity(n);
        for _ in 0..n {
            post_conditions.push(PostCondition::read(r)?);
        }
        let payload = Payload::read(r)?;
        Ok(Transaction {
            version,
            chain_id,
            auth,
            anchor_mode,
            post_condition_mode,
            post_conditions,
            payload,
        })
    }

    pub fn serialize(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write(&mut out);
        out
    }

    pub fn write(&self, out: &mut Vec<u8>) {
        out.push(self.version as u8);
        out.extend_from_slice(&self.chain_id.to_be_bytes());
        self.auth.write(out);
        out.push(self.anchor_mode as u8);
        write_post_conditions(out, self.post_condition_mode, &self.post_conditions);
        self.payload.write(out);
    }

    /// Post-condition mode byte, count and post-conditions, exactly as on the wire (the
    /// native decoder's `post_conditions_buffer`).
    pub fn post_conditions_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        write_post_conditions(&mut out, self.post_condition_mode, &self.post_conditions);
        out
    }
}

/// Writes the post-condition mode, the u32 count and every post-condition.
pub fn write_post_conditions(out: &mut Vec<u8>, mode: PostConditionMode, pcs: &[PostCondition]) {
    out.push(mode as u8);
    out.extend_from_slice(&(pcs.len() as u32).to_be_bytes());
    pcs.iter().for_each(|pc| pc.write(out));
}

impl TransactionVersion {
    /// Only the two canonical bytes. stacks-core masks the byte (`& 0x80`), but a masked byte
    /// would not re-encode to the same bytes, so the txid would not match the input.
    pub fn from_u8(b: u8) -> Result<Self, CodecError> {
        match b {
            0x00 => Ok(TransactionVersion::Mainnet),
            0x80 => Ok(TransactionVersion::Testnet),
            other => Err(CodecError::InvalidByte { what: "transaction version", value: other }),
        }
    }
}

impl AnchorMode {
    pub fn from_u8(b: u8) -> Result<Self, CodecError> {
        match b {
            0x01 => Ok(AnchorMode::OnChainOnly),
            0x02 => Ok(AnchorMode::OffChainOnly),
            0x03 => Ok(AnchorMode::Any),
            other => Err(CodecError::InvalidByte { what: "anchor mode", value: other }),
        }
    }
}

impl PostConditionMode {
    pub fn from_u8(b: u8) -> Result<Self, CodecError> {
        match b {
            0x01 => Ok(PostConditionMode::Allow),
            0x02 => Ok(PostConditionMode::Deny),
            0x03 => Ok(PostConditionMode::Originator),
            other => Err(CodecError::InvalidByte { what: "post-condition mode", value: other }),
        }
    }
}

impl HashMode {
    pub fn from_u8(b: u8) -> Result<Self, CodecError> {
        match b {
            0x00 => Ok(HashMode::P2PKH),
            0x01 => Ok(HashMode::P2SH),
            0x02 => Ok(HashMode::P2WPKH),
            0x03 => Ok(HashMode::P2WSH),
            0x05 => Ok(HashMode::P2SHNonSequential),
            0x07 => Ok(HashMode::P2WSHNonSequential),
            other => Err(CodecError::InvalidByte { what: "hash mode", value: other }),
        }
    }

    /// P2PKH and P2WPKH: one key, one signature.
    pub fn is_single_sig(self) -> bool {
        matches!(self, HashMode::P2PKH | HashMode::P2WPKH)
    }

    /// SIP-027 modes: every signer signs the same initial sighash.
    pub fn is_non_sequential(self) -> bool {
        matches!(self, HashMode::P2SHNonSequential | HashMode::P2WSHNonSequential)
    }

    /// Segwit-wrapped modes allow compressed keys only.
    pub fn is_segwit(self) -> bool {
        matches!(self, HashMode::P2WPKH | HashMode::P2WSH | HashMode::P2WSHNonSequential)
    }
}

impl KeyEncoding {
    pub fn from_u8(b: u8) -> Result<Self, CodecError> {
        match b {
            0x00 => Ok(KeyEncoding::Compressed),
            0x01 => Ok(KeyEncoding::Uncompressed),
            other => Err(CodecError::InvalidByte { what: "key encoding", value: other }),
        }
    }
}

/// How many signatures a multisig condition must hold to decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Signatures {
    /// What stacks-core accepts: a complete condition.
    Complete,
    /// A condition still being signed.
    AtMostRequired,
}

impl Authorization {
    pub fn read(r: &mut Reader<'_>) -> Result<Self, CodecError> {
        Authorization::read_with(r, Signatures::Complete)
    }

    fn read_with(r: &mut Reader<'_>, signatures: Signatures) -> Result<Self, CodecError> {
        match r.u8()? {
            AUTH_STANDARD => Ok(Authorization::Standard(SpendingCondition::read_with(r, signatures)?)),
            AUTH_SPONSORED => {
                let origin = SpendingCondition::read_with(r, signatures)?;
                Ok(Authorization::Sponsored(origin, SpendingCondition::read_with(r, signatures)?))
            }
            other => Err(CodecError::InvalidByte { what: "auth type", value: other }),
        }
    }

    pub fn write(&self, out: &mut Vec<u8>) {
        match self {
            Authorization::Standard(origin) => {
                out.push(AUTH_STANDARD);
                origin.write(out);
            }
            Authorization::Sponsored(origin, sponsor) => {
                out.push(AUTH_SPONSORED);
                origin.write(out);
                sponsor.write(out);
            }
        }
    }
}

impl SpendingCondition {
    pub fn read(r: &mut Reader<'_>) -> Result<Self, CodecError> {
        SpendingCondition::read_with(r, Signatures::Complete)
    }

    fn read_with(r: &mut Reader<'_>, signatures: Signatures) -> Result<Self, CodecError> {
        let hash_mode = HashMode::from_u8(r.u8()?)?;
        let signer = r.array()?;
        let nonce = r.u64()?;
        let tx_fee = r.u64()?;
        if hash_mode.is_single_sig() {
            let key_encoding = KeyEncoding::from_u8(r.u8()?)?;
            let signature = r.array()?;
            if hash_mode.is_segwit() && key_encoding != KeyEncoding::Compressed {
                return Err(CodecError::invalid("spending condition", "P2WPKH requires a compressed key"));
            }
            return Ok(SpendingCondition::SingleSig(SingleSigSpendingCondition {
                hash_mode,
                signer,
                nonce,
                tx_fee,
                key_encoding,
                signature,
            }));
        }
        let n = r.count_u32("auth field count", u32::MAX as u64, MIN_AUTH_FIELD_LEN)?;
        let mut fields = Vec::with_capacity(n);
        for _ in 0..n {
            fields.push(AuthField::read(r)?);
        }
        let signatures_required = r.u16()?;
        check_multisig(hash_mode, &fields, signatures_required, signatures)?;
        Ok(SpendingCondition::MultiSig(MultiSigSpendingCondition {
            hash_mode,
            signer,
            nonce,
            tx_fee,
            fields,
            signatures_required,
        }))
    }

    pub fn write(&self, out: &mut Vec<u8>) {
        match self {
            SpendingCondition::SingleSig(c) => {
                out.push(c.hash_mode as u8);
                out.extend_from_slice(&c.signer);
                out.extend_from_slice(&c.nonce.to_be_bytes());
                out.extend_from_slice(&c.tx_fee.to_be_bytes());
                out.push(c.key_encoding as u8);
                out.extend_from_slice(&c.signature);
            }
            SpendingCondition::MultiSig(c) => {
                out.push(c.hash_mode as u8);
                out.extend_from_slice(&c.signer);
                out.extend_from_slice(&c.nonce.to_be_bytes());
                out.extend_from_slice(&c.tx_fee.to_be_bytes());
                out.extend_from_slice(&(c.fields.len() as u32).to_be_bytes());
                c.fields.iter().for_each(|f| f.write(out));
                out.extend_from_slice(&c.signatures_required.to_be_bytes());
            }
        }
    }
}

/// The checks stacks-core makes while decoding a multisig condition: sequential modes carry
/// exactly `signatures_required` signatures, non-sequential ones at least that many, and
/// segwit modes compressed keys only. A partially signed condition may have fewer signatures.
fn check_multisig(
    hash_mode: HashMode,
    fields: &[AuthField],
    required: u16,
    expect: Signatures,
) -> Result<(), CodecError> {
    let signatures = fields.iter().filter(|f| matches!(f, AuthField::Signature { .. })).count();
    let uncompressed = fields.iter().any(|f| f.key_encoding() == KeyEncoding::Uncompressed);
    let enough = match (expect, hash_mode.is_non_sequential()) {
        (Signatures::Complete, true) => signatures >= required as usize,
        (Signatures::Complete, false) => signatures == required as usize,
        (Signatures::AtMostRequired, true) => true,
        (Signatures::AtMostRequired, false) => signatures <= required as usize,
    };
    if !enough {
        return Err(CodecError::invalid(
            "multisig spending condition",
            format!("{signatures} signatures for {required} required"),
        ));
    }
    if uncompressed && hash_mode.is_segwit() {
        return Err(CodecError::invalid(
            "multisig spending condition",
            "segwit mode with an uncompressed key",
        ));
    }
    Ok(())
}

impl AuthField {
    pub fn key_encoding(&self) -> KeyEncoding {
        match self {
            AuthField::PublicKey { key_encoding, .. } | AuthField::Signature { key_encoding, .. } => {
                *key_encoding
            }
        }
    }

    /// The field id byte: 0x00/0x01 public key, 0x02/0x03 signature (compressed/uncompressed).
    pub fn type_id(&self) -> u8 {
        match self {
            AuthField::PublicKey { key_encoding, .. } => *key_encoding as u8,
            AuthField::Signature { key_encoding, .. } => 0x02 | *key_encoding as u8,
        }
    }

    pub fn read(r: &mut Reader<'_>) -> Result<Self, CodecError> {
        let id = r.u8()?;
        let key_encoding = if id & 1 == 0 { KeyEncoding::Compressed } else { KeyEncoding::Uncompressed };
        match id {
            0x00 | 0x01 => {
                let key: [u8; 33] = r.array()?;
                // stacks-core parses the key, so a point off the curve fails to decode there.
                secp256k1::PublicKey::from_slice(&key)
                    .map_err(|e| CodecError::invalid("auth field public key", e.to_string()))?;
                Ok(AuthField::PublicKey { key_encoding, key })
            }
            0x02 | 0x03 => Ok(AuthField::Signature { key_encoding, signature: r.array()? }),
            other => Err(CodecError::InvalidByte { what: "auth field type", value: other }),
        }
    }

    pub fn write(&self, out: &mut Vec<u8>) {
        out.push(self.type_id());
        match self {
            AuthField::PublicKey { key, .. } => out.extend_from_slice(key),
            AuthField::Signature { signature, .. } => out.extend_from_slice(signature),
        }
    }
}

impl PostConditionPrincipal {
    pub fn read(r: &mut Reader<'_>) -> Result<Self, CodecError> {
        match r.u8()? {
            pc_principal_id::ORIGIN => Ok(PostConditionPrincipal::Origin),
            pc_principal_id::STANDARD => Ok(PostConditionPrincipal::Standard(read_address(r)?)),
            pc_principal_id::CONTRACT => {
                let address = read_address(r)?;
                Ok(PostConditionPrincipal::Contract(ContractId { address, name: read_contract_name(r)? }))
            }
            other => Err(CodecError::InvalidByte { what: "post-condition principal type", value: other }),
        }
    }

    /// The type byte: 0x01 origin, 0x02 standard, 0x03 contract.
    pub fn type_id(&self) -> u8 {
        match self {
            PostConditionPrincipal::Origin => pc_principal_id::ORIGIN,
            PostConditionPrincipal::Standard(_) => pc_principal_id::STANDARD,
            PostConditionPrincipal::Contract(_) => pc_principal_id::CONTRACT,
        }
    }

    pub fn write(&self, out: &mut Vec<u8>) {
        out.push(self.type_id());
        match self {
            PostConditionPrincipal::Origin => {}
            PostConditionPrincipal::Standard(a) => write_address(out, a),
            PostConditionPrincipal::Contract(c) => write_contract_id(out, c),
        }
    }
}

impl FungibleConditionCode {
    pub fn from_u8(b: u8) -> Result<Self, CodecError> {
        match b {
            0x01 => Ok(FungibleConditionCode::SentEq),
            0x02 => Ok(FungibleConditionCode::SentGt),
            0x03 => Ok(FungibleConditionCode::SentGe),
            0x04 => Ok(FungibleConditionCode::SentLt),
            0x05 => Ok(FungibleConditionCode::SentLe),
            other => Err(CodecError::InvalidByte { what: "fungible condition code", value: other }),
        }
    }
}

impl NonfungibleConditionCode {
    pub fn from_u8(b: u8) -> Result<Self, CodecError> {
        match b {
            0x10 => Ok(NonfungibleConditionCode::Sent),
            0x11 => Ok(NonfungibleConditionCode::NotSent),
            0x12 => Ok(NonfungibleConditionCode::MaybeSent),
            other => Err(CodecError::InvalidByte { what: "non-fungible condition code", value: other }),
        }
    }
}

impl AssetInfo {
    pub fn read(r: &mut Reader<'_>) -> Result<Self, CodecError> {
        let address = read_address(r)?;
        let name = read_contract_name(r)?;
        Ok(AssetInfo { contract: ContractId { address, name }, asset_name: read_clarity_name(r)? })
    }

    pub fn write(&self, out: &mut Vec<u8>) {
        write_contract_id(out, &self.contract);
        write_name(out, &self.asset_name);
    }
}

impl PostCondition {
    pub fn read(r: &mut Reader<'_>) -> Result<Self, CodecError> {
        match r.u8()? {
            asset_info_id::STX => {
                let principal = PostConditionPrincipal::read(r)?;
                let code = FungibleConditionCode::from_u8(r.u8()?)?;
                Ok(PostCondition::Stx { principal, code, amount: r.u64()? })
            }
            asset_info_id::FUNGIBLE => {
                let principal = PostConditionPrincipal::read(r)?;
                let asset = AssetInfo::read(r)?;
                let code = FungibleConditionCode::from_u8(r.u8()?)?;
                Ok(PostCondition::Fungible { principal, asset, code, amount: r.u64()? })
            }
            asset_info_id::NONFUNGIBLE => {
                let principal = PostConditionPrincipal::read(r)?;
                let asset = AssetInfo::read(r)?;
                let value = Value::read(r)?;
                let code = NonfungibleConditionCode::from_u8(r.u8()?)?;
                Ok(PostCondition::Nonfungible { principal, asset, value, code })
            }
            other => Err(CodecError::InvalidByte { what: "post-condition asset type", value: other }),
        }
    }

    /// The asset type byte: 0x00 STX, 0x01 fungible, 0x02 non-fungible.
    pub fn asset_info_id(&self) -> u8 {
        match self {
            PostCondition::Stx { .. } => asset_info_id::STX,
            PostCondition::Fungible { .. } => asset_info_id::FUNGIBLE,
            PostCondition::Nonfungible { .. } => asset_info_id::NONFUNGIBLE,
        }
    }

    pub fn write(&self, out: &mut Vec<u8>) {
        out.push(self.asset_info_id());
        match self {
            PostCondition::Stx { principal, code, amount } => {
                principal.write(out);
                out.push(*code as u8);
                out.extend_from_slice(&amount.to_be_bytes());
            }
            PostCondition::Fungible { principal, asset, code, amount } => {
                principal.write(out);
                asset.write(out);
                out.push(*code as u8);
                out.extend_from_slice(&amount.to_be_bytes());
            }
            PostCondition::Nonfungible { principal, asset, value, code } => {
                principal.write(out);
                asset.write(out);
                value.write(out);
                out.push(*code as u8);
            }
        }
    }
}

impl MicroblockHeader {
    /// Encoded size: version, sequence, parent hash, merkle root, signature.
    pub const LEN: usize = 1 + 2 + 32 + 32 + 65;

    pub fn read(r: &mut Reader<'_>) -> Result<Self, CodecError> {
        Ok(MicroblockHeader {
            version: r.u8()?,
            sequence: r.u16()?,
            prev_block: r.array()?,
            tx_merkle_root: r.array()?,
            signature: r.array()?,
        })
    }

    pub fn write(&self, out: &mut Vec<u8>) {
        out.push(self.version);
        out.extend_from_slice(&self.sequence.to_be_bytes());
        out.extend_from_slice(&self.prev_block);
        out.extend_from_slice(&self.tx_merkle_root);
        out.extend_from_slice(&self.signature);
    }

    pub fn serialize(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(Self::LEN);
        self.write(&mut out);
        out
    }
}

impl ClarityVersion {
    pub fn from_u8(b: u8) -> Result<Self, CodecError> {
        match b {
            1 => Ok(ClarityVersion::Clarity1),
            2 => Ok(ClarityVersion::Clarity2),
            3 => Ok(ClarityVersion::Clarity3),
            4 => Ok(ClarityVersion::Clarity4),
            other => Err(CodecError::InvalidByte { what: "Clarity version", value: other }),
        }
    }
}

impl TenureChangeCause {
    pub fn from_u8(b: u8) -> Result<Self, CodecError> {
        use TenureChangeCause::*;
        Ok(match b {
            0 => BlockFound,
            1 => Extended,
            2 => ExtendedRuntime,
            3 => ExtendedReadCount,
            4 => ExtendedReadLength,
            5 => ExtendedWriteCount,
            6 => ExtendedWriteLength,
            other => return Err(CodecError::InvalidByte { what: "tenure change cause", value: other }),
        })
    }
}

impl TenureChange {
    pub fn read(r: &mut Reader<'_>) -> Result<Self, CodecError> {
        Ok(TenureChange {
            tenure_consensus_hash: r.array()?,
            prev_tenure_consensus_hash: r.array()?,
            burn_view_consensus_hash: r.array()?,
            previous_tenure_end: r.array()?,
            previous_tenure_blocks: r.u32()?,
            cause: TenureChangeCause::from_u8(r.u8()?)?,
            pubkey_hash: r.array()?,
        })
    }

    pub fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.tenure_consensus_hash);
        out.extend_from_slice(&self.prev_tenure_consensus_hash);
        out.extend_from_slice(&self.burn_view_consensus_hash);
        out.extend_from_slice(&self.previous_tenure_end);
        out.extend_from_slice(&self.previous_tenure_blocks.to_be_bytes());
        out.push(self.cause as u8);
        out.extend_from_slice(&self.pubkey_hash);
    }
}

impl Payload {
    /// The payload type byte this payload serializes with.
    pub fn type_id(&self) -> u8 {
        use payload_id::*;
        match self {
            Payload::TokenTransfer { .. } => TOKEN_TRANSFER,
            Payload::SmartContract { clarity_version: None, .. } => SMART_CONTRACT,
            Payload::SmartContract { clarity_version: Some(_), .. } => VERSIONED_SMART_CONTRACT,
            Payload::ContractCall { .. } => CONTRACT_CALL,
            Payload::PoisonMicroblock(..) => POISON_MICROBLOCK,
            Payload::Coinbase { vrf_proof: Some(_), .. } => NAKAMOTO_COINBASE,
            Payload::Coinbase { alt_recipient: Some(_), .. } => COINBASE_TO_ALT_RECIPIENT,
            Payload::Coinbase { .. } => COINBASE,
            Payload::TenureChange(_) => TENURE_CHANGE,
        }
    }

    pub fn read(r: &mut Reader<'_>) -> Result<Self, CodecError> {
        use payload_id::*;
        Ok(match r.u8()? {
            TOKEN_TRANSFER => {
                let recipient = read_principal(r)?;
                let amount = r.u64()?;
                Payload::TokenTransfer { recipient, amount, memo: r.array()? }
            }
            SMART_CONTRACT => read_smart_contract(r, None)?,
            VERSIONED_SMART_CONTRACT => {
                let version = ClarityVersion::from_u8(r.u8()?)?;
                read_smart_contract(r, Some(version))?
            }
            CONTRACT_CALL => {
                let address = read_address(r)?;
                let name = read_contract_name(r)?;
                let function_name = read_clarity_name(r)?;
                // Every value takes at least its type byte.
                let n = r.count_u32("function argument count", u32::MAX as u64, 1)?;
                let mut function_args = Vec::with_capacity(n);
                for _ in 0..n {
                    function_args.push(Value::read(r)?);
                }
                Payload::ContractCall { contract: ContractId { address, name }, function_name, function_args }
            }
            POISON_MICROBLOCK => {
                let first = MicroblockHeader::read(r)?;
                Payload::PoisonMicroblock(first, MicroblockHeader::read(r)?)
            }
            COINBASE => Payload::Coinbase { data: r.array()?, alt_recipient: None, vrf_proof: None },
            COINBASE_TO_ALT_RECIPIENT => {
                let data = r.array()?;
                Payload::Coinbase { data, alt_recipient: Some(read_principal(r)?), vrf_proof: None }
            }
            NAKAMOTO_COINBASE => {
                let data = r.array()?;
                // The recipient is an `(optional principal)` Clarity value.
                let alt_recipient = match r.u8()? {
                    t::OPTIONAL_NONE => None,
                    t::OPTIONAL_SOME => Some(read_principal(r)?),
                    other => {
                        return Err(CodecError::InvalidByte {
                            what: "coinbase recipient option",
                            value: other,
                        })
                    }
                };
                Payload::Coinbase { data, alt_recipient, vrf_proof: Some(r.array()?) }
            }
            TENURE_CHANGE => Payload::TenureChange(TenureChange::read(r)?),
            other => return Err(CodecError::InvalidByte { what: "payload type", value: other }),
        })
    }

    pub fn write(&self, out: &mut Vec<u8>) {
        out.push(self.type_id());
        match self {
            Payload::TokenTransfer { recipient, amount, memo } => {
                write_principal(out, recipient);
                out.extend_from_slice(&amount.to_be_bytes());
                out.extend_from_slice(memo);
            }
            Payload::SmartContract { name, code_body, clarity_version } => {
                if let Some(v) = clarity_version {
                    out.push(*v as u8);
                }
                write_name(out, name);
                out.extend_from_slice(&(code_body.len() as u32).to_be_bytes());
                out.extend_from_slice(code_body.as_bytes());
            }
            Payload::ContractCall { contract, function_name, function_args } => {
                write_contract_id(out, contract);
                write_name(out, function_name);
                out.extend_from_slice(&(function_args.len() as u32).to_be_bytes());
                function_args.iter().for_each(|v| v.write(out));
            }
            Payload::PoisonMicroblock(first, second) => {
                first.write(out);
                second.write(out);
            }
            Payload::Coinbase { data, alt_recipient, vrf_proof } => {
                out.extend_from_slice(data);
                match (alt_recipient, vrf_proof) {
                    (None, None) => {}
                    (Some(p), None) => write_principal(out, p),
                    (recipient, Some(proof)) => {
                        match recipient {
                            None => out.push(t::OPTIONAL_NONE),
                            Some(p) => {
                                out.push(t::OPTIONAL_SOME);
                                write_principal(out, p);
                            }
                        }
                        out.extend_from_slice(proof);
                    }
                }
            }
            Payload::TenureChange(tc) => tc.write(out),
        }
    }
}

fn read_smart_contract(
    r: &mut Reader<'_>,
    clarity_version: Option<ClarityVersion>,
) -> Result<Payload, CodecError> {
    let name = read_contract_name(r)?;
    let len = r.count_u32("contract code body", MAX_CODE_BODY_LEN, 1)?;
    let body = r.bytes(len)?;
    let code_body = std::str::from_utf8(body)
        .map_err(|e| CodecError::invalid("contract code body", e.to_string()))?
        .to_string();
    Ok(Payload::SmartContract { name, code_body, clarity_version })
}

/// `address ‖ contract name`, without a Clarity type byte.
fn write_contract_id(out: &mut Vec<u8>, c: &ContractId) {
    write_address(out, &c.address);
    write_name(out, &c.name);
}

/// A one-byte-length-prefixed name. Names from the decoder are at most 128 bytes; callers that
/// build names themselves must keep them that short.
fn write_name(out: &mut Vec<u8>, name: &str) {
    out.push(name.len() as u8);
    out.extend_from_slice(name.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A P2PKH STX transfer from the vectors ("fixed #0").
    const TRANSFER: &str = "0x0000000001040085700a490ff82f116a2b26a540ce16f922f953600000000000000b5400000000000550100000d14fe22a4b3a9b6520bbab3f1badbfd2e3a53c1ef77c59844164a5c18bd8b1355cc273fea8c45f1bc83b8aa4a4f127ceb3c63eb3167b7070fac40767cdea45100302000000000005163083b25f2478e522a426c5f00a667e7d9bdc83ed000000002f802bbb6d656d6f2d3938323635390000000000000000000000000000000000000000000000";

    fn bytes() -> Vec<u8> {
        crate::decode_hex(TRANSFER).unwrap()
    }

    #[test]
    fn round_trips_a_transfer() {
        let raw = bytes();
        let tx = Transaction::deserialize(&raw).unwrap();
        assert_eq!(tx.serialize(), raw);
        assert_eq!(tx.anchor_mode, AnchorMode::Any);
        assert_eq!(tx.post_conditions_bytes(), vec![2, 0, 0, 0, 0]);
        assert!(matches!(tx.payload, Payload::TokenTransfer { amount: 796928955, .. }));
    }

    #[test]
    fn every_truncation_fails() {
        let raw = bytes();
        for n in 0..raw.len() {
            assert!(Transaction::deserialize(&raw[..n]).is_err(), "prefix of {n} bytes decoded");
        }
    }

    #[test]
    fn huge_post_condition_count_fails_fast() {
        let mut raw = bytes();
        // Version, chain id, auth type, single-sig condition, anchor mode, post-condition mode.
        let at = 1 + 4 + 1 + 1 + 20 + 8 + 8 + 1 + 65 + 1 + 1;
        raw[at..at + 4].copy_from_slice(&u32::MAX.to_be_bytes());
        assert!(matches!(Transaction::deserialize(&raw), Err(CodecError::UnexpectedEof { .. })));
    }

    #[test]
    fn unknown_bytes_are_rejected() {
        let raw = bytes();
        for (at, value, what) in [
            (0, 0x01, "transaction version"),
            (5, 0x06, "auth type"),
            (6, 0x04, "hash mode"),
            (6 + 1 + 20 + 16, 0x02, "key encoding"),
        ] {
            let mut bad = raw.clone();
            bad[at] = value;
            assert_eq!(Transaction::deserialize(&bad), Err(CodecError::InvalidByte { what, value }));
        }
    }

    #[test]
    fn multisig_rules_are_enforced() {
        let key: [u8; 33] =
            crate::decode_hex("03cd8d1f35ef2a2674ba536ba5d6b4c13c225b5dee1b14735eedb06629dace5624")
                .unwrap()
                .try_into()
                .unwrap();
        let sig = AuthField::Signature { key_encoding: KeyEncoding::Compressed, signature: [1; 65] };
        let pk = AuthField::PublicKey { key_encoding: KeyEncoding::Uncompressed, key };
        // A multisig spending condition's bytes.
        let bytes = |hash_mode, fields: Vec<AuthField>, required| {
            let c = SpendingCondition::MultiSig(MultiSigSpendingCondition {
                hash_mode,
                signer: [0; 20],
                nonce: 0,
                tx_fee: 0,
                fields,
                signatures_required: required,
            });
            let mut out = Vec::new();
            c.write(&mut out);
            out
        };
        let cond = |hash_mode, fields: Vec<AuthField>, required| {
            SpendingCondition::read(&mut Reader::new(&bytes(hash_mode, fields, required))).map(|_| ())
        };
        assert!(cond(HashMode::P2SH, vec![sig.clone(), pk.clone()], 1).is_ok());
        assert!(cond(HashMode::P2SH, vec![sig.clone(), pk.clone()], 2).is_err());
        assert!(cond(HashMode::P2SHNonSequential, vec![sig.clone(), sig.clone(), pk.clone()], 1).is_ok());
        assert!(cond(HashMode::P2SHNonSequential, vec![sig.clone(), pk.clone()], 2).is_err());
        assert!(cond(HashMode::P2WSH, vec![sig.clone(), pk.clone()], 1).is_err());
        let off_curve = AuthField::PublicKey { key_encoding: KeyEncoding::Compressed, key: [0x05; 33] };
        assert!(cond(HashMode::P2SH, vec![sig.clone(), off_curve], 1).is_err());

        // Partially signed: fewer signatures decode, more than required (sequential) do not,
        // and the segwit rule still holds.
        let partial = |hash_mode, fields: Vec<AuthField>, required| {
            let out = bytes(hash_mode, fields, required);
            SpendingCondition::read_with(&mut Reader::new(&out), Signatures::AtMostRequired).map(|_| ())
        };
        assert!(partial(HashMode::P2SH, vec![pk.clone(), pk.clone()], 2).is_ok());
        assert!(partial(HashMode::P2SH, vec![sig.clone(), pk.clone()], 2).is_ok());
        assert!(partial(HashMode::P2SH, vec![sig.clone(), sig.clone()], 1).is_err());
        assert!(partial(HashMode::P2SHNonSequential, vec![sig.clone(), sig.clone(), pk.clone()], 1).is_ok());
        assert!(partial(HashMode::P2WSH, vec![pk.clone()], 1).is_err());
        assert!(partial(HashMode::P2WSH, vec![sig], 1).is_ok());
    }
}
