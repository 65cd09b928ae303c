//! The results folder as an archive, through the real binary: `league run` leaves every match's
//! transcript, its provenance and the checksums of every file; `league verify` checks the folder on its
//! own and fails on a changed choice or a deleted match, even with the checksums written again; and no
//! `league report` or `league create` writes over a folder that holds another league.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn league(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_league"));
    command
        .args(args)
        .env("RUST_LOG", "warn")
        .env_remove("LEAGUE_MANAGER_URL");
    command
}

pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A new folder to run in: its `results/` is this test's alone.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("league-archive-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    dir
}

/// `league run --keep` of `args` in `dir`, which must succeed: the kept database.
fn kept_run(dir: &Path, args: &[&str]) -> String {
    let mut all = vec!["run", "--keep", "--quiet", "--gateway-addr", "127.0.0.1:0"];
    all.extend(args);
    let output = league(&all)
        .current_dir(dir)
        .output()
        .expect("the league binary runs");
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    stderr
        .lines()
        .find_map(|line| line.strip_prefix("kept database "))
        .and_then(|rest| rest.split_whitespace().next())
        .expect("the kept database is named")
        .to_owned()
}

/// `league verify <folder>`.
pub(crate) fn verify(folder: &Path) -> Output {
    league(&["verify", folder.to_str().expect("a path")])
        .output()
        .expect("the league binary runs")
}

/// `from` copied to `<from>-<name>`.
pub(crate) fn copy(from: &Path, name: &str) -> PathBuf {
    let to = from.with_file_name(format!("{}-{name}", from.file_name().unwrap().to_string_lossy()));
    let status = Command::new("cp")
        .arg("-r")
        .arg(from)
        .arg(&to)
        .status()
        .expect("cp runs");
    assert!(status.success());
    to
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("readable")).expect("JSON")
}

/// The first match decided by the game (a win or a draw): its transcript file and its lines.
pub(crate) fn decided_match(folder: &Path) -> (PathBuf, Vec<Value>) {
    let mut files: Vec<PathBuf> = std::fs::read_dir(folder.join("transcripts"))
        .expect("transcripts")
        .map(|entry| entry.expect("an entry").path())
        .collect();
    files.sort();
    files
        .into_iter()
        .find_map(|path| {
            let lines: Vec<Value> = std::fs::read_to_string(&path)
                .expect("readable")
                .lines()
                .map(|line| serde_json::from_str(line).expect("a JSON line"))
                .collect();
            let status = lines[0]["match"]["result"]["status"].as_str().unwrap_or_default();
            ["RESULT_STATUS_WIN", "RESULT_STATUS_DRAW"]
                .contains(&status)
                .then_some((path, lines))
        })
        .expect("a match decided by the game")
}

#[test]
fn a_run_leaves_an_archive_that_verifies_and_a_changed_choice_or_a_deleted_match_does_not() {
    let place = scratch("verify");
    let database = kept_run(
        &place,
        &[
            "--players",
            "4",
            "--cycles",
            "2",
            "--strategies",
            "random",
            "--league",
            "archived",
        ],
    );
    let folder = place.join("results/archived");

    // Every match's transcript, one line a message.
    let transcripts: Vec<String> = std::fs::read_dir(folder.join("transcripts"))
        .expect("transcripts/")
        .map(|entry| {
            entry
                .expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    assert_eq!(transcripts.len(), 12, "4 players twice: {transcripts:?}");
    let (_, lines) = decided_match(&folder);
    assert_eq!(lines[0]["match"]["league_id"], "archived");
    assert!(lines[1..].iter().all(|line| line.get("entry").is_some()));
    let answers = lines
        .iter()
        .filter(|line| line["entry"]["message"]["message_type"] == "CHOOSE_PARITY_RESPONSE")
        .count();
    assert!(answers >= 2, "both players' choices: {lines:#?}");

    // The provenance: who wrote it, with what, from where, when, and who refereed what.
    let provenance = read_json(&folder.join("provenance.json"));
    assert_eq!(provenance["league_id"], "archived");
    assert_eq!(provenance["database"], database.as_str());
    assert_eq!(provenance["written_by"]["command"], "league run");
    let commit = provenance["written_by"]["commit"].as_str().expect("a commit");
    assert!(
        commit.len() == 40 && commit.bytes().all(|b| b.is_ascii_hexdigit()),
        "built in a git checkout: {commit}"
    );
    let command_line: Vec<&str> = provenance["written_by"]["command_line"]
        .as_array()
        .expect("the command line")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        command_line.windows(2).any(|pair| pair == ["--cycles", "2"]),
        "{command_line:?}"
    );
    let settings = &provenance["run_settings"];
    assert_eq!(
        (settings["players"].as_u64(), settings["cycles"].as_u64()),
        (Some(4), Some(2))
    );
    assert_eq!(settings["strategies"], "random");
    assert!(settings["think_time"].is_string() && settings["move_timeout"].is_string());
    assert_eq!(provenance["timing"]["move_timeout"], "30s");
    assert!(
        provenance["started_at"]
            .as_str()
            .is_some_and(|at| at.ends_with('Z'))
    );
    assert!(
        provenance["completed_at"]
            .as_str()
            .is_some_and(|at| at.ends_with('Z'))
    );
    let mut refereed: Vec<String> = provenance["referees"]
        .as_array()
        .expect("referees")
        .iter()
        .flat_map(|referee| referee["matches"].as_array().expect("matches").clone())
        .map(|id| format!("{}.jsonl", id.as_str().expect("an id")))
        .collect();
    refereed.sort();
    let mut listed = transcripts.clone();
    listed.sort();
    assert_eq!(refereed, listed, "every match, by the referee that ran it");
    let manifest = std::fs::read_to_string(folder.join("manifest.sha256")).expect("the manifest");
    for file in [
        "index.html",
        "standings.csv",
        "provenance.json",
        "transcripts/R1M1.jsonl",
    ] {
        assert!(manifest.contains(&format!("  {file}\n")), "{file}: {manifest}");
    }

    let index = std::fs::read_to_string(folder.join("index.html")).expect("the page");
    assert!(
        index.contains("<a href=\"transcripts/\">transcripts/</a>") && index.contains("provenance.json"),
        "the page points to the evidence"
    );

    // The folder verifies on its own.
    let verified = verify(&folder);
    let said = text(&verified.stdout);
    assert!(verified.status.success(), "{said}{}", text(&verified.stderr));
    assert!(said.contains("manifest.sha256: "), "{said}");
    assert!(
        said.contains("standings.csv: the table, with each row's tie-break"),
        "{said}"
    );
    assert!(
        said.contains("head_to_head.csv") && said.contains("ratings.csv"),
        "{said}"
    );
    assert!(
        said.contains("results follow from the players' choices and the drawn number"),
        "{said}"
    );

    // One choice changed, the checksums written again: the outcome no longer follows.
    let changed = copy(&folder, "changed");
    let (path, mut lines) = decided_match(&changed);
    let flipped = lines
        .iter_mut()
        .find_map(|line| {
            let message = line.get_mut("entry")?.get_mut("message")?;
            (message["message_type"] == "CHOOSE_PARITY_RESPONSE" && message["error_code"] == "")
                .then_some(message)
        })
        .expect("a choice");
    let choice = &mut flipped["payload"]["parity_choice"];
    *choice = Value::from(if *choice == "even" { "odd" } else { "even" });
    let rewritten: String = lines.iter().map(|line| format!("{line}\n")).collect();
    std::fs::write(&path, rewritten).expect("written");
    let unlisted = verify(&changed);
    assert!(!unlisted.status.success());
    assert!(
        text(&unlisted.stderr).contains("has changed: its SHA-256 is"),
        "{}",
        text(&unlisted.stderr)
    );
    league_report::manifest::write(&changed).expect("the checksums written again");
    let refused = verify(&changed);
    let stderr = text(&refused.stderr);
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    assert!(!refused.status.success(), "{}", text(&refused.stdout));
    assert!(
        stderr.contains(&format!("does not verify: transcripts/{name}"))
            && stderr.contains("the number drawn was"),
        "{stderr}"
    );

    // One match deleted, the checksums written again.
    let deleted = copy(&folder, "deleted");
    std::fs::remove_file(deleted.join("transcripts/R2M1.jsonl")).expect("removed");
    league_report::manifest::write(&deleted).expect("the checksums written again");
    let refused = verify(&deleted);
    let stderr = text(&refused.stderr);
    assert!(!refused.status.success());
    assert!(
        stderr.contains("R2M1 was run by REF") && stderr.contains("transcripts/R2M1.jsonl is missing"),
        "{stderr}"
    );

    let cleaned = league(&["clean", &database]).output().expect("league clean runs");
    assert!(cleaned.status.success(), "{}", text(&cleaned.stderr));
    std::fs::remove_dir_all(&place).expect("removed");
}

#[test]
fn no_command_writes_over_a_folder_that_holds_another_league() {
    let place = scratch("over");
    let first = kept_run(&place, &["--players", "3", "--league", "x"]);
    let folder = place.join("results/x");
    let manifest = || std::fs::read(folder.join("manifest.sha256")).expect("the manifest");
    let written = manifest();
    let report = |database: &str, extra: &[&str]| {
        let mut args = vec!["report", "--league", "x", "--database", database];
        args.extend(extra);
        league(&args)
            .current_dir(&place)
            .output()
            .expect("the league binary runs")
    };

    // Another league x, from another run elsewhere: never written over, --force or not.
    let elsewhere = scratch("over-elsewhere");
    let second = kept_run(&elsewhere, &["--players", "2", "--league", "x"]);
    for force in [&[][..], &["--force"][..]] {
        let refused = report(&second, force);
        let stderr = text(&refused.stderr);
        assert!(!refused.status.success(), "{}", text(&refused.stdout));
        assert!(
            stderr.contains(&format!(
                "results/x holds the results of another league (league x of database {first}"
            )),
            "{stderr}"
        );
        assert_eq!(manifest(), written, "untouched");
    }
    // `league create` refuses the id before asking anything of a system.
    let created = league(&["create", "--league", "x"])
        .current_dir(&place)
        .output()
        .expect("runs");
    assert!(!created.status.success());
    assert!(
        text(&created.stderr).contains("results/x already holds the results of a league x"),
        "{}",
        text(&created.stderr)
    );

    // Its own league: refused without --force; with it, rebuilt whole.
    let refused = report(&first, &[]);
    assert!(!refused.status.success());
    assert!(
        text(&refused.stderr).contains("--force writes the folder again, whole"),
        "{}",
        text(&refused.stderr)
    );
    assert_eq!(manifest(), written, "untouched");
    std::fs::write(folder.join("players/P99.html"), "a page of another league").expect("written");
    let forced = report(&first, &["--force"]);
    assert!(forced.status.success(), "{}", text(&forced.stderr));
    assert!(
        !folder.join("players/P99.html").exists(),
        "nothing of the old folder is left"
    );
    assert!(folder.join("players/P03.html").is_file());
    let provenance = read_json(&folder.join("provenance.json"));
    assert_eq!(provenance["written_by"]["command"], "league report");
    assert_eq!(
        provenance["run_settings"]["players"], 3,
        "what only the run knew is kept"
    );
    let verified = verify(&folder);
    assert!(verified.status.success(), "{}", text(&verified.stderr));

    for database in [first, second] {
        let cleaned = league(&["clean", &database]).output().expect("league clean runs");
        assert!(cleaned.status.success(), "{}", text(&cleaned.stderr));
    }
    std::fs::remove_dir_all(&place).expect("removed");
    std::fs::remove_dir_all(&elsewhere).expect("removed");
}
