//! What the BNS routes need from storage: the canonical state of names, namespaces,
//! subdomains and zonefiles (the latest canonical row of each wins).

use std::future::Future;

use crate::tip::TipReader;
use crate::ReadError;

/// A name's latest canonical state (not revoked).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BnsName {
    pub address: String,
    pub expire_block: i64,
    pub tx_id: String,
    pub status: String,
    /// `None` when no zonefile row joins it.
    pub zonefile: Option<String>,
    pub zonefile_hash: String,
}

/// A subdomain's latest canonical state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BnsSubdomain {
    pub owner: String,
    pub tx_id: String,
    pub resolver: String,
    pub zonefile: Option<String>,
    pub zonefile_hash: String,
}

pub trait BnsReader: TipReader {
    /// Names not revoked, by name, 100 from `offset`.
    fn bns_names(&self, offset: u64) -> impl Future<Output = Result<Vec<String>, ReadError>> + Send;
    /// The name (`name.namespace`) unless missing or revoked.
    fn bns_name(&self, name: &str) -> impl Future<Output = Result<Option<BnsName>, ReadError>> + Send;
    /// The subdomain (three labels), when its parent name is live and it has a zonefile hash.
    fn bns_subdomain(
        &self,
        fqn: &str,
    ) -> impl Future<Output = Result<Option<BnsSubdomain>, ReadError>> + Send;
    /// The resolver of `name`'s latest subdomain row, if it has any subdomain.
    fn bns_resolver(&self, name: &str) -> impl Future<Output = Result<Option<String>, ReadError>> + Send;
    /// The subdomains of a live name, sorted.
    fn bns_subdomains_of(&self, name: &str) -> impl Future<Output = Result<Vec<String>, ReadError>> + Send;
    /// The latest zonefile of a live name or subdomain, or the latest one with `hash`.
    fn bns_zonefile(
        &self,
        name: &str,
        hash: Option<&str>,
    ) -> impl Future<Output = Result<Option<String>, ReadError>> + Send;
    /// Every ready namespace, sorted.
    fn bns_namespaces(&self) -> impl Future<Output = Result<Vec<String>, ReadError>> + Send;
    fn bns_namespace_exists(&self, tld: &str) -> impl Future<Output = Result<bool, ReadError>> + Send;
    /// The namespace's names not revoked, by name, 100 from `offset`.
    fn bns_namespace_names(
        &self,
        tld: &str,
        offset: u64,
    ) -> impl Future<Output = Result<Vec<String>, ReadError>> + Send;
    /// The names and subdomains `address` owns, sorted.
    fn bns_names_of(&self, address: &str) -> impl Future<Output = Result<Vec<String>, ReadError>> + Send;
}
