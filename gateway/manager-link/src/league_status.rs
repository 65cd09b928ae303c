//! A league.v2 error as a gRPC status and back. The manager answers a failed call with a status whose
//! metadata carries the league.v2 code (league_proto::error_code), and the bridge answers a referee the
//! same way; league-v2 knows no gRPC, so the crossing is here, at the gateway's calls.

use league_proto::{ErrorCode, error_code};
use league_v2::league_error::LeagueError;

/// The league.v2 error a failed gRPC call carried. A call that failed without one failed on the way:
/// a timeout (E001) or a connection that could not be made or was lost (E009), both worth retrying;
/// anything else is our fault, an internal error (E022) that is logged here, once, and not retryable,
/// its details kept from the agent.
pub fn to_league_error(status: tonic::Status) -> LeagueError {
    if let Some(code) = error_code::code_of(&status) {
        return LeagueError::new(code, status.message());
    }
    match status.code() {
        tonic::Code::DeadlineExceeded => {
            LeagueError::new(ErrorCode::Timeout, "the league did not answer in time")
        }
        tonic::Code::Unavailable | tonic::Code::Cancelled | tonic::Code::Unknown => {
            LeagueError::new(ErrorCode::ConnectionError, "the league is unreachable; retry")
        }
        code => {
            tracing::error!(?code, message = status.message(), "a call to the manager failed");
            LeagueError::new(ErrorCode::InternalError, "internal error")
        }
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
        let internal = to_league_error(tonic::Status::internal("a panic's details"));
        assert_eq!(internal.code, ErrorCode::InternalError);
        assert!(!internal.code.is_retryable());
        assert_eq!(internal.description, "internal error");
        let back = to_status(LeagueError::new(ErrorCode::AuthTokenInvalid, "bad"));
        assert_eq!(back.code(), tonic::Code::Unauthenticated);
        assert_eq!(to_league_error(back).code, ErrorCode::AuthTokenInvalid);
    }
}
