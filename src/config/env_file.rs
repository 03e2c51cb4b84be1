//! The `.env` file of the working directory, read at start-up as the incumbent reads it
//! (env-schema with `dotenv: true`): a variable already in the environment wins over the file,
//! and no file is no error. It is read before the command line is parsed, so every setting
//! that falls back to a variable sees the file's values.
//!
//! Lines are read by `dotenvy`, whose syntax differs from the incumbent's dotenv in two ways
//! that could change a value without a word, so both are warned about: a line it cannot read
//! (an unquoted value with a space, say, which dotenv takes whole) is skipped, and `$NAME` /
//! `${NAME}` in an unquoted or double-quoted value is replaced by that variable (dotenv keeps
//! the text as written; single quotes keep it here too).

use std::collections::HashSet;
use std::path::Path;

/// The file read, relative to the working directory.
pub const FILE_NAME: &str = ".env";

/// What reading the file found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct EnvFile {
    /// `NAME=value` pairs in file order (a later line for the same name wins, as in dotenv).
    pub vars: Vec<(String, String)>,
    /// Each line that could not be read, as its number and name (never its value, which may be
    /// a secret): `line 3 (PG_PASSWORD)`.
    pub unreadable_lines: Vec<String>,
    /// Names whose value holds a `$` outside single quotes (see the module documentation).
    pub expanded: Vec<String>,
}

/// What loading the file into the environment did, to be logged once logging is set up.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Loaded {
    /// False when there is no file.
    pub found: bool,
    /// Variables set from the file.
    pub set: usize,
    /// Variables of the file already set in the environment (left as they were).
    pub kept: usize,
    pub file: EnvFile,
}

impl Loaded {
    /// One `info` line when a file was read, one `warn` per line skipped or value expanded.
    pub fn log(&self) {
        if !self.found {
            return;
        }
        tracing::info!(
            "{FILE_NAME}: {} variables set, {} already set in the environment and kept",
            self.set,
            self.kept
        );
        for line in &self.file.unreadable_lines {
            tracing::warn!(
                "{FILE_NAME}: {line} is not NAME=value as dotenvy reads it (quote a value with spaces) and is ignored"
            );
        }
        for name in &self.file.expanded {
            tracing::warn!(
                "{FILE_NAME}: {name}'s value has a `$`, read here as a reference to another variable \
                 (the incumbent keeps it as written); put the value in single quotes to keep the `$`"
            );
        }
    }
}

/// Parses the text of a `.env` file (a `${NAME}` in it refers to an earlier line or to the
/// process environment, as dotenvy reads it).
pub fn parse(text: &str) -> EnvFile {
    let mut file = EnvFile::default();
    let lines: Vec<&str> = text.lines().collect();
    // Where the search for the next unreadable line starts.
    let mut next = 0;
    for item in dotenvy::from_read_iter(text.as_bytes()) {
        match item {
            Ok(pair) => file.vars.push(pair),
            // The error holds the line, or only its value: the line is the next one ending so.
            Err(dotenvy::Error::LineParse(part, _)) => {
                let part = part.trim_end();
                let found = lines.iter().enumerate().skip(next).find(|(_, l)| l.trim_end().ends_with(part));
                file.unreadable_lines.push(match found {
                    Some((i, line)) => {
                        next = i + 1;
                        match line.split_once('=') {
                            Some((name, _)) => format!("line {} ({})", i + 1, name.trim()),
                            None => format!("line {}", i + 1),
                        }
                    }
                    None => "a line".to_owned(),
                });
            }
            // Reading from memory: no I/O error; anything else ends the file.
            Err(_) => break,
        }
    }
    for line in text.lines() {
        let line = line.trim_start();
        let line = line.strip_prefix("export ").unwrap_or(line);
        let Some((name, value)) = line.split_once('=') else { continue };
        if !line.starts_with('#') && dollar_outside_single_quotes(value) {
            file.expanded.push(name.trim().to_owned());
        }
    }
    file
}

/// Whether `value` (as written, up to a comment) has a `$` that dotenvy reads as a reference.
fn dollar_outside_single_quotes(value: &str) -> bool {
    let (mut single, mut escaped, mut after_space) = (false, false, true);
    for c in value.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' if !single => escaped = true,
            '\'' => single = !single,
            // A comment starts at a `#` after a space (`A=b#c` is the value `b#c`).
            '#' if !single && after_space => return false,
            '$' if !single => return true,
            _ => {}
        }
        after_space = c == ' ' || c == '\t';
    }
    false
}

/// Reads `path` and sets each of its variables that `is_set` says is not set yet, through
/// `set`. No file: nothing done. A file that exists and cannot be read is an error: running
/// without the settings it holds would be worse than not starting.
pub fn load_with(
    path: &Path,
    is_set: impl Fn(&str) -> bool,
    mut set: impl FnMut(&str, &str),
) -> Result<Loaded, std::io::Error> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Loaded::default()),
        Err(e) => return Err(e),
    };
    let file = parse(&text);
    // A name the environment had before the file keeps its value, however often the file
    // sets it; among the file's own lines, the last one wins (as in dotenv).
    let before: HashSet<&str> = file.vars.iter().map(|(n, _)| n.as_str()).filter(|n| is_set(n)).collect();
    let mut set_names = HashSet::new();
    for (name, value) in file.vars.iter().filter(|(n, _)| !before.contains(n.as_str())) {
        set(name, value);
        set_names.insert(name.as_str());
    }
    let counts = (set_names.len(), before.len());
    Ok(Loaded { found: true, set: counts.0, kept: counts.1, file })
}

/// [`load_with`] on the process environment, from [`FILE_NAME`] in the working directory. Call
/// it first in `main`, before any thread starts (it sets process variables).
pub fn load() -> Result<Loaded, std::io::Error> {
    load_with(
        Path::new(FILE_NAME),
        |name| std::env::var_os(name).is_some(),
        |name, value| std::env::set_var(name, value),
    )
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    #[test]
    fn pairs_comments_quotes_and_export() {
        let file = parse(
            "# a comment\n\nPG_HOST=db.internal\nexport PG_PORT=5432\nPG_PASSWORD='pa$$word'\n\
             STACKS_CHAIN_ID=\"0x00000001\" # mainnet\n",
        );
        assert_eq!(
            file.vars,
            [
                ("PG_HOST".into(), "db.internal".into()),
                ("PG_PORT".into(), "5432".into()),
                ("PG_PASSWORD".into(), "pa$$word".into()),
                ("STACKS_CHAIN_ID".into(), "0x00000001".into()),
            ]
        );
        assert!(file.unreadable_lines.is_empty() && file.expanded.is_empty(), "{file:?}");
    }

    #[test]
    fn a_line_it_cannot_read_is_reported_by_its_name_and_the_rest_is_read() {
        let file = parse("PG_HOST=a\nPG_PASSWORD=two words secret\nnot a line\nPG_PORT=1\n");
        assert_eq!(file.vars, [("PG_HOST".into(), "a".into()), ("PG_PORT".into(), "1".into())]);
        assert_eq!(file.unreadable_lines, ["line 2 (PG_PASSWORD)", "line 3"]);
        assert!(!format!("{file:?}").contains("secret"), "a value is never repeated");
    }

    #[test]
    fn a_dollar_outside_single_quotes_is_reported() {
        let file = parse("A=x$y\nB='x$y'\nC=\"x$y\"\nD=x\\$y\nE=x # costs $5\nF=a#$b\n");
        assert_eq!(file.expanded, ["A", "C", "F"]);
    }

    /// Runs [`load_with`] on `text` over the environment `env`; returns what it did and the
    /// environment after.
    fn load_text(text: &str, env: &[(&str, &str)]) -> (Loaded, HashMap<String, String>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".env");
        std::fs::write(&path, text).unwrap();
        let env: std::cell::RefCell<HashMap<String, String>> =
            std::cell::RefCell::new(env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect());
        let loaded = load_with(
            &path,
            |n| env.borrow().contains_key(n),
            |n, v| {
                env.borrow_mut().insert(n.into(), v.into());
            },
        )
        .unwrap();
        (loaded, env.into_inner())
    }

    #[test]
    fn the_environment_wins_over_the_file() {
        let (loaded, env) = load_text("PG_HOST=file\nPG_PORT=5433\n", &[("PG_HOST", "env")]);
        assert_eq!(env["PG_HOST"], "env");
        assert_eq!(env["PG_PORT"], "5433");
        assert_eq!((loaded.found, loaded.set, loaded.kept), (true, 1, 1));
    }

    #[test]
    fn a_later_line_wins_over_an_earlier_one() {
        let (loaded, env) = load_text("PG_PORT=1\nPG_PORT=2\n", &[]);
        assert_eq!(env["PG_PORT"], "2");
        assert_eq!(loaded.set, 1);
        let (_, env) = load_text("PG_PORT=1\nPG_PORT=2\n", &[("PG_PORT", "9")]);
        assert_eq!(env["PG_PORT"], "9");
    }

    #[test]
    fn no_file_is_no_error_and_an_unreadable_one_is() {
        let dir = tempfile::tempdir().unwrap();
        let loaded = load_with(&dir.path().join(".env"), |_| false, |_, _| panic!("nothing to set")).unwrap();
        assert_eq!(loaded, Loaded::default());
        // A directory where the file should be cannot be read.
        std::fs::create_dir(dir.path().join(".env")).unwrap();
        assert!(load_with(&dir.path().join(".env"), |_| false, |_, _| {}).is_err());
    }
}
