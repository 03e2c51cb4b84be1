//! One-line rendering of an error and its causes, shared by the event observer's error replies,
//! the import's line errors and the command line's last word.

use std::error::Error;

/// How many links of a cause chain are rendered, as the incumbent does (it stops at 10 too).
const MAX_LINKS: usize = 10;

/// `message: cause: cause…` with every run of whitespace collapsed to one space, so a
/// multi-line message from a database driver stays on one line of JSON or log.
///
/// Many errors print their source inside their own message as well (`#[error("…: {0}")]`);
/// a cause whose text already ends the rendering so far (after a `: `) is not repeated.
pub fn error_chain(err: &(dyn Error + 'static)) -> String {
    let mut out = collapse(&err.to_string());
    let mut next = err.source();
    for _ in 1..MAX_LINKS {
        let Some(cause) = next else { break };
        let text = collapse(&cause.to_string());
        let repeated = out == text || out.strip_suffix(text.as_str()).is_some_and(|s| s.ends_with(": "));
        if !text.is_empty() && !repeated {
            if !out.is_empty() {
                out.push_str(": ");
            }
            out.push_str(&text);
        }
        next = cause.source();
    }
    out
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::EventPath;
    use crate::ingest::IngestError;
    use thiserror::Error;

    #[derive(Debug, Error)]
    #[error("outer failed")]
    struct Outer(#[source] Middle);

    #[derive(Debug, Error)]
    #[error("middle\n   went\twrong")]
    struct Middle(#[source] std::io::Error);

    #[test]
    fn joins_causes_and_collapses_whitespace() {
        let err = Outer(Middle(std::io::Error::other("disk  full")));
        assert_eq!(error_chain(&err), "outer failed: middle went wrong: disk full");
    }

    #[test]
    fn a_cause_already_in_the_message_is_not_repeated() {
        let err = IngestError::Store(Box::new(std::io::Error::other("connection reset")));
        assert_eq!(error_chain(&err), "store error: connection reset");
        let err = IngestError::Invalid { path: EventPath::NewBlock, reason: "missing field `x`".into() };
        assert_eq!(error_chain(&err), "invalid /new_block payload: missing field `x`");
    }

    #[test]
    fn stops_after_ten_links() {
        #[derive(Debug)]
        struct Link(u32, Option<Box<Link>>);
        impl std::fmt::Display for Link {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "e{}", self.0)
            }
        }
        impl Error for Link {
            fn source(&self) -> Option<&(dyn Error + 'static)> {
                self.1.as_deref().map(|l| l as &(dyn Error + 'static))
            }
        }
        let chain = (0..15).rev().fold(None, |next, i| Some(Box::new(Link(i, next)))).unwrap();
        assert_eq!(error_chain(&*chain), "e0: e1: e2: e3: e4: e5: e6: e7: e8: e9");
    }
}
