//! What the PoX-5 staking reads need: the staking state of the canonical chain, folded by the
//! ledger from its PoX-5 events ([`model`]).

pub mod model;

use std::future::Future;

pub use model::StakingState;

use crate::pox::PoxCycleReader;
use crate::tip::TipReader;
use crate::ReadError;

pub trait StakingReader: TipReader + PoxCycleReader {
    /// The staking state of the canonical chain at its tip.
    fn staking_state(&self) -> impl Future<Output = Result<StakingState, ReadError>> + Send;
}
