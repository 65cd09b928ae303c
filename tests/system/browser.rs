//! What the browser tests share (the live page, `live_page`; the results folder's pages, `report`):
//! where tests/browser's scripts are, the check that Node.js, Chromium and playwright-core are there,
//! and one browser at a time.

use std::path::Path;

/// tests/browser: the scripts that drive Chromium, and their npm packages.
pub const BROWSER_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/browser");

/// One browser at a time: Chromium and a league each want the machine's cores. A sync test takes it with
/// `blocking_lock`.
pub static ONE_BROWSER: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Node, Chromium and playwright-core are there, or `test` fails saying how to get them.
pub fn require_browser(test: &str) {
    let mut missing = Vec::new();
    if std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_err()
    {
        missing.push("Node.js (apt-get install -y nodejs npm)");
    }
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".to_owned());
    if !Path::new(&chromium).exists() {
        missing.push("Chromium (apt-get install -y chromium chromium-driver)");
    }
    if !Path::new(BROWSER_DIR)
        .join("node_modules/playwright-core")
        .exists()
    {
        missing.push("playwright-core (npm ci --prefix tests/browser)");
    }
    assert!(
        missing.is_empty(),
        "{test} needs {}; scripts/browser-env installs them (or run those commands)",
        missing.join(", ")
    );
}
