//! The API reference page (`GET /extended/docs`) as a user's browser shows it: the binary serves
//! it, Debian's `chromium` loads it headless, and the page it renders lists every operation of
//! the OpenAPI document the server serves, under its path. Outside CI the test is skipped when
//! `chromium` is not installed; in CI (`.ci/run` installs it) a missing browser fails it.

mod common;

use std::process::Stdio;

use common::server::{free_port, Server, WAIT};
use serde_json::Value;

/// Where Debian's package puts the browser.
const CHROMIUM: &str = "chromium";

fn chromium_installed() -> bool {
    std::process::Command::new(CHROMIUM)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The page's DOM once its script has run, as headless Chromium serializes it.
async fn rendered_dom(url: &str) -> String {
    let profile = tempfile::tempdir().unwrap();
    let run = tokio::process::Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--virtual-time-budget=10000",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(url)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(WAIT, run).await.expect("chromium finishes").expect("chromium runs");
    assert!(out.status.success(), "chromium: {}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[tokio::test]
async fn the_reference_page_lists_every_operation_of_the_document() {
    if !chromium_installed() {
        assert!(!common::in_ci(), "`{CHROMIUM}` must be installed in CI (.ci/run installs it)");
        eprintln!("skipped: `{CHROMIUM}` is not installed (apt-get install chromium)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let args = vec![
        "--db".to_owned(),
        format!("sqlite://{}/docs.db", dir.path().display()),
        "--api-bind".to_owned(),
        format!("127.0.0.1:{port}"),
        "--events-bind".to_owned(),
        format!("127.0.0.1:{}", free_port()),
    ];
    let mut server = Server::start(&args, port, &dir.path().join("serve.log"));
    server.wait_listening().await;
    let base = format!("http://127.0.0.1:{port}");

    // The page as served: HTML, kept by browsers for a while, allowed to load nothing from
    // elsewhere.
    let res = reqwest::get(format!("{base}/extended/docs")).await.unwrap();
    assert_eq!(res.status(), 200);
    let header = |name: &str| res.headers()[name].to_str().unwrap().to_owned();
    assert!(header("content-type").starts_with("text/html"), "{}", header("content-type"));
    assert_eq!(header("cache-control"), "public, max-age=3600");
    assert!(header("content-security-policy").contains("connect-src 'self'"));
    let page = res.text().await.unwrap();
    assert!(!page.contains("http://") && !page.contains("https://"), "the page names no other origin");

    let doc: Value =
        reqwest::get(format!("{base}/extended/openapi.json")).await.unwrap().json().await.unwrap();
    let mut operations = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            operations.push(format!("{method} {path}"));
        }
    }
    assert!(operations.len() >= 70, "{} operations", operations.len());

    let dom = rendered_dom(&format!("{base}/extended/docs")).await;
    assert!(!dom.contains("id=\"error\""), "the page could not load the document:\n{dom}");
    let missing: Vec<&String> =
        operations.iter().filter(|op| !dom.contains(&format!("data-op=\"{op}\""))).collect();
    assert!(missing.is_empty(), "not rendered: {missing:#?}");
    for path in doc["paths"].as_object().unwrap().keys() {
        assert!(dom.contains(&format!("<code class=\"path\">{path}</code>")), "{path} is not shown");
    }
    assert_eq!(dom.matches("data-op=\"").count(), operations.len(), "one entry per operation");
    assert!(dom.contains(&format!("{} operations", operations.len())), "the count the page shows");
    drop(server);
}
