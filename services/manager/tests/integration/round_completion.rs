//! Completing a round after its last result, exactly once: when a round's results arrive all at once,
//! and when the manager stopped between recording the last result and completing the round.

#![allow(clippy::unwrap_used)]

use crate::support;

use league_manager::{ManagerApp, ManagerConfig};
use league_proto::v2::*;
use support::*;

async fn round_status(manager: &TestManager, round_id: i32) -> String {
    let (status,): (String,) = sqlx::query_as("select status from rounds where round_id = $1")
        .bind(round_id)
        .fetch_one(&manager.pool)
        .await
        .unwrap();
    status
}

/// Per kind of league event, how many notifications were queued: each event once for every player
/// of its league.
async fn queued_events(manager: &TestManager) -> Vec<(String, i64)> {
    sqlx::query_as(
        "select e.kind, count(*) from league_events e join league_players p using (league_id)
         group by e.kind order by e.kind",
    )
    .fetch_all(&manager.pool)
    .await
    .unwrap()
}

/// Records `assignment`'s result as the report's transaction would, but without the check that
/// follows it: the state a manager leaves when it stops between the two.
async fn record_without_check(manager: &TestManager, assignment: &MatchAssignment) {
    let scheduled = assignment.r#match.as_ref().unwrap();
    let result = a_wins(assignment);
    sqlx::query(
        "update matches set status = 'finished', result_status = 'win', winner_player_id = $2,
             result = $3, finished_at = clock_timestamp()
         where match_id = $1",
    )
    .bind(&scheduled.match_id)
    .bind(&scheduled.player_a_id)
    .bind(prost::Message::encode_to_vec(&result))
    .execute(&manager.pool)
    .await
    .unwrap();
}

/// A second manager on `manager`'s database, as after a restart: it completes the rounds left final
/// as it starts.
async fn second_manager(manager: &TestManager) -> ManagerApp {
    let config = ManagerConfig {
        listen_addr: "127.0.0.1:0".parse().unwrap(),
        database_url: Some(manager.database_url.clone()),
        db_max_connections: 2,
        league_id: String::new(),
        ..ManagerConfig::default()
    };
    ManagerApp::build(&config).await.expect("the manager builds")
}

#[tokio::test]
async fn a_round_whose_results_arrive_together_is_completed_once() {
    let manager = spawn_manager(8).await;
    let mut client = manager.client();
    let referee = players_and_referee(&mut client, &["a", "b", "c", "d", "e", "f", "g", "h"]).await;
    for round_id in 1..=7 {
        let assignments = claim_round(&mut client, &referee).await;
        assert_eq!(assignments.len(), 4, "round {round_id} is released whole");
        let reports = assignments.iter().map(|assignment| {
            let mut client = client.clone();
            let request = referee.request(report_of(assignment, a_wins(assignment)));
            async move { client.report_match_result(request).await.unwrap().into_inner() }
        });
        let answers = futures::future::join_all(reports).await;
        assert!(answers.iter().all(|answer| !answer.duplicate));
        assert_eq!(round_status(&manager, round_id).await, "completed");
    }
    assert!(claim_round(&mut client, &referee).await.is_empty());
    // Per player: 7 announcements, 7 completions, 7 standings updates, 1 league completion.
    let expected = [
        ("league_completed", 8),
        ("round_announcement", 56),
        ("round_completed", 56),
        ("standings_update", 56),
    ];
    assert_eq!(
        queued_events(&manager).await,
        expected.map(|(kind, n)| (kind.to_owned(), n))
    );
}

#[tokio::test]
async fn a_repeated_report_completes_a_round_its_first_report_left_final() {
    let manager = spawn_manager(4).await;
    let mut client = manager.client();
    let referee = players_and_referee(&mut client, &["a", "b", "c", "d"]).await;
    let assignments = claim_round(&mut client, &referee).await;
    assert_eq!(assignments.len(), 2);
    report_a_win(&mut client, &referee, &assignments[0])
        .await
        .unwrap();
    record_without_check(&manager, &assignments[1]).await;
    assert_eq!(
        round_status(&manager, 1).await,
        "released",
        "nothing checked the round yet"
    );
    assert!(
        claim_round(&mut client, &referee).await.is_empty(),
        "round 2 waits"
    );

    // The referee never got its answer, so it reports again.
    let again = report_a_win(&mut client, &referee, &assignments[1])
        .await
        .unwrap();
    assert!(again.duplicate);
    assert_eq!(round_status(&manager, 1).await, "completed");
    assert_eq!(
        claim_round(&mut client, &referee).await.len(),
        2,
        "round 2 is released"
    );
    let completions: Vec<(String, i64)> = queued_events(&manager)
        .await
        .into_iter()
        .filter(|(kind, _)| kind == "round_completed")
        .collect();
    assert_eq!(completions, vec![("round_completed".to_owned(), 4)]);
}

#[tokio::test]
async fn a_manager_starting_completes_the_rounds_left_final() {
    let manager = spawn_manager(4).await;
    let mut client = manager.client();
    let referee = players_and_referee(&mut client, &["a", "b", "c", "d"]).await;
    let assignments = claim_round(&mut client, &referee).await;
    for assignment in &assignments {
        record_without_check(&manager, assignment).await;
    }
    assert_eq!(round_status(&manager, 1).await, "released");

    // A second manager on the same database, as after a restart.
    let restarted = second_manager(&manager).await;
    assert_eq!(round_status(&manager, 1).await, "completed");
    assert_eq!(round_status(&manager, 2).await, "released");
    drop(restarted);
    assert_eq!(claim_round(&mut client, &referee).await.len(), 2);
}

/// A result of `assignment` of one of four kinds: A wins, B wins, a draw, B's technical loss.
fn result_of_kind(assignment: &MatchAssignment, kind: usize) -> MatchResult {
    let scheduled = assignment.r#match.as_ref().unwrap();
    let (a, b) = (scheduled.player_a_id.clone(), scheduled.player_b_id.clone());
    let score = |player_id: &str, points| PlayerScore {
        player_id: player_id.to_owned(),
        points,
    };
    let (status, winner, points, at_fault) = match kind % 4 {
        0 => (ResultStatus::Win, a.clone(), (3, 0), vec![]),
        1 => (ResultStatus::Win, b.clone(), (0, 3), vec![]),
        2 => (ResultStatus::Draw, String::new(), (1, 1), vec![]),
        _ => (ResultStatus::TechnicalLoss, a.clone(), (3, 0), vec![b.clone()]),
    };
    MatchResult {
        match_id: scheduled.match_id.clone(),
        status: status as i32,
        winner_player_id: winner,
        scores: vec![score(&a, points.0), score(&b, points.1)],
        at_fault_player_ids: at_fault,
        reason: "test".into(),
        ..MatchResult::default()
    }
}

/// The manager keeps each league's table between rounds instead of reading it from the database
/// (league_manager::league::kept_table). Every LEAGUE_STANDINGS_UPDATE must still be the table of the
/// results so far: when the kept table is added to round after round, when a manager that has just
/// started completes a round (no table kept), and when a round was completed by another manager, so
/// that the table this one kept is a round behind.
#[tokio::test]
async fn every_standings_update_is_the_table_of_the_results_so_far() {
    let manager = spawn_manager(6).await;
    let mut client = manager.client();
    let referee = players_and_referee(&mut client, &["a", "b", "c", "d", "e", "f"]).await;
    for round_id in 1..=5_usize {
        let assignments = claim_round(&mut client, &referee).await;
        assert_eq!(assignments.len(), 3, "round {round_id}");
        for (number, assignment) in assignments.iter().enumerate() {
            if round_id == 3 && number == 2 {
                // Round 3's last result is recorded without its check, and a second manager on the
                // same database completes the round as it starts.
                record_without_check(&manager, assignment).await;
                drop(second_manager(&manager).await);
                assert_eq!(round_status(&manager, 3).await, "completed");
                continue;
            }
            let result = result_of_kind(assignment, round_id + number);
            client
                .report_match_result(referee.request(report_of(assignment, result)))
                .await
                .unwrap();
        }
    }

    standings_updates_are_the_tables_of_the_results(&manager, &test_league(), 5).await;
}

/// Checks that `league_id` queued one LEAGUE_STANDINGS_UPDATE for each of its `rounds` rounds, in
/// order, each the table of every result through its round (computed afresh from the database's
/// results); returns the last.
async fn standings_updates_are_the_tables_of_the_results(
    manager: &TestManager,
    league_id: &league_domain::LeagueId,
    rounds: usize,
) -> Vec<StandingRow> {
    let updates: Vec<(Vec<u8>,)> = sqlx::query_as(
        "select payload from league_events where league_id = $1 and kind = 'standings_update'
         order by event_id",
    )
    .bind(league_id.as_str())
    .fetch_all(&manager.pool)
    .await
    .unwrap();
    assert_eq!(updates.len(), rounds, "one update a round");
    let mut conn = manager.pool.acquire().await.unwrap();
    let results = league_manager::league::table::LeagueResults::load(&mut conn, league_id)
        .await
        .unwrap();
    let mut last = Vec::new();
    for (round_id, (payload,)) in (1..).zip(updates) {
        let event = <NotifyLeagueEventRequest as prost::Message>::decode(payload.as_slice()).unwrap();
        let Some(notify_league_event_request::Event::StandingsUpdate(update)) = event.event else {
            panic!("round {round_id}: not a standings update");
        };
        assert_eq!(update.round_id, round_id);
        assert_eq!(
            update.standings,
            results.after(round_id).unwrap(),
            "round {round_id}"
        );
        last = update.standings;
    }
    last
}

/// A double round-robin of two players, each winning once: level on points, and level on head-to-head
/// too when both meetings count (3 points each), so the player id decides. The table kept between
/// rounds once kept one outcome a pair, the second meeting in place of the first, and ranked round 2's
/// winner above by head-to-head; every standings update must be the table of all the results so far.
#[tokio::test]
async fn a_double_round_robin_s_standings_count_both_meetings_of_a_pair() {
    let manager = spawn_manager(0).await;
    let mut client = manager.client();
    client
        .create_league(manager.operator(CreateLeagueRequest {
            league_id: "twice".into(),
            game_type: "even_odd".into(),
            cycles: 2,
            ..CreateLeagueRequest::default()
        }))
        .await
        .unwrap();
    for name in ["a", "b"] {
        client
            .register_player(RegisterPlayerRequest {
                meta: Some(meta(name)),
                league_id: "twice".into(),
            })
            .await
            .unwrap();
    }
    let referee = register_referee(&mut client, "ref").await;
    let started = client
        .start_league(manager.operator(StartLeagueRequest {
            league_id: "twice".into(),
        }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(started.total_rounds, 2, "one round a cycle");
    let mut winners = Vec::new();
    for round_id in 1..=2 {
        let assignments = claim_round(&mut client, &referee).await;
        assert_eq!(assignments.len(), 1, "round {round_id}");
        // Player A wins each time; the seats are swapped in the second cycle.
        winners.push(assignments[0].r#match.as_ref().unwrap().player_a_id.clone());
        report_a_win(&mut client, &referee, &assignments[0])
            .await
            .unwrap();
    }
    assert_ne!(winners[0], winners[1], "each player won once");

    let league = league_domain::LeagueId::parse("twice").unwrap();
    let last = standings_updates_are_the_tables_of_the_results(&manager, &league, 2).await;
    let first = winners.iter().min().unwrap();
    assert_eq!(
        &last[0].player_id, first,
        "level on everything: the lower id first"
    );
    assert_eq!(last[0].above_next_by(), TieBreak::PlayerId, "{last:?}");
}

/// A manager whose league of four players (none reachable: every delivery waits) has completed round 1,
/// queueing its events.
/// Waits until no fan-out is in flight. `fan_out` skips the events another caller has locked (the
/// manager's own event delivery, here), so a call can return before those events' rows are committed:
/// locking every event waits for that caller's commit.
async fn fan_outs_committed(manager: &TestManager) {
    sqlx::query("select event_id from league_events for update")
        .fetch_all(&manager.pool)
        .await
        .unwrap();
}

async fn round_one_completed() -> TestManager {
    let manager = spawn_manager(4).await;
    let mut client = manager.client();
    let referee = players_and_referee(&mut client, &["a", "b", "c", "d"]).await;
    let assignments = claim_round(&mut client, &referee).await;
    report_a_wins(&mut client, &referee, &assignments).await;
    assert_eq!(round_status(&manager, 1).await, "completed");
    manager
}

/// A round's completion queues its events without their delivery rows; fanning them out with nobody
/// reached writes one row, waiting, per event and player of the league, once, whoever fans out and
/// however often.
#[tokio::test]
async fn queued_events_are_fanned_out_once_to_every_player() {
    let manager = round_one_completed().await;
    // Three callers on every event, alongside the manager's own event delivery, which fans out the
    // events it sends (its players cannot be reached here: every row waits).
    let (event_ids,): (Vec<i64>,) = sqlx::query_as("select array_agg(event_id) from league_events")
        .fetch_one(&manager.pool)
        .await
        .unwrap();
    let fan_outs = (0..3).map(|_| async {
        let mut conn = manager.pool.acquire().await.unwrap();
        league_manager::league::events::fan_out(&mut conn, &event_ids, &Default::default())
            .await
            .unwrap();
    });
    futures::future::join_all(fan_outs).await;
    fan_outs_committed(&manager).await;

    let (events, unfanned, rows, distinct_rows): (i64, i64, i64, i64) = sqlx::query_as(
        "select (select count(*) from league_events), (select count(*) from league_events where not fanned_out),
                (select count(*) from event_deliveries),
                (select count(*) from (select distinct event_id, player_id from event_deliveries) d)",
    )
    .fetch_one(&manager.pool)
    .await
    .unwrap();
    // Round 1's announcement at the start; its completion, table and round 2's announcement after it.
    assert_eq!((events, unfanned), (4, 0));
    assert_eq!(rows, events * 4, "a row per event and player");
    assert_eq!(distinct_rows, rows, "none twice");
}

/// Event delivery fans out the events it has just sent with the pairs it reached: those get no row
/// (services/manager/tests/integration/event_delivery.rs), every other player a row, waiting, once. When
/// another caller fanned an event out first, the sent pairs' waiting rows are found and marked.
#[tokio::test]
async fn a_fan_out_marks_the_pairs_sent_of_events_fanned_out_before() {
    let manager = round_one_completed().await;
    let (event_ids, players): (Vec<i64>, Vec<String>) = sqlx::query_as(
        "select (select array_agg(event_id order by event_id) from league_events),
                (select array_agg(player_id order by player_id) from league_players)",
    )
    .fetch_one(&manager.pool)
    .await
    .unwrap();
    assert_eq!((event_ids.len(), players.len()), (4, 4));
    let rows = async || -> Vec<(i64, String, bool)> {
        sqlx::query_as(
            "select event_id, player_id, delivered_at is not null from event_deliveries
             order by event_id, player_id",
        )
        .fetch_all(&manager.pool)
        .await
        .unwrap()
    };
    let expected = |reached: usize| -> Vec<(i64, String, bool)> {
        event_ids
            .iter()
            .flat_map(|event_id| {
                players
                    .iter()
                    .enumerate()
                    .map(move |(n, player)| (*event_id, player.clone(), n < reached))
            })
            .collect()
    };
    // Fanned out with nobody reached, by this call or by the manager's own event delivery, which
    // cannot reach anyone here.
    let mut conn = manager.pool.acquire().await.unwrap();
    league_manager::league::events::fan_out(&mut conn, &event_ids, &Default::default())
        .await
        .unwrap();
    fan_outs_committed(&manager).await;
    assert_eq!(rows().await, expected(0), "every row waiting, once");
    // Then the first two players turn out to have been reached.
    let mut sent = league_manager::league::events::DeliveredPairs::default();
    for event_id in &event_ids {
        for player in &players[..2] {
            sent.events.push(*event_id);
            sent.players.push(player.clone());
        }
    }
    let fanned = league_manager::league::events::fan_out(&mut conn, &event_ids, &sent)
        .await
        .unwrap();
    assert_eq!(fanned, 0);
    assert_eq!(rows().await, expected(2), "the sent pairs marked, nothing added");
}
