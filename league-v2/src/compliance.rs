//! Strict and lenient mode. A deviation from league.v2 whose meaning is still clear (a timestamp variant,
//! a missing envelope field, `accepted` for `accept`…) is refused in strict mode and, in lenient mode,
//! accepted and counted against the agent as a compliance warning the operator can list. Deviations that
//! change the meaning are errors in both modes and never reach this module.

use league_proto::ErrorCode;
use serde::Deserialize;

use crate::league_error::LeagueError;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// The specification to the letter.
    Strict,
    /// Unambiguous deviations accepted, and recorded.
    #[default]
    Lenient,
}

/// One deviation: what kind, an example, and the error strict mode answers with.
#[derive(Debug, Clone, PartialEq)]
pub struct Deviation {
    pub kind: &'static str,
    pub detail: String,
    pub strict_error: ErrorCode,
}

/// The deviations seen while handling one message.
#[derive(Debug)]
pub struct Checker {
    mode: Mode,
    seen: Vec<Deviation>,
}

impl Checker {
    pub fn new(mode: Mode) -> Self {
        Self {
            mode,
            seen: Vec::new(),
        }
    }

    /// Notes a deviation; in strict mode it is the error to answer with.
    pub fn deviation(
        &mut self,
        kind: &'static str,
        detail: impl Into<String>,
        strict_error: ErrorCode,
    ) -> Result<(), LeagueError> {
        let deviation = Deviation {
            kind,
            detail: detail.into(),
            strict_error,
        };
        if self.mode == Mode::Strict {
            return Err(LeagueError::new(
                strict_error,
                format!("{} ({}); this gateway is in strict mode", deviation.detail, kind),
            ));
        }
        self.seen.push(deviation);
        Ok(())
    }

    /// Notes what is wrong with the agent but is no deviation from league.v2 that a mode could accept
    /// or refuse (a certificate the league does not trust): recorded in both modes.
    pub fn note(&mut self, kind: &'static str, detail: impl Into<String>) {
        self.seen.push(Deviation {
            kind,
            detail: detail.into(),
            strict_error: ErrorCode::ConnectionError,
        });
    }

    /// The deviations noted so far, taken (for a call that failed but whose sender is known).
    pub fn take_deviations(&mut self) -> Vec<Deviation> {
        std::mem::take(&mut self.seen)
    }

    pub fn into_deviations(self) -> Vec<Deviation> {
        self.seen
    }
}

/// Every kind of deviation, named once.
pub const KINDS: &[&str] = &[
    kinds::TIMESTAMP_FORMAT,
    kinds::TIMESTAMP_NOT_UTC,
    kinds::MISSING_ENVELOPE_FIELD,
    kinds::WRONG_PROTOCOL_FIELD,
    kinds::SENDER_NOT_ID,
    kinds::PLACEHOLDER_TOKEN,
    kinds::FIELD_ALIAS,
    kinds::BARE_RESULT,
    kinds::RESULT_WITH_ERROR_NULL,
    kinds::UNIMPLEMENTED_NOTIFICATION,
    kinds::REFUSED_NOTIFICATION_ANSWER,
    kinds::REFUSED_SENDER,
    kinds::REFUSED_AUTH,
    kinds::REFUSED_PARAMS,
    kinds::REFUSED_NOTIFICATION,
    kinds::METHOD_DIALECT,
    kinds::CONVERSATION_MISMATCH,
    kinds::REPLY_PLAYER_ID,
    kinds::UNTRUSTED_CERTIFICATE,
    kinds::MCP_SERVER,
    kinds::LEAGUE_ID_NOT_THE_LEASE_S,
    kinds::REFUSED_REFEREE_CALL,
    kinds::REFUSED_RESULT,
];

pub mod kinds {
    pub const TIMESTAMP_FORMAT: &str = "timestamp_format";
    pub const TIMESTAMP_NOT_UTC: &str = "timestamp_not_utc";
    pub const MISSING_ENVELOPE_FIELD: &str = "missing_envelope_field";
    pub const WRONG_PROTOCOL_FIELD: &str = "wrong_protocol_field";
    pub const SENDER_NOT_ID: &str = "sender_not_assigned_id";
    pub const PLACEHOLDER_TOKEN: &str = "placeholder_token_in_reply";
    pub const FIELD_ALIAS: &str = "field_alias";
    pub const BARE_RESULT: &str = "bare_result";
    pub const RESULT_WITH_ERROR_NULL: &str = "result_with_error_null";
    pub const UNIMPLEMENTED_NOTIFICATION: &str = "unimplemented_notification";
    /// A notification's answer the mode refused (delivered all the same: it is not sent again).
    pub const REFUSED_NOTIFICATION_ANSWER: &str = "refused_notification_answer";
    /// The agent refused a notification over the league's `sender`, in both forms.
    pub const REFUSED_SENDER: &str = "refused_sender";
    /// The agent refused a notification over its `auth_token` (401, -32001, E011/E012).
    pub const REFUSED_AUTH: &str = "refused_auth";
    /// The agent refused a notification's params (-32602: a field it wants, a value it rejects).
    pub const REFUSED_PARAMS: &str = "refused_params";
    /// The agent answered a notification with any other JSON-RPC error.
    pub const REFUSED_NOTIFICATION: &str = "refused_notification";
    pub const METHOD_DIALECT: &str = "method_dialect_fallback";
    pub const CONVERSATION_MISMATCH: &str = "conversation_id_mismatch";
    pub const REPLY_PLAYER_ID: &str = "reply_player_id_not_assigned";
    /// The agent's https endpoint presents a certificate the league does not trust.
    pub const UNTRUSTED_CERTIFICATE: &str = "untrusted_certificate";
    /// Registered as a plain JSON-RPC agent, the agent answered MCP's `initialize`: it is called as an MCP
    /// server (a note of what the gateway learnt, not a fault).
    pub const MCP_SERVER: &str = "mcp_server";
    /// A referee's call to a player named another league than the one of the match whose lease it holds
    /// (taken for the lease's league).
    pub const LEAGUE_ID_NOT_THE_LEASE_S: &str = "league_id_not_the_lease_s";
    /// The league refused a referee's call to a player (or its report), and why (no token, say).
    pub const REFUSED_REFEREE_CALL: &str = "refused_referee_call";
    /// A referee reported what is no result (an unknown status, choices the players did not make, an
    /// outcome against the rule, a match whose players it never called): refused, the match replayed.
    pub const REFUSED_RESULT: &str = "refused_result";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_refuses_and_lenient_records() {
        let mut strict = Checker::new(Mode::Strict);
        let error = strict
            .deviation(
                kinds::TIMESTAMP_FORMAT,
                "20261121T090456Z",
                ErrorCode::InvalidTimestamp,
            )
            .expect_err("strict refuses");
        assert_eq!(error.code, ErrorCode::InvalidTimestamp);
        let mut lenient = Checker::new(Mode::Lenient);
        lenient
            .deviation(
                kinds::TIMESTAMP_FORMAT,
                "20261121T090456Z",
                ErrorCode::InvalidTimestamp,
            )
            .expect("lenient accepts");
        assert_eq!(lenient.into_deviations().len(), 1);
    }
}
