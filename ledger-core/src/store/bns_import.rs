//! `import-bns`'s writes: the genesis namespaces and names in one transaction, the subdomains
//! in batches, each batch committed with how far the import got (`bns_import_progress`), so an
//! interrupted import resumes after its last batch and a finished one is not redone. Rows are
//! tied to block 1 and its token transfer, as the incumbent ties them.

use super::bns::{write_imported_name, ANCHORED_SEQ};
use super::sql::{exec, insert_rows, Val};
use super::{Store, StoreError};
use crate::ledger::bns::NamespaceRow;
use crate::ledger::bns_import::ImportedSubdomain;

/// The block and transaction genesis names belong to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BnsGenesis {
    pub index_block_hash: String,
    pub tx_id: String,
    pub tx_index: i64,
}

/// A genesis name: `(name, owner, zonefile hash, zonefile)`.
pub type ImportedName = (String, String, String, String);

const PROGRESS_UPSERT: &str =
    "ON CONFLICT (file) DO UPDATE SET sha256 = excluded.sha256, rows = excluded.rows";

impl Store {
    /// How many rows of `file` (with this content hash) are imported, and whether all are.
    pub async fn bns_import_progress(&self, file: &str, sha256: &str) -> Result<(u64, bool), StoreError> {
        let row = |f: String| async move {
            let r = super::sql::select(
                "SELECT sha256, rows FROM bns_import_progress WHERE file = $1",
                vec![f.into()],
            )
            .fetch_optional(self)
            .await?;
            Ok::<_, StoreError>(match r {
                Some(r) if r.try_get::<String, _>("sha256")? == sha256 => Some(r.try_get::<i64, _>("rows")?),
                _ => None,
            })
        };
        let done = row(format!("{file}#done")).await?.is_some();
        let rows = row(file.to_string()).await?.unwrap_or(0);
        Ok((u64::try_from(rows).unwrap_or(0), done))
    }

    /// Block 1 and its first token transfer (the genesis transaction), if ingested.
    pub async fn bns_genesis(&self) -> Result<Option<BnsGenesis>, StoreError> {
        let r = super::sql::select(
            "SELECT t.index_block_hash, t.tx_id, t.tx_index FROM blocks b JOIN txs t ON t.index_block_hash = b.index_block_hash \
             WHERE b.block_height = 1 AND b.canonical = true AND t.tx_type = 'token_transfer' ORDER BY t.tx_index LIMIT 1",
            vec![],
        )
        .fetch_optional(self)
        .await?;
        Ok(r.map(|r| -> Result<_, sqlx::Error> {
            Ok(BnsGenesis {
                index_block_hash: r.try_get("index_block_hash")?,
                tx_id: r.try_get("tx_id")?,
                tx_index: r.try_get("tx_index")?,
            })
        })
        .transpose()?)
    }

    /// The namespaces and names of `chainstate.txt`, in one transaction, marked done for `file`.
    pub async fn import_bns_names(
        &self,
        file: &str,
        sha256: &str,
        g: &BnsGenesis,
        namespaces: &[NamespaceRow],
        names: &[ImportedName],
    ) -> Result<(), StoreError> {
        let mut writer = self.writer.lock().await;
        let conn = self.writer_conn(&mut writer).await?;
        let mut tx = conn.begin().await?;
        let ns = namespaces.iter().map(|n| {
            let n = NamespaceRow { tx_id: g.tx_id.clone(), tx_index: g.tx_index, ..n.clone() };
            super::bns::namespace_vals(&n, &g.index_block_hash, ANCHORED_SEQ, true)
        });
        insert_rows(
            &mut tx,
            "bns_namespaces",
            super::bns::NAMESPACE_COLS,
            ns.collect(),
            "ON CONFLICT DO NOTHING",
        )
        .await?;
        for (name, owner, hash, zonefile) in names {
            write_imported_name(&mut tx, g, name, owner, hash, zonefile).await?;
        }
        let n = i64::try_from(names.len()).unwrap_or(i64::MAX);
        let progress = vec![format!("{file}#done").into(), sha256.into(), n.into()];
        insert_rows(
            &mut tx,
            "bns_import_progress",
            &["file", "sha256", "rows"],
            vec![progress],
            PROGRESS_UPSERT,
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// A batch of subdomains with their zonefiles, committed with `file`'s progress (`done`:
    /// the last batch).
    pub async fn import_bns_subdomains(
        &self,
        file: &str,
        sha256: &str,
        g: &BnsGenesis,
        batch: &[(ImportedSubdomain, String)],
        rows_after: u64,
        done: bool,
    ) -> Result<(), StoreError> {
        let mut writer = self.writer.lock().await;
        let conn = self.writer_conn(&mut writer).await?;
        let mut tx = conn.begin().await?;
        let subs: Vec<Vec<Val>> = batch
            .iter()
            .map(|(s, _)| {
                vec![
                    (&s.fully_qualified_subdomain).into(),
                    (&s.name).into(),
                    (&s.namespace_id).into(),
                    (&s.owner).into(),
                    (&s.zonefile_hash).into(),
                    (&s.parent_zonefile_hash).into(),
                    s.parent_zonefile_index.into(),
                    1i64.into(),
                    g.tx_index.into(),
                    s.zonefile_offset.into(),
                    (&s.resolver).into(),
                    (&g.tx_id).into(),
                    (&g.index_block_hash).into(),
                    "".into(),
                    ANCHORED_SEQ.into(),
                    true.into(),
                ]
            })
            .collect();
        insert_rows(&mut tx, "bns_subdomains", super::bns::SUBDOMAIN_COLS, subs, "ON CONFLICT DO NOTHING")
            .await?;
        let zonefiles = batch
            .iter()
            .map(|(s, z)| {
                super::bns::zonefile_vals(
                    &s.fully_qualified_subdomain,
                    z,
                    &s.zonefile_hash,
                    &g.tx_id,
                    &g.index_block_hash,
                )
            })
            .collect();
        insert_rows(&mut tx, "bns_zonefiles", super::bns::ZONEFILE_COLS, zonefiles, "ON CONFLICT DO NOTHING")
            .await?;
        let rows = i64::try_from(rows_after).unwrap_or(i64::MAX);
        let mut progress = vec![vec![file.into(), sha256.into(), rows.into()]];
        if done {
            progress.push(vec![format!("{file}#done").into(), sha256.into(), rows.into()]);
        }
        insert_rows(&mut tx, "bns_import_progress", &["file", "sha256", "rows"], progress, PROGRESS_UPSERT)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Forgets `file`'s progress (its content changed: the import starts it over).
    pub async fn reset_bns_import(&self, file: &str) -> Result<(), StoreError> {
        let mut writer = self.writer.lock().await;
        let conn = self.writer_conn(&mut writer).await?;
        exec(
            conn,
            "DELETE FROM bns_import_progress WHERE file = $1 OR file = $2",
            vec![file.into(), format!("{file}#done").into()],
        )
        .await?;
        Ok(())
    }
}
