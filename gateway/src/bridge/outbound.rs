//! One message from the league to an external agent (player or referee), sent the way that agent takes
//! it: with its outbound `auth_token` ([`league_v2::outbound_token`]), the sender in its form
//! ([`league_v2::sender`]), and the method its dialect names. What does not work is tried once
//! another way, and what works is remembered on the agent:
//!
//! - `-32601`: the next dialect (the agent's own, canonical, message type, message type in lower case).
//!   The one that works is remembered per agent and message type (so the -32601s are paid once) and
//!   becomes the agent's dialect for message types it has not been sent yet.
//! - refused over the sender: the same dialect once more with the sender in the other form, which is
//!   then the agent's form.
//!
//! - the first call that cannot reach an agent that never answered: once more after [`FIRST_RETRY`]
//!   (an agent that registered before its server listened).
//!
//! `PlayerBridge::call` is the entry point for every outbound call (the bridge's `PlayerService` and
//! START_MATCH to external referees); `PlayerBridge::notify` is a call whose failure is never retried
//! unless the agent could not be reached, with what happened recorded as a compliance warning.

use std::time::Duration;

use league_domain::MessageType;
use league_manager_link::league_status::to_status;
use league_proto::{ErrorCode, error_code};
use league_v2::addressed::{Addressed, Outbound};
use league_v2::compliance::{Checker, Deviation, kinds};
use league_v2::dialect::Dialect;
use league_v2::jsonrpc::{METHOD_NOT_FOUND, RpcError};
use league_v2::league_error::LeagueError;
use league_v2::sender::refused_over_sender;
use serde_json::Value;
use tonic::Status;

use super::PlayerBridge;
use super::client::Answer;
use super::external_agents::ExternalAgent;

/// Why a call to an agent did not produce a result.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The agent knows no method for this message in any dialect tried.
    NotImplemented,
    /// The agent answered with a JSON-RPC error.
    Refused(RpcError),
    /// No usable answer (timeout, connection, malformed answer).
    League(LeagueError),
}

/// How the status of a call the agent has no method for begins (the probe tells it from a refusal).
const NOT_IMPLEMENTED: &str = "the agent implements no method for";

/// Whether a call's status says the agent has no method for the message in any dialect tried, rather
/// than refusing it.
pub fn is_not_implemented(status: &Status) -> bool {
    status.message().starts_with(NOT_IMPLEMENTED)
}

impl Failure {
    pub(crate) fn status(&self, what: &str) -> Status {
        match self {
            Failure::NotImplemented => error_code::status(
                ErrorCode::InvalidMessageFormat,
                format!("{NOT_IMPLEMENTED} {what}"),
            ),
            Failure::Refused(error) => {
                // An agent that names a league.v2 code keeps it; anything else is a refusal.
                let code = error
                    .data
                    .as_ref()
                    .and_then(|data| data.get("error_code"))
                    .and_then(Value::as_str)
                    .and_then(|code| code.parse().ok())
                    .unwrap_or(ErrorCode::InvalidMessageFormat);
                error_code::status(
                    code,
                    format!("the agent refused {what}: {} {}", error.code, error.message),
                )
            }
            Failure::League(error) => to_status(error.clone()),
        }
    }
}

/// `error` with `agent`'s contact endpoint left out. What went wrong reaches the referee and becomes
/// the match's reason, which the public page, its event stream and the league's queries show; the
/// endpoint is the operator's to see (the `agent_call` span's `url.full`), never the public's.
pub(crate) fn without_endpoint(mut error: LeagueError, agent: &ExternalAgent) -> LeagueError {
    if !agent.contact_endpoint.is_empty() {
        error.description = error
            .description
            .replace(agent.contact_endpoint.as_str(), "the agent's contact endpoint");
    }
    error
}

/// How soon the first call that could not reach a just-registered agent is sent again (within 250 ms;
/// later failures are the referee's to retry, with its usual delay).
pub(crate) const FIRST_RETRY: Duration = Duration::from_millis(200);

/// The dialects tried, in order, after the one remembered for the message type and the agent's own.
const FALLBACKS: [Dialect; 3] = [
    Dialect::Canonical,
    Dialect::MessageType,
    Dialect::LowerMessageType,
];

/// Whether an agent's words (an error's message, a result's `status`) say it does not know the message:
/// "Unknown message type", `unknown_message_type`, "not implemented", "unsupported message". Such an
/// answer is the agent's way of saying -32601, whatever code or result carries it.
pub(crate) fn says_unknown_message(text: &str) -> bool {
    let text = text.to_ascii_lowercase().replace(['_', '-'], " ");
    [
        "unknown message",
        "not implemented",
        "unsupported message",
        "unknown method",
    ]
    .iter()
    .any(|words| text.contains(words))
}

/// The warning kind for an agent's refusal of a notification: what the refusal was about.
pub(crate) fn refusal_kind(error: &RpcError) -> &'static str {
    let error_code = error
        .data
        .as_ref()
        .and_then(|data| data.get("error_code"))
        .and_then(Value::as_str);
    let message = error.message.to_ascii_lowercase();
    if says_unknown_message(&error.message) {
        kinds::UNIMPLEMENTED_NOTIFICATION
    } else if refused_over_sender(error) {
        kinds::REFUSED_SENDER
    } else if error.code == -32001
        || matches!(error_code, Some("E011" | "E012"))
        || message.contains("auth")
        || message.contains("token")
    {
        kinds::REFUSED_AUTH
    } else if error.code == league_v2::jsonrpc::INVALID_PARAMS {
        kinds::REFUSED_PARAMS
    } else {
        kinds::REFUSED_NOTIFICATION
    }
}

impl PlayerBridge {
    /// Sends `message` (built with the league's sender and no token) to `agent` and returns its result;
    /// after the agent's greeting if that is under way (crate::inbound::greeting), within `limit`.
    pub(crate) async fn call<M: Outbound + Sync>(
        &self,
        agent: &ExternalAgent,
        kind: MessageType,
        message: &M,
        limit: Duration,
    ) -> Result<Value, Failure> {
        let started = tokio::time::Instant::now();
        agent.greeted(limit).await;
        let limit = limit.saturating_sub(started.elapsed());
        self.call_now(agent, kind, message, limit).await
    }

    /// [`PlayerBridge::call`] without waiting for a greeting (the greeting itself).
    pub(crate) async fn call_now<M: Outbound + Sync>(
        &self,
        agent: &ExternalAgent,
        kind: MessageType,
        message: &M,
        limit: Duration,
    ) -> Result<Value, Failure> {
        let started = tokio::time::Instant::now();
        let mut outcome = self.call_adapting(agent, kind, message, limit).await;
        // An agent that registered before its server listened: its first unreachable call is sent again
        // at once rather than after the referee's retry delay (seconds), once per agent.
        if let Err(Failure::League(error)) = &outcome
            && error.code == ErrorCode::ConnectionError
            && limit.saturating_sub(started.elapsed()) > FIRST_RETRY
            && agent.first_unreached()
        {
            tracing::debug!(agent_id = %agent.agent_id, "first call unreachable; sent again at once");
            tokio::time::sleep(FIRST_RETRY).await;
            let left = limit.saturating_sub(started.elapsed());
            outcome = self.call_adapting(agent, kind, message, left).await;
        }
        // A static label: no allocation per call, for the counter's lookup too.
        let label = match &outcome {
            Ok(_) => "ok",
            Err(Failure::NotImplemented) => "not_implemented",
            Err(Failure::Refused(_)) => "refused",
            Err(Failure::League(error)) => error.code.code(),
        };
        crate::metrics::OUTBOUND
            .get_or_create(&crate::metrics::OutboundLabels {
                message_type: kind.as_str(),
                outcome: label,
            })
            .inc();
        outcome
    }

    async fn call_adapting<M: Outbound + Sync>(
        &self,
        agent: &ExternalAgent,
        kind: MessageType,
        message: &M,
        limit: Duration,
    ) -> Result<Value, Failure> {
        let deadline = tokio::time::Instant::now() + limit;
        let first = agent.dialect_for(kind);
        let mut dialects = vec![first];
        for dialect in std::iter::once(agent.dialect()).chain(FALLBACKS) {
            if !dialects.contains(&dialect) {
                dialects.push(dialect);
            }
        }
        let mut form = agent.sender_form();
        let mut sender_retried = false;
        let mut checker = Checker::new(self.mode);
        let mut next = 0;
        let outcome = loop {
            let Some(&dialect) = dialects.get(next) else {
                tracing::debug!(agent_id = %agent.agent_id, message_type = kind.as_str(), ?dialects, "method not implemented");
                break Err(Failure::NotImplemented);
            };
            // Written with the agent's sender form and token as it is sent: no attempt copies it.
            let addressed = Addressed::new(message, form, agent.outbound_token.as_str());
            let (method, params) = dialect.frame(kind, &addressed);
            let remaining = deadline.saturating_duration_since(tokio::time::Instant::now());
            let answer = if dialect == Dialect::Mcp {
                // Boxed: rmcp's large futures would make every call's future as large (ADR 0092).
                let mcp = agent
                    .mcp
                    .call(&self.client, &agent.contact_endpoint, kind, &addressed, remaining);
                Box::pin(mcp).await
            } else {
                let answer = self
                    .client
                    .call(agent.endpoint(), &method, params, remaining, &mut checker)
                    .await;
                let remaining = deadline.saturating_duration_since(tokio::time::Instant::now());
                self.mcp_or_plain(agent, answer, remaining).await
            };
            match answer {
                Ok(Answer::Result(result)) => {
                    agent.set_answered();
                    agent.set_dialect_for(kind, dialect);
                    // An MCP server is not answering in another dialect: it is what the agent is.
                    if dialect != first && dialect != Dialect::Mcp {
                        checker
                            .deviation(
                                kinds::METHOD_DIALECT,
                                format!(
                                    "{}: registered as {}, answers {}",
                                    kind.as_str(),
                                    agent.dialect().as_str(),
                                    dialect.as_str()
                                ),
                                ErrorCode::InvalidMessageFormat,
                            )
                            .ok();
                        // Likely the agent's dialect for the messages not sent it yet, too.
                        agent.set_dialect(dialect);
                    }
                    if form != agent.sender_form() {
                        tracing::info!(agent_id = %agent.agent_id, form = form.as_str(), "agent takes the league's senders in the other form");
                        self.agents.learned_sender_form(agent, form);
                    }
                    break Ok(result);
                }
                // An MCP server takes nothing but MCP (ADR 0046): every message goes to it as a tool call
                // from now on, this one too, with no other dialect after it.
                Ok(Answer::McpServer) if !dialects.contains(&Dialect::Mcp) => {
                    tracing::info!(agent_id = %agent.agent_id, "the agent is an MCP server");
                    self.agents.learned_dialect(agent, Dialect::Mcp);
                    dialects.truncate(next + 1);
                    dialects.push(Dialect::Mcp);
                    next += 1;
                }
                Ok(Answer::McpServer | Answer::NotPlain { .. }) => {
                    break Err(Failure::League(LeagueError::new(
                        ErrorCode::InvalidMessageFormat,
                        "the agent refuses both plain JSON-RPC and MCP tool calls",
                    )));
                }
                Ok(Answer::Error(error)) if error.code == METHOD_NOT_FOUND && dialect == Dialect::Mcp => {
                    break Err(Failure::NotImplemented);
                }
                Ok(Answer::Error(error)) if error.code == METHOD_NOT_FOUND => next += 1,
                Ok(Answer::Error(error)) if !sender_retried && refused_over_sender(&error) => {
                    sender_retried = true;
                    form = form.other();
                }
                Ok(Answer::Error(error)) => break Err(Failure::Refused(error)),
                Err(error) => break Err(Failure::League(without_endpoint(error, agent))),
            }
        };
        self.warnings
            .record(agent.agent_id.as_str(), checker.into_deviations());
        outcome
    }

    /// A notification: delivered, or not taken by the agent (a warning saying why, never a retry); only
    /// a failure to reach the agent (E001/E009) is worth trying again. An answer that breaks the
    /// specification (strict mode refuses peer-a's `"error": null`, say) still means the agent got the
    /// message: a warning too, since sending it again would get the same answer.
    pub(crate) async fn notify<M: Outbound + Sync>(
        &self,
        agent: &ExternalAgent,
        kind: MessageType,
        message: &M,
        limit: Duration,
    ) -> Result<(), Status> {
        let warning = match self.call(agent, kind, message, limit).await {
            // A result that says the agent does not know the message (`{"status":
            // "unknown_message_type"}`) is a -32601 in other words.
            Ok(result)
                if result
                    .get("status")
                    .and_then(Value::as_str)
                    .is_some_and(says_unknown_message) =>
            {
                Deviation {
                    kind: kinds::UNIMPLEMENTED_NOTIFICATION,
                    detail: format!("{}: answered {result}", kind.as_str()),
                    strict_error: ErrorCode::InvalidMessageFormat,
                }
            }
            Ok(_) => return Ok(()),
            Err(Failure::NotImplemented) => Deviation {
                kind: kinds::UNIMPLEMENTED_NOTIFICATION,
                detail: format!("{}: no method for it in any dialect tried", kind.as_str()),
                strict_error: ErrorCode::InvalidMessageFormat,
            },
            Err(Failure::Refused(error)) => Deviation {
                kind: refusal_kind(&error),
                detail: format!("{} refused: {} {}", kind.as_str(), error.code, error.message),
                strict_error: ErrorCode::InvalidMessageFormat,
            },
            Err(Failure::League(error)) if !error.code.is_retryable() => Deviation {
                kind: kinds::REFUSED_NOTIFICATION_ANSWER,
                detail: format!("{}: {}", kind.as_str(), error.description),
                strict_error: error.code,
            },
            Err(failure @ Failure::League(_)) => return Err(failure.status(kind.as_str())),
        };
        self.warnings.record(agent.agent_id.as_str(), [warning]);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn error(code: i64, message: &str, data: Option<Value>) -> RpcError {
        RpcError {
            code,
            message: message.to_owned(),
            data,
        }
    }

    #[test]
    fn refusals_say_what_they_were_about() {
        assert_eq!(
            refusal_kind(&error(-32602, "Sender not registered", None)),
            kinds::REFUSED_SENDER
        );
        assert_eq!(
            refusal_kind(&error(
                -32001,
                "Missing auth token",
                Some(json!({"error_code": "E012"}))
            )),
            kinds::REFUSED_AUTH
        );
        assert_eq!(
            refusal_kind(&error(-32602, "Missing required field: retry_info", None)),
            kinds::REFUSED_PARAMS
        );
        assert_eq!(
            refusal_kind(&error(-32000, "busy", None)),
            kinds::REFUSED_NOTIFICATION
        );
        assert_eq!(
            refusal_kind(&error(-32000, "Unknown message type", None)),
            kinds::UNIMPLEMENTED_NOTIFICATION
        );
    }

    #[test]
    fn an_agent_s_words_for_not_knowing_a_message_are_recognised() {
        for text in [
            "unknown_message_type",
            "Unknown message type: GAME_ERROR",
            "Not implemented",
            "unsupported message",
            "Unknown method",
        ] {
            assert!(says_unknown_message(text), "{text}");
        }
        for text in ["acknowledged", "ok", "busy", "Auth failed", "known message"] {
            assert!(!says_unknown_message(text), "{text}");
        }
    }
}
