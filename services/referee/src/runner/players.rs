//! The four calls a referee makes on a player, as a trait the runner is generic over, and the gRPC
//! implementation that reaches each player's `PlayerService`: the calls for one endpoint go together,
//! many to a `MatchCalls` exchange ([`EndpointCalls`]).

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};

use league_domain::Assignment;
use league_proto::v2::match_call::Request as Call;
use league_proto::v2::match_calls_response::Answer;
use league_proto::v2::{
    AssignedPlayer, InviteToMatchRequest, InviteToMatchResponse, NotifyGameErrorRequest,
    NotifyGameErrorResponse, NotifyGameOverRequest, NotifyGameOverResponse, RequestMoveRequest,
    RequestMoveResponse,
};
use league_proto::{ErrorCode, error_code};
use league_runtime::grpc::GrpcChannel;
use tonic::Status;
use tonic::transport::Endpoint;

use super::endpoint_calls::EndpointCalls;
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

/// The calls to player hosts, one [`EndpointCalls`] per endpoint, shared by every match a referee runs:
/// one host serves many players, and their calls at one moment go as one exchange, over one HTTP/2
/// connection. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct PlayerChannels {
    endpoints: Arc<Mutex<HashMap<String, EndpointCalls>>>,
}

impl PlayerChannels {
    pub fn new() -> PlayerChannels {
        PlayerChannels::default()
    }

    /// The calls to `endpoint`, on a channel created lazily (it connects on first use) and cached. An
    /// endpoint without a scheme is taken as `http://`. Must be called inside a tokio runtime.
    pub fn calls(&self, endpoint: &str) -> Result<EndpointCalls, tonic::transport::Error> {
        let url = if endpoint.contains("://") {
            endpoint.to_owned()
        } else {
            format!("http://{endpoint}")
        };
        let mut endpoints = self.endpoints.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(calls) = endpoints.get(&url) {
            return Ok(calls.clone());
        }
        let channel = GrpcChannel::from(
            Endpoint::from_shared(url.clone())?
                .tcp_nodelay(true)
                .connect_lazy(),
        );
        let calls = EndpointCalls::new(channel);
        endpoints.insert(url, calls.clone());
        Ok(calls)
    }

    /// How many endpoints have a channel.
    pub fn len(&self) -> usize {
        self.endpoints
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
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
    endpoints: [Result<EndpointCalls, String>; 2],
}

impl GrpcPlayers {
    /// The calls to both players of `assignment`, from `channels`. Must be called inside a tokio
    /// runtime. A player whose endpoint is unusable fails every call with E009 (UNAVAILABLE).
    pub fn for_assignment(channels: &PlayerChannels, assignment: &Assignment) -> GrpcPlayers {
        let calls = |player: &AssignedPlayer| {
            let endpoint = player.service_endpoint.as_str();
            channels
                .calls(endpoint)
                .map_err(|error| format!("player endpoint {endpoint:?} is unusable: {error}"))
        };
        GrpcPlayers {
            endpoints: assignment.players.each_ref().map(calls),
        }
    }

    fn calls(&self, seat: Seat) -> Result<EndpointCalls, Status> {
        self.endpoints[seat.index()]
            .clone()
            .map_err(|reason| error_code::status(ErrorCode::ConnectionError, reason))
    }
}

/// A player endpoint that answered a call with another kind of call's answer: no answer to this one.
fn mismatched(call: &str) -> Status {
    Status::internal(format!(
        "the player endpoint answered {call} with another call's answer"
    ))
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
        let calls = self.calls(seat);
        Box::pin(async move {
            match calls?.call(Call::InviteToMatch(request)).await? {
                Answer::InviteToMatch(answer) => Ok(answer),
                _ => Err(mismatched("InviteToMatch")),
            }
        })
    }

    fn request_move(
        &self,
        seat: Seat,
        request: RequestMoveRequest,
    ) -> impl Future<Output = Result<RequestMoveResponse, Status>> + Send {
        let calls = self.calls(seat);
        Box::pin(async move {
            match calls?.call(Call::RequestMove(request)).await? {
                Answer::RequestMove(answer) => Ok(answer),
                _ => Err(mismatched("RequestMove")),
            }
        })
    }

    fn game_over(
        &self,
        seat: Seat,
        request: NotifyGameOverRequest,
    ) -> impl Future<Output = Result<NotifyGameOverResponse, Status>> + Send {
        let calls = self.calls(seat);
        Box::pin(async move {
            match calls?.call(Call::NotifyGameOver(request)).await? {
                Answer::NotifyGameOver(answer) => Ok(answer),
                _ => Err(mismatched("NotifyGameOver")),
            }
        })
    }

    fn game_error(
        &self,
        seat: Seat,
        request: NotifyGameErrorRequest,
    ) -> impl Future<Output = Result<NotifyGameErrorResponse, Status>> + Send {
        let calls = self.calls(seat);
        Box::pin(async move {
            match calls?.call(Call::NotifyGameError(request)).await? {
                Answer::NotifyGameError(answer) => Ok(answer),
                _ => Err(mismatched("NotifyGameError")),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn one_channel_per_endpoint() {
        let channels = PlayerChannels::new();
        assert!(channels.is_empty());
        channels.calls("http://127.0.0.1:1").expect("valid endpoint");
        channels
            .calls("127.0.0.1:1")
            .expect("same endpoint without a scheme");
        channels.calls("http://127.0.0.1:2").expect("valid endpoint");
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
