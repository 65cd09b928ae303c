//! A league.v2 error on its way to an agent: the JSON-RPC error whose `data` is the protocol's
//! LEAGUE_ERROR message, its JSON-RPC code the one the error table gives (`ErrorCode::json_rpc_code`).

use league_domain::MessageType;
use league_proto::ErrorCode;
use serde_json::{Value, json};

use crate::envelope::PROTOCOL;
use crate::jsonrpc::RpcError;
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

    /// The JSON-RPC error, echoing the conversation the failed message belonged to.
    pub fn to_rpc(&self, conversation_id: Option<&str>) -> RpcError {
        RpcError {
            code: self.code.json_rpc_code(),
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
    fn the_rpc_error_carries_the_tables_code_and_the_league_error() {
        let rpc = LeagueError::new(ErrorCode::MissingRequiredField, "x").to_rpc(None);
        assert_eq!(rpc.code, crate::jsonrpc::INVALID_PARAMS);
        let rpc = LeagueError::new(ErrorCode::AuthTokenInvalid, "bad").to_rpc(Some("c1"));
        assert_eq!(rpc.code, -32012);
        let data = rpc.data.expect("data");
        assert_eq!(data["message_type"], "LEAGUE_ERROR");
        assert_eq!(data["error_code"], "E012");
        assert_eq!(data["conversation_id"], "c1");
    }
}
