//! One page of a list read: how many rows and from which offset.

/// `limit` and `offset` of a list read (validated by the surface that asks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Paging {
    pub limit: u32,
    pub offset: u64,
}
