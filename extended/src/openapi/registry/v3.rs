//! The `/extended/v3` routes of the registry, one function per route family.

use super::*;
use crate::v3::cursor::Format;

impl Route {
    /// v3 paging: `limit` (minimum 1, the resource's default and maximum) and `cursor` in
    /// `format`.
    pub fn cursor_paged(mut self, rule: LimitRule, format: Format) -> Self {
        self = self.q("limit", ParamType::Integer, "Results per page").q(
            "cursor",
            ParamType::String,
            "Where the page starts: a `cursor` of a previous answer",
        );
        let limit = self.param_mut("limit");
        limit.default = Some(json!(rule.default));
        limit.minimum = Some(1);
        limit.maximum = Some(u64::from(rule.max));
        self.param_mut("cursor").pattern = Some(format.pattern);
        self
    }
}

/// Every v3 route.
pub(super) fn routes() -> Vec<Route> {
    core()
}

/// Transactions, blocks' transactions, the mempool, the supply (issue 22 item 1): declared
/// with their handlers.
fn core() -> Vec<Route> {
    vec![]
}
