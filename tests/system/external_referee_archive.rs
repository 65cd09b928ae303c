//! A league refereed only by an external referee (tests/agents/strict_referee.py, through one gateway)
//! leaves a results folder `league verify` accepts: each match's transcript is what the gateway relayed
//! between the referee and the players. Changing one choice in one of those transcripts (the checksums
//! written again) makes it fail.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use league_testkit::LeagueRun;
use league_testkit::league_run::{checked_table, python, summaries};
use serde_json::Value;

use crate::results_archive::{copy, decided_match, text, verify};

const AGENT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/agents/league_agent.py");
const REFEREE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/agents/strict_referee.py"
);

#[tokio::test]
async fn a_league_refereed_externally_leaves_transcripts_that_verify() {
    let league = LeagueRun::start(
        env!("CARGO_BIN_EXE_league"),
        &[
            "--players",
            "2",
            "--external-players",
            "2",
            "--move-timeout",
            "3s",
            "--referees",
            "0",
        ],
        1,
    )
    .await;
    let gateway = league.gateways[0].clone();
    let mut referee = python(REFEREE, &[&gateway, "strict", "--style", "push"]);
    let agents = vec![
        python(AGENT, &[&gateway, "message_type", "alpha"]),
        python(AGENT, &[&gateway, "sloppy", "charlie"]),
    ];
    let (output, workdir) = league.finish_with_results().await;
    let summaries = summaries(agents).await;
    checked_table(&output, 4, 3, &summaries);
    referee.start_kill().expect("stop the referee");
    let _ = referee.wait().await;

    let folders: Vec<PathBuf> = std::fs::read_dir(workdir.as_ref().join("results"))
        .expect("results/")
        .map(|entry| entry.expect("an entry").path())
        .collect();
    assert_eq!(folders.len(), 1, "{folders:?}");
    let folder = &folders[0];

    // Every match's transcript holds what the players answered the external referee.
    let (_, lines) = decided_match(folder);
    assert!(
        lines.iter().any(|line| {
            line["entry"]["message"]["direction"] == "DIRECTION_TO_PLAYER"
                && line["entry"]["message"]["message_type"] == "CHOOSE_PARITY_CALL"
        }),
        "{lines:?}"
    );
    let verified = verify(folder);
    let said = text(&verified.stdout);
    assert!(verified.status.success(), "{said}{}", text(&verified.stderr));
    assert!(
        said.contains("results follow from the players' choices and the drawn number"),
        "{said}"
    );

    // One choice changed, the checksums written again: the outcome no longer follows.
    let changed = copy(folder, "changed");
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
    league_report::manifest::write(&changed).expect("the checksums written again");
    let refused = verify(&changed);
    let stderr = text(&refused.stderr);
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    assert!(!refused.status.success(), "{}", text(&refused.stdout));
    assert!(
        stderr.contains(&format!("does not verify: transcripts/{name}")),
        "{stderr}"
    );
    std::fs::remove_dir_all(&changed).expect("removed");
}
