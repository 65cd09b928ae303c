//! What can go wrong in one exchange with a player, and whether the referee tries again.
//!
//! - No answer within the exchange's timeout: E001, retried.
//! - An error status: the league.v2 code it carries decides (E001, E009 and E016 are retried, every
//!   other code is not). A status without a code is classified by its gRPC code: DEADLINE_EXCEEDED is
//!   E001, and UNAVAILABLE, CANCELLED, UNKNOWN, INTERNAL, ABORTED, RESOURCE_EXHAUSTED and DATA_LOSS — the
//!   ways a dropped connection or a crashed host surfaces through tonic — are E009, all retried. The
//!   remaining codes (INVALID_ARGUMENT, NOT_FOUND, ALREADY_EXISTS, PERMISSION_DENIED, UNAUTHENTICATED,
//!   FAILED_PRECONDITION, OUT_OF_RANGE, UNIMPLEMENTED) are a deliberate refusal by the player's side: not
//!   retried, the player fails the exchange at once (recorded as E009 unless the status carried a code).
//! - A move the game refuses: the engine's code (E004 for even_odd, E010 otherwise), retried — it uses
//!   an attempt (an invalid choice may be corrected within the retry budget), although the code itself is not "retryable" in the error table.
//! - A declined invitation is not a miss: the player loses at once, without retries or GAME_ERROR.
//! - Not a miss either: an outage of the league's own services ([`is_outage`]). The player is not charged
//!   for it; the runner waits for the service to come back (see [`outage`](super::outage)).

use std::time::Duration;

use league_proto::{ErrorCode, error_code};
use tonic::{Code, Status};

use crate::game::InvalidMove;

/// What kind of failure a miss was, for the result's reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MissKind {
    Timeout,
    Unreachable,
    Refused,
    InvalidMove,
}

impl MissKind {
    /// The cause of a technical loss this kind of miss ends in, as metrics name it.
    pub(crate) fn cause(self) -> &'static str {
        match self {
            MissKind::Timeout => "timeout",
            MissKind::Unreachable => "unreachable",
            MissKind::Refused => "refused",
            MissKind::InvalidMove => "invalid_move",
        }
    }
}

/// One failed attempt at an exchange.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Miss {
    pub(crate) kind: MissKind,
    pub(crate) code: ErrorCode,
    /// What went wrong, told to the player in the GAME_ERROR.
    pub(crate) detail: String,
}

impl Miss {
    /// No answer to `message_type` within `timeout`.
    pub(crate) fn timeout(message_type: &str, timeout: Duration) -> Miss {
        Miss {
            kind: MissKind::Timeout,
            code: ErrorCode::Timeout,
            detail: format!("no answer to {message_type} within {timeout:?}"),
        }
    }

    /// `message_type` failed with `status`.
    pub(crate) fn from_status(message_type: &str, status: &Status) -> Miss {
        let transport = !matches!(
            status.code(),
            Code::InvalidArgument
                | Code::NotFound
                | Code::AlreadyExists
                | Code::PermissionDenied
                | Code::Unauthenticated
                | Code::FailedPrecondition
                | Code::OutOfRange
                | Code::Unimplemented
        );
        let code = error_code::code_of(status).unwrap_or(match status.code() {
            Code::DeadlineExceeded => ErrorCode::Timeout,
            _ => ErrorCode::ConnectionError,
        });
        let retryable = match error_code::code_of(status) {
            Some(carried) => carried.is_retryable(),
            None => transport,
        };
        let kind = match (retryable, code) {
            (true, ErrorCode::Timeout) => MissKind::Timeout,
            (true, _) => MissKind::Unreachable,
            (false, _) => MissKind::Refused,
        };
        Miss {
            kind,
            code,
            detail: format!("{message_type} failed: {:?}: {}", status.code(), status.message()),
        }
    }

    pub(crate) fn invalid(invalid: InvalidMove) -> Miss {
        Miss {
            kind: MissKind::InvalidMove,
            code: invalid.code,
            detail: invalid.reason,
        }
    }

    /// Whether another attempt follows this miss (if attempts are left).
    pub(crate) fn retryable(&self) -> bool {
        self.kind != MissKind::Refused
    }
}

/// Whether a failed call to a player failed because the league's own services are down, not because of
/// the player: the status is marked as an outage (a gateway that cannot look the player up), or it is a
/// transport failure that carries no league.v2 code — the connection to the service endpoint (the
/// gateway, or the player host) was refused or broken, so nobody has had a chance to ask the player.
/// When the gateway reaches the service but not the agent behind it, it says so with a code (E009,
/// E001), and that is the player's miss.
pub(crate) fn is_outage(status: &Status) -> bool {
    error_code::is_service_outage(status)
        || (error_code::code_of(status).is_none()
            && matches!(
                status.code(),
                Code::Unavailable
                    | Code::Cancelled
                    | Code::Unknown
                    | Code::Internal
                    | Code::Aborted
                    | Code::DataLoss
            ))
}

/// Whether a failed call is worth repeating: a transport failure or a retryable league code (the same
/// rule as for players; the worker uses it for its calls to the manager).
pub(crate) fn is_transient(status: &Status) -> bool {
    Miss::from_status("", status).retryable()
}

/// Why a player failed an exchange, as the result's reason puts it.
pub(crate) fn failure_reason(player_id: &str, exchange: &str, misses: &[Miss]) -> String {
    let Some(last) = misses.last() else {
        return format!("{player_id} failed the {exchange}");
    };
    let code = last.code;
    let detail = &last.detail;
    if last.kind == MissKind::Refused {
        return format!("{player_id} refused the {exchange}: {detail} ({code})");
    }
    let count = misses.len();
    let times = if count == 1 {
        "once".to_owned()
    } else {
        format!("{count} times")
    };
    if misses.iter().any(|miss| miss.kind != last.kind) {
        return format!("{player_id} failed the {exchange} {times}; last: {detail} ({code})");
    }
    match last.kind {
        MissKind::Timeout => format!("{player_id} did not answer the {exchange} {times} ({code})"),
        MissKind::Unreachable => {
            format!("{player_id} could not be reached for the {exchange} {times} ({code}: {detail})")
        }
        MissKind::InvalidMove => {
            let moves = if count == 1 {
                "an invalid move".to_owned()
            } else {
                format!("{count} invalid moves")
            };
            format!("{player_id} made {moves} ({code}: {detail})")
        }
        MissKind::Refused => format!("{player_id} refused the {exchange}: {detail} ({code})"),
    }
}

#[cfg(test)]
mod tests {
    use league_domain::MessageType;

    use super::*;

    #[test]
    fn transport_failures_are_retried_as_e009_or_e001() {
        for status in [
            Status::unavailable("tcp connect error"),
            Status::cancelled("h2 cancel"),
            Status::unknown("h2 protocol error"),
            Status::internal("host crashed"),
        ] {
            let miss = Miss::from_status(MessageType::GameInvitation.as_str(), &status);
            assert_eq!(
                (miss.kind, miss.code),
                (MissKind::Unreachable, ErrorCode::ConnectionError)
            );
            assert!(miss.retryable(), "{status:?}");
        }
        let miss = Miss::from_status(
            MessageType::GameInvitation.as_str(),
            &Status::deadline_exceeded("late"),
        );
        assert_eq!((miss.kind, miss.code), (MissKind::Timeout, ErrorCode::Timeout));
        assert!(miss.retryable());
    }

    #[test]
    fn only_failures_of_our_own_services_are_outages() {
        for status in [
            Status::unavailable("tcp connect error: connection refused"),
            Status::unknown("h2 protocol error: connection reset"),
            Status::cancelled("the gateway went away mid-call"),
            error_code::service_outage("the gateway could not look up P03"),
        ] {
            assert!(is_outage(&status), "{status:?}");
        }
        for status in [
            // The gateway reached, the agent behind it not: the agent's miss.
            error_code::status(ErrorCode::ConnectionError, "agent refused the connection"),
            error_code::status(ErrorCode::Timeout, "agent did not answer"),
            error_code::status(ErrorCode::PlayerNotRegistered, "no P09 here"),
            Status::deadline_exceeded("late"),
            Status::unimplemented("no such method"),
        ] {
            assert!(!is_outage(&status), "{status:?}");
        }
    }

    #[test]
    fn deliberate_refusals_are_not_retried() {
        for status in [
            Status::unimplemented("no such method"),
            Status::invalid_argument("bad"),
            Status::not_found("who?"),
            Status::permission_denied("no"),
        ] {
            let miss = Miss::from_status(MessageType::GameInvitation.as_str(), &status);
            assert_eq!(miss.kind, MissKind::Refused);
            assert!(!miss.retryable(), "{status:?}");
        }
    }

    #[test]
    fn a_carried_league_code_decides() {
        let not_registered = error_code::status(ErrorCode::PlayerNotRegistered, "no P09 here");
        let miss = Miss::from_status(MessageType::GameInvitation.as_str(), &not_registered);
        assert_eq!(
            (miss.code, miss.retryable()),
            (ErrorCode::PlayerNotRegistered, false)
        );
        let rate_limited = error_code::status(ErrorCode::RateLimited, "slow down");
        let miss = Miss::from_status(MessageType::GameInvitation.as_str(), &rate_limited);
        assert_eq!((miss.code, miss.retryable()), (ErrorCode::RateLimited, true));
    }

    #[test]
    fn reasons_name_the_player_the_count_and_the_code() {
        let timeout = Miss::timeout(MessageType::ChooseParityCall.as_str(), Duration::from_secs(30));
        assert_eq!(timeout.detail, "no answer to CHOOSE_PARITY_CALL within 30s");
        assert_eq!(
            failure_reason(
                "P02",
                "move request",
                &[timeout.clone(), timeout.clone(), timeout.clone()]
            ),
            "P02 did not answer the move request 3 times (E001)"
        );
        let invalid = Miss::invalid(InvalidMove::new(ErrorCode::InvalidParityChoice, "bad choice"));
        assert_eq!(
            failure_reason("P01", "move request", &[invalid.clone(), invalid.clone()]),
            "P01 made 2 invalid moves (E004: bad choice)"
        );
        assert_eq!(
            failure_reason("P01", "move request", &[timeout, invalid]),
            "P01 failed the move request 2 times; last: bad choice (E004)"
        );
        let refused = Miss::from_status(
            MessageType::GameInvitation.as_str(),
            &Status::unimplemented("nope"),
        );
        assert_eq!(
            failure_reason("P03", "invitation", &[refused]),
            "P03 refused the invitation: GAME_INVITATION failed: Unimplemented: nope (E009)"
        );
    }
}
