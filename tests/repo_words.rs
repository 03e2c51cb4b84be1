//! The repository speaks of the product: its code comments, docs, scripts and manifests say
//! what the code does and why, never how it was made. This test walks every tracked text file
//! and fails, naming `file:line` and the rule, on:
//!
//! * a development round: "session" or "round" followed by a number;
//! * an issue number: "issue" followed by a number or `#` and a number;
//! * a person: "the lead", "lead's", "other agents", "another engineer" and the like;
//! * a worktree or a branch: "worktree", a name starting `wt-`, "merged main";
//! * a diary date: a date of this century from 2025 on, not part of a timestamp;
//! * a diary commit: a word of 7 to 40 hex digits that names a commit of this repository
//!   (asked of git, so an upstream project's commit or a hash in test data is not one).
//!
//! A figure lives in `docs/benchmarks.md`'s table with its commit and date; history belongs in
//! commit messages. Two words must stand next to each other (spaces, or a line break and the
//! next line's comment markers, between them): `session = 5` in code is not a round.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Text files of the repository, by extension (data files — JSON, TSV, lock files — are
/// recorded answers and chains, not prose).
const EXTENSIONS: &[&str] = &["rs", "md", "toml", "sql", "sh", "mjs", "ros"];
/// Files without one of those extensions that are still written by hand.
const OTHER_FILES: &[&str] = &[".ci/run", ".gitignore"];

/// This file: its rules and their documentation are made of the words it looks for.
const THIS_FILE: &str = "tests/repo_words.rs";

/// Migrations that stores in use have applied. sqlx keeps a checksum of each applied
/// migration's whole text, comments included, and refuses to open a store whose applied
/// migration changed: these texts stay as they were written. New migrations are checked.
const APPLIED_MIGRATIONS: &[&str] = &[
    "ledger-core/src/store/migrations/postgres/0031_real_chain_rules.sql",
    "ledger-core/src/store/migrations/postgres/0032_tx_api_json.sql",
    "ledger-core/src/store/migrations/postgres/0033_bns.sql",
    "ledger-core/src/store/migrations/postgres/0034_pox5.sql",
    "ledger-core/src/store/migrations/postgres/0035_token_operations.sql",
    "ledger-core/src/store/migrations/postgres/0044_txs_row_text.sql",
    "ledger-core/src/store/migrations/sqlite/0031_real_chain_rules.sql",
    "ledger-core/src/store/migrations/sqlite/0032_tx_api_json.sql",
    "ledger-core/src/store/migrations/sqlite/0033_bns.sql",
    "ledger-core/src/store/migrations/sqlite/0034_pox5.sql",
    "ledger-core/src/store/migrations/sqlite/0035_token_operations.sql",
    "ledger-core/src/store/migrations/sqlite/0044_txs_row_text.sql",
];

/// Where dates and commits are the content: the table of figures (each measured at a commit,
/// on a date) and the changelog (release dates).
const DATED: &[&str] = &["docs/benchmarks.md", "CHANGELOG.md"];

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Rule {
    Round,
    Issue,
    Person,
    Branch,
    Date,
    Commit,
}

impl Rule {
    fn says(self) -> &'static str {
        match self {
            Rule::Round => "a development round: say what the code does and why, not when",
            Rule::Issue => "an issue number: say what the code does, not which issue asked for it",
            Rule::Person => "a person: the repository describes the product, not who worked on it",
            Rule::Branch => "a worktree or branch: history belongs in commit messages",
            Rule::Date => "a diary date: a figure's date belongs in docs/benchmarks.md's table",
            Rule::Commit => {
                "a commit of this repository used as a diary: a figure's commit belongs in \
                 docs/benchmarks.md's table"
            }
        }
    }
}

#[derive(Debug)]
struct Finding {
    path: String,
    line: usize,
    rule: Rule,
    text: String,
}

/// A word: letters, digits, `_`, `-` and `'`, lowercased, with where it is in the text.
struct Word {
    text: String,
    start: usize,
    end: usize,
}

fn words(text: &str) -> Vec<Word> {
    let is_word = |c: char| c.is_alphanumeric() || c == '_' || c == '-' || c == '\'';
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices().chain(std::iter::once((text.len(), ' '))) {
        match (start, is_word(c) && i < text.len()) {
            (None, true) => start = Some(i),
            (Some(s), false) => {
                out.push(Word { text: text[s..i].to_lowercase(), start: s, end: i });
                start = None;
            }
            _ => {}
        }
    }
    out
}

/// Whether two words stand next to each other: only spaces between them, or a line break
/// followed by the next line's comment or quote markers.
fn adjacent(between: &str) -> bool {
    if !between.contains('\n') {
        return between.chars().all(|c| c == ' ' || c == '\t');
    }
    between.chars().all(|c| c.is_whitespace() || matches!(c, '/' | '!' | '#' | '*' | '>' | '-'))
}

fn is_number(word: &str) -> bool {
    word.starts_with(|c: char| c.is_ascii_digit())
}

/// The rule a pair of adjacent words breaks, if any (`sep` is the text between them).
fn pair_rule(a: &str, b: &str, sep: &str) -> Option<Rule> {
    let spaced = adjacent(sep);
    match a {
        "session" | "sessions" | "round" | "rounds" if spaced && is_number(b) => Some(Rule::Round),
        "issue" | "issues" if is_number(b) && (spaced || sep.trim() == "#") => Some(Rule::Issue),
        "the" if spaced && b == "lead" => Some(Rule::Person),
        "other" | "another" if spaced && matches!(b.trim_end_matches(['\'', 's']), "agent" | "engineer") => {
            Some(Rule::Person)
        }
        "merged" if spaced && b == "main" => Some(Rule::Branch),
        _ => None,
    }
}

/// The rule one word breaks on its own, if any.
fn word_rule(w: &str) -> Option<Rule> {
    if w == "lead's" {
        Some(Rule::Person)
    } else if w == "worktree" || w == "worktrees" || w.starts_with("wt-") {
        Some(Rule::Branch)
    } else {
        None
    }
}

/// A word that could be an abbreviated or full commit hash.
fn hex_candidate(w: &str) -> Option<&str> {
    let w = w.strip_suffix("'s").unwrap_or(w);
    let hex = (7..=40).contains(&w.len())
        && w.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        && w.bytes().any(|b| b.is_ascii_digit())
        && w.bytes().any(|b| b.is_ascii_alphabetic());
    hex.then_some(w)
}

/// Dates `YYYY-MM-DD` from 2025 to 2099 (earlier ones are the chain's or the epoch's, later ones
/// bounds such as 9999-12-31) that are not the start of a timestamp (`…T12:` or `… 12:`): byte
/// offsets.
fn diary_dates(text: &str) -> Vec<usize> {
    let b = text.as_bytes();
    let digits = |i: usize, n: usize| b.get(i..i + n).is_some_and(|s| s.iter().all(u8::is_ascii_digit));
    let mut out = Vec::new();
    for i in 0..b.len().saturating_sub(9) {
        let shape =
            digits(i, 4) && b[i + 4] == b'-' && digits(i + 5, 2) && b[i + 7] == b'-' && digits(i + 8, 2);
        if !shape
            || (i > 0 && b[i - 1].is_ascii_alphanumeric())
            || b.get(i + 10).is_some_and(u8::is_ascii_digit)
        {
            continue;
        }
        let year: u32 = text[i..i + 4].parse().unwrap_or(0);
        let timestamp =
            matches!(b.get(i + 10), Some(b'T' | b' ')) && digits(i + 11, 2) && b.get(i + 13) == Some(&b':');
        if (2025..2100).contains(&year) && !timestamp {
            out.push(i);
        }
    }
    out
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset].bytes().filter(|&b| b == b'\n').count() + 1
}

fn excerpt(text: &str, offset: usize) -> String {
    let start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    text[start..end].trim().chars().take(120).collect()
}

/// The findings of one file, but for the commit rule (which needs git): the hash candidates
/// are returned with their offsets.
fn scan(path: &str, text: &str) -> (Vec<Finding>, Vec<(String, usize)>) {
    let mut found = Vec::new();
    let mut hexes = Vec::new();
    let mut push = |rule: Rule, offset: usize| {
        found.push(Finding {
            path: path.to_owned(),
            line: line_of(text, offset),
            rule,
            text: excerpt(text, offset),
        })
    };
    let ws = words(text);
    let dated = DATED.contains(&path);
    for (i, w) in ws.iter().enumerate() {
        if let Some(rule) = word_rule(&w.text) {
            push(rule, w.start);
        }
        if let Some(next) = ws.get(i + 1) {
            if let Some(rule) = pair_rule(&w.text, &next.text, &text[w.end..next.start]) {
                push(rule, w.start);
            }
        }
        if !dated {
            if let Some(hex) = hex_candidate(&text[w.start..w.end]) {
                hexes.push((hex.to_owned(), w.start));
            }
        }
    }
    if !dated {
        for offset in diary_dates(text) {
            push(Rule::Date, offset);
        }
    }
    (found, hexes)
}

/// The repository's root (this package's manifest directory).
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn git(args: &[&str]) -> Command {
    let mut cmd = Command::new("git");
    cmd.arg("-C").arg(root()).args(args);
    cmd
}

/// The files to read: git's tracked files, else (no git, or not a checkout) the tree without
/// `target/`, `.git/` and `node_modules/`.
fn files() -> Vec<String> {
    let tracked = git(&["ls-files", "-z"]).output().ok().filter(|o| o.status.success());
    let all: Vec<String> = match tracked {
        Some(out) => String::from_utf8_lossy(&out.stdout)
            .split('\0')
            .filter(|p| !p.is_empty())
            .map(str::to_owned)
            .collect(),
        None => {
            let mut out = Vec::new();
            walk(&root(), &root(), &mut out);
            out
        }
    };
    all.into_iter()
        .filter(|p| {
            let ext = Path::new(p).extension().and_then(|e| e.to_str()).unwrap_or("");
            EXTENSIONS.contains(&ext) || OTHER_FILES.contains(&p.as_str())
        })
        .filter(|p| p != THIS_FILE && !APPLIED_MIGRATIONS.contains(&p.as_str()))
        .collect()
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() {
            if !matches!(name.to_str(), Some("target" | ".git" | "node_modules")) {
                walk(root, &path, out);
            }
        } else if let Ok(rel) = path.strip_prefix(root) {
            out.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
}

/// Which of `candidates` name a commit of this repository (`git cat-file --batch-check`);
/// `None` when git cannot be asked.
fn commits(candidates: &[String]) -> Option<Vec<bool>> {
    let mut child = git(&["cat-file", "--batch-check"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut stdin = child.stdin.take()?;
    let input: String = candidates.iter().map(|c| format!("{c}^{{commit}}\n")).collect();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().ok()?;
    writer.join().ok()?.ok()?;
    if !out.status.success() {
        return None;
    }
    let lines: Vec<bool> =
        String::from_utf8_lossy(&out.stdout).lines().map(|l| l.split(' ').nth(1) == Some("commit")).collect();
    (lines.len() == candidates.len()).then_some(lines)
}

fn report(findings: &[Finding]) -> String {
    let mut by_rule: BTreeMap<Rule, usize> = BTreeMap::new();
    let mut out = String::new();
    for f in findings {
        *by_rule.entry(f.rule).or_default() += 1;
        out.push_str(&format!("{}:{}: {}\n    {}\n", f.path, f.line, f.rule.says(), f.text));
    }
    out.push_str(&format!("{} finding(s): {by_rule:?}\n", findings.len()));
    out
}

#[test]
fn the_repository_speaks_of_the_product() {
    let files = files();
    assert!(files.len() > 100, "found only {} files to read under {}", files.len(), root().display());
    let mut findings = Vec::new();
    let mut hexes: Vec<(String, String, usize)> = Vec::new();
    let mut texts = BTreeMap::new();
    for path in files {
        let Ok(text) = std::fs::read_to_string(root().join(&path)) else { continue };
        let (found, hex) = scan(&path, &text);
        findings.extend(found);
        hexes.extend(hex.into_iter().map(|(h, offset)| (path.clone(), h, offset)));
        texts.insert(path, text);
    }
    let candidates: Vec<String> = hexes.iter().map(|(_, h, _)| h.clone()).collect();
    match commits(&candidates) {
        Some(is_commit) => {
            for ((path, _, offset), yes) in hexes.iter().zip(is_commit) {
                if yes {
                    let text = &texts[path];
                    findings.push(Finding {
                        path: path.clone(),
                        line: line_of(text, *offset),
                        rule: Rule::Commit,
                        text: excerpt(text, *offset),
                    });
                }
            }
        }
        None => eprintln!("git could not be asked: words naming commits were not checked"),
    }
    findings.sort_by(|a, b| (&a.path, a.line, a.rule).cmp(&(&b.path, b.line, b.rule)));
    assert!(findings.is_empty(), "words of the project's making:\n{}", report(&findings));
}

#[test]
fn the_rules_catch_project_words_and_spare_product_words() {
    let rules =
        |text: &str| scan("docs/x.md", text).0.into_iter().map(|f| (f.line, f.rule)).collect::<Vec<_>>();
    let round = ["Sess", "ion 31"].concat();
    assert_eq!(rules(&format!("measured in {round}'s run")), [(1, Rule::Round)]);
    assert_eq!(rules(&format!("// the {}\n// 12 and 13", ["sess", "ions"].concat())), [(1, Rule::Round)]);
    assert_eq!(
        rules(&["(is", "sue 21 item 4) and is", "sue #20"].concat()),
        [(1, Rule::Issue), (1, Rule::Issue)]
    );
    assert_eq!(rules(&["the le", "ad re-ran it"].concat()), [(1, Rule::Person)]);
    assert_eq!(rules(&["branch `w", "t-ingest`"].concat()), [(1, Rule::Branch)]);
    assert_eq!(rules(&["run on 20", "26-11-27 at noon"].concat()), [(1, Rule::Date)]);
    // The product's own uses of the same words.
    assert!(rules("a Socket.IO session id; the leading request; a round trip; let session = 5;").is_empty());
    assert!(rules("\"2026-11-29 12:00:00+00\", 2024-03-13T15:34:30.000Z, 1970-01-01").is_empty());
    assert!(rules("the API issues a 400 here").is_empty());
    // A hash is only a candidate; git decides whether it names one of our commits.
    assert_eq!(scan("docs/x.md", "stacks-core at 1efa4a9bf6bd").1, [("1efa4a9bf6bd".to_owned(), 15)]);
    assert!(scan("docs/benchmarks.md", "| abc1234 | 2026-11-27 |").0.is_empty());
}
