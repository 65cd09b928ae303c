//! The league.v2 error codes: the one table every service uses, with the gRPC code and the JSON-RPC code
//! each maps to.
//!
//! The specification names E001, E003–E005, E009, E011–E013, E018 and E021; the seeds disagree on a few
//! numbers (one of the course's documents uses E004 and E011 differently) and the specification wins. The codes it leaves
//! unnamed are ours; each is defined here once and documented in docs/protocol.md.

use std::fmt;
use std::str::FromStr;

/// gRPC metadata key that carries the league.v2 error code on a failed call, so the gateway can put the
/// protocol's code in `error.data` without parsing messages.
pub const ERROR_CODE_METADATA_KEY: &str = "league-error-code";

/// JSON-RPC's "invalid params": the code of the parameter problems (E002–E004, E018, E019, E021).
pub const JSON_RPC_INVALID_PARAMS: i64 = -32602;
/// JSON-RPC's "internal error": the code of E022.
pub const JSON_RPC_INTERNAL_ERROR: i64 = -32603;

macro_rules! error_codes {
    ($($variant:ident = $code:literal, $name:literal, $retryable:literal, $grpc:ident, $json_rpc:expr;)*) => {
        /// A league.v2 error code (`E001`…).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum ErrorCode {
            $($variant,)*
        }

        impl ErrorCode {
            /// Every code, in table order.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant,)*];

            /// The wire form, e.g. `"E004"`.
            pub fn code(self) -> &'static str {
                match self { $(ErrorCode::$variant => $code,)* }
            }

            /// The specification's name, e.g. `"INVALID_PARITY_CHOICE"`.
            pub fn name(self) -> &'static str {
                match self { $(ErrorCode::$variant => $name,)* }
            }

            /// Whether a caller may retry after this error: the transient ones, a timeout (E001), a
            /// connection error (E009), a rate limit (E016) and a busy server (E023).
            pub fn is_retryable(self) -> bool {
                match self { $(ErrorCode::$variant => $retryable,)* }
            }

            /// The JSON-RPC error code the gateway answers with: "invalid params" for a parameter
            /// problem, "internal error" for E022, and `-32000 - n` for `En` otherwise, so a client can
            /// read the league code from either.
            pub fn json_rpc_code(self) -> i64 {
                match self { $(ErrorCode::$variant => $json_rpc,)* }
            }

            /// The gRPC status code a service answers with for this error.
            #[cfg(feature = "grpc")]
            pub fn grpc_code(self) -> tonic::Code {
                match self { $(ErrorCode::$variant => tonic::Code::$grpc,)* }
            }
        }

        impl FromStr for ErrorCode {
            type Err = UnknownErrorCode;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($code => Ok(ErrorCode::$variant),)*
                    _ => Err(UnknownErrorCode(s.to_owned())),
                }
            }
        }
    };
}

error_codes! {
    Timeout = "E001", "TIMEOUT_ERROR", true, DeadlineExceeded, -32001;
    InvalidMessageFormat = "E002", "INVALID_MESSAGE_FORMAT", false, InvalidArgument, JSON_RPC_INVALID_PARAMS;
    MissingRequiredField = "E003", "MISSING_REQUIRED_FIELD", false, InvalidArgument, JSON_RPC_INVALID_PARAMS;
    InvalidParityChoice = "E004", "INVALID_PARITY_CHOICE", false, InvalidArgument, JSON_RPC_INVALID_PARAMS;
    PlayerNotRegistered = "E005", "PLAYER_NOT_REGISTERED", false, NotFound, -32005;
    LeagueNotFound = "E006", "LEAGUE_NOT_FOUND", false, NotFound, -32006;
    MatchNotFound = "E007", "MATCH_NOT_FOUND", false, NotFound, -32007;
    InvalidLeagueState = "E008", "INVALID_LEAGUE_STATE", false, FailedPrecondition, -32008;
    ConnectionError = "E009", "CONNECTION_ERROR", true, Unavailable, -32009;
    InvalidMove = "E010", "INVALID_MOVE", false, InvalidArgument, -32010;
    AuthTokenMissing = "E011", "AUTH_TOKEN_MISSING", false, Unauthenticated, -32011;
    AuthTokenInvalid = "E012", "AUTH_TOKEN_INVALID", false, Unauthenticated, -32012;
    RefereeNotRegistered = "E013", "REFEREE_NOT_REGISTERED", false, NotFound, -32013;
    DuplicateRegistration = "E014", "DUPLICATE_REGISTRATION", false, AlreadyExists, -32014;
    LeaseNotHeld = "E015", "LEASE_NOT_HELD", false, FailedPrecondition, -32015;
    RateLimited = "E016", "RATE_LIMITED", true, ResourceExhausted, -32016;
    PayloadTooLarge = "E017", "PAYLOAD_TOO_LARGE", false, ResourceExhausted, -32017;
    ProtocolVersionMismatch = "E018", "PROTOCOL_VERSION_MISMATCH", false, FailedPrecondition, JSON_RPC_INVALID_PARAMS;
    UnsupportedGameType = "E019", "UNSUPPORTED_GAME_TYPE", false, InvalidArgument, JSON_RPC_INVALID_PARAMS;
    PermissionDenied = "E020", "PERMISSION_DENIED", false, PermissionDenied, -32020;
    InvalidTimestamp = "E021", "INVALID_TIMESTAMP", false, InvalidArgument, JSON_RPC_INVALID_PARAMS;
    InternalError = "E022", "INTERNAL_ERROR", false, Internal, JSON_RPC_INTERNAL_ERROR;
    ServerBusy = "E023", "SERVER_BUSY", true, Unavailable, -32023;
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// A string that is not one of the codes in [`ErrorCode`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownErrorCode(pub String);

impl fmt::Display for UnknownErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown league.v2 error code {:?}", self.0)
    }
}

impl std::error::Error for UnknownErrorCode {}

/// A gRPC status carrying a league.v2 error code in its metadata (see [`ERROR_CODE_METADATA_KEY`]).
#[cfg(feature = "grpc")]
pub fn status(code: ErrorCode, message: impl Into<String>) -> tonic::Status {
    let mut status = tonic::Status::new(code.grpc_code(), message);
    status.metadata_mut().insert(
        ERROR_CODE_METADATA_KEY,
        tonic::metadata::MetadataValue::from_static(code.code()),
    );
    status
}

/// Metadata key marking a failure of the league's own services rather than of the agent a call was
/// for (a gateway that cannot look the agent up because the manager is away, say). Such a status carries
/// no league.v2 code: it is no verdict on the agent, and a referee charges no player for it.
pub const SERVICE_OUTAGE_METADATA_KEY: &str = "league-service-outage";

/// UNAVAILABLE, marked as an outage of the league's own services (see [`SERVICE_OUTAGE_METADATA_KEY`]).
#[cfg(feature = "grpc")]
pub fn service_outage(message: impl Into<String>) -> tonic::Status {
    let mut status = tonic::Status::unavailable(message);
    status.metadata_mut().insert(
        SERVICE_OUTAGE_METADATA_KEY,
        tonic::metadata::MetadataValue::from_static("true"),
    );
    status
}

/// Whether `status` was marked by [`service_outage`].
#[cfg(feature = "grpc")]
pub fn is_service_outage(status: &tonic::Status) -> bool {
    status.metadata().contains_key(SERVICE_OUTAGE_METADATA_KEY)
}

/// Metadata key marking an E013 that says the referee was revoked by the operator, not that it is
/// unknown (a new database): a revoked referee stops, and does not register anew (ADR 0082).
pub const REVOKED_METADATA_KEY: &str = "league-revoked";

/// E013, marked as a revocation (see [`REVOKED_METADATA_KEY`]).
#[cfg(feature = "grpc")]
pub fn revoked(message: impl Into<String>) -> tonic::Status {
    let mut status = self::status(ErrorCode::RefereeNotRegistered, message);
    status.metadata_mut().insert(
        REVOKED_METADATA_KEY,
        tonic::metadata::MetadataValue::from_static("true"),
    );
    status
}

/// Whether `status` was marked by [`revoked`].
#[cfg(feature = "grpc")]
pub fn is_revoked(status: &tonic::Status) -> bool {
    status.metadata().contains_key(REVOKED_METADATA_KEY)
}

/// The league.v2 error code a failed call carried, if any.
#[cfg(feature = "grpc")]
pub fn code_of(status: &tonic::Status) -> Option<ErrorCode> {
    status
        .metadata()
        .get(ERROR_CODE_METADATA_KEY)
        .and_then(|value| value.to_str().ok())
        .and_then(|code| code.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn codes_are_unique_and_round_trip() {
        let mut seen = HashSet::new();
        for &code in ErrorCode::ALL {
            assert!(seen.insert(code.code()), "{code} defined twice");
            assert_eq!(code.code().parse::<ErrorCode>(), Ok(code));
        }
        assert_eq!(seen.len(), 23);
    }

    #[test]
    fn specification_codes_keep_their_meaning() {
        let named = [
            ("E001", "TIMEOUT_ERROR"),
            ("E003", "MISSING_REQUIRED_FIELD"),
            ("E004", "INVALID_PARITY_CHOICE"),
            ("E005", "PLAYER_NOT_REGISTERED"),
            ("E009", "CONNECTION_ERROR"),
            ("E011", "AUTH_TOKEN_MISSING"),
            ("E012", "AUTH_TOKEN_INVALID"),
            ("E013", "REFEREE_NOT_REGISTERED"),
            ("E018", "PROTOCOL_VERSION_MISMATCH"),
            ("E021", "INVALID_TIMESTAMP"),
        ];
        for (code, name) in named {
            assert_eq!(code.parse::<ErrorCode>().map(ErrorCode::name), Ok(name));
        }
    }

    #[test]
    fn only_the_transient_errors_are_retryable() {
        let retryable: Vec<_> = ErrorCode::ALL
            .iter()
            .filter(|code| code.is_retryable())
            .map(|code| code.code())
            .collect();
        assert_eq!(retryable, ["E001", "E009", "E016", "E023"]);
    }

    #[test]
    fn json_rpc_codes_are_invalid_params_internal_or_the_league_code() {
        assert_eq!(
            ErrorCode::MissingRequiredField.json_rpc_code(),
            JSON_RPC_INVALID_PARAMS
        );
        assert_eq!(
            ErrorCode::InvalidTimestamp.json_rpc_code(),
            JSON_RPC_INVALID_PARAMS
        );
        assert_eq!(ErrorCode::InternalError.json_rpc_code(), JSON_RPC_INTERNAL_ERROR);
        assert_eq!(ErrorCode::AuthTokenMissing.json_rpc_code(), -32011);
        assert_eq!(ErrorCode::AuthTokenInvalid.json_rpc_code(), -32012);
        assert_eq!(ErrorCode::ServerBusy.json_rpc_code(), -32023);
        let mut seen = HashSet::new();
        for &code in ErrorCode::ALL {
            let rpc = code.json_rpc_code();
            let shared = rpc == JSON_RPC_INVALID_PARAMS || rpc == JSON_RPC_INTERNAL_ERROR;
            assert!(
                shared || seen.insert(rpc),
                "{code}: JSON-RPC code {rpc} used twice"
            );
        }
    }

    #[cfg(feature = "grpc")]
    #[test]
    fn status_carries_the_code() {
        let status = status(ErrorCode::AuthTokenInvalid, "token does not match");
        assert_eq!(status.code(), tonic::Code::Unauthenticated);
        assert_eq!(code_of(&status), Some(ErrorCode::AuthTokenInvalid));
        assert_eq!(code_of(&tonic::Status::internal("boom")), None);
    }

    #[test]
    fn unknown_codes_are_rejected() {
        assert!("E999".parse::<ErrorCode>().is_err());
        assert!("e004".parse::<ErrorCode>().is_err());
    }
}
