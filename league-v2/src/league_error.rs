//! A league.v2 error on its way to an agent: the JSON-RPC error whose `data` is the protocol's
//! LEAGUE_ERROR message. Parameter problems (E002–E004, E018, E019, E021) use JSON-RPC's "invalid params";
//! the rest use the application range as `-32000 - n` for `En`, so a client can read the code from either.

use league_domain::MessageType;
use league_proto::ErrorCode;
use serde_json::{Value, json};

use crate::envelope::PROTOCOL;
use crate::jsonrpc::{INTERNAL_ERROR, INVALID_PARAMS, RpcError};
use crate::{sender, timestamp};

#[derive(Debug, Clone, PartialEq)]
pub struct LeagueError {
    pub code: ErrorCode,
    pub description: String,
}

pub type LeagueResult<T> = Result<T, LeagueError>;

impl LeagueError {
    pub fn new(code: ErrorCode, description: impl Into<String>) -> Self {
        Self {
            code,
            description: description.into(),
        }
    }

    pub(crate) fn rpc_code(&self) -> i64 {
        match self.code {
            ErrorCode::InvalidMessageFormat
            | ErrorCode::MissingRequiredField
            | ErrorCode::InvalidParityChoice
            | ErrorCode::ProtocolVersionMismatch
            | ErrorCode::UnsupportedGameType
            | ErrorCode::InvalidTimestamp => INVALID_PARAMS,
            ErrorCode::InternalError => INTERNAL_ERROR,
            code => -32000 - code.code()[1..].parse::<i64>().unwrap_or(99),
        }
    }

    /// The JSON-RPC error, echoing the conversation the failed message belonged to.
    pub fn to_rpc(&self, conversation_id: Option<&str>) -> RpcError {
        RpcError {
            code: self.rpc_code(),
            message: format!("{}: {}", self.code.name(), self.description),
            data: Some(self.league_error_message(conversation_id)),
        }
    }

    /// The LEAGUE_ERROR message (league.v2 message type 15).
    pub fn league_error_message(&self, conversation_id: Option<&str>) -> Value {
        json!({
            "protocol": PROTOCOL,
            "message_type": MessageType::LeagueError.as_str(),
            "sender": sender::MANAGER,
            "timestamp": timestamp::now(),
            "conversation_id": conversation_id,
            "error_code": self.code.code(),
            "error_name": self.code.name(),
            "error_description": self.description,
            "retryable": self.code.is_retryable(),
        })
    }
}

impl std::fmt::Display for LeagueError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.description)
    }
}

impl std::error::Error for LeagueError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_map_to_json_rpc_codes() {
        assert_eq!(
            LeagueError::new(ErrorCode::MissingRequiredField, "x").rpc_code(),
            INVALID_PARAMS
        );
        assert_eq!(
            LeagueError::new(ErrorCode::AuthTokenInvalid, "x").rpc_code(),
            -32012
        );
        assert_eq!(
            LeagueError::new(ErrorCode::AuthTokenMissing, "x").rpc_code(),
            -32011
        );
        let rpc = LeagueError::new(ErrorCode::AuthTokenInvalid, "bad").to_rpc(Some("c1"));
        let data = rpc.data.expect("data");
        assert_eq!(data["message_type"], "LEAGUE_ERROR");
        assert_eq!(data["error_code"], "E012");
        assert_eq!(data["conversation_id"], "c1");
    }
}
