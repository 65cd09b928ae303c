//! How a finished match's result and transcript, the league's events and agents' contact keys are
//! stored.

#![allow(clippy::unwrap_used)]

use crate::support;

use support::*;

/// Whether this Postgres was built with lz4 (said on stderr when it was not: nothing to check then).
async fn lz4_built_in(pool: &sqlx::PgPool) -> bool {
    let (built_in,): (bool,) = sqlx::query_as(
        "select 'lz4' = any(enumvals) from pg_settings where name = 'default_toast_compression'",
    )
    .fetch_one(pool)
    .await
    .unwrap();
    if !built_in {
        eprintln!("this Postgres has no lz4; nothing to check");
    }
    built_in
}

/// Large results and transcripts are compressed with lz4, which takes about a third less of Postgres's
/// time than pglz where results are recorded, on the path between two rounds
/// (migrations/20261126000005_results_compressed_with_lz4.sql). Only a Postgres built without lz4
/// keeps pglz.
#[tokio::test]
async fn a_large_transcript_is_compressed_with_lz4() {
    let manager = spawn_manager(4).await;
    if !lz4_built_in(&manager.pool).await {
        return;
    }
    let mut client = manager.client();
    for name in ["a", "b", "c", "d"] {
        register_player(&mut client, name).await;
    }
    // A transcript large enough to be compressed (a long match), in the one form it is kept in.
    sqlx::query(
        "update matches
         set transcript_json = (select jsonb_agg(jsonb_build_object('message_type', 'GAME_INVITATION', 'seq', n))
                                from generate_series(1, 200) n)::text
         where match_id = (select min(match_id) from matches)",
    )
    .execute(&manager.pool)
    .await
    .unwrap();
    // As stored: the values a statement returns are not compressed yet.
    let (json,): (Option<String>,) = sqlx::query_as(
        "select pg_column_compression(transcript_json)
         from matches where match_id = (select min(match_id) from matches)",
    )
    .fetch_one(&manager.pool)
    .await
    .unwrap();
    assert_eq!(json.as_deref(), Some("lz4"));
}

/// A round's large events (a 500-player table is about 20 KB) are compressed with lz4 too
/// (migrations/20261126000006_events_compressed_with_lz4.sql).
#[tokio::test]
async fn a_large_event_is_compressed_with_lz4() {
    let manager = spawn_manager(4).await;
    if !lz4_built_in(&manager.pool).await {
        return;
    }
    let mut client = manager.client();
    register_player(&mut client, "a").await;
    sqlx::query(
        "insert into league_events (league_id, kind, round_id, payload)
         select league_id, 'standings_update', 1, convert_to(repeat('P001 bot-random 3 1 0 ', 1000), 'UTF8')
         from leagues limit 1",
    )
    .execute(&manager.pool)
    .await
    .unwrap();
    // As stored: the values a statement returns are not compressed yet.
    let (stored,): (Option<String>,) = sqlx::query_as(
        "select pg_column_compression(payload) from league_events
         where kind = 'standings_update' and octet_length(payload) > 10000",
    )
    .fetch_one(&manager.pool)
    .await
    .unwrap();
    assert_eq!(stored.as_deref(), Some("lz4"));
}

/// A fresh database migrated up to migration `version` (not including it), holding a league of even_odd
/// in `status` and two registered players, P01 and P02: for a test of what that migration does to what
/// was stored before it, which then runs the rest (`league_manager::db::MIGRATOR`).
async fn migrated_before(
    version: i64,
    league_id: &str,
    status: &str,
) -> (league_testkit::database::TestDatabase, sqlx::PgPool) {
    use secrecy::ExposeSecret;
    let db = league_testkit::database::TestDatabase::create("league_test").await;
    let pool = sqlx::PgPool::connect(db.url().expose_secret()).await.unwrap();
    let migrator = &league_manager::db::MIGRATOR;
    let before = sqlx::migrate::Migrator {
        migrations: migrator
            .migrations
            .iter()
            .filter(|migration| migration.version < version)
            .cloned()
            .collect(),
        ignore_missing: migrator.ignore_missing,
        locking: migrator.locking,
        no_tx: migrator.no_tx,
    };
    assert!(before.migrations.len() < migrator.migrations.len());
    before.run(&pool).await.unwrap();
    sqlx::query(
        "insert into leagues (league_id, game_type, status, join_timeout_ms, move_timeout_ms,
                              game_over_timeout_ms, max_attempts, retry_delay_ms, lease_duration_ms)
         values ($1, 'even_odd', $2, 1000, 1000, 1000, 3, 100, 30000)",
    )
    .bind(league_id)
    .bind(status)
    .execute(&pool)
    .await
    .unwrap();
    sqlx::query(
        "insert into agents (agent_id, kind, agent_number, display_name, version, game_types,
                             contact_endpoint, service_endpoint, protocol_version, token_hash)
         select id, 'player', n, id, '1.0.0', '{even_odd}', 'http://127.0.0.1:9/' || id, 'http://127.0.0.1:9',
                'league.v2', convert_to(id, 'UTF8')
         from (values ('P01', 1), ('P02', 2)) as a(id, n)",
    )
    .execute(&pool)
    .await
    .unwrap();
    (db, pool)
}

/// A database whose matches were recorded while the transcript's JSON was jsonb
/// (migrations/20261127000001_transcript_json_as_text.sql) keeps, for each of them, the times the
/// schedule and `match_results` show (now in columns of their own) and every transcript entry.
#[tokio::test]
async fn matches_recorded_before_the_transcript_became_text_keep_their_times_and_entries() {
    let (db, pool) = migrated_before(20261127000001, "old_league", "completed").await;
    for statement in [
        "insert into rounds (league_id, round_id, status) values ('old_league', 1, 'completed')",
        r#"insert into matches (league_id, match_id, round_id, match_number, player_a_id, player_b_id,
                               status, result_status, winner_player_id, result_json, transcript_json)
         values ('old_league', 'R1M1', 1, 1, 'P01', 'P02', 'finished', 'win', 'P01',
                 '{"scores": [{"player_id": "P01", "points": 3}, {"player_id": "P02", "points": 0}]}',
                 '{"entries": [
                     {"at": "2026-11-20T10:00:00.000250Z",
                      "message": {"message_type": "GAME_INVITATION", "player_id": "P01", "error_code": ""}},
                     {"at": "2026-11-20T10:00:01.500250Z",
                      "state_transition": {"to": "MATCH_STATE_FINISHED"}}]}')"#,
    ] {
        sqlx::query(statement).execute(&pool).await.unwrap();
    }
    league_manager::db::MIGRATOR.run(&pool).await.unwrap();

    let (started, ended, duration_ms): (String, String, i64) = sqlx::query_as(
        "select to_char(started_at at time zone 'UTC', 'HH24:MI:SS.US'),
                to_char(ended_at at time zone 'UTC', 'HH24:MI:SS.US'), duration_ms
         from match_results where match_id = 'R1M1'",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(
        (started.as_str(), ended.as_str(), duration_ms),
        ("10:00:00.000250", "10:00:01.500250", 1500)
    );
    let entries: Vec<(i64, String, Option<String>)> = sqlx::query_as(
        "select seq, kind, coalesce(message_type, to_state) from transcript_entries
         where match_id = 'R1M1' order by seq",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(
        entries,
        [
            (1, "message".to_owned(), Some("GAME_INVITATION".to_owned())),
            (
                2,
                "state_transition".to_owned(),
                Some("MATCH_STATE_FINISHED".to_owned())
            ),
        ]
    );
    pool.close().await;
    db.drop_now().await;
}

/// A transcript is kept once (migrations/20261206400001_transcript_stored_once.sql): a match recorded
/// in both forms keeps its JSON only; one recorded before results were kept as JSON keeps its protobuf,
/// its only copy.
#[tokio::test]
async fn a_transcript_kept_twice_is_kept_once_and_one_without_json_keeps_its_bytes() {
    let (db, pool) = migrated_before(20261206400001, "old_league", "completed").await;
    for statement in [
        "insert into rounds (league_id, round_id, status) values ('old_league', 1, 'completed')",
        r#"insert into matches (league_id, match_id, round_id, match_number, player_a_id, player_b_id,
                               status, transcript, transcript_json)
         values ('old_league', 'R1M1', 1, 1, 'P01', 'P02', 'finished', '\x0a0452314d31',
                 '{"match_id": "R1M1", "entries": []}'),
                ('old_league', 'R1M2', 1, 2, 'P02', 'P01', 'finished', '\x0a0452314d32', null)"#,
    ] {
        sqlx::query(statement).execute(&pool).await.unwrap();
    }
    league_manager::db::MIGRATOR.run(&pool).await.unwrap();
    let kept: Vec<(String, bool, bool)> = sqlx::query_as(
        "select match_id, transcript is not null, transcript_json is not null from matches
         order by match_id",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(
        kept,
        [("R1M1".to_owned(), false, true), ("R1M2".to_owned(), true, false)]
    );
    pool.close().await;
    db.drop_now().await;
}

/// A match's row runs no foreign-key check (migrations/20261206400002_matches_without_foreign_keys.sql):
/// each was a query of its own, three for every scheduled match and one for every claim, and locked the
/// players', referee's and round's rows from inside the writes of matches.
#[tokio::test]
async fn a_match_row_runs_no_foreign_key_check() {
    let manager = spawn_manager(4).await;
    let (checks,): (i64,) = sqlx::query_as(
        "select count(*) from pg_constraint where conrelid = 'matches'::regclass and contype = 'f'",
    )
    .fetch_one(&manager.pool)
    .await
    .unwrap();
    assert_eq!(checks, 0);
}

/// Every (event, player) pair reads as what it is in `every_event_delivery`, with or without a
/// delivery row (migrations/20261127000002_deliveries_written_for_the_missed.sql): an event fanned out
/// before rows were written only for the players not reached has a row for each player, read as it
/// is; a fanned-out event's player without a row got it when the event was fanned out, at the first
/// attempt; one with a row waits, as its row says; an event not fanned out yet waits for everyone.
#[tokio::test]
async fn every_event_delivery_reads_each_pair_with_or_without_its_row() {
    let (db, pool) = migrated_before(20261127000002, "a_league", "running").await;
    for statement in [
        "insert into league_players (league_id, player_id) values ('a_league', 'P01'), ('a_league', 'P02')",
        // Fanned out before: a row for each player, the second delivered at its second attempt.
        "insert into league_events (event_id, league_id, kind, round_id, payload, fanned_out)
         values (1, 'a_league', 'round_announcement', 1, '\\x00', true)",
        "insert into event_deliveries (event_id, player_id, delivered_at, attempts)
         values (1, 'P01', '2026-11-20T10:00:00Z', 1), (1, 'P02', '2026-11-20T10:00:02Z', 2)",
    ] {
        sqlx::query(statement).execute(&pool).await.unwrap();
    }
    league_manager::db::MIGRATOR.run(&pool).await.unwrap();
    for statement in [
        // Fanned out since: P01 reached (no row), P02 not (a row, waiting after two failures).
        "insert into league_events (event_id, league_id, kind, round_id, payload, fanned_out, fanned_out_at)
         values (2, 'a_league', 'round_completed', 1, '\\x00', true, '2026-11-20T10:00:05Z')",
        "insert into event_deliveries (event_id, player_id, attempts, last_error)
         values (2, 'P02', 2, 'unreachable')",
        // Not fanned out yet.
        "insert into league_events (event_id, league_id, kind, round_id, payload)
         values (3, 'a_league', 'standings_update', 1, '\\x00')",
    ] {
        sqlx::query(statement).execute(&pool).await.unwrap();
    }

    /// (event, player, delivered at, attempts, last error).
    type Pair = (i64, String, Option<String>, i32, Option<String>);
    let pairs: Vec<Pair> = sqlx::query_as(
        "select event_id, player_id, to_char(delivered_at at time zone 'UTC', 'HH24:MI:SS'), attempts,
                last_error
         from every_event_delivery where league_id = 'a_league' order by event_id, player_id",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    let pair = |event: i64, player: &str, at: Option<&str>, attempts: i32, error: Option<&str>| -> Pair {
        (
            event,
            player.to_owned(),
            at.map(str::to_owned),
            attempts,
            error.map(str::to_owned),
        )
    };
    assert_eq!(
        pairs,
        [
            pair(1, "P01", Some("10:00:00"), 1, None),
            pair(1, "P02", Some("10:00:02"), 2, None),
            pair(2, "P01", Some("10:00:05"), 1, None),
            pair(2, "P02", None, 2, Some("unreachable")),
            pair(3, "P01", None, 0, None),
            pair(3, "P02", None, 0, None),
        ]
    );
    pool.close().await;
    db.drop_now().await;
}

/// Agents registered before contact keys (migrations/20261206100001_contact_key.sql) get theirs when the
/// manager starts, in the order they registered: of two stored rows that reach one agent (the text
/// comparison let the second in), the first holds the key and the second none, and filling in again
/// changes nothing.
#[tokio::test]
async fn agents_of_before_get_their_contact_keys_the_first_of_two_clones_keeping_it() {
    let (db, pool) = migrated_before(20261206100001, "a_league", "running").await;
    sqlx::query(
        "insert into agents (agent_id, kind, agent_number, display_name, version, game_types,
                             contact_endpoint, service_endpoint, protocol_version, token_hash)
         values ('P03', 'player', 3, 'clone', '1.0.0', '{even_odd}', 'http://localhost:9/P01',
                 'http://127.0.0.1:9', 'league.v2', '\\x00')",
    )
    .execute(&pool)
    .await
    .unwrap();
    league_manager::db::MIGRATOR.run(&pool).await.unwrap();
    let keys = async || -> Vec<(String, Option<String>)> {
        sqlx::query_as("select agent_id, contact_key from agents order by agent_id")
            .fetch_all(&pool)
            .await
            .unwrap()
    };
    let expected = [
        ("P01".to_owned(), Some("http://loopback:9/p01".to_owned())),
        ("P02".to_owned(), Some("http://loopback:9/p02".to_owned())),
        ("P03".to_owned(), None),
    ];
    league_manager::league::contact_key::fill_in(&pool).await.unwrap();
    assert_eq!(keys().await, expected);
    league_manager::league::contact_key::fill_in(&pool).await.unwrap();
    assert_eq!(keys().await, expected);
    pool.close().await;
    db.drop_now().await;
}
