//! A league.v2 error as a gRPC status and back. The manager answers a failed call with a status whose
//! metadata carries the league.v2 code (league_proto::error_code), and the bridge answers a referee the
//! same way; league-v2 knows no gRPC, so the crossing is here, at the gateway's calls.

use league_proto::{ErrorCode, error_code};
use league_v2::league_error::LeagueError;

/// The league.v2 error a failed gRPC call carried; a call that failed without one (the manager is
/// unreachable, say) is a connection error.
pub fn to_league_error(status: tonic::Status) -> LeagueError {
    match error_code::code_of(&status) {
        Some(code) => LeagueError::new(code, status.message()),
        None if status.code() == tonic::Code::DeadlineExceeded => {
            LeagueError::new(ErrorCode::Timeout, "the league did not answer in time")
        }
        None => LeagueError::new(ErrorCode::ConnectionError, "the league is unreachable; retry"),
    }
}

/// The same error on its way back over gRPC: its code travels in the status's metadata, as every
/// service sends it.
pub fn to_status(error: LeagueError) -> tonic::Status {
    error_code::status(error.code, error.description)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_keep_their_code() {
        let status = error_code::status(ErrorCode::LeagueNotFound, "no league x");
        assert_eq!(to_league_error(status).code, ErrorCode::LeagueNotFound);
        assert_eq!(
            to_league_error(tonic::Status::unavailable("down")).code,
            ErrorCode::ConnectionError
        );
        assert_eq!(
            to_league_error(tonic::Status::deadline_exceeded("slow")).code,
            ErrorCode::Timeout
        );
        let back = to_status(LeagueError::new(ErrorCode::AuthTokenInvalid, "bad"));
        assert_eq!(back.code(), tonic::Code::Unauthenticated);
        assert_eq!(to_league_error(back).code, ErrorCode::AuthTokenInvalid);
    }
}
