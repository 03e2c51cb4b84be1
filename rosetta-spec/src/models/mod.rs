//! Hand-written serde models of every component schema, one module per area of the spec.
//!
//! Conventions, checked against the spec files by `tests/models_vs_spec.rs`:
//! * required fields are plain fields; optional fields are `Option<T>` and are omitted when `None`;
//! * `metadata`-like free-form objects are [`Metadata`];
//! * integers use the spec's `format` (`int64` → `i64`, `int32` → `i32`); `minimum: 0` is left to
//!   [`crate::schema::validate`] so that values read from a store need no casts;
//! * string enums are Rust enums with the spec's exact strings, an `ALL` list and `as_str`.

/// Declares a string enum of the spec: variants with their exact wire strings, `ALL`, `as_str`, `Display`.
macro_rules! wire_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $wire:literal,)+ }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
        pub enum $name {
            $($(#[$vmeta])* #[serde(rename = $wire)] $variant,)+
        }

        impl $name {
            /// Every value, in the spec's order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];

            /// The wire string.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $wire,)+
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

pub mod account;
pub mod block;
pub mod call;
pub mod construction;
pub mod crypto;
pub mod identifiers;
pub mod indexer;
pub mod mempool;
pub mod network;
pub mod objects;

pub use account::*;
pub use block::*;
pub use call::*;
pub use construction::*;
pub use crypto::*;
pub use identifiers::*;
pub use indexer::*;
pub use mempool::*;
pub use network::*;
pub use objects::*;

/// A free-form JSON object (`type: object` without declared properties).
pub type Metadata = serde_json::Map<String, serde_json::Value>;
