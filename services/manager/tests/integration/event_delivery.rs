//! Event delivery sends a new event straight to every player with nothing waiting, and writes its
//! delivery rows once: delivered for those it reached, waiting for the others, who get it after what
//! they already wait for, in order, once.

#![allow(clippy::unwrap_used)]

use std::collections::{BTreeSet, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use league_proto::v2::manager_service_client::ManagerServiceClient;
use league_proto::v2::player_service_server::{PlayerService, PlayerServiceServer};
use league_proto::v2::*;
use league_runtime::Credentials;
use league_runtime::grpc::GrpcChannel;
use tokio::net::TcpListener;
use tonic::transport::server::TcpIncoming;
use tonic::{Request, Response, Status};

use crate::support;

use support::*;

/// A player host that takes league events for every player but the refused ones, and keeps the
/// event ids each player took, in the order taken.
#[derive(Default)]
struct Host {
    refused: Mutex<HashSet<String>>,
    taken: Mutex<Vec<(String, String)>>,
}

struct Service(Arc<Host>);

#[tonic::async_trait]
impl PlayerService for Service {
    async fn invite_to_match(
        &self,
        _: Request<InviteToMatchRequest>,
    ) -> Result<Response<InviteToMatchResponse>, Status> {
        Err(Status::unimplemented("events only"))
    }
    async fn request_move(
        &self,
        _: Request<RequestMoveRequest>,
    ) -> Result<Response<RequestMoveResponse>, Status> {
        Err(Status::unimplemented("events only"))
    }
    async fn notify_game_over(
        &self,
        _: Request<NotifyGameOverRequest>,
    ) -> Result<Response<NotifyGameOverResponse>, Status> {
        Err(Status::unimplemented("events only"))
    }
    async fn notify_game_error(
        &self,
        _: Request<NotifyGameErrorRequest>,
    ) -> Result<Response<NotifyGameErrorResponse>, Status> {
        Err(Status::unimplemented("events only"))
    }
    async fn notify_league_event(
        &self,
        _: Request<NotifyLeagueEventRequest>,
    ) -> Result<Response<NotifyLeagueEventResponse>, Status> {
        Err(Status::unimplemented("event delivery sends NotifyLeagueEvents"))
    }
    async fn notify_league_events(
        &self,
        request: Request<NotifyLeagueEventsRequest>,
    ) -> Result<Response<NotifyLeagueEventsResponse>, Status> {
        let refused = self.0.refused.lock().unwrap().clone();
        let mut taken = self.0.taken.lock().unwrap();
        let mut accepted = Vec::new();
        for delivery in request.into_inner().deliveries {
            let event_id = delivery.event.map(|event| event.event_id).unwrap_or_default();
            for player_id in delivery.player_ids {
                let ok = !refused.contains(&player_id);
                if ok {
                    taken.push((player_id, event_id.clone()));
                }
                accepted.push(ok);
            }
        }
        Ok(Response::new(NotifyLeagueEventsResponse { accepted }))
    }
}

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

/// Each delivery row of the league: (event, player, delivered, attempts).
async fn deliveries(manager: &TestManager) -> Vec<(i64, String, bool, i32)> {
    sqlx::query_as(
        "select event_id, player_id, delivered_at is not null, attempts from event_deliveries
         order by event_id, player_id",
    )
    .fetch_all(&manager.pool)
    .await
    .unwrap()
}

/// Polls `done` on the database every 20 ms, for at most 10 s.
async fn until<F: AsyncFn(&TestManager) -> bool>(manager: &TestManager, what: &str, done: F) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !done(manager).await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_player_with_events_waiting_gets_new_ones_after_them_and_the_others_at_once() {
    let host = Arc::new(Host::default());
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(PlayerServiceServer::new(Service(host.clone())))
            .serve_with_incoming(TcpIncoming::from(listener)),
    );

    let manager = spawn_manager(4).await;
    let mut client = manager.client();
    let mut players = Vec::new();
    for name in ["a", "b", "c"] {
        players.push(register_hosted(&mut client, name, &endpoint).await);
    }
    let late = players[1].agent_id.clone();
    host.refused.lock().unwrap().insert(late.clone());
    // The fourth player starts the league: round 1's announcement goes out, and `late` refuses it.
    players.push(register_hosted(&mut client, "d", &endpoint).await);
    until(&manager, "round 1's announcement sent to all four", async |m| {
        let rows = deliveries(m).await;
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
    host.refused.lock().unwrap().clear();

    let referee = register_referee(&mut client, "ref").await;
    let round = claim_round(&mut client, &referee).await;
    report_a_wins(&mut client, &referee, &round).await;
    until(&manager, "round 1's three events sent", async |m| {
        deliveries(m).await.len() == 16
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
                "event {event_id} reached {player_id} at once, and its row was written once"
            );
        }
    }

    sqlx::query("update event_deliveries set next_attempt_at = now() where player_id = $1")
        .bind(&late)
        .execute(&manager.pool)
        .await
        .unwrap();
    until(&manager, "every delivery made", async |m| {
        deliveries(m).await.iter().all(|(_, _, delivered, _)| *delivered)
    })
    .await;
    let events: BTreeSet<i64> = rows.iter().map(|row| row.0).collect();
    let expected: Vec<String> = events.iter().map(|id| format!("test_league/{id}")).collect();
    let taken = host.taken.lock().unwrap().clone();
    for player in &players {
        let mine: Vec<String> = (taken.iter())
            .filter(|(player_id, _)| *player_id == player.agent_id)
            .map(|(_, event_id)| event_id.clone())
            .collect();
        assert_eq!(mine, expected, "{}: each event once, in order", player.agent_id);
    }
}
