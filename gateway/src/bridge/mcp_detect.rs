//! When the gateway asks an agent whether it is an MCP server, and what it learns (ADR 0071).
//!
//! An MCP server answers a plain JSON-RPC call in several ways, none of them "I am an MCP server": the
//! official SDKs' transports refuse a POST that does not accept `text/event-stream` with `406`; the
//! TypeScript SDK's stateful example refuses any POST without a session with `400` ("No valid session
//! ID"), a server may refuse the POST's method or path with `404`/`405`; and the Python SDK in stateless
//! JSON mode takes the POST and answers an ordinary JSON-RPC error (`-32601`). So the gateway asks: when
//! a plain call is answered with one of those statuses, or with a JSON-RPC error before the agent ever
//! answered with a result, it sends MCP's `initialize` once. An answer to it makes the agent an MCP
//! server (the `mcp` dialect, stored with its registration; the call is sent again as a tool call);
//! anything else leaves it a plain agent, and the call's own answer is read as any agent's.
//!
//! Asked once per agent (and gateway replica): what it learnt is kept on the agent
//! ([`ExternalAgent::mcp_detection`]), shown by `league probe`, and, when the agent turned out to be an
//! MCP server, noted as an `mcp_server` compliance note that `league warnings` lists.

use std::time::Duration;

use league_proto::ErrorCode;
use league_v2::compliance::{Deviation, kinds};
use league_v2::league_error::LeagueResult;

use super::PlayerBridge;
use super::client::Answer;
use super::external_agents::ExternalAgent;

/// Whether an HTTP status is one an MCP server's transport gives a plain JSON-RPC POST: 400 (no
/// session), 404 (no such session or path), 405 (no such method on the path), 406 (the POST does not
/// accept `text/event-stream`). None is a plain JSON-RPC agent's answer to a call it can read, except
/// 404 for a method it lacks, which the `initialize` asked once tells apart.
pub(crate) fn refuses_plain_calls(status: http::StatusCode) -> bool {
    matches!(status.as_u16(), 400 | 404 | 405 | 406)
}

/// What the gateway learnt by asking an agent whether it is an MCP server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpDetection {
    pub is_mcp_server: bool,
    /// What made the gateway ask, and what the agent answered.
    pub detail: String,
}

impl PlayerBridge {
    /// `answer` is a plain call's answer from `agent`: when it is one an MCP server gives, and the agent
    /// was never asked, asks it (MCP `initialize`, within `limit`). [`Answer::McpServer`] when the agent
    /// is one (now or from an earlier ask), else the answer read as any agent's.
    pub(crate) async fn mcp_or_plain(
        &self,
        agent: &ExternalAgent,
        answer: LeagueResult<Answer>,
        limit: Duration,
    ) -> LeagueResult<Answer> {
        let (why, plain) = match answer {
            Ok(Answer::NotPlain { status, plain }) => (format!("HTTP {status}"), *plain),
            Ok(Answer::Error(error)) if !agent.answered() => (
                format!(
                    "the JSON-RPC error {} {:?} before any result",
                    error.code, error.message
                ),
                Ok(Answer::Error(error)),
            ),
            other => return other,
        };
        let detection = agent
            .mcp_detection
            // Boxed, as the MCP calls are (super::outbound): asked once per agent, and large.
            .get_or_init(|| Box::pin(self.detect(agent, why, limit)))
            .await;
        if detection.is_mcp_server {
            Ok(Answer::McpServer)
        } else {
            plain
        }
    }

    /// Sends `agent` MCP's `initialize` (its session is then open for the calls that follow).
    async fn detect(&self, agent: &ExternalAgent, why: String, limit: Duration) -> McpDetection {
        let initialized = agent
            .mcp
            .initialize(&self.client, &agent.contact_endpoint, limit)
            .await;
        let detection = match initialized {
            Ok(()) => McpDetection {
                is_mcp_server: true,
                detail: format!(
                    "answered a plain JSON-RPC call with {why}, and MCP initialize: an MCP server, \
                     called with tools/call from now on"
                ),
            },
            Err(error) => McpDetection {
                is_mcp_server: false,
                detail: format!(
                    "answered a plain JSON-RPC call with {why}, and not MCP initialize ({}): \
                     a plain JSON-RPC agent",
                    super::outbound::without_endpoint(error, agent).description
                ),
            },
        };
        tracing::info!(agent_id = %agent.agent_id, is_mcp_server = detection.is_mcp_server, detail = %detection.detail, "asked the agent whether it is an MCP server");
        if detection.is_mcp_server {
            let note = Deviation {
                kind: kinds::MCP_SERVER,
                detail: detection.detail.clone(),
                strict_error: ErrorCode::InvalidMessageFormat,
            };
            self.warnings.record(agent.agent_id.as_str(), [note]);
        }
        detection
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_statuses_an_mcp_transport_gives_a_plain_call() {
        for status in [400, 404, 405, 406] {
            assert!(refuses_plain_calls(
                http::StatusCode::from_u16(status).expect("status")
            ));
        }
        for status in [200, 202, 401, 403, 429, 500, 503] {
            assert!(!refuses_plain_calls(
                http::StatusCode::from_u16(status).expect("status")
            ));
        }
    }
}
