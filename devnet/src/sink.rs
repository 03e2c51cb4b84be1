//! Where generated events go: a TSV event log (the incumbent's `export-events` format), or
//! HTTP POSTs to a running event observer, one event at a time and in order, like a node.

use std::io::Write;

use ledger_core::events::TsvWriter;

use super::chain::DevnetEvent;
use super::DevnetError;

/// Writes every event to `out` as TSV lines. Returns how many were written.
pub fn write_tsv<W: Write>(
    events: impl Iterator<Item = Result<DevnetEvent, DevnetError>>,
    out: W,
) -> Result<u64, DevnetError> {
    let mut writer = TsvWriter::new(out);
    let mut n = 0;
    for event in events {
        writer.write_event(&event?.into_raw()).map_err(DevnetError::Write)?;
        n += 1;
    }
    writer.flush().map_err(DevnetError::Write)?;
    Ok(n)
}

/// POSTs every event to `base_url` + its path (e.g. `http://127.0.0.1:3700/new_block`). Stops
/// at the first response that is not 2xx, returning its status and body: unlike a node, which
/// would retry, a generator has nothing better to send next.
pub async fn post_events(
    events: impl Iterator<Item = Result<DevnetEvent, DevnetError>>,
    base_url: &str,
) -> Result<u64, DevnetError> {
    let client = reqwest::Client::new();
    let base = base_url.trim_end_matches('/');
    let mut n = 0;
    for event in events {
        let event = event?;
        let url = format!("{base}{}", event.path.as_str());
        let response = client
            .post(&url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(event.payload)
            .send()
            .await
            .map_err(|source| DevnetError::Http { url: url.clone(), source })?;
        let status = response.status();
        if !status.is_success() {
            let body = response.text().await.unwrap_or_else(|e| format!("<unreadable body: {e}>"));
            return Err(DevnetError::Rejected { url, id: event.id, status: status.as_u16(), body });
        }
        n += 1;
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DevnetConfig, Generator};
    use ledger_core::events::TsvReader;

    fn small() -> Generator {
        Generator::new(DevnetConfig { blocks: 3, txs_per_block: 2, accounts: 4, ..DevnetConfig::default() })
            .unwrap()
    }

    #[test]
    fn tsv_reads_back_event_for_event() {
        let mut buf = Vec::new();
        let n = write_tsv(small(), &mut buf).unwrap();
        let expected: Vec<DevnetEvent> = small().map(Result::unwrap).collect();
        let read: Vec<_> = TsvReader::new(&buf[..]).map(Result::unwrap).collect();
        assert_eq!(n as usize, expected.len());
        assert_eq!(read.len(), expected.len());
        for (r, e) in read.iter().zip(expected) {
            assert_eq!(*r, e.into_raw());
        }
        assert_eq!(read[0].id, 1);
    }

    /// A one-connection-at-a-time HTTP server answering each request with the next status.
    fn serve(statuses: Vec<u16>) -> (String, std::thread::JoinHandle<Vec<String>>) {
        use std::io::{BufRead, BufReader, Read};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let handle = std::thread::spawn(move || {
            let mut paths = Vec::new();
            for status in statuses {
                let (stream, _) = listener.accept().unwrap();
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                paths.push(line.split_whitespace().nth(1).unwrap_or_default().to_string());
                let mut len = 0;
                loop {
                    let mut h = String::new();
                    reader.read_line(&mut h).unwrap();
                    if h == "\r\n" || h.is_empty() {
                        break;
                    }
                    if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
                        len = v.trim().parse().unwrap();
                    }
                }
                let mut body = vec![0; len];
                reader.read_exact(&mut body).unwrap();
                serde_json::from_slice::<serde_json::Value>(&body).unwrap();
                let reply = if status == 200 { r#"{"result":"ok"}"# } else { r#"{"error":"no parent"}"# };
                let mut stream = stream;
                write!(
                    stream,
                    "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{reply}",
                    reply.len()
                )
                .unwrap();
            }
            paths
        });
        (url, handle)
    }

    #[test]
    fn posts_in_order_and_stops_at_a_rejection() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let (url, server) = serve(vec![200, 200, 500]);
        let err = rt.block_on(post_events(small(), &format!("{url}/"))).unwrap_err();
        let paths = server.join().unwrap();
        let expected: Vec<String> = small().take(3).map(|e| e.unwrap().path.as_str().to_string()).collect();
        assert_eq!(paths, expected);
        match err {
            DevnetError::Rejected { status, body, id, .. } => {
                assert_eq!((status, id), (500, 3));
                assert!(body.contains("no parent"), "{body}");
            }
            other => panic!("{other}"),
        }
    }
}
