//! How a finished match's result and transcript, and the league's events, are stored.

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
    // A transcript large enough to be compressed (a long match), in both forms a result keeps.
    sqlx::query(
        "update matches
         set transcript = convert_to(repeat('GAME_INVITATION CHOOSE_PARITY ', 200), 'UTF8'),
             transcript_json = (select jsonb_agg(jsonb_build_object('message_type', 'GAME_INVITATION', 'seq', n))
                                from generate_series(1, 200) n)
         where match_id = (select min(match_id) from matches)",
    )
    .execute(&manager.pool)
    .await
    .unwrap();
    // As stored: the values a statement returns are not compressed yet.
    let (json, bytes): (Option<String>, Option<String>) = sqlx::query_as(
        "select pg_column_compression(transcript_json), pg_column_compression(transcript)
         from matches where match_id = (select min(match_id) from matches)",
    )
    .fetch_one(&manager.pool)
    .await
    .unwrap();
    assert_eq!(json.as_deref(), Some("lz4"));
    assert_eq!(bytes.as_deref(), Some("lz4"));
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
