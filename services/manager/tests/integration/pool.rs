//! The manager on its smallest pool. The connections it holds for good (two LISTEN connections and the
//! event-delivery lock) come from a pool of their own: when they came from the working pool, they took
//! three of its connections for good, and a manager given two had none left to claim or record with.

#![allow(clippy::unwrap_used)]

use crate::support::*;

#[tokio::test]
async fn a_manager_with_two_connections_plays_a_whole_league() {
    let manager = league_testkit::spawn_manager("league_test", "test_league", |config| {
        config.auto_start_players = 4;
        config.db_max_connections = 2;
    })
    .await;
    let mut client = manager.client();
    let referee = players_and_referee(&mut client, &["a", "b", "c", "d"]).await;
    for round_id in 1..=3 {
        let assignments = claim_round(&mut client, &referee).await;
        assert_eq!(assignments.len(), 2, "round {round_id} is released whole");
        report_a_wins(&mut client, &referee, &assignments).await;
    }
    let (status,): (String,) = sqlx::query_as("select status from leagues where league_id = 'test_league'")
        .fetch_one(&manager.pool)
        .await
        .unwrap();
    assert_eq!(status, "completed");
}

/// The result writer's connection plans each statement once, at its first execution.
#[tokio::test]
async fn the_result_writer_plans_each_statement_once() {
    let manager = spawn_manager(0).await;
    let writer = league_manager::db::connect_writer(&manager.pool);
    let (mode,): (String,) = sqlx::query_as("show plan_cache_mode")
        .fetch_one(&writer)
        .await
        .unwrap();
    assert_eq!(mode, "force_generic_plan");
    let (working,): (String,) = sqlx::query_as("show plan_cache_mode")
        .fetch_one(&manager.pool)
        .await
        .unwrap();
    assert_eq!(working, "auto", "the working pool plans as Postgres chooses");
}

/// A league's start analyzes the tables its schedule filled (`league::start::analyze_schedule`): the
/// result writer plans each statement once, and a plan made while the planner knew nothing of
/// `matches` but its size on disk read every match for each batch of results.
#[tokio::test]
async fn a_league_s_start_analyzes_the_tables_of_its_schedule() {
    let manager = spawn_manager(4).await;
    let mut client = manager.client();
    for name in ["a", "b", "c", "d"] {
        register_player(&mut client, name).await; // the fourth starts the league: 3 rounds, 6 matches
    }
    let analyzed: Vec<(String, f32)> = sqlx::query_as(
        "select relname::text, reltuples from pg_class
         where relname in ('matches', 'rounds', 'standings') order by relname",
    )
    .fetch_all(&manager.pool)
    .await
    .unwrap();
    let expected =
        [("matches", 6.0), ("rounds", 3.0), ("standings", 4.0)].map(|(table, rows)| (table.to_owned(), rows));
    assert_eq!(analyzed, expected, "rows as the planner knows them");
}
