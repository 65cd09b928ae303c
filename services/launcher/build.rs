//! Embeds the git commit the `league` binary is built from (`LEAGUE_GIT_COMMIT`), for the provenance a
//! results folder records. Built outside a git checkout (a source archive, a container build without
//! `.git`), or with git missing, it is `unknown`, and the provenance says so. It is the commit checked out when built: changes not yet
//! committed are not in it.

use std::process::Command;

fn main() {
    let commit = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .output()
        .ok()
        .filter(|output| output.status.success())
        .and_then(|output| String::from_utf8(output.stdout).ok())
        .map(|text| text.trim().to_owned())
        .filter(|commit| !commit.is_empty() && commit.bytes().all(|b| b.is_ascii_hexdigit()))
        .unwrap_or_else(|| "unknown".to_owned());
    println!("cargo:rustc-env=LEAGUE_GIT_COMMIT={commit}");
    // Rebuilt when HEAD moves (a commit, a checkout). The paths are the worktree's git files; a missing
    // one just means cargo checks it every build.
    if let Some(git_dir) = git_path("HEAD") {
        println!("cargo:rerun-if-changed={git_dir}");
    }
    if let Some(path) = git_ref().and_then(|reference| git_path(&reference)) {
        println!("cargo:rerun-if-changed={path}");
    }
    println!("cargo:rerun-if-changed=build.rs");
}

/// `git rev-parse --git-path <name>`: where a git file of this checkout is.
fn git_path(name: &str) -> Option<String> {
    let output = Command::new("git")
        .args(["rev-parse", "--git-path", name])
        .output()
        .ok()
        .filter(|output| output.status.success())?;
    Some(String::from_utf8(output.stdout).ok()?.trim().to_owned())
}

/// The branch HEAD points at (`refs/heads/main`), if any.
fn git_ref() -> Option<String> {
    let output = Command::new("git")
        .args(["symbolic-ref", "-q", "HEAD"])
        .output()
        .ok()
        .filter(|output| output.status.success())?;
    Some(String::from_utf8(output.stdout).ok()?.trim().to_owned())
}
