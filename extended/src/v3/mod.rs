//! `/extended/v3`: the incumbent's newest API generation.

pub mod staking;
