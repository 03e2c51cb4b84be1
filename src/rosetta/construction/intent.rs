//! The one typed intent between Rosetta operations and Stacks transactions. `ops` reads it from
//! operations and writes it back as operations; `build` turns it into an unsigned transaction and
//! `parse` reads it back from one, so `parse(build(intent)) == intent` is a property of two
//! small functions, tested over every intent kind.

use stacks_codec::address::{ContractId, Principal, StacksAddress};
use stacks_codec::tx::HashMode;

use crate::ledger::Network;

/// Who sends and in which order: the origin's spending condition (single-sig P2PKH or a
/// multisig address; which keys make it is the signers' business, see `build::Signers`), and
/// the sponsor who pays the fee, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub sender: StacksAddress,
    /// The origin's own fee: 0 when sponsored (the sponsor pays).
    pub fee: u64,
    pub nonce: u64,
    pub sponsor: Option<Sponsor>,
}

/// The payer of a sponsored transaction: a single-sig P2PKH account with its own nonce.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sponsor {
    pub address: StacksAddress,
    pub fee: u64,
    pub nonce: u64,
}

impl Origin {
    /// The account the fee operation debits and its amount.
    pub fn fee_payer(&self) -> (StacksAddress, u64) {
        match &self.sponsor {
            Some(s) => (s.address, s.fee),
            None => (self.sender, self.fee),
        }
    }
}

/// A multisig origin's shape, from request metadata (`hash_mode`, `signatures_required`); the
/// member keys come in the request's `public_keys`, in member order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Multisig {
    /// P2SH, P2WSH or a SIP-027 non-sequential mode.
    pub hash_mode: HashMode,
    pub signatures_required: u16,
}

/// The metadata names of the multisig hash modes.
pub const HASH_MODES: [(&str, HashMode); 4] = [
    ("p2sh", HashMode::P2SH),
    ("p2wsh", HashMode::P2WSH),
    ("p2sh-non-sequential", HashMode::P2SHNonSequential),
    ("p2wsh-non-sequential", HashMode::P2WSHNonSequential),
];

pub fn hash_mode_name(mode: HashMode) -> &'static str {
    HASH_MODES.iter().find(|(_, m)| *m == mode).map_or("p2pkh", |(n, _)| n)
}

/// A PoX reward address as the contract takes it: `{version: (buff 1), hashbytes: (buff 20|32)}`.
/// Versions 0x00–0x06: p2pkh, p2sh, p2sh-p2wpkh, p2sh-p2wsh, p2wpkh, p2wsh, p2tr.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoxAddr {
    pub version: u8,
    pub hashbytes: Vec<u8>,
}

/// pox-4 `stack-stx` arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StackStx {
    pub contract: ContractId,
    pub amount_ustx: u128,
    pub pox_addr: PoxAddr,
    pub start_burn_height: u128,
    pub lock_period: u128,
    /// `(optional (buff 65))`: none when the signer authorised the call in advance.
    pub signer_sig: Option<Vec<u8>>,
    /// 33-byte compressed signer key.
    pub signer_key: Vec<u8>,
    pub max_amount: u128,
    pub auth_id: u128,
}

/// pox-4 `delegate-stx` arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DelegateStx {
    pub contract: ContractId,
    pub amount_ustx: u128,
    pub delegate_to: Principal,
    pub until_burn_height: Option<u128>,
    pub pox_addr: Option<PoxAddr>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Intent {
    /// `memo`: UTF-8 text of at most 34 bytes, without trailing NULs (the wire pads with them).
    TokenTransfer {
        origin: Origin,
        recipient: Principal,
        amount: u64,
        memo: Option<String>,
    },
    StackStx {
        origin: Origin,
        args: StackStx,
    },
    DelegateStx {
        origin: Origin,
        args: DelegateStx,
    },
    RevokeDelegateStx {
        origin: Origin,
        contract: ContractId,
    },
}

impl Intent {
    pub fn origin(&self) -> &Origin {
        match self {
            Intent::TokenTransfer { origin, .. }
            | Intent::StackStx { origin, .. }
            | Intent::DelegateStx { origin, .. }
            | Intent::RevokeDelegateStx { origin, .. } => origin,
        }
    }

    /// The Rosetta operation type of the intent's main operation.
    pub fn op_type(&self) -> &'static str {
        match self {
            Intent::TokenTransfer { .. } => TOKEN_TRANSFER,
            Intent::StackStx { .. } => STACK_STX,
            Intent::DelegateStx { .. } => DELEGATE_STX,
            Intent::RevokeDelegateStx { .. } => REVOKE_DELEGATE_STX,
        }
    }

    pub fn memo(&self) -> Option<&str> {
        match self {
            Intent::TokenTransfer { memo, .. } => memo.as_deref(),
            _ => None,
        }
    }
}

pub const FEE: &str = "fee";
pub const TOKEN_TRANSFER: &str = "token_transfer";
pub const STACK_STX: &str = "stack_stx";
pub const DELEGATE_STX: &str = "delegate_stx";
pub const REVOKE_DELEGATE_STX: &str = "revoke_delegate_stx";

/// The longest memo a token transfer carries.
pub const MEMO_LEN: usize = 34;

/// The boot PoX contract the stacking intents call unless told otherwise.
pub fn default_pox_contract(network: Network) -> ContractId {
    let boot =
        if network.is_mainnet() { "SP000000000000000000002Q6VF78" } else { "ST000000000000000000002AMW42H" };
    let address: StacksAddress = boot.parse().expect("boot address is valid c32");
    ContractId::new(address, "pox-4").expect("pox-4 is a valid contract name")
}

/// Whether `contract` is a boot PoX contract (any version) of either network.
pub fn is_boot_pox(contract: &ContractId) -> bool {
    contract.address.hash160 == [0; 20] && contract.name.starts_with("pox")
}
