//! The architecture rules of this repository, checked over its text.
//!
//! The layers, lowest first (docs/architecture.md): the codec and `ledger-read`; the core
//! (`ledger-core`: `events`, `ledger`, `ingest` and `store`); the surfaces (`rosetta`, `v2`,
//! `faucet`, `observer`, and the `/extended`, `/v2` proxy and live-update crates) with the dev
//! tools (the `stacks-devnet` and `rosetta-check` crates); the wiring (`api`, `live`, `compose`),
//! configuration and the command line on top. A layer may name the ones below it, never one above: the core then
//! builds, tests and changes without the surfaces it serves.
//!
//! Each rule is a function from the files it reads to the places that break it
//! ([`Violation`]: `file:line`, the text, what in it breaks the rule). `tests/layers.rs` runs every rule over the
//! repository; each rule also has a unit test on a small fixture that breaks it, so that no rule
//! passes by seeing nothing.
//!
//! The reading is textual on purpose (no parser, no dependency): a line whose trimmed start is
//! `//` is a comment and skipped, as is the rest of a line after `//` outside a string literal;
//! a path is named where it stands with no identifier character on either side.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

/// The directories of the core: below every surface and dev tool.
pub const CORE_DIRS: &[&str] = &["ledger-core", "codec", "ledger-read"];

/// Crates a surface or dev tool is made of (and the server, made of surfaces), as Rust paths
/// name them.
pub const SURFACE_CRATES: &[&str] = &[
    "stacks_extended",
    "stacks_node_proxy",
    "stacks_live",
    "rosetta_spec",
    "rosetta_check",
    "stacks_devnet",
    "stacks_ledger",
];

/// Top-level modules of the library that are surfaces, wiring or configuration.
pub const SURFACE_MODULES: &[&str] =
    &["rosetta", "v2", "api", "live", "faucet", "observer", "config", "compose"];

/// The workspace's core crates, by package name.
pub const CORE_CRATES: &[&str] = &["stacks-codec", "ledger-read", "ledger-core"];

/// The workspace's surface crates (and the server, which is made of surfaces), by package name.
pub const SURFACE_PACKAGES: &[&str] = &[
    "stacks-extended",
    "stacks-node-proxy",
    "stacks-live",
    "rosetta-spec",
    "rosetta-check",
    "stacks-devnet",
    "stacks-ledger",
];

/// The surfaces and the dev tools: they read through `ledger-read`'s traits (or HTTP) rather
/// than the store, or (the devnet generator) write node events for ingestion to record. The wiring (`src/api`, `src/live.rs`, `src/compose.rs`), the
/// configuration and the command line hand the store to them, and so name it.
pub const SURFACE_DIRS: &[&str] = &[
    "src/rosetta",
    "src/v2",
    "src/faucet",
    "src/observer",
    "extended",
    "node-proxy",
    "live",
    "rosetta-spec",
    "rosetta-check",
    "devnet",
];

/// What a surface must not name: the store, and the database drivers only it uses.
pub const STORE_NAMES: &[&str] = &["stacks_ledger::store", "ledger_core::store", "sqlx", "rusqlite"];

/// Rule 1 and why it holds.
pub const CORE_NAMES_NO_SURFACE: &str =
    "core names no surface: the core (ledger-core, codec, ledger-read) is what the surfaces \
     and dev tools build on; naming one of them makes the core depend on what it serves";
/// Rule 2 and why it holds.
pub const CORE_CRATES_NO_SURFACE: &str =
    "core crates depend on no surface crate: stacks-codec, ledger-read and ledger-core \
     build, test and publish alone, without the surfaces above them";
/// Rule 3 and why it holds.
pub const SURFACES_NAME_NO_STORE: &str = "surfaces do not name the store: a surface reads through the read \
     interfaces (ledger-read, the /extended readers), so that the store's schema and drivers change \
     behind them";
/// Rule 4 and why it holds.
pub const NO_MODULE_CYCLE: &str =
    "no cycle between sibling modules of src/ or ledger-core/src: each top-level module sits \
     in one layer and names only the ones below it; a cycle means neither can be understood, tested or \
     moved without the other";

/// Rule 5 and why it holds.
pub const NO_DEV_TOOL_IN_SERVER: &str = "the server's library uses no dev-tool crate: the rosetta-cli \
     style checks are a client of any Rosetta server and the devnet generator only writes node \
     events; only the command line (src/cli, src/main.rs) runs them, so the server serves without \
     them";

/// Dev-tool crates, as Rust paths name them.
pub const DEV_TOOL_CRATES: &[&str] = &["rosetta_check", "stacks_devnet"];

/// The server's command line: the one part of `src/` that may run a dev tool.
pub const COMMAND_LINE: &[&str] = &["src/cli/", "src/cli.rs", "src/main.rs"];

/// One source or manifest file: its path from the repository root (with `/`), and its text.
#[derive(Debug, Clone)]
pub struct File {
    pub path: String,
    pub text: String,
}

impl File {
    pub fn new(path: impl Into<String>, text: impl Into<String>) -> File {
        File { path: path.into(), text: text.into() }
    }
}

/// A place that breaks a rule: where, its text, and what in it breaks the rule.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Violation {
    pub file: String,
    pub line: usize,
    pub text: String,
    pub what: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: `{}`: {}", self.file, self.line, self.text, self.what)
    }
}

fn violation(file: &File, line: usize, what: impl Into<String>) -> Violation {
    let text = file.text.lines().nth(line - 1).unwrap_or("").trim();
    let text = match text.char_indices().nth(140) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    };
    Violation { file: file.path.clone(), line, text, what: what.into() }
}

/// The repository's root: this crate lives in `tests/structure`.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The `.rs` files under each of `paths` (directories, or files), relative to `root`, sorted;
/// build output (`target`) and hidden directories are left out.
pub fn rust_files(root: &Path, paths: &[&str]) -> Vec<File> {
    let mut found = Vec::new();
    for path in paths {
        collect(root, &root.join(path), &mut found);
    }
    found.sort_by(|a: &File, b: &File| a.path.cmp(&b.path));
    found
}

fn collect(root: &Path, path: &Path, found: &mut Vec<File>) {
    if path.is_dir() {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name == "target" || name.starts_with('.') {
            return;
        }
        let entries = fs::read_dir(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for entry in entries {
            collect(root, &entry.expect("a directory entry").path(), found);
        }
    } else if path.extension().is_some_and(|e| e == "rs") {
        let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let relative = path.strip_prefix(root).unwrap_or(path);
        let relative = relative.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>();
        found.push(File::new(relative.join("/"), text));
    }
}

/// Reads `path` (relative to `root`) as a [`File`].
pub fn read(root: &Path, path: &str) -> File {
    let text = fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
    File::new(path, text)
}

/// The line without its `//` comment (a `//` inside a string literal is text, not a comment).
fn without_comment(line: &str) -> &str {
    let bytes = line.as_bytes();
    let mut in_string = false;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if in_string => i += 1,
            b'"' => in_string = !in_string,
            // A character literal of a quote does not open a string.
            b'\'' if !in_string && (line[i..].starts_with("'\"'") || line[i..].starts_with("'\\\"'")) => {
                i = line[i + 1..].find('\'').map_or(i, |end| i + 1 + end);
            }
            b'/' if !in_string && bytes.get(i + 1) == Some(&b'/') => return &line[..i],
            _ => {}
        }
        i += 1;
    }
    line
}

/// The code of a file, line by line (1-based numbers): comment lines are empty, and every other
/// line loses its trailing `//` comment.
pub fn code_lines(text: &str) -> Vec<(usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, line)| {
            (i + 1, if line.trim_start().starts_with("//") { "" } else { without_comment(line) })
        })
        .collect()
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Whether `code` names `path`: an occurrence with no identifier character on either side.
pub fn names(code: &str, path: &str) -> bool {
    code.match_indices(path).any(|(at, _)| {
        let before = code[..at].chars().next_back();
        let after = code[at + path.len()..].chars().next();
        !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
    })
}

/// The top-level modules the `crate::` paths of a file name, with the line of each: `crate::a::X`
/// names `a`; a group, `use crate::{a::X, b};` on one line or several, names `a` and `b`.
pub fn crate_modules(text: &str) -> Vec<(usize, String)> {
    let lines = code_lines(text);
    // The code as one string, to follow a group across lines, and where each line starts in it.
    let mut code = String::new();
    let mut starts = Vec::new();
    for (_, line) in &lines {
        starts.push(code.len());
        code.push_str(line);
        code.push('\n');
    }
    let line_of = |at: usize| starts.partition_point(|&s| s <= at);
    let ident = |from: usize| -> &str {
        let end = code[from..].find(|c: char| !is_ident(c)).map_or(code.len(), |n| from + n);
        &code[from..end]
    };
    let mut found = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        if code[..at].chars().next_back().is_some_and(is_ident) {
            continue;
        }
        let after = at + "crate::".len();
        if code[after..].starts_with('{') {
            // Each element at the group's own depth starts with the module it names.
            let mut depth = 0usize;
            let mut element_starts = true;
            for (i, c) in code[after..].char_indices() {
                let i = after + i;
                match c {
                    '{' => {
                        depth += 1;
                        element_starts = depth == 1;
                    }
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    ',' if depth == 1 => element_starts = true,
                    c if c.is_whitespace() => {}
                    _ if element_starts => {
                        element_starts = false;
                        let name = ident(i);
                        if !name.is_empty() && name != "self" {
                            found.push((line_of(i), name.to_owned()));
                        }
                    }
                    _ => {}
                }
            }
        } else {
            let name = ident(after);
            if !name.is_empty() {
                found.push((line_of(after), name.to_owned()));
            }
        }
    }
    found
}

/// Rule 1, core names no surface: no file of the core names a surface crate or a surface, dev
/// tool or configuration module of the library, so the core builds and changes without them.
pub fn core_names_no_surface(files: &[File]) -> Vec<Violation> {
    let mut found = Vec::new();
    for file in files {
        for (n, code) in code_lines(&file.text) {
            if let Some(name) = SURFACE_CRATES.iter().find(|c| names(code, c)) {
                found.push(violation(file, n, format!("names `{name}`")));
            }
        }
        for (n, module) in crate_modules(&file.text) {
            if SURFACE_MODULES.contains(&module.as_str()) {
                found.push(violation(file, n, format!("names `crate::{module}`")));
            }
        }
    }
    found.sort();
    found.dedup();
    found
}

/// Rule 3, surfaces do not name the store: no surface file names the store or its database
/// drivers, so it reads through the read interfaces and the schema changes behind them.
pub fn surfaces_name_no_store(files: &[File]) -> Vec<Violation> {
    let mut found = Vec::new();
    for file in files {
        for (n, code) in code_lines(&file.text) {
            if let Some(name) = STORE_NAMES.iter().find(|s| names(code, s)) {
                found.push(violation(file, n, format!("names `{name}`")));
            }
        }
        for (n, module) in crate_modules(&file.text) {
            if module == "store" {
                found.push(violation(file, n, "names `crate::store`"));
            }
        }
    }
    found.sort();
    found.dedup();
    found
}

/// Rule 5, the server's library uses no dev-tool crate: no file of `src/` outside the command
/// line ([`COMMAND_LINE`]) names one, so that the server's library needs none of them.
pub fn server_uses_no_dev_tool(files: &[File]) -> Vec<Violation> {
    let mut found = Vec::new();
    for file in files {
        if COMMAND_LINE.iter().any(|c| file.path.starts_with(c)) {
            continue;
        }
        for (n, code) in code_lines(&file.text) {
            if let Some(name) = DEV_TOOL_CRATES.iter().find(|c| names(code, c)) {
                found.push(violation(file, n, format!("names `{name}`")));
            }
        }
    }
    found.sort();
    found
}

/// A workspace member's manifest: its package and its normal dependencies (dev-dependencies are
/// left out: a test may use what the crate itself must not), each with its line.
#[derive(Debug, Clone)]
pub struct Manifest {
    pub file: File,
    pub package: String,
    pub dependencies: Vec<(String, usize)>,
}

/// The members of the `[workspace]` of a root manifest (`members = [...]`, on one line or
/// several).
pub fn workspace_members(root_manifest: &File) -> Vec<String> {
    let text = &root_manifest.text;
    let Some(at) = text.find("\nmembers") else { return Vec::new() };
    let list = &text[at..];
    let (Some(open), Some(close)) = (list.find('['), list.find(']')) else { return Vec::new() };
    list[open + 1..close]
        .lines()
        .map(|line| line.split('#').next().unwrap_or(""))
        .flat_map(|line| line.split(','))
        .map(|item| item.trim().trim_matches('"').to_owned())
        .filter(|item| !item.is_empty())
        .collect()
}

/// The package and normal dependencies of a manifest, by line: `[dependencies]` and
/// `[target.'…'.dependencies]` entries (`name.workspace = true`, `name = { … }`,
/// `name = "…"`, a `package = "…"` inside naming the package), and `[dependencies.name]`.
pub fn parse_manifest(file: File) -> Manifest {
    let mut package = String::new();
    let mut dependencies = Vec::new();
    let mut section = String::new();
    for (i, line) in file.text.lines().enumerate() {
        let line = line.split(" #").next().unwrap_or("").trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(header) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = header.trim().to_owned();
            if let Some(name) = section.strip_prefix("dependencies.") {
                dependencies.push((name.trim().to_owned(), i + 1));
            }
            continue;
        }
        let Some((key, value)) = line.split_once('=') else { continue };
        let key = key.trim();
        if section == "package" && key == "name" {
            package = value.trim().trim_matches('"').to_owned();
        } else if section == "dependencies" || section.ends_with(".dependencies") {
            let name = key.split('.').next().unwrap_or(key).trim().trim_matches('"');
            let renamed = value.split_once("package").and_then(|(_, rest)| rest.split('"').nth(1));
            dependencies.push((renamed.unwrap_or(name).to_owned(), i + 1));
        }
    }
    Manifest { file, package, dependencies }
}

/// How a crate was reached from a core crate: the chain of packages, and the manifest and line
/// of its last step (`None` for the core crate itself).
type Reached<'m> = (Vec<&'m str>, Option<(&'m Manifest, usize)>);

/// Rule 2, core crates depend on no surface crate: the workspace crates `stacks-codec` and
/// `ledger-read` reach (through normal dependencies) no surface crate, so they build alone.
pub fn core_crates_depend_on_no_surface(manifests: &[Manifest]) -> Vec<Violation> {
    let by_package: BTreeMap<&str, &Manifest> = manifests.iter().map(|m| (m.package.as_str(), m)).collect();
    let mut found = Vec::new();
    for core in CORE_CRATES {
        // Breadth first, keeping how each crate was reached.
        let mut reached: BTreeMap<&str, Reached> = BTreeMap::new();
        reached.insert(core, (vec![*core], None));
        let mut queue = vec![*core];
        while let Some(package) = queue.pop() {
            let Some(manifest) = by_package.get(package) else { continue };
            for (dependency, line) in &manifest.dependencies {
                let Some((name, _)) = by_package.get_key_value(dependency.as_str()) else { continue };
                if reached.contains_key(name) {
                    continue;
                }
                let mut chain = reached[package].0.clone();
                chain.push(name);
                reached.insert(name, (chain, Some((manifest, *line))));
                queue.insert(0, name);
            }
        }
        for surface in SURFACE_PACKAGES {
            if let Some((chain, Some((manifest, line)))) = reached.get(surface) {
                found.push(violation(
                    &manifest.file,
                    *line,
                    format!("{} reaches {surface}", chain.join(" -> ")),
                ));
            }
        }
    }
    found.sort();
    found
}

/// The modules `src/lib.rs` declares at its top level (`mod a;`, `pub mod b;`), in order.
pub fn lib_modules(lib_rs: &str) -> Vec<String> {
    code_lines(lib_rs)
        .into_iter()
        .filter_map(|(_, line)| {
            let line = line.trim();
            let line = line.strip_prefix("pub(crate) ").or_else(|| line.strip_prefix("pub ")).unwrap_or(line);
            let name = line.strip_prefix("mod ")?.strip_suffix(';')?.trim();
            Some(name.to_owned())
        })
        .collect()
}

/// The top-level module a file of the crate whose sources are in `src_dir` (`src`,
/// `ledger-core/src`) belongs to: `<src_dir>/a.rs` and `<src_dir>/a/**` are `a`'s.
pub fn module_of<'m>(path: &str, src_dir: &str, modules: &'m [String]) -> Option<&'m str> {
    let rest = path.strip_prefix(src_dir)?.strip_prefix('/')?;
    let first = rest.split('/').next()?;
    let name = if rest.contains('/') { first } else { first.strip_suffix(".rs")? };
    modules.iter().find(|m| *m == name).map(String::as_str)
}

/// Rule 4, no cycle between sibling modules of a crate (its sources in `src_dir`, its top-level
/// modules `modules`): module `a` depends on `b` when a file of
/// `a` (its tests included) names `crate::b`; every strongly connected component of more than one
/// module is reported, with one place per edge inside it, since a cycle ties its modules into
/// one that can be neither understood nor moved apart.
pub fn module_cycles(files: &[File], src_dir: &str, modules: &[String]) -> Vec<Violation> {
    // The first place (files are sorted) of each edge.
    let mut edges: BTreeMap<(&str, &str), (&File, usize)> = BTreeMap::new();
    for file in files {
        let Some(from) = module_of(&file.path, src_dir, modules) else { continue };
        for (line, to) in crate_modules(&file.text) {
            if let Some(to) = modules.iter().find(|m| **m == to).map(String::as_str) {
                if to != from {
                    edges.entry((from, to)).or_insert((file, line));
                }
            }
        }
    }
    let mut found = Vec::new();
    for component in strongly_connected(modules, &edges) {
        if component.len() < 2 {
            continue;
        }
        let members = component.iter().copied().collect::<Vec<_>>().join(", ");
        for ((from, to), (file, line)) in &edges {
            if component.contains(from) && component.contains(to) {
                found.push(violation(file, *line, format!("{from} -> {to}, in the cycle {{{members}}}")));
            }
        }
    }
    found.sort();
    found
}

/// Tarjan's strongly connected components of the graph `edges` over `nodes`.
fn strongly_connected<'a>(
    nodes: &'a [String],
    edges: &BTreeMap<(&'a str, &'a str), (&File, usize)>,
) -> Vec<BTreeSet<&'a str>> {
    struct Walk<'a> {
        next: BTreeMap<&'a str, Vec<&'a str>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        components: Vec<BTreeSet<&'a str>>,
    }
    fn visit<'a>(w: &mut Walk<'a>, v: &'a str) {
        let n = w.index.len();
        w.index.insert(v, n);
        w.low.insert(v, n);
        w.stack.push(v);
        for u in w.next.get(v).cloned().unwrap_or_default() {
            if !w.index.contains_key(u) {
                visit(w, u);
                let low = w.low[v].min(w.low[u]);
                w.low.insert(v, low);
            } else if w.stack.contains(&u) {
                let low = w.low[v].min(w.index[u]);
                w.low.insert(v, low);
            }
        }
        if w.low[v] == w.index[v] {
            let mut component = BTreeSet::new();
            while let Some(u) = w.stack.pop() {
                component.insert(u);
                if u == v {
                    break;
                }
            }
            w.components.push(component);
        }
    }
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (from, to) in edges.keys() {
        next.entry(from).or_default().push(to);
    }
    let mut walk = Walk {
        next,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        components: Vec::new(),
    };
    for node in nodes {
        if !walk.index.contains_key(node.as_str()) {
            visit(&mut walk, node);
        }
    }
    walk.components
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_are_not_code() {
        let text =
            "// crate::api\n/// crate::api\nlet a = 1; // crate::api\nlet u = \"http://x\"; crate::api::X\n";
        let lines = code_lines(text);
        assert_eq!(lines[0].1, "");
        assert_eq!(lines[1].1, "");
        assert_eq!(lines[2].1, "let a = 1; ");
        assert_eq!(lines[3].1, "let u = \"http://x\"; crate::api::X");
        assert_eq!(crate_modules(text), vec![(4, "api".to_owned())]);
    }

    #[test]
    fn a_name_stands_alone() {
        assert!(names("use stacks_live::Hub;", "stacks_live"));
        assert!(names("x: ::sqlx::Pool", "sqlx"));
        assert!(!names("use stacks_live_extra::Hub;", "stacks_live"));
        assert!(!names("let my_sqlx = 1;", "sqlx"));
        assert_eq!(
            crate_modules("use crate::api_docs::X;\nuse mycrate::api;"),
            vec![(1, "api_docs".to_owned())]
        );
    }

    #[test]
    fn groups_name_each_module() {
        let text =
            "use crate::{\n    api::X,\n    config::{A, B},\n    self,\n};\nuse crate::{ledger, store::Y};\n";
        let found = crate_modules(text);
        let expected = [(2, "api"), (3, "config"), (6, "ledger"), (6, "store")];
        assert_eq!(found, expected.map(|(n, m)| (n, m.to_owned())));
    }

    #[test]
    fn core_naming_a_surface_is_reported() {
        let files = [
            File::new(
                "src/store/a.rs",
                "use stacks_extended::tx;\n// stacks_extended in a comment\nfn f() {}\n",
            ),
            File::new("src/ledger/b.rs", "fn g() {\n    crate::faucet::run();\n}\n"),
            File::new("src/events/c.rs", "use crate::ledger::X;\n"),
            File::new("src/ingest/d.rs", "fn h() {\n    let g = stacks_devnet::Generator::new(c);\n}\n"),
        ];
        let found = core_names_no_surface(&files);
        let places: Vec<_> = found.iter().map(|v| (v.file.as_str(), v.line, v.text.as_str())).collect();
        assert_eq!(
            places,
            [
                ("src/ingest/d.rs", 2, "let g = stacks_devnet::Generator::new(c);"),
                ("src/ledger/b.rs", 2, "crate::faucet::run();"),
                ("src/store/a.rs", 1, "use stacks_extended::tx;")
            ]
        );
        assert_eq!(found[0].what, "names `stacks_devnet`");
        assert_eq!(found[1].to_string(), "src/ledger/b.rs:2: `crate::faucet::run();`: names `crate::faucet`");
    }

    #[test]
    fn a_surface_naming_the_store_is_reported() {
        let files = [
            File::new("src/rosetta/a.rs", "use crate::store::Store;\n"),
            File::new("extended/src/b.rs", "fn f(p: &sqlx::AnyPool) {}\n"),
            File::new("src/v2/c.rs", "use stacks_ledger::store::Store;\nuse crate::ledger::X;\n"),
            File::new(
                "devnet/src/d.rs",
                "use ledger_core::events::RawEvent;\nuse ledger_core::store::Store;\n",
            ),
        ];
        let found = surfaces_name_no_store(&files);
        let places: Vec<_> = found.iter().map(|v| (v.file.as_str(), v.line)).collect();
        assert_eq!(
            places,
            [("devnet/src/d.rs", 2), ("extended/src/b.rs", 1), ("src/rosetta/a.rs", 1), ("src/v2/c.rs", 1)]
        );
    }

    #[test]
    fn a_core_crate_reaching_a_surface_is_reported() {
        let root = File::new(
            "Cargo.toml",
            "[workspace]\nmembers = [\".\", \"codec\",\n  \"ledger-read\", \"extended\"]\n\n[package]\nname = \"stacks-ledger\"\n",
        );
        assert_eq!(workspace_members(&root), [".", "codec", "ledger-read", "extended"]);
        let manifests = [
            parse_manifest(root),
            parse_manifest(File::new(
                "codec/Cargo.toml",
                "[package]\nname = \"stacks-codec\"\n\n[dependencies]\nserde.workspace = true\n\n\
                 [dev-dependencies]\nstacks-ledger.workspace = true\n",
            )),
            parse_manifest(File::new(
                "ledger-read/Cargo.toml",
                "[package]\nname = \"ledger-read\"\n\n[dependencies]\nstacks-codec = { path = \"../codec\" }\n\
                 [target.'cfg(unix)'.dependencies]\nx = { package = \"stacks-extended\", path = \"../extended\" }\n",
            )),
            parse_manifest(File::new(
                "extended/Cargo.toml",
                "[package]\nname = \"stacks-extended\"\n[dependencies]\nstacks-ledger = \"0.1\"\n",
            )),
            parse_manifest(File::new(
                "ledger-core/Cargo.toml",
                "[package]\nname = \"ledger-core\"\n\n[dependencies]\nstacks-devnet.workspace = true\n",
            )),
            parse_manifest(File::new(
                "devnet/Cargo.toml",
                "[package]\nname = \"stacks-devnet\"\n\n[dependencies]\nledger-core.workspace = true\n",
            )),
        ];
        assert_eq!(
            manifests[2].dependencies,
            [("stacks-codec".to_owned(), 5), ("stacks-extended".to_owned(), 7)]
        );
        let found = core_crates_depend_on_no_surface(&manifests);
        let places: Vec<_> = found.iter().map(|v| (v.file.as_str(), v.line, v.what.as_str())).collect();
        assert_eq!(
            places,
            [
                (
                    "extended/Cargo.toml",
                    4,
                    "ledger-read -> stacks-extended -> stacks-ledger reaches stacks-ledger"
                ),
                ("ledger-core/Cargo.toml", 5, "ledger-core -> stacks-devnet reaches stacks-devnet"),
                ("ledger-read/Cargo.toml", 7, "ledger-read -> stacks-extended reaches stacks-extended"),
            ]
        );
    }

    #[test]
    fn a_dev_tool_in_the_server_library_is_reported() {
        let files = [
            File::new(
                "src/api/mod.rs",
                "use rosetta_check::data::Checker;
",
            ),
            File::new(
                "src/cli/check_data.rs",
                "use rosetta_check::data::Checker;
",
            ),
            File::new(
                "src/main.rs",
                "fn main() { rosetta_check::run() }
",
            ),
            File::new(
                "src/v2/a.rs",
                "// rosetta_check in a comment
let my_rosetta_check = 1;
",
            ),
            File::new("src/rosetta/b.rs", "use crate::ledger::X;\nuse stacks_devnet::Generator;\n"),
            File::new("src/cli/demo.rs", "use stacks_devnet::{DevnetConfig, Generator};\n"),
            File::new("src/cli.rs", "    Devnet(stacks_devnet::DevnetArgs),\n"),
        ];
        let found = server_uses_no_dev_tool(&files);
        let places: Vec<_> = found.iter().map(|v| (v.file.as_str(), v.line, v.what.as_str())).collect();
        assert_eq!(
            places,
            [
                ("src/api/mod.rs", 1, "names `rosetta_check`"),
                ("src/rosetta/b.rs", 2, "names `stacks_devnet`")
            ]
        );
    }

    #[test]
    fn a_cycle_between_modules_is_reported() {
        let lib = "pub mod api;\n#[cfg(test)]\nmod log;\npub mod config;\npub mod store;\nmod inline {}\n";
        let modules = lib_modules(lib);
        assert_eq!(modules, ["api", "log", "config", "store"]);
        let files = [
            File::new("src/api/mod.rs", "use crate::config::Config;\nuse crate::store::Store;\n"),
            File::new("src/config.rs", "// crate::store in a comment\nuse crate::api::AdmissionConfig;\n"),
            File::new("src/store/mod.rs", "use crate::log::X;\n"),
            File::new("src/main.rs", "use crate::api::X;\n"),
        ];
        assert_eq!(module_of("src/store/write/a.rs", "src", &modules), Some("store"));
        assert_eq!(module_of("src/config.rs", "src", &modules), Some("config"));
        assert_eq!(module_of("src/main.rs", "src", &modules), None);
        assert_eq!(module_of("core/src/store/a.rs", "core/src", &modules), Some("store"));
        assert_eq!(module_of("core/src/store/a.rs", "src", &modules), None);
        let found = module_cycles(&files, "src", &modules);
        let places: Vec<_> = found.iter().map(|v| (v.file.as_str(), v.line, v.what.as_str())).collect();
        assert_eq!(
            places,
            [
                ("src/api/mod.rs", 1, "api -> config, in the cycle {api, config}"),
                ("src/config.rs", 2, "config -> api, in the cycle {api, config}"),
            ]
        );
    }
}
