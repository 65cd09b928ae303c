//! Event delivery sends a new event straight to every player with nothing waiting, and writes its
//! delivery rows once: delivered for those it reached, waiting for the others, who get it after what
//! they already wait for, in order, once.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;
use std::time::Duration;

use league_proto::v2::manager_service_client::ManagerServiceClient;
use league_proto::v2::*;
use league_runtime::Credentials;
use league_runtime::grpc::GrpcChannel;
use league_testkit::{EventHost, observe};

use crate::support;

use support::*;

async fn register_hosted(
    client: &mut ManagerServiceClient<GrpcChannel>,
    name: &str,
    endpoint: &str,
) -> Credentials {
    let response = client
        .register_player(RegisterPlayerRequest {
            meta: Some(AgentMeta {
                service_endpoint: endpoint.to_owned(),
                ..meta(name)
            }),
            league_id: String::new(),
        })
        .await
        .unwrap()
        .into_inner();
    Credentials::new(response.player_id, response.auth_token)
}

/// Every delivery of the league, a row per event and player: (event, player, delivered, attempts).
async fn deliveries(manager: &TestManager) -> Vec<(i64, String, bool, i32)> {
    sqlx::query_as(
        "select event_id, player_id, delivered_at is not null, attempts from every_event_delivery
         order by event_id, player_id",
    )
    .fetch_all(&manager.pool)
    .await
    .unwrap()
}

/// Waits (at most 10 s) until every delivery row of the league says what `done` wants.
async fn until(manager: &TestManager, what: &str, done: impl Fn(&[(i64, String, bool, i32)]) -> bool) {
    observe(what, Duration::from_secs(10), async || {
        done(&deliveries(manager).await).then_some(())
    })
    .await;
}

#[tokio::test]
async fn a_player_with_events_waiting_gets_new_ones_after_them_and_the_others_at_once() {
    let (host, endpoint) = EventHost::serve().await;

    let manager = spawn_manager(4).await;
    let mut client = manager.client();
    let mut players = Vec::new();
    for name in ["a", "b", "c"] {
        players.push(register_hosted(&mut client, name, &endpoint).await);
    }
    let late = players[1].agent_id.clone();
    host.refuse(&late);
    // The fourth player starts the league: round 1's announcement goes out, and `late` refuses it.
    players.push(register_hosted(&mut client, "d", &endpoint).await);
    until(&manager, "round 1's announcement sent to all four", |rows| {
        rows.len() == 4
            && rows
                .iter()
                .all(|(_, _, delivered, attempts)| *delivered || *attempts > 0)
    })
    .await;
    // `late` can be reached again, but its announcement waits for a retry an hour away.
    sqlx::query(
        "update event_deliveries set next_attempt_at = now() + interval '1 hour' where player_id = $1",
    )
    .bind(&late)
    .execute(&manager.pool)
    .await
    .unwrap();
    host.take_all();

    let referee = register_referee(&mut client, "ref").await;
    let round = claim_round(&mut client, &referee).await;
    report_a_wins(&mut client, &referee, &round).await;
    until(&manager, "round 1's three events sent", |rows| {
        rows.len() == 16
            && rows
                .iter()
                .all(|(_, player, delivered, _)| *delivered || *player == late)
    })
    .await;
    let rows = deliveries(&manager).await;
    for (event_id, player_id, delivered, attempts) in &rows {
        if *player_id == late {
            assert!(
                !delivered,
                "event {event_id} waits behind {player_id}'s announcement"
            );
        } else {
            assert_eq!(
                (*delivered, *attempts),
                (true, 1),
                "event {event_id} reached {player_id} at once"
            );
        }
    }
    // Only what did not reach its player at once has a row of its own: `late`'s four events.
    let (stored,): (Vec<String>,) =
        sqlx::query_as("select array_agg(player_id order by event_id) from event_deliveries")
            .fetch_one(&manager.pool)
            .await
            .unwrap();
    assert_eq!(
        stored,
        vec![late.clone(); 4],
        "rows only for the player not reached"
    );

    sqlx::query("update event_deliveries set next_attempt_at = now() where player_id = $1")
        .bind(&late)
        .execute(&manager.pool)
        .await
        .unwrap();
    until(&manager, "every delivery made", |rows| {
        rows.iter().all(|(_, _, delivered, _)| *delivered)
    })
    .await;
    let events: BTreeSet<i64> = rows.iter().map(|row| row.0).collect();
    let expected: Vec<String> = events.iter().map(|id| format!("test_league/{id}")).collect();
    for player in &players {
        let mine = host.taken_by(&player.agent_id);
        assert_eq!(mine, expected, "{}: each event once, in order", player.agent_id);
    }
}
