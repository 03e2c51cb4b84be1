//! The wire `Error` object and the [`ErrorCatalog`] trait a server's error enum implements.

use std::collections::HashMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::models::Metadata;

/// The body of every failed Rosetta call (served with HTTP 500, the only status the Go client decodes).
///
/// `code` and `message` identify the error and never change together; per-request context goes
/// in `details`, generic text about the kind of error in `description`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Error {
    pub code: i32,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// True if the same request may succeed when sent again.
    pub retriable: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Metadata>,
}

impl Error {
    pub fn new(code: i32, message: impl Into<String>, retriable: bool) -> Self {
        Self { code, message: message.into(), description: None, retriable, details: None }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "rosetta error {}: {}", self.code, self.message)
    }
}

impl std::error::Error for Error {}

/// A server's closed set of errors. Codes should be explicit constants, never variant positions,
/// so that adding a variant cannot renumber the others.
pub trait ErrorCatalog {
    fn code(&self) -> i32;
    /// Fixed per code: clients may match on it.
    fn message(&self) -> &'static str;
    fn retriable(&self) -> bool;
    /// Per-request context; a non-object value is wrapped as `{"context": value}` on the wire.
    fn details(&self) -> Option<Value>;
    /// One representative of every error the server can return (feeds `allow.errors`).
    fn all() -> Vec<Self>
    where
        Self: Sized;

    /// Generic text about this kind of error.
    fn description(&self) -> Option<&'static str> {
        None
    }

    fn to_wire(&self) -> Error {
        let details = self.details().map(|d| match d {
            Value::Object(map) => map,
            other => Metadata::from_iter([("context".to_owned(), other)]),
        });
        Error {
            code: self.code(),
            message: self.message().to_owned(),
            description: self.description().map(str::to_owned),
            retriable: self.retriable(),
            details,
        }
    }

    /// The `allow.errors` list of `/network/options`: every error, without details.
    fn catalog() -> Vec<Error>
    where
        Self: Sized,
    {
        Self::all().iter().map(|e| Error { details: None, ..e.to_wire() }).collect()
    }

    /// Spec rules on the catalog itself: codes non-negative and unique, messages non-empty and unique.
    fn check_catalog() -> Result<(), Vec<String>>
    where
        Self: Sized,
    {
        let mut problems = Vec::new();
        let mut codes = HashMap::new();
        let mut messages = HashMap::new();
        for e in Self::all() {
            let (code, message) = (e.code(), e.message());
            if code < 0 {
                problems.push(format!("code {code} is negative"));
            }
            if message.is_empty() {
                problems.push(format!("code {code} has an empty message"));
            }
            if let Some(prev) = codes.insert(code, message) {
                problems.push(format!("code {code} used twice ({prev:?}, {message:?})"));
            }
            if let Some(prev) = messages.insert(message, code) {
                problems.push(format!("message {message:?} used by codes {prev} and {code}"));
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems)
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Demo {
        Invalid(u8),
        Busy,
        Same,
    }

    impl ErrorCatalog for Demo {
        fn code(&self) -> i32 {
            match self {
                Demo::Invalid(_) => 601,
                Demo::Busy => 602,
                Demo::Same => 601,
            }
        }
        fn message(&self) -> &'static str {
            match self {
                Demo::Invalid(_) => "Invalid account",
                Demo::Busy => "Node is busy",
                Demo::Same => "Node is busy",
            }
        }
        fn retriable(&self) -> bool {
            matches!(self, Demo::Busy)
        }
        fn details(&self) -> Option<Value> {
            match self {
                Demo::Invalid(n) => Some(json!(n)),
                Demo::Busy => Some(json!({"height": 7})),
                Demo::Same => None,
            }
        }
        fn all() -> Vec<Self> {
            vec![Demo::Invalid(0), Demo::Busy]
        }
    }

    #[test]
    fn to_wire_keeps_objects_and_wraps_other_details() {
        let busy = serde_json::to_value(Demo::Busy.to_wire()).unwrap();
        assert_eq!(
            busy,
            json!({"code": 602, "message": "Node is busy", "retriable": true, "details": {"height": 7}})
        );
        let invalid = Demo::Invalid(3).to_wire();
        assert_eq!(invalid.details, Some(Metadata::from_iter([("context".to_owned(), json!(3))])));
        assert_eq!(invalid.to_string(), "rosetta error 601: Invalid account");
    }

    #[test]
    fn catalog_has_no_details_and_passes_checks() {
        let catalog = Demo::catalog();
        assert_eq!(catalog.len(), 2);
        assert!(catalog.iter().all(|e| e.details.is_none()));
        assert_eq!(Demo::check_catalog(), Ok(()));
    }

    #[test]
    fn check_catalog_reports_duplicates() {
        struct Dup(Demo);
        impl ErrorCatalog for Dup {
            fn code(&self) -> i32 {
                self.0.code()
            }
            fn message(&self) -> &'static str {
                self.0.message()
            }
            fn retriable(&self) -> bool {
                false
            }
            fn details(&self) -> Option<Value> {
                None
            }
            fn all() -> Vec<Self> {
                vec![Dup(Demo::Invalid(0)), Dup(Demo::Busy), Dup(Demo::Same)]
            }
        }
        let problems = Dup::check_catalog().unwrap_err();
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].contains("code 601 used twice"));
        assert!(problems[1].contains("used by codes 602 and 601"));
    }

    #[test]
    fn wire_error_decodes_without_optional_fields() {
        let e: Error =
            serde_json::from_value(json!({"code": 1, "message": "m", "retriable": false})).unwrap();
        assert_eq!(e, Error::new(1, "m", false));
    }
}
