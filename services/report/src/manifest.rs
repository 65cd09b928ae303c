//! `manifest.sha256`: the SHA-256 of every file of a results folder but itself, one line a file
//! (`<hex>  <path>`, paths relative to the folder with `/`, sorted), the format `sha256sum` writes, so
//! `sha256sum -c manifest.sha256` inside the folder checks it too. Written last; `league verify`
//! checks that the folder holds exactly the files it lists, each with its checksum.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context;
use sha2::{Digest, Sha256};

/// The manifest's name, inside the results folder.
pub const MANIFEST: &str = "manifest.sha256";

/// Writes `<dir>/manifest.sha256` for every file under `dir`.
pub fn write(dir: &Path) -> anyhow::Result<()> {
    let mut text = String::new();
    for (path, sum) in checksums(dir)? {
        text.push_str(&format!("{sum}  {path}\n"));
    }
    let path = dir.join(MANIFEST);
    std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))
}

/// The first way `dir` differs from its manifest, or how many files it checked.
pub fn check(dir: &Path) -> anyhow::Result<Result<usize, String>> {
    let path = dir.join(MANIFEST);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Err(format!("{MANIFEST} is missing")));
        }
        Err(error) => return Err(error).with_context(|| format!("reading {}", path.display())),
    };
    let mut listed = BTreeMap::new();
    for (number, line) in text.lines().enumerate() {
        let Some((sum, file)) = line.split_once("  ") else {
            return Ok(Err(format!(
                "{MANIFEST} line {} is not `<sha256>  <file>`: {line:?}",
                number + 1
            )));
        };
        listed.insert(file.to_owned(), sum.to_owned());
    }
    let found = checksums(dir)?;
    for (file, sum) in &listed {
        match found.get(file) {
            None => return Ok(Err(format!("{file} is listed in {MANIFEST} but missing"))),
            Some(actual) if actual != sum => {
                return Ok(Err(format!(
                    "{file} has changed: its SHA-256 is {actual}, {MANIFEST} says {sum}"
                )));
            }
            Some(_) => {}
        }
    }
    if let Some(extra) = found.keys().find(|file| !listed.contains_key(*file)) {
        return Ok(Err(format!("{extra} is in the folder but not in {MANIFEST}")));
    }
    Ok(Ok(listed.len()))
}

/// The SHA-256 of every file under `dir` but the manifest, by path relative to `dir`.
fn checksums(dir: &Path) -> anyhow::Result<BTreeMap<String, String>> {
    let mut sums = BTreeMap::new();
    let mut folders = vec![(dir.to_path_buf(), String::new())];
    while let Some((folder, prefix)) = folders.pop() {
        let entries = std::fs::read_dir(&folder).with_context(|| format!("reading {}", folder.display()))?;
        for entry in entries {
            let entry = entry.with_context(|| format!("reading {}", folder.display()))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let relative = format!("{prefix}{name}");
            let kind = entry.file_type()?;
            if kind.is_dir() {
                folders.push((entry.path(), format!("{relative}/")));
            } else if relative != MANIFEST {
                let bytes = std::fs::read(entry.path())
                    .with_context(|| format!("reading {}", entry.path().display()))?;
                sums.insert(relative, hex::encode(Sha256::digest(&bytes)));
            }
        }
    }
    Ok(sums)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("league-manifest-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("players")).expect("created");
        dir
    }

    #[test]
    fn the_manifest_lists_every_file_and_names_the_first_change() {
        let dir = scratch("changes");
        std::fs::write(dir.join("index.html"), "<p>table</p>").expect("written");
        std::fs::write(dir.join("players/P01.html"), "P01").expect("written");
        write(&dir).expect("written");
        let text = std::fs::read_to_string(dir.join(MANIFEST)).expect("read");
        // sha256("P01"), as sha256sum prints it.
        assert!(
            text.contains("  players/P01.html\n") && text.lines().count() == 2,
            "{text}"
        );
        assert_eq!(check(&dir).expect("checked"), Ok(2));
        std::fs::write(dir.join("players/P01.html"), "P02").expect("written");
        let changed = check(&dir).expect("checked").expect_err("a change");
        assert!(changed.starts_with("players/P01.html has changed"), "{changed}");
        std::fs::remove_file(dir.join("players/P01.html")).expect("removed");
        let missing = check(&dir).expect("checked").expect_err("a missing file");
        assert_eq!(
            missing,
            format!("players/P01.html is listed in {MANIFEST} but missing")
        );
        write(&dir).expect("written again");
        std::fs::write(dir.join("extra.csv"), "x").expect("written");
        let extra = check(&dir).expect("checked").expect_err("an extra file");
        assert_eq!(extra, format!("extra.csv is in the folder but not in {MANIFEST}"));
        std::fs::remove_dir_all(&dir).expect("removed");
    }
}
