//! The architecture rules (`tests/structure/src/lib.rs` says each and why) over this repository:
//! a test per rule, failing with every place that breaks it.

use structure::*;

/// Fails naming every violation, one `file:line` each.
fn holds(rule: &str, found: Vec<Violation>) {
    if !found.is_empty() {
        let places = found.iter().map(|v| format!("  {v}")).collect::<Vec<_>>().join("\n");
        panic!("{} place(s) break the rule {rule}\n{places}", found.len());
    }
}

/// Files read from the repository: none read means the test looked in the wrong place.
fn sources(paths: &[&str]) -> Vec<File> {
    let files = rust_files(&repo_root(), paths);
    assert!(!files.is_empty(), "no .rs file under {paths:?} of {}", repo_root().display());
    files
}

#[test]
fn core_names_no_surface() {
    holds(CORE_NAMES_NO_SURFACE, structure::core_names_no_surface(&sources(CORE_DIRS)));
}

#[test]
fn core_crates_depend_on_no_surface() {
    let root = repo_root();
    let members = workspace_members(&read(&root, "Cargo.toml"));
    assert!(members.len() > 1, "no workspace members in Cargo.toml");
    let manifests: Vec<Manifest> = members
        .iter()
        .map(|m| if m == "." { "Cargo.toml".to_owned() } else { format!("{m}/Cargo.toml") })
        .map(|path| parse_manifest(read(&root, &path)))
        .collect();
    for core in CORE_CRATES {
        assert!(manifests.iter().any(|m| m.package == *core), "{core} is not a workspace member");
    }
    holds(CORE_CRATES_NO_SURFACE, structure::core_crates_depend_on_no_surface(&manifests));
}

#[test]
fn surfaces_name_no_store() {
    holds(SURFACES_NAME_NO_STORE, structure::surfaces_name_no_store(&sources(SURFACE_DIRS)));
}

#[test]
fn no_cycle_between_modules_of_src() {
    let root = repo_root();
    let modules = lib_modules(&read(&root, "src/lib.rs").text);
    assert!(modules.len() > 1, "no modules in src/lib.rs");
    holds(NO_MODULE_CYCLE, module_cycles(&sources(&["src"]), "src", &modules));
}

#[test]
fn no_cycle_between_modules_of_the_core() {
    let root = repo_root();
    let modules = lib_modules(&read(&root, "ledger-core/src/lib.rs").text);
    assert!(modules.len() > 1, "no modules in ledger-core/src/lib.rs");
    holds(NO_MODULE_CYCLE, module_cycles(&sources(&["ledger-core/src"]), "ledger-core/src", &modules));
}

#[test]
fn server_uses_no_dev_tool() {
    holds(NO_DEV_TOOL_IN_SERVER, structure::server_uses_no_dev_tool(&sources(&["src"])));
}
