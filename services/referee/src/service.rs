//! `RefereeService`: the matches this referee is running now, for debugging (league.v2
//! `get_match_state`). Reads the worker's registry; a match leaves it once reported or stopped.

use league_proto::v2::referee_service_server::{RefereeService, RefereeServiceServer};
use league_proto::v2::{
    GetMatchStateRequest, GetMatchStateResponse, ListRunningMatchesRequest, ListRunningMatchesResponse,
};
use league_proto::{ErrorCode, error_code};
use tonic::{Request, Response, Status};

use crate::worker::RunningMatches;

/// The `RefereeService` of one referee.
#[derive(Debug, Clone)]
pub struct RefereeApi {
    referee_id: String,
    running: RunningMatches,
}

impl RefereeApi {
    pub fn new(referee_id: impl Into<String>, running: RunningMatches) -> RefereeApi {
        RefereeApi {
            referee_id: referee_id.into(),
            running,
        }
    }

    /// This API as a tonic service.
    pub fn into_server(self) -> RefereeServiceServer<RefereeApi> {
        RefereeServiceServer::new(self)
    }
}

#[tonic::async_trait]
impl RefereeService for RefereeApi {
    /// A running match's state and transcript so far; E007 MATCH_NOT_FOUND when this referee is not
    /// running it (an empty `league_id` matches any league).
    async fn get_match_state(
        &self,
        request: Request<GetMatchStateRequest>,
    ) -> Result<Response<GetMatchStateResponse>, Status> {
        let request = request.into_inner();
        let (running, transcript) = self
            .running
            .get(&request.league_id, &request.match_id)
            .ok_or_else(|| {
                error_code::status(
                    ErrorCode::MatchNotFound,
                    format!(
                        "referee {} is not running match {:?}",
                        self.referee_id, request.match_id
                    ),
                )
            })?;
        Ok(Response::new(GetMatchStateResponse {
            r#match: Some(running),
            transcript: Some(transcript),
        }))
    }

    async fn list_running_matches(
        &self,
        _request: Request<ListRunningMatchesRequest>,
    ) -> Result<Response<ListRunningMatchesResponse>, Status> {
        Ok(Response::new(ListRunningMatchesResponse {
            referee_id: self.referee_id.clone(),
            matches: self.running.list(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::runner::MatchProgress;

    fn running_match(running: &RunningMatches) -> impl Sized + use<> {
        let assignment = crate::test_support::assignment("l1", "R1M1", "lease", "");
        let progress = MatchProgress::new();
        progress.start("claimed".into());
        running.register(&assignment, Duration::from_secs(30), progress)
    }

    #[tokio::test]
    async fn a_running_match_is_shown_with_its_transcript() {
        let running = RunningMatches::new();
        let _registration = running_match(&running);
        let api = RefereeApi::new("REF01", running);
        let shown = api
            .get_match_state(Request::new(GetMatchStateRequest {
                match_id: "R1M1".into(),
                league_id: "l1".into(),
            }))
            .await
            .expect("running")
            .into_inner();
        let running_match = shown.r#match.expect("match");
        assert_eq!(
            running_match.state(),
            league_proto::v2::MatchState::WaitingForPlayers
        );
        assert_eq!(shown.transcript.map(|t| t.entries.len()), Some(1));
        let listed = api
            .list_running_matches(Request::new(ListRunningMatchesRequest {}))
            .await
            .expect("list")
            .into_inner();
        assert_eq!(listed.referee_id, "REF01");
        assert_eq!(listed.matches, [running_match]);
    }

    #[tokio::test]
    async fn a_match_not_running_here_is_e007() {
        let running = RunningMatches::new();
        let registration = running_match(&running);
        let api = RefereeApi::new("REF01", running);
        let ask = |league_id: &str| GetMatchStateRequest {
            match_id: "R1M1".into(),
            league_id: league_id.into(),
        };
        let other_league = api
            .get_match_state(Request::new(ask("l2")))
            .await
            .expect_err("l2");
        assert_eq!(error_code::code_of(&other_league), Some(ErrorCode::MatchNotFound));
        drop(registration);
        let finished = api
            .get_match_state(Request::new(ask("l1")))
            .await
            .expect_err("gone");
        assert_eq!(finished.code(), tonic::Code::NotFound);
        assert_eq!(error_code::code_of(&finished), Some(ErrorCode::MatchNotFound));
    }
}
