//! The captured traffic of real agents in the repository's `tests/fixtures` (its README says what each
//! folder holds), or in `LEAGUE_FIXTURES_DIR` when that is set.

use std::path::PathBuf;

use serde_json::Value;

/// The fixtures folder.
pub fn fixtures_dir() -> PathBuf {
    std::env::var_os("LEAGUE_FIXTURES_DIR").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures"),
        PathBuf::from,
    )
}

/// A fixture file, parsed.
pub fn fixture(relative: &str) -> Value {
    let path = fixtures_dir().join(relative);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()))
}

/// The names of the files directly in a fixture folder, sorted.
pub fn fixture_files(folder: &str) -> Vec<String> {
    let dir = fixtures_dir().join(folder);
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("listing {}: {e}", dir.display()))
        .filter_map(|entry| entry.ok())
        .filter(|entry| entry.path().is_file())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}
