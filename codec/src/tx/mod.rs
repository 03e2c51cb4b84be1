//! Stacks transactions (SIP-005, plus the Nakamoto payloads): the in-memory model.
//! Wire (de)serialization and the decoded JSON live in the submodules.

mod accessors;
mod api_json;
pub mod clarity_text;
mod json;
pub mod wire;

pub use accessors::txid_of;

use crate::address::{ContractId, Principal, StacksAddress};
use crate::clarity::Value;

/// Transaction version byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransactionVersion {
    Mainnet = 0x00,
    Testnet = 0x80,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transaction {
    pub version: TransactionVersion,
    pub chain_id: u32,
    pub auth: Authorization,
    pub anchor_mode: AnchorMode,
    pub post_condition_mode: PostConditionMode,
    pub post_conditions: Vec<PostCondition>,
    pub payload: Payload,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Authorization {
    /// Auth type 0x04.
    Standard(SpendingCondition),
    /// Auth type 0x05: origin, then sponsor.
    Sponsored(SpendingCondition, SpendingCondition),
}

/// Spending-condition hash modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HashMode {
    P2PKH = 0x00,
    P2SH = 0x01,
    P2WPKH = 0x02,
    P2WSH = 0x03,
    /// Non-sequential multisig (SIP-027).
    P2SHNonSequential = 0x05,
    P2WSHNonSequential = 0x07,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpendingCondition {
    SingleSig(SingleSigSpendingCondition),
    MultiSig(MultiSigSpendingCondition),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyEncoding {
    Compressed = 0x00,
    Uncompressed = 0x01,
}

/// A recoverable secp256k1 signature in Stacks' byte order: recovery id first, then r, s.
pub type RecoverableSignature = [u8; 65];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SingleSigSpendingCondition {
    /// `P2PKH` or `P2WPKH`.
    pub hash_mode: HashMode,
    pub signer: [u8; 20],
    pub nonce: u64,
    pub tx_fee: u64,
    pub key_encoding: KeyEncoding,
    pub signature: RecoverableSignature,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MultiSigSpendingCondition {
    /// `P2SH`, `P2WSH` or one of the non-sequential modes.
    pub hash_mode: HashMode,
    pub signer: [u8; 20],
    pub nonce: u64,
    pub tx_fee: u64,
    pub fields: Vec<AuthField>,
    pub signatures_required: u16,
}

/// One entry of a multisig condition: a public key (33 bytes, compressed form on the wire)
/// or a signature, each tagged with the key encoding it stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthField {
    /// Field id 0x00 (compressed) or 0x01 (uncompressed).
    PublicKey { key_encoding: KeyEncoding, key: [u8; 33] },
    /// Field id 0x02 (compressed) or 0x03 (uncompressed).
    Signature { key_encoding: KeyEncoding, signature: RecoverableSignature },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnchorMode {
    OnChainOnly = 0x01,
    OffChainOnly = 0x02,
    Any = 0x03,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PostConditionMode {
    Allow = 0x01,
    Deny = 0x02,
    /// 0x03 (`originator`, SIP-034), built by newer libraries.
    Originator = 0x03,
}

/// Who a post-condition is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PostConditionPrincipal {
    /// 0x01: the transaction's origin.
    Origin,
    /// 0x02.
    Standard(StacksAddress),
    /// 0x03.
    Contract(ContractId),
}

/// Codes for STX and fungible-token amounts (and the staking condition).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FungibleConditionCode {
    SentEq = 0x01,
    SentGt = 0x02,
    SentGe = 0x03,
    SentLt = 0x04,
    SentLe = 0x05,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NonfungibleConditionCode {
    Sent = 0x10,
    NotSent = 0x11,
    /// 0x12 (`maybe-sent`), built by newer libraries.
    MaybeSent = 0x12,
}

/// `contract_address.contract_name::asset_name`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssetInfo {
    pub contract: ContractId,
    pub asset_name: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PostCondition {
    /// Type 0x00.
    Stx { principal: PostConditionPrincipal, code: FungibleConditionCode, amount: u64 },
    /// Type 0x01.
    Fungible { principal: PostConditionPrincipal, asset: AssetInfo, code: FungibleConditionCode, amount: u64 },
    /// Type 0x02.
    Nonfungible {
        principal: PostConditionPrincipal,
        asset: AssetInfo,
        value: Value,
        code: NonfungibleConditionCode,
    },
}

/// Microblock header, as carried by a poison-microblock payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MicroblockHeader {
    pub version: u8,
    pub sequence: u16,
    pub prev_block: [u8; 32],
    pub tx_merkle_root: [u8; 32],
    pub signature: RecoverableSignature,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClarityVersion {
    Clarity1 = 1,
    Clarity2 = 2,
    Clarity3 = 3,
    Clarity4 = 4,
}

/// Why a tenure changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TenureChangeCause {
    BlockFound = 0,
    Extended = 1,
    ExtendedRuntime = 2,
    ExtendedReadCount = 3,
    ExtendedReadLength = 4,
    ExtendedWriteCount = 5,
    ExtendedWriteLength = 6,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TenureChange {
    pub tenure_consensus_hash: [u8; 20],
    pub prev_tenure_consensus_hash: [u8; 20],
    pub burn_view_consensus_hash: [u8; 20],
    pub previous_tenure_end: [u8; 32],
    pub previous_tenure_blocks: u32,
    pub cause: TenureChangeCause,
    pub pubkey_hash: [u8; 20],
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Payload {
    /// 0x00. `memo` is always 34 bytes on the wire.
    TokenTransfer { recipient: Principal, amount: u64, memo: [u8; 34] },
    /// 0x01 (no version) and 0x06 (`clarity_version: Some`).
    SmartContract { name: String, code_body: String, clarity_version: Option<ClarityVersion> },
    /// 0x02.
    ContractCall { contract: ContractId, function_name: String, function_args: Vec<Value> },
    /// 0x03.
    PoisonMicroblock(MicroblockHeader, MicroblockHeader),
    /// 0x04, 0x05 (`alt_recipient: Some`, `vrf_proof: None`) and 0x08 (Nakamoto, `vrf_proof: Some`).
    Coinbase { data: [u8; 32], alt_recipient: Option<Principal>, vrf_proof: Option<[u8; 80]> },
    /// 0x07.
    TenureChange(TenureChange),
}
