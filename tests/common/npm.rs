//! Node clients for the end-to-end tests: npm packages installed once into the target directory
//! (never into the repository or `../shared`), with the test's script linked in beside them so
//! its imports resolve there (run it with `node --preserve-symlinks-main`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn in_ci() -> bool {
    std::env::var("CI").as_deref() == Ok("true")
}

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// `script` linked into `CARGO_TARGET_TMPDIR/<dir>` where `packages` are installed (npm runs
/// only when one is missing). `None` without node or npm: a skip outside CI, a failure under
/// `CI=true` (`what` names the test in that message).
pub fn script_with_packages(dir: &str, packages: &[&str], script: &Path, what: &str) -> Option<PathBuf> {
    if !have("node") || !have("npm") {
        assert!(!in_ci(), "CI=true requires node and npm for {what}");
        println!("skipping {what}: node/npm not found");
        return None;
    }
    // Tests of one binary run in parallel: one npm at a time into a folder.
    static INSTALL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _installing = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(dir);
    std::fs::create_dir_all(&dir).unwrap();
    // Written after a complete install: a folder left half-installed (an interrupted run) is
    // installed again rather than trusted because its package folders exist.
    let marker = dir.join("installed.txt");
    let wanted = packages.join("\n");
    if std::fs::read_to_string(&marker).ok().as_deref() != Some(wanted.as_str()) {
        // npm trusts a package folder whose package.json is there: start from nothing.
        let _ = std::fs::remove_dir_all(dir.join("node_modules"));
        let _ = std::fs::remove_file(dir.join("package-lock.json"));
        std::fs::write(dir.join("package.json"), r#"{"private": true, "type": "module"}"#).unwrap();
        let out = Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--loglevel=error"])
            .args(packages)
            .current_dir(&dir)
            .output()
            .expect("running npm");
        assert!(
            out.status.success(),
            "npm install {packages:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::write(&marker, &wanted).unwrap();
    }
    let link = dir.join(script.file_name().expect("a script file"));
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(script, &link).unwrap();
    Some(link)
}
