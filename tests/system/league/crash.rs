//! A referee dies in the middle of a match: its lease runs out, another referee claims the match again
//! and plays it from the start, and the league still ends with exactly one result per match and every
//! invariant intact.

use std::time::Duration;

use league_proto::v2::referee_service_client::RefereeServiceClient;
use league_proto::v2::{ListRunningMatchesRequest, MatchState};

use super::support::{Setup, check_all, finish, relaxed_timing, start_league};

/// Bound on waiting for the referee to be in the middle of a match.
const MID_MATCH_DEADLINE: Duration = Duration::from_secs(5);

/// Waits until the referee at `addr` runs a match of `player` that is collecting choices (the move
/// request to `player` is in flight); returns the referee's id and the match id.
///
/// The only place this suite polls (the test kit's `observe`, every 5 ms, for at most 5 s): the referee
/// is a separate service whose match progress offers no notification, only
/// `RefereeService.ListRunningMatches`.
async fn mid_match(addr: std::net::SocketAddr, player: &str) -> (String, String) {
    let channel = league_runtime::grpc::channel(&format!("http://{addr}")).expect("a referee channel");
    let referee = RefereeServiceClient::new(channel);
    let what = format!("a match of {player} collecting choices");
    league_testkit::observe(&what, MID_MATCH_DEADLINE, async || {
        let running = referee
            .clone()
            .list_running_matches(ListRunningMatchesRequest {})
            .await
            .expect("the referee lists its matches")
            .into_inner();
        let collecting = running.matches.iter().find(|running| {
            running.state() == MatchState::CollectingChoices
                && running
                    .r#match
                    .as_ref()
                    .is_some_and(|m| m.player_a_id == player || m.player_b_id == player)
        })?;
        let scheduled = collecting.r#match.as_ref().expect("a scheduled match");
        Some((running.referee_id.clone(), scheduled.match_id.clone()))
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_match_whose_referee_crashes_is_played_again_by_another() {
    // One referee, one match at a time; the late bot takes 400 ms per move (well inside the move
    // timeout), so each of its matches is in flight long enough to crash the referee in the middle.
    let mut league = start_league(Setup {
        players: 3,
        referees: 1,
        capacity: 1,
        strategies: "late:400,random,always_even",
        game: "even_odd",
        timing: league_domain::Timing {
            lease_duration: Duration::from_millis(500),
            ..relaxed_timing()
        },
    })
    .await;
    let late = league.bot("late:400");
    let (crashed_referee, crashed_match) = mid_match(league.referees[0].addr, &late).await;
    league.crash_referee(0).await;
    league.add_referee().await;

    let finished = finish(&mut league).await;
    let facts = check_all(&league, &finished).await;

    let m = facts.match_row(&crashed_match);
    assert_eq!(
        m.claims, 2,
        "{crashed_match}: claimed by the crashed referee, then by the new one"
    );
    assert_ne!(
        m.referee_id.as_deref(),
        Some(crashed_referee.as_str()),
        "{crashed_match}"
    );
    assert!(m.result_status.is_some(), "{crashed_match}: one result");
    for other in facts
        .matches
        .iter()
        .filter(|other| other.match_id != crashed_match)
    {
        assert_eq!(other.claims, 1, "{}", other.match_id);
    }
    // The result on record is the second run's: its transcript starts with the new referee.
    let transcript = m.transcript();
    let opening = transcript.entries.first().expect("a transcript");
    let Some(league_proto::v2::transcript_entry::Entry::StateTransition(opening)) = &opening.entry else {
        panic!("{crashed_match}: the transcript opens with a state transition")
    };
    let final_referee = m.referee_id.as_deref().expect("a referee");
    assert!(
        opening.reason.contains(final_referee) && !opening.reason.contains(&crashed_referee),
        "{crashed_match}: the recorded run is not {final_referee}'s: {}",
        opening.reason
    );
    league.cleanup().await;
}
