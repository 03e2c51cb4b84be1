//! `import-bns --dir DIR`: the Stacks 1.0 BNS state (the incumbent's `BNS_IMPORT_DIR`:
//! `chainstate.txt`, `name_zonefiles.txt`, `subdomains.csv`, `subdomain_zonefiles.txt`, each
//! checked against its `.sha256` before anything is written). Names and namespaces go in one
//! transaction; subdomains in batches that record how far they got, so a run resumes where an
//! interrupted one stopped and a finished import is not redone (idempotent). Needs block 1
//! ingested: the rows belong to it and its genesis transaction, as the incumbent's do.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use serde::Serialize;
use sha2::{Digest, Sha256};
use thiserror::Error;

use crate::ledger::bns_import::{chainstate_line, subdomain_line, zonefile_text, ChainstateLine, Section};
use crate::store::{Store, StoreError};

/// Subdomains per committed batch.
pub const BATCH: usize = 2000;

#[derive(Debug, Error)]
pub enum BnsImportError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: sha256 {actual} does not match {expected} of its .sha256 file")]
    Checksum { path: PathBuf, expected: String, actual: String },
    #[error("{path}:{line}: {reason}")]
    Line { path: PathBuf, line: usize, reason: String },
    #[error("block 1 (with its genesis token transfer) is not ingested yet: genesis BNS names belong to it")]
    NoGenesis,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What a run did.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub struct BnsImportSummary {
    pub namespaces: u64,
    pub names: u64,
    pub subdomains: u64,
    /// The subdomains of the files, imported by this run or an earlier one.
    pub subdomains_total: u64,
    /// Parts (`names`, `subdomains`) already imported by an earlier run.
    pub already_done: Vec<&'static str>,
    /// False when the caller stopped the run between two batches (run it again to resume).
    pub complete: bool,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> BnsImportError + '_ {
    move |source| BnsImportError::Io { path: path.to_path_buf(), source }
}

/// The file's SHA-256 (hex), checked against `<file>.sha256`, and its number of lines.
fn checked(path: &Path) -> Result<(String, u64), BnsImportError> {
    let expected_path = PathBuf::from(format!("{}.sha256", path.display()));
    let expected = std::fs::read_to_string(&expected_path).map_err(io(&expected_path))?.trim().to_string();
    let mut f = File::open(path).map_err(io(path))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    let (mut lines, mut last) = (0u64, b'\n');
    loop {
        let n = f.read(&mut buf).map_err(io(path))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        lines += buf[..n].iter().filter(|&&b| b == b'\n').count() as u64;
        last = buf[n - 1];
    }
    // A last line without its newline.
    lines += u64::from(last != b'\n');
    let actual = hex::encode(hasher.finalize());
    if actual != expected {
        return Err(BnsImportError::Checksum { path: path.to_path_buf(), expected, actual });
    }
    Ok((actual, lines))
}

fn lines(path: &Path) -> Result<impl Iterator<Item = Result<String, BnsImportError>> + '_, BnsImportError> {
    let f = File::open(path).map_err(io(path))?;
    Ok(BufReader::new(f).lines().map(move |l| l.map_err(io(path))))
}

/// `hash -> zonefile` of a `*_zonefiles.txt` (hash line, zonefile line).
fn zonefiles(path: &Path) -> Result<HashMap<String, String>, BnsImportError> {
    let mut out = HashMap::new();
    let mut it = lines(path)?;
    while let (Some(hash), Some(zf)) = (it.next(), it.next()) {
        out.insert(hash?, zonefile_text(&zf?));
    }
    Ok(out)
}

/// Imports the genesis BNS state of `dir` into `store` (see the module documentation).
pub async fn import_bns(store: &Store, dir: &Path) -> Result<BnsImportSummary, BnsImportError> {
    import_bns_with(store, dir, BATCH, |_, _| ControlFlow::Continue(())).await
}

/// [`import_bns`] with `batch` subdomains per transaction, calling `after_batch` with the
/// subdomain rows done so far and the files' total after each committed batch; `Break` stops
/// the run there (what an interruption leaves: the next run resumes after that batch).
pub async fn import_bns_with(
    store: &Store,
    dir: &Path,
    batch_size: usize,
    mut after_batch: impl FnMut(u64, u64) -> ControlFlow<()>,
) -> Result<BnsImportSummary, BnsImportError> {
    let batch_size = batch_size.max(1);
    let chainstate = dir.join("chainstate.txt");
    let name_zonefiles = dir.join("name_zonefiles.txt");
    let subdomains = dir.join("subdomains.csv");
    let subdomain_zonefiles = dir.join("subdomain_zonefiles.txt");
    // Every file is checked before anything is written.
    let names_sha = format!("{}+{}", checked(&chainstate)?.0, checked(&name_zonefiles)?.0);
    let (subdomains_sha, _) = checked(&subdomains)?;
    // Two lines a subdomain: its zonefile's hash, then the zonefile.
    let (zonefiles_sha, zonefile_lines) = checked(&subdomain_zonefiles)?;
    let subs_sha = format!("{subdomains_sha}+{zonefiles_sha}");
    let genesis = store.bns_genesis().await?.ok_or(BnsImportError::NoGenesis)?;
    let total = zonefile_lines / 2;
    let mut summary = BnsImportSummary { subdomains_total: total, ..BnsImportSummary::default() };

    if store.bns_import_progress("chainstate.txt", &names_sha).await?.1 {
        summary.already_done.push("names");
    } else {
        let zones = zonefiles(&name_zonefiles)?;
        let (mut namespaces, mut names) = (Vec::new(), Vec::new());
        let mut section = Section::None;
        for (i, line) in lines(&chainstate)?.enumerate() {
            let line = line?;
            let parsed = chainstate_line(&mut section, &line).map_err(|reason| BnsImportError::Line {
                path: chainstate.clone(),
                line: i + 1,
                reason,
            })?;
            match parsed {
                ChainstateLine::Namespace(n) => namespaces.push(n),
                ChainstateLine::Name(name, owner, hash) => {
                    let zonefile = zones.get(&hash).cloned().unwrap_or_default();
                    names.push((name, owner, hash, zonefile));
                }
                ChainstateLine::Other => {}
            }
        }
        store.import_bns_names("chainstate.txt", &names_sha, &genesis, &namespaces, &names).await?;
        summary.namespaces = namespaces.len() as u64;
        summary.names = names.len() as u64;
        tracing::info!("import-bns: {} namespaces and {} names imported", summary.namespaces, summary.names);
    }

    let (done_rows, done) = store.bns_import_progress("subdomains.csv", &subs_sha).await?;
    if done {
        summary.already_done.push("subdomains");
        summary.complete = true;
        return Ok(summary);
    }
    if done_rows == 0 {
        // A different (or no) earlier content: start the file over.
        store.reset_bns_import("subdomains.csv").await?;
    }
    let mut zf = lines(&subdomain_zonefiles)?;
    let mut batch = Vec::with_capacity(batch_size);
    let mut seen = 0u64;
    for (i, line) in lines(&subdomains)?.enumerate() {
        let line = line?;
        let bad = |reason: String| BnsImportError::Line { path: subdomains.clone(), line: i + 1, reason };
        let Some(s) = subdomain_line(&line).map_err(bad)? else { continue };
        let (Some(hash), Some(text)) = (zf.next(), zf.next()) else {
            return Err(bad("subdomain_zonefiles.txt ended before subdomains.csv".into()));
        };
        let hash = hash?;
        if hash != s.zonefile_hash {
            return Err(bad(format!("out of order with subdomain_zonefiles.txt: hash {hash}")));
        }
        seen += 1;
        if seen <= done_rows {
            continue;
        }
        batch.push((s, zonefile_text(&text?)));
        if batch.len() == batch_size {
            store.import_bns_subdomains("subdomains.csv", &subs_sha, &genesis, &batch, seen, false).await?;
            summary.subdomains += batch.len() as u64;
            batch.clear();
            if after_batch(seen, total).is_break() {
                return Ok(summary);
            }
        }
    }
    if zf.next().is_some() {
        return Err(BnsImportError::Line {
            path: subdomain_zonefiles.clone(),
            line: 0,
            reason: "more zonefiles than subdomains.csv has rows".into(),
        });
    }
    store.import_bns_subdomains("subdomains.csv", &subs_sha, &genesis, &batch, seen, true).await?;
    summary.subdomains += batch.len() as u64;
    summary.complete = true;
    let _ = after_batch(seen, total);
    Ok(summary)
}
