//! A player host that serves only league events (`NotifyLeagueEvents`), for the tests of event
//! delivery: it takes every event except those for the players it is told to refuse, and keeps every
//! call it got and, in order, the events each player took.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use league_proto::v2::player_service_server::{PlayerService, PlayerServiceServer};
use league_proto::v2::*;
use tokio::net::TcpListener;
use tonic::transport::server::TcpIncoming;
use tonic::{Request, Response, Status};

#[derive(Debug, Default)]
pub struct EventHost {
    refused: Mutex<HashSet<String>>,
    calls: Mutex<Vec<NotifyLeagueEventsRequest>>,
    taken: Mutex<Vec<(String, String)>>,
}

impl EventHost {
    /// A host serving on a free loopback port, for as long as the test runs; returns it and its
    /// endpoint (`http://` and the address).
    pub async fn serve() -> (Arc<Self>, String) {
        let host = Arc::new(Self::default());
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind a loopback port");
        let endpoint = format!("http://{}", listener.local_addr().expect("bound address"));
        tokio::spawn(
            tonic::transport::Server::builder()
                .add_service(PlayerServiceServer::new(Service(host.clone())))
                .serve_with_incoming(TcpIncoming::from(listener)),
        );
        (host, endpoint)
    }

    /// From now on, refuses every event for `player_id`.
    pub fn refuse(&self, player_id: &str) {
        self.refused.lock().expect("refused").insert(player_id.to_owned());
    }

    /// From now on, takes every event.
    pub fn take_all(&self) {
        self.refused.lock().expect("refused").clear();
    }

    /// Every call so far, in order.
    pub fn calls(&self) -> Vec<NotifyLeagueEventsRequest> {
        self.calls.lock().expect("calls").clone()
    }

    /// The event ids `player_id` took, in the order taken.
    pub fn taken_by(&self, player_id: &str) -> Vec<String> {
        (self.taken.lock().expect("taken").iter())
            .filter(|(player, _)| player == player_id)
            .map(|(_, event_id)| event_id.clone())
            .collect()
    }
}

struct Service(Arc<EventHost>);

crate::fake_service! {
    impl PlayerService for Service {
        async fn notify_league_events(
            &self,
            request: Request<NotifyLeagueEventsRequest>,
        ) -> Result<Response<NotifyLeagueEventsResponse>, Status> {
            let request = request.into_inner();
            let refused = self.0.refused.lock().expect("refused").clone();
            let mut taken = self.0.taken.lock().expect("taken");
            let mut accepted = Vec::new();
            for delivery in &request.deliveries {
                let event_id = delivery
                    .event
                    .as_ref()
                    .map(|event| event.event_id.clone())
                    .unwrap_or_default();
                for player_id in &delivery.player_ids {
                    let ok = !refused.contains(player_id);
                    if ok {
                        taken.push((player_id.clone(), event_id.clone()));
                    }
                    accepted.push(ok);
                }
            }
            self.0.calls.lock().expect("calls").push(request);
            Ok(Response::new(NotifyLeagueEventsResponse { accepted }))
        }
    }
    unimplemented {
        invite_to_match(InviteToMatchRequest) -> InviteToMatchResponse;
        request_move(RequestMoveRequest) -> RequestMoveResponse;
        notify_game_over(NotifyGameOverRequest) -> NotifyGameOverResponse;
        notify_game_error(NotifyGameErrorRequest) -> NotifyGameErrorResponse;
        // Event delivery sends NotifyLeagueEvents.
        notify_league_event(NotifyLeagueEventRequest) -> NotifyLeagueEventResponse;
    }
    unimplemented streams {
        match_calls(MatchCallsRequest) -> MatchCallsStream of MatchCallsResponse;
    }
}
