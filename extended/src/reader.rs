//! What the `/extended` routes read: the ledger's read interface (`ledger-read`), which the
//! store implements and the tests fake.

pub use ledger_read::ReadError;
pub use ledger_read::{Tip, TipReader};
