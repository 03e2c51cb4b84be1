//! BNS rows (`bns_*` tables): written by ingestion from what `ledger::bns` decodes, read by
//! the BNS routes. A name's, namespace's or subdomain's state is its latest canonical row, in
//! the incumbent's order (height, microblock sequence, tx index, event index); rows follow
//! their block's `canonical` flag (`write::BLOCK_TABLES`). Lists sort by bytes on both engines.

use std::collections::{BTreeMap, BTreeSet};

use ledger_read::bns::{BnsName, BnsReader, BnsSubdomain};
use ledger_read::ReadError;

use super::conn::Conn;
use super::db_row::DbRow;
use super::sql;
use super::sql::{get_bool, insert_rows, select, Val};
use super::{Engine, Store};
use crate::ledger::block::DerivedBlock;
use crate::ledger::bns::{self, NameRow, NamespaceRow, SubdomainEntry, ZonefileAttachment};
use crate::ledger::Network;
pub use crate::ledger::ANCHORED_SEQ;

pub(super) const NAMESPACE_COLS: &[&str] = &[
    "namespace_id",
    "address",
    "launched_at",
    "reveal_block",
    "ready_block",
    "buckets",
    "base",
    "coeff",
    "nonalpha_discount",
    "no_vowel_discount",
    "lifetime",
    "status",
    "tx_id",
    "tx_index",
    "index_block_hash",
    "microblock_sequence",
    "canonical",
];

const NAME_COLS: &[&str] = &[
    "name",
    "namespace_id",
    "address",
    "registered_at",
    "expire_block",
    "zonefile_hash",
    "tx_id",
    "tx_index",
    "event_index",
    "status",
    "index_block_hash",
    "microblock_hash",
    "microblock_sequence",
    "canonical",
];

pub(super) const SUBDOMAIN_COLS: &[&str] = &[
    "fully_qualified_subdomain",
    "name",
    "namespace_id",
    "owner",
    "zonefile_hash",
    "parent_zonefile_hash",
    "parent_zonefile_index",
    "block_height",
    "tx_index",
    "zonefile_offset",
    "resolver",
    "tx_id",
    "index_block_hash",
    "microblock_hash",
    "microblock_sequence",
    "canonical",
];

pub(super) const ZONEFILE_COLS: &[&str] = &["name", "zonefile", "zonefile_hash", "tx_id", "index_block_hash"];
const ZONEFILE_UPSERT: &str =
    "ON CONFLICT (name, zonefile_hash, tx_id, index_block_hash) DO UPDATE SET zonefile = excluded.zonefile";

/// The latest row first, as the incumbent orders a name's rows.
const NAME_ORDER: &str = "registered_at DESC, microblock_sequence DESC, tx_index DESC, event_index DESC";
const NAME_ORDER_N: &str =
    "n.registered_at DESC, n.microblock_sequence DESC, n.tx_index DESC, n.event_index DESC";
const SUBDOMAIN_ORDER: &str = "block_height DESC, microblock_sequence DESC, tx_index DESC";
const SUBDOMAIN_ORDER_S: &str = "s.block_height DESC, s.microblock_sequence DESC, s.tx_index DESC";

pub(super) fn namespace_vals(n: &NamespaceRow, ibh: &str, seq: i64, canonical: bool) -> Vec<Val> {
    vec![
        (&n.namespace_id).into(),
        (&n.address).into(),
        n.launched_at.into(),
        n.reveal_block.into(),
        n.ready_block.into(),
        (&n.buckets).into(),
        (&n.base).into(),
        (&n.coeff).into(),
        (&n.nonalpha_discount).into(),
        (&n.no_vowel_discount).into(),
        n.lifetime.into(),
        (&n.status).into(),
        (&n.tx_id).into(),
        n.tx_index.into(),
        ibh.into(),
        seq.into(),
        canonical.into(),
    ]
}

/// A name row as stored: `expire_block` and the zonefile hash resolved by the caller.
pub(super) struct StoredName<'a> {
    pub row: &'a NameRow,
    pub expire_block: i64,
    pub zonefile_hash: String,
    pub index_block_hash: &'a str,
    pub canonical: bool,
}

pub(super) fn name_vals(n: &StoredName<'_>) -> Vec<Val> {
    let r = n.row;
    vec![
        (&r.name).into(),
        (&r.namespace_id).into(),
        (&r.address).into(),
        r.registered_at.into(),
        n.expire_block.into(),
        (&n.zonefile_hash).into(),
        (&r.tx_id).into(),
        r.tx_index.into(),
        r.event_index.unwrap_or(-1).into(),
        (&r.status).into(),
        n.index_block_hash.into(),
        (&r.microblock_hash).into(),
        r.microblock_sequence.unwrap_or(ANCHORED_SEQ).into(),
        n.canonical.into(),
    ]
}

pub(super) fn zonefile_vals(name: &str, zonefile: &str, hash: &str, tx_id: &str, ibh: &str) -> Vec<Val> {
    vec![name.into(), zonefile.into(), hash.into(), tx_id.into(), ibh.into()]
}

async fn one_i64(conn: &mut Conn, sql: &str, vals: Vec<Val>) -> Result<Option<i64>, sqlx::Error> {
    let row = sql::fetch_optional(conn, sql, vals).await?;
    row.map(|r| r.try_get::<i64, _>(0)).transpose()
}

/// Writes a block's BNS rows (`canonical` as its block). A name's expiry is its registration
/// height plus its namespace's lifetime (a transfer keeps the last expiry); a name event
/// without a zonefile hash (a renewal read from its call) keeps the name's last zonefile.
pub async fn write_block(
    conn: &mut Conn,
    d: &DerivedBlock,
    network: Network,
    canonical: bool,
) -> Result<(), sqlx::Error> {
    let rows = bns::derive(d, network);
    let ibh = d.block.index_block_hash.as_str();
    let seq_of: BTreeMap<&str, i64> =
        d.txs.iter().map(|t| (t.tx_id.as_str(), t.microblock_sequence.unwrap_or(ANCHORED_SEQ))).collect();
    let ns = rows.namespaces.iter().map(|n| {
        namespace_vals(n, ibh, seq_of.get(n.tx_id.as_str()).copied().unwrap_or(ANCHORED_SEQ), canonical)
    });
    insert_rows(conn, "bns_namespaces", NAMESPACE_COLS, ns.collect(), "ON CONFLICT DO NOTHING").await?;
    for n in &rows.names {
        write_name(conn, n, "", ibh, canonical).await?;
    }
    Ok(())
}

/// Writes one name row and its zonefile row (`zonefile`: its text when known now, else
/// empty until its attachment arrives).
async fn write_name(
    conn: &mut Conn,
    n: &NameRow,
    zonefile: &str,
    ibh: &str,
    canonical: bool,
) -> Result<(), sqlx::Error> {
    let lifetime = one_i64(
        conn,
        "SELECT lifetime FROM bns_namespaces WHERE namespace_id = $1 AND canonical = true \
         ORDER BY ready_block DESC, microblock_sequence DESC, tx_index DESC LIMIT 1",
        vec![(&n.namespace_id).into()],
    )
    .await?;
    let mut expire_block = lifetime.map_or(0, |l| n.registered_at + l);
    if n.status == "name-transfer" {
        let sql =
            format!("SELECT expire_block FROM bns_names WHERE name = $1 AND canonical = true ORDER BY {NAME_ORDER} LIMIT 1");
        if let Some(e) = one_i64(conn, &sql, vec![(&n.name).into()]).await? {
            expire_block = e;
        }
    }
    let (mut zonefile, mut hash) = (zonefile.to_string(), n.zonefile_hash.clone());
    if hash.is_empty() {
        // The name's own zonefile row: a transaction that cleared the hash also has the empty
        // attachment's row (all-zero hash), which the incumbent's join leaves to chance.
        let sql = format!(
            "SELECT z.zonefile, z.zonefile_hash FROM bns_zonefiles z JOIN bns_names n \
             ON n.name = z.name AND n.tx_id = z.tx_id AND n.index_block_hash = z.index_block_hash \
             AND n.zonefile_hash = z.zonefile_hash \
             WHERE z.name = $1 AND n.canonical = true ORDER BY {NAME_ORDER_N} LIMIT 1"
        );
        if let Some(r) = sql::fetch_optional(conn, &sql, vec![(&n.name).into()]).await? {
            zonefile = r.try_get("zonefile")?;
            hash = r.try_get("zonefile_hash")?;
        }
    }
    let zf = zonefile_vals(&n.name, &zonefile, &hash, &n.tx_id, ibh);
    insert_rows(conn, "bns_zonefiles", ZONEFILE_COLS, vec![zf], ZONEFILE_UPSERT).await?;
    let stored = StoredName { row: n, expire_block, zonefile_hash: hash, index_block_hash: ibh, canonical };
    insert_rows(conn, "bns_names", NAME_COLS, vec![name_vals(&stored)], "ON CONFLICT DO NOTHING").await
}

/// A genesis name (`import-bns`), registered at block 1 in `g`'s transaction.
pub(super) async fn write_imported_name(
    conn: &mut Conn,
    g: &super::bns_import::BnsGenesis,
    name: &str,
    owner: &str,
    hash: &str,
    zonefile: &str,
) -> Result<(), sqlx::Error> {
    let row = NameRow {
        name: name.to_string(),
        namespace_id: name.split('.').skip(1).collect::<Vec<_>>().join("."),
        address: owner.to_string(),
        registered_at: 1,
        zonefile_hash: hash.to_string(),
        tx_id: g.tx_id.clone(),
        tx_index: g.tx_index,
        event_index: None,
        status: "name-register".into(),
        microblock_hash: String::new(),
        microblock_sequence: None,
    };
    write_name(conn, &row, zonefile, &g.index_block_hash, true).await
}

/// Stores a zonefile attachment: the name's zonefile, and for a `name-update` the subdomains
/// its zonefile lists, tied to the transaction that carried it (canonical as that
/// transaction's block; as the incumbent, canonical and without a block when it is unknown).
pub async fn write_attachment(conn: &mut Conn, a: &ZonefileAttachment) -> Result<(), sqlx::Error> {
    let fqn = format!("{}.{}", a.name, a.namespace);
    if a.op == "name-update" {
        let subs = bns::subdomains(&a.zonefile);
        if !subs.is_empty() {
            let tx = sql::fetch_optional(conn, "SELECT tx_index, index_block_hash, microblock_hash, COALESCE(microblock_sequence, $3) AS seq, \
                 (CASE WHEN canonical THEN 1 ELSE 0 END) AS canonical FROM txs \
                 WHERE tx_id = $1 AND index_block_hash = $2 ORDER BY canonical DESC, block_height DESC LIMIT 1",
                vec![(&a.tx_id).into(), (&a.index_block_hash).into(), ANCHORED_SEQ.into()])
            .await?;
            let block = match &tx {
                Some(r) => (
                    r.try_get::<i64, _>("tx_index")?,
                    r.try_get::<String, _>("index_block_hash")?,
                    r.try_get::<String, _>("microblock_hash")?,
                    r.try_get::<i64, _>("seq")?,
                    get_bool(r, "canonical")?,
                ),
                None => {
                    tracing::warn!(tx_id = %a.tx_id, "no transaction for a BNS attachment");
                    (-1, String::new(), String::new(), ANCHORED_SEQ, true)
                }
            };
            write_subdomains(conn, a, &fqn, &subs, &block).await?;
        }
    }
    let zf = zonefile_vals(&fqn, &a.zonefile, &a.zonefile_hash, &a.tx_id, &a.index_block_hash);
    insert_rows(conn, "bns_zonefiles", ZONEFILE_COLS, vec![zf], ZONEFILE_UPSERT).await
}

async fn write_subdomains(
    conn: &mut Conn,
    a: &ZonefileAttachment,
    fqn: &str,
    subs: &[SubdomainEntry],
    (tx_index, ibh, micro, seq, canonical): &(i64, String, String, i64, bool),
) -> Result<(), sqlx::Error> {
    let mut rows = Vec::new();
    let mut zonefiles = Vec::new();
    for s in subs {
        let full = format!("{}.{fqn}", s.label);
        rows.push(vec![
            (&full).into(),
            fqn.into(),
            (&a.namespace).into(),
            (&s.owner).into(),
            (&s.zonefile_hash).into(),
            (&a.zonefile_hash).into(),
            0i64.into(),
            a.block_height.into(),
            (*tx_index).into(),
            1i64.into(),
            (&s.resolver).into(),
            (&a.tx_id).into(),
            ibh.into(),
            micro.into(),
            (*seq).into(),
            (*canonical).into(),
        ]);
        zonefiles.push(zonefile_vals(&full, &s.zonefile, &s.zonefile_hash, &a.tx_id, ibh));
    }
    insert_rows(
        conn,
        "bns_subdomains",
        SUBDOMAIN_COLS,
        rows,
        "ON CONFLICT (fully_qualified_subdomain, tx_id, index_block_hash, microblock_hash) DO UPDATE SET \
         owner = excluded.owner, zonefile_hash = excluded.zonefile_hash, \
         parent_zonefile_hash = excluded.parent_zonefile_hash, resolver = excluded.resolver, \
         block_height = excluded.block_height, tx_index = excluded.tx_index",
    )
    .await?;
    insert_rows(conn, "bns_zonefiles", ZONEFILE_COLS, zonefiles, ZONEFILE_UPSERT).await
}

impl Store {
    /// `COLLATE` for byte order on this engine.
    fn bytes_order(&self) -> &'static str {
        match self.engine() {
            Engine::Postgres => "COLLATE \"C\"",
            Engine::Sqlite => "COLLATE BINARY",
        }
    }

    /// The latest canonical row of each name among `filter` (a condition on `bns_names`).
    fn latest_names(filter: &str) -> String {
        format!(
            "SELECT * FROM (SELECT n.*, ROW_NUMBER() OVER (PARTITION BY n.name ORDER BY {NAME_ORDER}) AS rn \
             FROM bns_names n WHERE n.canonical = true AND {filter}) latest WHERE rn = 1"
        )
    }

    async fn bns_strings(&self, sql: &str, vals: Vec<Val>) -> Result<Vec<String>, ReadError> {
        let rows = select(sql, vals).fetch_all(self).await.map_err(super::StoreError::from)?;
        Ok(rows
            .iter()
            .map(|r| r.try_get::<String, _>(0))
            .collect::<Result<_, _>>()
            .map_err(super::StoreError::from)?)
    }

    /// The names among `names` that are live (latest canonical row not a revoke).
    async fn live_names(&self, names: &[String]) -> Result<BTreeSet<String>, ReadError> {
        let mut out = BTreeSet::new();
        for n in names {
            if self.bns_name(n).await?.is_some() {
                out.insert(n.clone());
            }
        }
        Ok(out)
    }
}

fn name_from_subdomain(fqn: &str) -> String {
    let labels: Vec<&str> = fqn.split('.').collect();
    labels[labels.len().saturating_sub(2)..].join(".")
}

impl BnsReader for Store {
    async fn bns_names(&self, offset: u64) -> Result<Vec<String>, ReadError> {
        let sql = format!(
            "SELECT name FROM ({}) x WHERE status <> 'name-revoke' ORDER BY name {} LIMIT 100 OFFSET $1",
            Store::latest_names("true"),
            self.bytes_order()
        );
        self.bns_strings(&sql, vec![i64::try_from(offset).unwrap_or(i64::MAX).into()]).await
    }

    async fn bns_name(&self, name: &str) -> Result<Option<BnsName>, ReadError> {
        let sql = format!(
            "SELECT l.address, l.expire_block, l.tx_id, l.status, l.zonefile_hash, z.zonefile FROM ({}) l \
             LEFT JOIN bns_zonefiles z ON z.name = l.name AND z.tx_id = l.tx_id \
             AND z.index_block_hash = l.index_block_hash AND z.zonefile_hash = l.zonefile_hash \
             WHERE l.status <> 'name-revoke'",
            Store::latest_names("n.name = $1")
        );
        let row =
            select(&sql, vec![name.into()]).fetch_optional(self).await.map_err(super::StoreError::from)?;
        let read = |r: DbRow| -> Result<BnsName, sqlx::Error> {
            Ok(BnsName {
                address: r.try_get("address")?,
                expire_block: r.try_get("expire_block")?,
                tx_id: r.try_get("tx_id")?,
                status: r.try_get("status")?,
                zonefile: r.try_get("zonefile")?,
                zonefile_hash: r.try_get("zonefile_hash")?,
            })
        };
        Ok(row.map(read).transpose().map_err(super::StoreError::from)?)
    }

    async fn bns_subdomain(&self, fqn: &str) -> Result<Option<BnsSubdomain>, ReadError> {
        if self.bns_name(&name_from_subdomain(fqn)).await?.is_none() {
            return Ok(None);
        }
        let sql = format!(
            "SELECT s.owner, s.tx_id, s.resolver, s.zonefile_hash, z.zonefile FROM bns_subdomains s \
             LEFT JOIN bns_zonefiles z ON z.name = s.fully_qualified_subdomain AND z.tx_id = s.tx_id \
             AND z.index_block_hash = s.index_block_hash AND z.zonefile_hash = s.zonefile_hash \
             WHERE s.canonical = true AND s.fully_qualified_subdomain = $1 ORDER BY {SUBDOMAIN_ORDER_S} LIMIT 1"
        );
        let row =
            select(&sql, vec![fqn.into()]).fetch_optional(self).await.map_err(super::StoreError::from)?;
        let read = |r: DbRow| -> Result<BnsSubdomain, sqlx::Error> {
            Ok(BnsSubdomain {
                owner: r.try_get("owner")?,
                tx_id: r.try_get("tx_id")?,
                resolver: r.try_get("resolver")?,
                zonefile: r.try_get("zonefile")?,
                zonefile_hash: r.try_get("zonefile_hash")?,
            })
        };
        let found = row.map(read).transpose().map_err(super::StoreError::from)?;
        Ok(found.filter(|s| !s.zonefile_hash.is_empty()))
    }

    async fn bns_resolver(&self, name: &str) -> Result<Option<String>, ReadError> {
        let sql =
            format!("SELECT resolver FROM bns_subdomains WHERE canonical = true AND name = $1 ORDER BY {SUBDOMAIN_ORDER} LIMIT 1");
        Ok(self.bns_strings(&sql, vec![name.into()]).await?.into_iter().next())
    }

    async fn bns_subdomains_of(&self, name: &str) -> Result<Vec<String>, ReadError> {
        if self.bns_name(name).await?.is_none() {
            return Ok(vec![]);
        }
        let sql = format!(
            "SELECT fully_qualified_subdomain FROM bns_subdomains WHERE name = $1 AND canonical = true \
             GROUP BY fully_qualified_subdomain ORDER BY fully_qualified_subdomain {}",
            self.bytes_order()
        );
        self.bns_strings(&sql, vec![name.into()]).await
    }

    async fn bns_zonefile(&self, name: &str, hash: Option<&str>) -> Result<Option<String>, ReadError> {
        if self.bns_name(&name_from_subdomain(name)).await?.is_none() {
            return Ok(None);
        }
        let (table, key, order) = if name.split('.').count() > 2 {
            (
                "bns_subdomains",
                "fully_qualified_subdomain",
                "r.block_height DESC, r.microblock_sequence DESC, r.tx_index DESC",
            )
        } else {
            ("bns_names", "name", "r.registered_at DESC, r.microblock_sequence DESC, r.tx_index DESC")
        };
        let mut vals: Vec<Val> = vec![name.into()];
        let mut filter = String::new();
        if let Some(h) = hash {
            filter = " AND z.zonefile_hash = $2".into();
            vals.push(bns::strip_0x(h).into());
        } else if table == "bns_names" {
            // The latest name row's own zonefile, not the empty attachment (all-zero hash) of a
            // transfer that cleared it, which ties with it in the incumbent's order.
            filter = " AND z.zonefile_hash = r.zonefile_hash".into();
        }
        let sql = format!(
            "SELECT z.zonefile FROM bns_zonefiles z JOIN {table} r ON r.{key} = z.name AND r.tx_id = z.tx_id \
             AND r.index_block_hash = z.index_block_hash WHERE z.name = $1{filter} AND r.canonical = true \
             ORDER BY {order} LIMIT 1"
        );
        Ok(self.bns_strings(&sql, vals).await?.into_iter().next())
    }

    async fn bns_namespaces(&self) -> Result<Vec<String>, ReadError> {
        let sql = format!(
            "SELECT namespace_id FROM bns_namespaces WHERE canonical = true GROUP BY namespace_id \
             ORDER BY namespace_id {}",
            self.bytes_order()
        );
        self.bns_strings(&sql, vec![]).await
    }

    async fn bns_namespace_exists(&self, tld: &str) -> Result<bool, ReadError> {
        let sql =
            "SELECT namespace_id FROM bns_namespaces WHERE namespace_id = $1 AND canonical = true LIMIT 1";
        Ok(!self.bns_strings(sql, vec![tld.into()]).await?.is_empty())
    }

    async fn bns_namespace_names(&self, tld: &str, offset: u64) -> Result<Vec<String>, ReadError> {
        // As the incumbent: the page is cut before revoked names are left out.
        let sql = format!(
            "SELECT name FROM (SELECT name, status FROM ({}) x ORDER BY name {} LIMIT 100 OFFSET $2) page \
             WHERE status <> 'name-revoke' ORDER BY name {}",
            Store::latest_names("n.namespace_id = $1"),
            self.bytes_order(),
            self.bytes_order()
        );
        self.bns_strings(&sql, vec![tld.into(), i64::try_from(offset).unwrap_or(i64::MAX).into()]).await
    }

    async fn bns_names_of(&self, address: &str) -> Result<Vec<String>, ReadError> {
        // As the incumbent: subdomains any canonical row of which names the address as owner,
        // grouped by parent name.
        let sql = "SELECT DISTINCT fully_qualified_subdomain, name FROM bns_subdomains \
                   WHERE owner = $1 AND canonical = true";
        let rows =
            select(sql, vec![address.into()]).fetch_all(self).await.map_err(super::StoreError::from)?;
        let mut subdomains: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for r in &rows {
            let fqs: String = r.try_get(0).map_err(super::StoreError::from)?;
            let name: String = r.try_get(1).map_err(super::StoreError::from)?;
            subdomains.entry(name).or_default().push(fqs);
        }
        // Names imported at genesis (no NFT event) still owned by the address, and names whose
        // NFT it holds.
        let imported = self
            .bns_strings(
                "SELECT DISTINCT name FROM bns_names WHERE address = $1 AND registered_at = 1 AND canonical = true",
                vec![address.into()],
            )
            .await?;
        let asset = bns::names_asset(self.network);
        let mut owned = BTreeSet::new();
        for name in imported {
            let Some((label, namespace)) = name.split_once('.') else { continue };
            let token = bns::name_token_hex(label, namespace);
            let elsewhere = self
                .bns_strings(
                    "SELECT owner FROM nft_custody WHERE asset_identifier = $1 AND value_hex = $2 AND owner <> $3",
                    vec![(&asset).into(), token.into(), address.into()],
                )
                .await?;
            if elsewhere.is_empty() {
                owned.insert(name);
            }
        }
        let nfts = self
            .bns_strings(
                "SELECT value_hex FROM nft_custody WHERE owner = $1 AND asset_identifier = $2",
                vec![address.into(), (&asset).into()],
            )
            .await?;
        owned.extend(nfts.iter().filter_map(|h| bns::name_of_token(h)));
        let candidates: Vec<String> = owned.iter().chain(subdomains.keys()).cloned().collect();
        let live = self.live_names(&candidates).await?;
        let mut out: Vec<String> = Vec::new();
        for name in &live {
            if let Some(subs) = subdomains.get(name) {
                out.extend(subs.iter().cloned());
            }
            if owned.contains(name) {
                out.push(name.clone());
            }
        }
        out.sort();
        Ok(out)
    }
}
