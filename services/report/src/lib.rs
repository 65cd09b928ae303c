//! The results report: a league's results as a folder people can open — `results/<league_id>/` with the
//! final table (`standings.json`, `standings.csv`), the table after each round
//! (`standings_by_round.csv`), every match (`matches.csv`), every pair's meetings (`head_to_head.csv`),
//! the ratings (`ratings.csv`), charts as SVG and PNG, `index.html` showing all of it and a page per
//! player (`players/<id>.html`); and the evidence to check it by (`league verify`, [`verify`]): every
//! match's transcript (`transcripts/`), `provenance.json` and `manifest.sha256` ([`archive`],
//! [`manifest`]). `league run` writes it at its end; `league report` writes it again, any time, for any
//! league, from its database. Everything is read through the manager's queries, over a client the
//! caller connects (the `league` commands live in the launcher, which depends on this crate and never
//! the other way: docs/adr/0089-the-results-report-a-crate-of-its-own.md).

pub mod archive;
pub mod charts;
pub mod columns;
pub mod data;
pub mod games;
pub mod head_to_head;
pub mod html;
pub mod llm_moves;
pub mod manifest;
pub mod ratings;
pub mod results_folder;
pub mod tables;
pub mod verify;

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde_json::Value;

use archive::Provenance;
use data::LeagueData;
use league_proto::v2::MatchTiming;

/// Where `league run` writes its results.
pub const RUN_RESULTS: &str = "results";

/// Who writes a results folder and from where.
#[derive(Debug, Clone)]
pub struct Writing {
    /// `league run` or `league report`.
    pub command: &'static str,
    /// The `league` binary's version and the git commit it was built from, as `provenance.json` records
    /// them: the binary's, which only its own crate knows (its build script), not this library's.
    pub version: &'static str,
    pub commit: &'static str,
    /// The database the league is read from (None: a manager, by URL).
    pub database: Option<String>,
    /// `league run`'s settings.
    pub run_settings: Option<Value>,
    /// Rebuild a folder that holds this same league's results.
    pub force: bool,
}

/// Writes `data`'s tables, pages and charts to `<out>/<league_id>/` with no transcripts (made-up
/// leagues in tests); returns that folder.
pub fn write(data: &LeagueData, out: &Path) -> anyhow::Result<PathBuf> {
    let writing = Writing {
        command: "league report",
        // Made-up leagues are written by no `league` binary: this crate's version, no commit.
        version: env!("CARGO_PKG_VERSION"),
        commit: "unknown",
        database: None,
        run_settings: None,
        force: false,
    };
    Begun::new(data, &writing, out)?.finish(data, None)
}

/// Writes the league's whole results folder, `<out>/<league_id>/`, with every match's transcript read
/// through `reader`: everything into a new folder beside it, then put in its place, so a folder is never
/// half written nor a mix of two writings. A folder that holds another league is refused; one that
/// holds this league only with `force`. Returns the folder.
pub async fn write_archive(
    data: &LeagueData,
    reader: &archive::Reader<'_>,
    writing: &Writing,
    out: &Path,
) -> anyhow::Result<PathBuf> {
    let begun = Begun::new(data, writing, out)?;
    match archive::write_transcripts(reader, data, &begun.fresh).await {
        Ok(timing) => begun.finish(data, timing.as_ref()),
        Err(error) => {
            begun.abandon();
            Err(error)
        }
    }
}

/// A results folder being written beside its place.
struct Begun {
    dir: PathBuf,
    fresh: PathBuf,
    existing: results_folder::Existing,
    provenance: Provenance,
}

impl Begun {
    /// Refuses a folder that may not be written; else writes the tables, pages and charts into a new
    /// folder beside it.
    fn new(data: &LeagueData, writing: &Writing, out: &Path) -> anyhow::Result<Self> {
        let name = folder_name(data.league_id());
        let dir = out.join(&name);
        let mut provenance = Provenance::new(writing, data)?;
        let existing = results_folder::writable(&dir, &provenance.identity(), writing.force)?;
        if let results_folder::Existing::Same(old) = &existing {
            // What only `league run` knew stays: its settings (and, below, how its llm bots decided).
            if provenance.run_settings.is_none() {
                provenance.run_settings = old.run_settings.clone();
            }
        }
        let fresh = out.join(format!(".{name}.writing-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&fresh);
        let begun = Begun {
            dir,
            fresh,
            existing,
            provenance,
        };
        let written = std::fs::create_dir_all(&begun.fresh)
            .with_context(|| format!("creating {}", begun.fresh.display()))
            .and_then(|()| write_files(data, &begun.fresh));
        match written {
            Ok(()) => Ok(begun),
            Err(error) => {
                begun.abandon();
                Err(error)
            }
        }
    }

    /// The provenance (with the league's `timing`) and the manifest, then the folder in its place.
    fn finish(mut self, data: &LeagueData, timing: Option<&MatchTiming>) -> anyhow::Result<PathBuf> {
        let finished = (|| {
            self.provenance.timing = timing
                .map(|timing| league_proto::json::to_json("league.v2.MatchTiming", timing))
                .transpose()?;
            let kept_llm_moves = self.dir.join("llm_moves.csv");
            if data.llm_moves.is_empty()
                && matches!(self.existing, results_folder::Existing::Same(_))
                && kept_llm_moves.is_file()
            {
                std::fs::copy(&kept_llm_moves, self.fresh.join("llm_moves.csv"))
                    .with_context(|| format!("keeping {}", kept_llm_moves.display()))?;
            }
            let json = serde_json::to_vec_pretty(&self.provenance)?;
            std::fs::write(self.fresh.join(archive::PROVENANCE), json).context("writing provenance.json")?;
            manifest::write(&self.fresh)?;
            results_folder::put_in_place(&self.fresh, &self.dir, &self.existing)
        })();
        match finished {
            Ok(()) => Ok(self.dir),
            Err(error) => {
                self.abandon();
                Err(error)
            }
        }
    }

    /// Removes what was written so far.
    fn abandon(self) {
        let _ = std::fs::remove_dir_all(&self.fresh);
    }
}

/// Writes the tables, pages and charts of `data` into `dir`.
fn write_files(data: &LeagueData, dir: &Path) -> anyhow::Result<()> {
    let file = |name: &str, contents: &[u8]| {
        std::fs::write(dir.join(name), contents)
            .with_context(|| format!("writing {}", dir.join(name).display()))
    };
    let json = serde_json::to_vec_pretty(&tables::standings_json(data))?;
    file("standings.json", &json)?;
    file("standings.csv", tables::standings_csv(data).as_bytes())?;
    file(
        "standings_by_round.csv",
        tables::standings_by_round_csv(data).as_bytes(),
    )?;
    file("matches.csv", tables::matches_csv(data).as_bytes())?;
    file("head_to_head.csv", tables::head_to_head_csv(data).as_bytes())?;
    file("ratings.csv", tables::ratings_csv(data).as_bytes())?;
    if !data.llm_moves.is_empty() {
        let names = data
            .standings
            .iter()
            .map(|row| (row.player_id.clone(), row.display_name.clone()))
            .collect();
        file(
            "llm_moves.csv",
            llm_moves::csv(&data.llm_moves, &names)?.as_bytes(),
        )?;
    }
    let charts = charts::all(data);
    for chart in &charts {
        chart.write(dir)?;
    }
    let pages = html::Pages::new(data);
    file("index.html", pages.index(&charts).as_bytes())?;
    let players = dir.join("players");
    std::fs::create_dir_all(&players).with_context(|| format!("creating {}", players.display()))?;
    for (index, name) in pages.player_files() {
        file(&name, pages.player(index).as_bytes())?;
    }
    Ok(())
}

/// A league id as a folder name. An id in the league id grammar (`league_domain::league_id`) is its own
/// folder name; the manager refuses any other since that grammar was set, but a database made before
/// may hold one: each character outside the grammar (a separator, `.`, upper case) is written `~` and
/// its UTF-8 bytes in hex. `~` is in no id, so two ids never share a folder and none leaves the
/// results folder.
pub fn folder_name(league_id: &str) -> String {
    if league_domain::LeagueId::parse(league_id).is_ok() {
        return league_id.to_owned();
    }
    let mut name = String::from("~");
    for c in league_id.chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '_' | '-') {
            name.push(c);
        } else {
            let mut bytes = [0u8; 4];
            for byte in c.encode_utf8(&mut bytes).bytes() {
                name.push_str(&format!("~{byte:02x}"));
            }
        }
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn league_ids_cannot_leave_the_results_folder() {
        assert_eq!(folder_name("league_even_odd"), "league_even_odd");
        assert_eq!(folder_name("../etc/x"), "~~2e~2e~2fetc~2fx");
        assert_eq!(folder_name(".."), "~~2e~2e");
        assert_eq!(folder_name(""), "~");
        assert_ne!(folder_name("a/b"), folder_name("a_b"), "two ids, two folders");
        assert_ne!(folder_name("L1"), folder_name("l1"));
    }
}
