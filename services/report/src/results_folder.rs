//! The results folder a `league run` writes, `results/<league_id>/`, claimed before the league starts:
//! every run gets a folder of its own and no run writes over another's. The league's id names the
//! folder, so choosing the folder is choosing the id: by default the game and the time
//! (`even_odd-20261129-0212`, UTC), with `-2`, `-3` … when a run of the same minute has that folder;
//! an id chosen with `--league` whose folder exists is refused before anything starts.
//!
//! A folder is claimed by creating it (`mkdir`, which fails when it exists), so two runs started at
//! once in the same place never claim the same one.
//!
//! Whoever writes a folder later (`league report`) asks [`writable`] first: the league id, database and
//! start its `provenance.json` records decide whether it holds the same league; a folder of another
//! league, or one without provenance, is never written over. `league serve` and `league create` choose
//! ids with [`unclaimed_default_id`], never one whose folder exists.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::Context;
use league_domain::{GameType, LeagueId};

use crate::archive::{Identity, Provenance};
use crate::folder_name;

/// The most runs of one minute that get a default id of their own.
const SAME_MINUTE: u32 = 1_000;

/// A results folder this run has claimed, and the league id that names it.
#[derive(Debug)]
pub struct Claimed {
    pub league_id: LeagueId,
    pub dir: PathBuf,
}

impl Claimed {
    /// Gives the folder up if nothing was written to it (a run that failed or was stopped).
    pub fn release_if_empty(&self) {
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// Claims `<out>/<league id>/`: `asked`'s folder, refused when it exists, else the first free one of
/// the default ids of `game` at `now`.
pub fn claim(
    out: &Path,
    asked: Option<&LeagueId>,
    game: GameType,
    now: SystemTime,
) -> anyhow::Result<Claimed> {
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    if let Some(league_id) = asked {
        let dir = out.join(folder_name(league_id.as_str()));
        return match try_claim(&dir)? {
            true => Ok(Claimed {
                league_id: league_id.clone(),
                dir,
            }),
            false => anyhow::bail!(
                "{} already holds the results of a league {league_id}: choose another id with \
                 --league (or leave --league out for a new one), or move that folder away",
                dir.display()
            ),
        };
    }
    let base = default_league_id(game, now)?;
    for n in 1..=SAME_MINUTE {
        let league_id = match n {
            1 => base.clone(),
            n => LeagueId::parse(&format!("{base}-{n}"))?,
        };
        let dir = out.join(folder_name(league_id.as_str()));
        if try_claim(&dir)? {
            return Ok(Claimed { league_id, dir });
        }
    }
    anyhow::bail!(
        "{} runs of {game} this minute already have results folders in {}: choose an id with --league",
        SAME_MINUTE,
        out.display()
    )
}

/// The first default id of `game` at `now` (`-2`, `-3` … after it) whose results folder under `out`
/// does not exist and that `taken` does not refuse, without claiming it (`league serve`, `league
/// create`: the league is made first, its folder later by `league report`).
pub fn unclaimed_default_id(
    out: &Path,
    game: GameType,
    now: SystemTime,
    taken: impl Fn(&LeagueId) -> bool,
) -> anyhow::Result<LeagueId> {
    let base = default_league_id(game, now)?;
    for n in 1..=SAME_MINUTE {
        let league_id = match n {
            1 => base.clone(),
            n => LeagueId::parse(&format!("{base}-{n}"))?,
        };
        if !out.join(folder_name(league_id.as_str())).exists() && !taken(&league_id) {
            return Ok(league_id);
        }
    }
    anyhow::bail!(
        "{SAME_MINUTE} leagues of {game} this minute already have ids or results folders in {}: choose an id \
         with --league",
        out.display()
    )
}

/// Refuses a new league `league_id` whose results folder exists under `out`: that folder would hold
/// another league's results, and this league's could never be written.
pub fn refuse_existing(out: &Path, league_id: &LeagueId) -> anyhow::Result<()> {
    let dir = out.join(folder_name(league_id.as_str()));
    anyhow::ensure!(
        !dir.exists(),
        "{} already holds the results of a league {league_id}: choose another id with --league (or leave \
         --league out for a new one), or move that folder away",
        dir.display()
    );
    Ok(())
}

/// What a results folder holds before it is written.
#[derive(Debug)]
pub enum Existing {
    /// Nothing: no folder.
    Absent,
    /// An empty folder (claimed by `league run`).
    Empty,
    /// This same league's results, as their provenance says.
    Same(Box<Provenance>),
}

/// Whether `dir` may be written with the results of `identity`: absent or empty, or holding the same
/// league's results and `force`. Refused, naming what it holds, otherwise.
pub fn writable(dir: &Path, identity: &Identity, force: bool) -> anyhow::Result<Existing> {
    let mut entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Existing::Absent),
        Err(error) => return Err(error).with_context(|| format!("reading {}", dir.display())),
    };
    if entries.next().is_none() {
        return Ok(Existing::Empty);
    }
    let Some(provenance) = Provenance::read(dir)? else {
        anyhow::bail!(
            "{} holds results without a provenance.json (written by an older version, or not results): \
             it is never written over; move it away or choose another --out",
            dir.display()
        );
    };
    let held = provenance.identity();
    anyhow::ensure!(
        held.is(identity),
        "{} holds the results of another league ({held}), not of {identity}: it is never written over; \
         choose another --out, or move that folder away",
        dir.display()
    );
    anyhow::ensure!(
        force,
        "{} already holds these results of {identity}: --force writes the folder again, whole",
        dir.display()
    );
    Ok(Existing::Same(Box::new(provenance)))
}

/// Puts the folder `fresh` (written beside it) in the place of `dir`, which held `existing`: the old
/// folder goes whole, so no file of it is left among the new ones.
pub fn put_in_place(fresh: &Path, dir: &Path, existing: &Existing) -> anyhow::Result<()> {
    let rename = |from: &Path, to: &Path| {
        std::fs::rename(from, to).with_context(|| format!("moving {} to {}", from.display(), to.display()))
    };
    match existing {
        // A rename replaces an empty folder.
        Existing::Absent | Existing::Empty => rename(fresh, dir),
        Existing::Same(_) => {
            let name = dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let old = dir.with_file_name(format!(".{name}.replaced-{}", std::process::id()));
            rename(dir, &old)?;
            if let Err(error) = rename(fresh, dir) {
                // Put the old folder back rather than leave none.
                let _ = std::fs::rename(&old, dir);
                return Err(error);
            }
            std::fs::remove_dir_all(&old).with_context(|| format!("removing {}", old.display()))
        }
    }
}

/// Creates `dir`; false when it exists.
fn try_claim(dir: &Path) -> anyhow::Result<bool> {
    match std::fs::create_dir(dir) {
        Ok(()) => Ok(true),
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(error) => Err(error).with_context(|| format!("creating {}", dir.display())),
    }
}

/// `<game>-<YYYYMMDD>-<HHMM>` in UTC: readable, sorted by time, and a league id
/// (`league_domain::league_id`).
pub fn default_league_id(game: GameType, now: SystemTime) -> anyhow::Result<LeagueId> {
    // `2026-11-29T02:12:33Z`: the digits of the date, and of the hour and minute.
    let stamp = humantime_serde::re::humantime::format_rfc3339_seconds(now).to_string();
    let digits = |range: std::ops::Range<usize>| -> anyhow::Result<String> {
        let part = stamp
            .get(range)
            .with_context(|| format!("{stamp} is not an RFC 3339 time"))?;
        Ok(part.chars().filter(char::is_ascii_digit).collect())
    };
    Ok(LeagueId::parse(&format!(
        "{game}-{}-{}",
        digits(0..10)?,
        digits(11..16)?
    ))?)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// 2026-11-29 02:12:33 UTC.
    fn at_0212() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_795_918_353)
    }

    fn id(text: &str) -> LeagueId {
        LeagueId::parse(text).expect("a league id")
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("league-results-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn the_default_id_is_the_game_and_the_minute_in_utc() {
        let id = default_league_id(GameType::EvenOdd, at_0212()).expect("a league id");
        assert_eq!(id, "even_odd-20261129-0212");
        assert!(default_league_id(GameType::TicTacToe, at_0212()).is_ok());
    }

    #[test]
    fn runs_of_the_same_minute_get_folders_of_their_own() {
        let out = scratch("same-minute");
        let first = claim(&out, None, GameType::EvenOdd, at_0212()).expect("claimed");
        let second = claim(&out, None, GameType::EvenOdd, at_0212()).expect("claimed");
        let third = claim(&out, None, GameType::EvenOdd, at_0212()).expect("claimed");
        assert_eq!(first.league_id, "even_odd-20261129-0212");
        assert_eq!(second.league_id, "even_odd-20261129-0212-2");
        assert_eq!(third.league_id, "even_odd-20261129-0212-3");
        assert!(first.dir.is_dir() && second.dir.is_dir() && third.dir.is_dir());
        std::fs::remove_dir_all(&out).expect("removed");
    }

    #[test]
    fn a_chosen_id_whose_folder_exists_is_refused_naming_the_option() {
        let out = scratch("chosen");
        let claimed = claim(&out, Some(&id("final")), GameType::EvenOdd, at_0212()).expect("claimed");
        assert_eq!(claimed.dir, out.join("final"));
        std::fs::write(claimed.dir.join("index.html"), "results").expect("written");
        let refused =
            claim(&out, Some(&id("final")), GameType::EvenOdd, at_0212()).expect_err("the folder exists");
        assert!(
            refused.to_string().contains("choose another id with --league"),
            "{refused}"
        );
        assert_eq!(
            std::fs::read_to_string(claimed.dir.join("index.html")).expect("kept"),
            "results"
        );
        // A folder something was written to is kept; an empty one goes.
        claimed.release_if_empty();
        assert!(claimed.dir.is_dir());
        let unused = claim(&out, Some(&id("unused")), GameType::EvenOdd, at_0212()).expect("claimed");
        unused.release_if_empty();
        assert!(!unused.dir.exists());
        std::fs::remove_dir_all(&out).expect("removed");
    }

    #[test]
    fn serve_and_create_skip_every_id_whose_folder_or_league_exists() {
        let out = scratch("unclaimed");
        std::fs::create_dir_all(out.join("even_odd-20261129-0212")).expect("created");
        let first = unclaimed_default_id(&out, GameType::EvenOdd, at_0212(), |_| false).expect("an id");
        assert_eq!(first, "even_odd-20261129-0212-2", "the run's folder is skipped");
        let next = unclaimed_default_id(&out, GameType::EvenOdd, at_0212(), |taken| {
            taken == "even_odd-20261129-0212-2"
        })
        .expect("an id");
        assert_eq!(next, "even_odd-20261129-0212-3", "and a league the system has");
        assert!(!out.join("even_odd-20261129-0212-3").exists(), "nothing claimed");
        let refused = refuse_existing(&out, &id("even_odd-20261129-0212")).expect_err("the folder exists");
        assert!(
            refused
                .to_string()
                .contains("already holds the results of a league"),
            "{refused}"
        );
        refuse_existing(&out, &id("another")).expect("free");
        std::fs::remove_dir_all(&out).expect("removed");
    }

    fn identity(database: &str) -> Identity {
        Identity {
            league_id: "final".into(),
            database: Some(database.into()),
            started_at: Some("2026-12-05T15:00:00.000Z".into()),
        }
    }

    /// A folder holding `identity`'s results, as a report leaves it.
    fn holding(dir: &Path, identity: &Identity) {
        std::fs::create_dir_all(dir.join("players")).expect("created");
        let provenance = serde_json::json!({
            "format": crate::archive::FORMAT, "league_id": identity.league_id,
            "game_type": "even_odd", "database": identity.database, "started_at": identity.started_at,
            "completed_at": null, "cancelled_at": null, "written_at": "2026-12-05T16:00:00.000Z",
            "written_by": {"command": "league run", "version": "0", "commit": "unknown", "command_line": []},
            "run_settings": {"cycles": 2}, "timing": null, "league": {}, "completed_rounds": [],
            "players": [], "referees": [], "transcripts": ""
        });
        std::fs::write(dir.join("provenance.json"), provenance.to_string()).expect("written");
        std::fs::write(dir.join("players/P10.html"), "stale").expect("written");
    }

    #[test]
    fn a_folder_is_written_only_empty_or_with_its_own_league_and_force() {
        let out = scratch("writable");
        let dir = out.join("final");
        assert!(matches!(
            writable(&dir, &identity("d1"), false),
            Ok(Existing::Absent)
        ));
        std::fs::create_dir_all(&dir).expect("created");
        assert!(matches!(
            writable(&dir, &identity("d1"), false),
            Ok(Existing::Empty)
        ));
        holding(&dir, &identity("d1"));
        let other = writable(&dir, &identity("d2"), true).expect_err("another league");
        assert!(
            other
                .to_string()
                .contains("holds the results of another league (league final of database d1"),
            "{other}"
        );
        let unforced = writable(&dir, &identity("d1"), false).expect_err("without --force");
        assert!(
            unforced
                .to_string()
                .contains("--force writes the folder again, whole"),
            "{unforced}"
        );
        // Read from a manager by URL, the database is not known: the id and the start decide.
        let by_url = Identity {
            database: None,
            ..identity("d1")
        };
        assert!(matches!(writable(&dir, &by_url, true), Ok(Existing::Same(_))));
        let restarted = Identity {
            started_at: Some("2026-12-05T15:30:00.000Z".into()),
            ..by_url
        };
        assert!(
            writable(&dir, &restarted, true).is_err(),
            "another start, another league"
        );
        let same = writable(&dir, &identity("d1"), true).expect("the same league, forced");
        // Rebuilt whole: the old folder's files are gone.
        let fresh = out.join(".final.writing");
        std::fs::create_dir_all(&fresh).expect("created");
        std::fs::write(fresh.join("index.html"), "new").expect("written");
        put_in_place(&fresh, &dir, &same).expect("in place");
        assert!(!dir.join("players/P10.html").exists() && dir.join("index.html").is_file());
        assert!(!fresh.exists());
        std::fs::remove_file(dir.join("index.html")).expect("removed");
        std::fs::write(dir.join("index.html"), "no provenance").expect("written");
        let unknown = writable(&dir, &identity("d1"), true).expect_err("no provenance");
        assert!(
            unknown.to_string().contains("without a provenance.json"),
            "{unknown}"
        );
        std::fs::remove_dir_all(&out).expect("removed");
    }
}
