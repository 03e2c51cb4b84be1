//! The incumbent's hidden redirect of the old PoX event paths: `GET /extended/v1/poxN_events/*`
//! answers `302` to the same URL with `/poxN_events/` replaced by `/poxN/`, the query string
//! kept. The bare `/extended/v1/poxN_events` is not one of them: the incumbent answers it 404
//! (recorded on every oracle fixture).

use warp::filters::path::FullPath;
use warp::{Filter, Rejection, Reply};

use crate::reply::found;
use crate::tx::raw_query;

/// The `Location` for an old-form path, `None` when `path` is not one.
///
/// Deviation: the incumbent's rewrite names only `pox4`, so `pox2_events`/`pox3_events`
/// redirect to themselves (a loop); they go to `pox2`/`pox3` here
/// (docs/extended-deviations.md, misc).
pub fn location(path: &str, query: &str) -> Option<String> {
    let rest = path.strip_prefix("/extended/v1/")?;
    let (segment, tail) = rest.split_once('/').map_or((rest, None), |(s, t)| (s, Some(t)));
    let pox = segment.strip_suffix("_events")?;
    let digit = pox.strip_prefix("pox")?;
    if digit.len() != 1 || !digit.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let target = format!("/extended/v1/{pox}/{}", tail?);
    Some(if query.is_empty() { target } else { format!("{target}?{query}") })
}

pub fn routes() -> impl Filter<Extract = (impl Reply,), Error = Rejection> + Clone {
    warp::get().and(warp::path::full()).and(raw_query()).and_then(|p: FullPath, q: String| async move {
        location(p.as_str(), &q).map(|l| found(&l)).ok_or_else(warp::reject::not_found)
    })
}

#[cfg(test)]
mod tests {
    use super::location;

    #[test]
    fn old_event_paths_redirect_to_the_new_ones() {
        // Recorded: the bare old path is a 404, not a redirect.
        assert_eq!(location("/extended/v1/pox4_events", ""), None);
        assert_eq!(
            location("/extended/v1/pox4_events/stacker/SP1", "limit=2").as_deref(),
            Some("/extended/v1/pox4/stacker/SP1?limit=2")
        );
        assert_eq!(location("/extended/v1/pox4_events/", "").as_deref(), Some("/extended/v1/pox4/"));
        assert_eq!(
            location("/extended/v1/pox3_events/tx/0x01", "").as_deref(),
            Some("/extended/v1/pox3/tx/0x01")
        );
        for other in
            ["/extended/v1/pox4/events", "/extended/v1/poxx_events", "/extended/v1/pox10_events", "/v2/pox"]
        {
            assert_eq!(location(other, ""), None, "{other}");
        }
    }
}
