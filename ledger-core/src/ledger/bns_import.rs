//! The incumbent's BNS genesis files (its `BNS_IMPORT_DIR`), parsed line by line: pure, the
//! `import-bns` command reads the files and the store writes the rows.
//!
//! * `chainstate.txt`: sections `-----BEGIN NAMESPACES-----` (`namespace_id,address,buckets,
//!   base,coeff,nonalpha_discount,no_vowel_discount,lifetime`, buckets `;`-separated) and
//!   `-----BEGIN NAMES-----` (`name,address,zonefile_hash`), each with a header row;
//! * `name_zonefiles.txt` and `subdomain_zonefiles.txt`: a hash line, then its zonefile on one
//!   line with `\n` escaped;
//! * `subdomains.csv`: `zonefile_hash,parent_zonefile_hash,fully_qualified_subdomain,owner,
//!   block_height,parent_zonefile_index,zonefile_offset,resolver` (owner a Bitcoin address),
//!   in the same order as `subdomain_zonefiles.txt`.

use stacks_codec::address::StacksAddress;

use super::bns::NamespaceRow;

/// What a `chainstate.txt` line is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChainstateLine {
    Namespace(NamespaceRow),
    /// `(name, address, zonefile_hash)`.
    Name(String, String, String),
    /// A section marker, header row or a line of a section BNS does not use.
    Other,
}

/// Which section of `chainstate.txt` a reader is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Section {
    #[default]
    None,
    Namespaces,
    Names,
}

/// Reads one line of `chainstate.txt` in `section`, updating it at section markers.
pub fn chainstate_line(section: &mut Section, line: &str) -> Result<ChainstateLine, String> {
    if let Some(rest) = line.strip_prefix("-----BEGIN ") {
        let name = rest.trim_end_matches('-').trim().to_ascii_lowercase();
        *section = match name.as_str() {
            "namespaces" => Section::Namespaces,
            "names" => Section::Names,
            _ => Section::None,
        };
        return Ok(ChainstateLine::Other);
    }
    if line.starts_with("-----END") {
        *section = Section::None;
        return Ok(ChainstateLine::Other);
    }
    let parts: Vec<&str> = line.split(',').collect();
    match *section {
        Section::Namespaces if parts[0] != "namespace_id" && !line.is_empty() => {
            let [id, address, buckets, base, coeff, nonalpha, no_vowel, lifetime] = parts[..] else {
                return Err(format!("a namespace has 8 fields, found {}", parts.len()));
            };
            let lifetime = lifetime.parse::<i64>().map_err(|e| format!("lifetime `{lifetime}`: {e}"))?;
            Ok(ChainstateLine::Namespace(NamespaceRow {
                namespace_id: id.into(),
                address: address.into(),
                launched_at: 0,
                reveal_block: 1,
                ready_block: 1,
                buckets: buckets.replace(';', ","),
                base: base.into(),
                coeff: coeff.into(),
                nonalpha_discount: nonalpha.into(),
                no_vowel_discount: no_vowel.into(),
                lifetime,
                status: "ready".into(),
                tx_id: String::new(),
                tx_index: 0,
            }))
        }
        Section::Names if parts[0] != "name" && !line.is_empty() => match parts[..] {
            [name, address, hash, ..] => Ok(ChainstateLine::Name(name.into(), address.into(), hash.into())),
            _ => Err(format!("a name has 3 fields, found {}", parts.len())),
        },
        _ => Ok(ChainstateLine::Other),
    }
}

/// A zonefile line of `*_zonefiles.txt`, unescaped.
pub fn zonefile_text(line: &str) -> String {
    line.replace("\\n", "\n")
}

/// A subdomain of `subdomains.csv`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportedSubdomain {
    pub fully_qualified_subdomain: String,
    /// The parent name (`name.namespace`).
    pub name: String,
    pub namespace_id: String,
    pub owner: String,
    pub zonefile_hash: String,
    pub parent_zonefile_hash: String,
    pub parent_zonefile_index: i64,
    pub zonefile_offset: i64,
    pub resolver: String,
}

/// A `subdomains.csv` row (`None` for the header). The owner's Bitcoin address becomes the
/// Stacks address of the same hash (kept as is when it is not one, as the incumbent does).
pub fn subdomain_line(line: &str) -> Result<Option<ImportedSubdomain>, String> {
    let parts: Vec<&str> = line.split(',').collect();
    if parts[0] == "zonefile_hash" || line.is_empty() {
        return Ok(None);
    }
    let [hash, parent_hash, fqn, owner, _burn_height, parent_index, offset, resolver, ..] = parts[..] else {
        return Err(format!("a subdomain has 8 fields, found {}", parts.len()));
    };
    let int = |s: &str| s.parse::<i64>().map_err(|e| format!("`{s}`: {e}"));
    let labels: Vec<&str> = fqn.split('.').collect();
    Ok(Some(ImportedSubdomain {
        fully_qualified_subdomain: fqn.into(),
        name: labels[1..].join("."),
        namespace_id: labels.last().copied().unwrap_or_default().into(),
        owner: StacksAddress::from_b58(owner).map(|a| a.to_c32()).unwrap_or_else(|_| owner.into()),
        zonefile_hash: hash.into(),
        parent_zonefile_hash: parent_hash.into(),
        parent_zonefile_index: int(parent_index)?,
        zonefile_offset: int(offset)?,
        resolver: resolver.into(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chainstate_sections() {
        let mut s = Section::None;
        let lines = [
            "-----BEGIN NAMESPACES-----",
            "namespace_id,address,buckets,base,coeff,nonalpha_discount,no_vowel_discount,lifetime",
            "id,SP364R1Y0XYC8PYXEK0PE3V752RAJB2GNWF28WP90,6;5;4,4,250,4,4,52595",
            "-----END NAMESPACES-----",
            "-----BEGIN NAMES-----",
            "name,address,zonefile_hash",
            "zumrai.id,SP29EJ0SVM2TRZ3XGVTZPVTKF4SV1VMD8C0GA5SK5,853cd126478237bc7392e65091f7ffa5a1556a33",
            "-----END NAMES-----",
            "-----BEGIN STX VESTING-----",
            "a,b",
        ];
        let parsed: Vec<ChainstateLine> = lines.iter().map(|l| chainstate_line(&mut s, l).unwrap()).collect();
        let ChainstateLine::Namespace(ns) = &parsed[2] else { panic!("{parsed:?}") };
        assert_eq!((ns.namespace_id.as_str(), ns.buckets.as_str(), ns.lifetime), ("id", "6,5,4", 52595));
        assert_eq!(
            parsed[6],
            ChainstateLine::Name(
                "zumrai.id".into(),
                "SP29EJ0SVM2TRZ3XGVTZPVTKF4SV1VMD8C0GA5SK5".into(),
                "853cd126478237bc7392e65091f7ffa5a1556a33".into()
            )
        );
        assert_eq!(parsed.iter().filter(|l| **l != ChainstateLine::Other).count(), 2);
    }

    #[test]
    fn subdomain_owners_become_stacks_addresses() {
        let s = subdomain_line(
            "01f8,38d5,mymansgotabeefy1.id.blockstack,158hjd59vxSetAiTTjzty4z7oNFVVdY3ca,665577,125483,47,https://r",
        )
        .unwrap()
        .unwrap();
        assert_eq!(s.name, "id.blockstack");
        assert_eq!(s.namespace_id, "blockstack");
        assert!(s.owner.starts_with("SP"), "{}", s.owner);
        assert_eq!((s.parent_zonefile_index, s.zonefile_offset), (125483, 47));
        assert_eq!(subdomain_line("zonefile_hash,parent_zonefile_hash").unwrap(), None);
    }
}
