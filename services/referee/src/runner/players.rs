//! The four calls a referee makes on a player, as a trait the runner is generic over, and the gRPC
//! implementation that reaches each player's `PlayerService`.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};

use league_domain::Assignment;
use league_proto::v2::player_service_client::PlayerServiceClient;
use league_proto::v2::{
    AssignedPlayer, InviteToMatchRequest, InviteToMatchResponse, NotifyGameErrorRequest,
    NotifyGameErrorResponse, NotifyGameOverRequest, NotifyGameOverResponse, RequestMoveRequest,
    RequestMoveResponse,
};
use league_proto::{ErrorCode, error_code};
use league_runtime::grpc::GrpcChannel;
use tonic::Status;
use tonic::transport::Endpoint;

use crate::game::Seat;

/// The two players of a match as the runner talks to them. `seat` says which one; the request also
/// names the player (one player host serves many players).
///
/// The runner bounds every call with its own timeout and drops a call it no longer waits for, so an
/// implementation need not time out by itself.
pub trait Players: Sync {
    /// GAME_INVITATION, answered by GAME_JOIN_ACK.
    fn invite(
        &self,
        seat: Seat,
        request: InviteToMatchRequest,
    ) -> impl Future<Output = Result<InviteToMatchResponse, Status>> + Send;

    /// CHOOSE_PARITY_CALL / GAME_MOVE_CALL, answered by the move.
    fn request_move(
        &self,
        seat: Seat,
        request: RequestMoveRequest,
    ) -> impl Future<Output = Result<RequestMoveResponse, Status>> + Send;

    /// GAME_OVER.
    fn game_over(
        &self,
        seat: Seat,
        request: NotifyGameOverRequest,
    ) -> impl Future<Output = Result<NotifyGameOverResponse, Status>> + Send;

    /// GAME_ERROR.
    fn game_error(
        &self,
        seat: Seat,
        request: NotifyGameErrorRequest,
    ) -> impl Future<Output = Result<NotifyGameErrorResponse, Status>> + Send;
}

/// Channels to player hosts, one per endpoint, shared by every match a referee runs: one host serves
/// many players, and a channel multiplexes all their calls over one HTTP/2 connection. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct PlayerChannels {
    channels: Arc<Mutex<HashMap<String, GrpcChannel>>>,
}

impl PlayerChannels {
    pub fn new() -> PlayerChannels {
        PlayerChannels::default()
    }

    /// The channel to `endpoint`, created lazily (it connects on first use) and cached. An endpoint
    /// without a scheme is taken as `http://`. Must be called inside a tokio runtime.
    pub fn channel(&self, endpoint: &str) -> Result<GrpcChannel, tonic::transport::Error> {
        let url = if endpoint.contains("://") {
            endpoint.to_owned()
        } else {
            format!("http://{endpoint}")
        };
        let mut channels = self.channels.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(channel) = channels.get(&url) {
            return Ok(channel.clone());
        }
        let channel = GrpcChannel::from(
            Endpoint::from_shared(url.clone())?
                .tcp_nodelay(true)
                .connect_lazy(),
        );
        channels.insert(url, channel.clone());
        Ok(channel)
    }

    /// How many endpoints have a channel.
    pub fn len(&self) -> usize {
        self.channels.lock().unwrap_or_else(PoisonError::into_inner).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The players of one assignment, reached over gRPC at their `service_endpoint`s.
///
/// Calls carry no referee credentials: a player cannot check them, and the referee's token must not
/// reach players.
#[derive(Debug, Clone)]
pub struct GrpcPlayers {
    /// By seat index; an error when the player's endpoint is not a usable URL.
    clients: [Result<PlayerServiceClient<GrpcChannel>, String>; 2],
}

impl GrpcPlayers {
    /// Clients for both players of `assignment`, on channels from `channels`. Must be called inside a
    /// tokio runtime. A player whose endpoint is unusable fails every call with E009 (UNAVAILABLE).
    pub fn for_assignment(channels: &PlayerChannels, assignment: &Assignment) -> GrpcPlayers {
        let client = |player: &AssignedPlayer| {
            let endpoint = player.service_endpoint.as_str();
            channels
                .channel(endpoint)
                .map(PlayerServiceClient::new)
                .map_err(|error| format!("player endpoint {endpoint:?} is unusable: {error}"))
        };
        GrpcPlayers {
            clients: assignment.players.each_ref().map(client),
        }
    }

    fn client(&self, seat: Seat) -> Result<PlayerServiceClient<GrpcChannel>, Status> {
        self.clients[seat.index()]
            .clone()
            .map_err(|reason| error_code::status(ErrorCode::ConnectionError, reason))
    }
}

// Each call's future is boxed. A tonic call's future is a few kilobytes, and the runner wraps it in a
// timeout and a join inside its own futures: unboxed, every one of those moved it whole, 40 M of a
// referee's 305 M instructions in a 40-player league (callgrind, docs/benchmarks.md). Boxed, a move
// copies a pointer.
impl Players for GrpcPlayers {
    fn invite(
        &self,
        seat: Seat,
        request: InviteToMatchRequest,
    ) -> impl Future<Output = Result<InviteToMatchResponse, Status>> + Send {
        let client = self.client(seat);
        Box::pin(async move { Ok(client?.invite_to_match(request).await?.into_inner()) })
    }

    fn request_move(
        &self,
        seat: Seat,
        request: RequestMoveRequest,
    ) -> impl Future<Output = Result<RequestMoveResponse, Status>> + Send {
        let client = self.client(seat);
        Box::pin(async move { Ok(client?.request_move(request).await?.into_inner()) })
    }

    fn game_over(
        &self,
        seat: Seat,
        request: NotifyGameOverRequest,
    ) -> impl Future<Output = Result<NotifyGameOverResponse, Status>> + Send {
        let client = self.client(seat);
        Box::pin(async move { Ok(client?.notify_game_over(request).await?.into_inner()) })
    }

    fn game_error(
        &self,
        seat: Seat,
        request: NotifyGameErrorRequest,
    ) -> impl Future<Output = Result<NotifyGameErrorResponse, Status>> + Send {
        let client = self.client(seat);
        Box::pin(async move { Ok(client?.notify_game_error(request).await?.into_inner()) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn one_channel_per_endpoint() {
        let channels = PlayerChannels::new();
        assert!(channels.is_empty());
        channels.channel("http://127.0.0.1:1").expect("valid endpoint");
        channels
            .channel("127.0.0.1:1")
            .expect("same endpoint without a scheme");
        channels.channel("http://127.0.0.1:2").expect("valid endpoint");
        assert_eq!(channels.len(), 2);
    }

    #[tokio::test]
    async fn a_call_is_a_pointer_to_move() {
        // The futures the runner moves around are boxes (see `impl Players for GrpcPlayers`).
        let players =
            GrpcPlayers::for_assignment(&PlayerChannels::new(), &assignment_with("http://127.0.0.1:1"));
        let sizes = [
            std::mem::size_of_val(&players.invite(Seat::A, InviteToMatchRequest::default())),
            std::mem::size_of_val(&players.request_move(Seat::A, RequestMoveRequest::default())),
            std::mem::size_of_val(&players.game_over(Seat::A, NotifyGameOverRequest::default())),
            std::mem::size_of_val(&players.game_error(Seat::A, NotifyGameErrorRequest::default())),
        ];
        assert_eq!(sizes, [std::mem::size_of::<usize>(); 4]);
    }

    #[tokio::test]
    async fn an_unusable_endpoint_fails_calls_with_e009() {
        // Built by hand: parsing would refuse it before any call is made.
        let players =
            GrpcPlayers::for_assignment(&PlayerChannels::new(), &assignment_with("http://bad host:1"));
        let status = players
            .invite(Seat::A, InviteToMatchRequest::default())
            .await
            .expect_err("no channel");
        assert_eq!(status.code(), tonic::Code::Unavailable);
        assert_eq!(error_code::code_of(&status), Some(ErrorCode::ConnectionError));
        // Player B has no endpoint at all.
        let status = players
            .invite(Seat::B, InviteToMatchRequest::default())
            .await
            .expect_err("no channel");
        assert_eq!(error_code::code_of(&status), Some(ErrorCode::ConnectionError));
    }

    /// An assignment whose player A is served at `endpoint` and whose player B has no endpoint.
    fn assignment_with(endpoint: &str) -> Assignment {
        crate::test_support::assignment("l1", "R1M1", "lease", endpoint)
    }
}
