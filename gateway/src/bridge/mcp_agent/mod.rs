//! Agents that are MCP servers (the `mcp` dialect, ADR 0046): the gateway calls them as an MCP client,
//! over the streamable HTTP transport at their contact endpoint, each league message being one
//! `tools/call` of the tool that handles it ([`tools`]).
//!
//! One session per agent ([`McpSession`], kept on the agent): opened by the first call (`initialize`,
//! then `tools/list` read once into the agent's tools), reused by every later call over the bridge's
//! kept-alive connections, and initialized again by rmcp when the server says it no longer knows it
//! (`404` to a call in the session). A session whose transport closed is opened again by the next call.
//! Each call is bounded by the deadline any dialect's call has, and what goes wrong is the same
//! [`LeagueError`] (E001 no answer in time, E009 unreachable), so timeouts and technical losses are
//! exactly those of the other dialects.
//!
//! Every session has a bounded life ([`limits`]): a place among the agent's few and the gateway's
//! [`limits::MAX_SESSIONS`], taken when it starts opening and given back when it is let go — the call
//! that opened it ran out of time, it failed, or it was replaced — at which moment every exchange of it
//! ends and its connections close. What went wrong is said in plain words ([`plain`]): the reason may
//! reach the agent and the public as a technical loss's.
//!
//! How the gateway learns that an agent is an MCP server: from its answers, by asking it `initialize`
//! once when a plain call's answer is one an MCP server gives (super::mcp_detect); the call is then sent
//! again as an MCP tool call, and the agent is called in the `mcp` dialect from then on. The operator may
//! also name the dialect in configuration (`dialects`).

mod http;
pub(crate) mod limits;
pub(crate) mod tools;

use std::sync::Arc;
use std::time::Duration;

use league_domain::MessageType;
use league_proto::ErrorCode;
use league_v2::jsonrpc::{METHOD_NOT_FOUND, RpcError};
use league_v2::league_error::{LeagueError, LeagueResult};
use rmcp::model::{CallToolRequestParams, MetaObject, RequestMetaObject};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceError, ServiceExt};
use serde::Serialize;
use tracing::Instrument;

use super::client::{AgentClient, Answer};
use limits::{AgentSessions, SessionLife};
use tools::Tools;

/// An open session with an agent's MCP server, and the tools it lists.
struct Open {
    service: RunningService<RoleClient, ()>,
    tools: Tools,
    /// Dropped after the service: the session's exchanges end and its places are given back.
    _life: SessionLife,
}

/// The MCP session with one agent, opened by the first call that needs it.
#[derive(Default)]
pub(crate) struct McpSession {
    open: tokio::sync::Mutex<Option<Arc<Open>>>,
    places: AgentSessions,
}

impl std::fmt::Debug for McpSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let open = self.open.try_lock().map(|open| open.is_some()).ok();
        f.debug_struct("McpSession").field("open", &open).finish()
    }
}

impl McpSession {
    /// The open session, or a new one (initialized, its tools listed). Calls that find it being opened
    /// wait for it (each within its own deadline). If this is dropped before the session is open, the
    /// session's life goes with it: nothing of the attempt outlives the call that made it.
    async fn open(&self, client: &AgentClient, endpoint: &str) -> LeagueResult<Arc<Open>> {
        let mut slot = self.open.lock().await;
        if let Some(open) = slot.as_ref().filter(|open| !open.service.is_transport_closed()) {
            return Ok(open.clone());
        }
        // A failed session lets go of its place before another takes one.
        slot.take();
        let open = {
            let (life, lifeline) = self.places.admit().await?;
            let transport = StreamableHttpClientTransport::with_client(
                http::HyperMcp {
                    http: client.http().clone(),
                    lifeline,
                },
                StreamableHttpClientTransportConfig::with_uri(endpoint)
                    .max_concurrent_requests(limits::CALLS_PER_SESSION),
            );
            let service = ().serve(transport).await.map_err(|error| {
                tracing::debug!(%endpoint, %error, "no MCP session");
                LeagueError::new(
                    ErrorCode::ConnectionError,
                    format!("{endpoint} did not open an MCP session: {}", plain(&error)),
                )
            })?;
            let listed = service
                .peer()
                .list_all_tools()
                .await
                .map_err(|error| failed(endpoint, "tools/list", error))?;
            Arc::new(Open {
                tools: Tools::new(&listed),
                service,
                _life: life,
            })
        };
        *slot = Some(open.clone());
        Ok(open)
    }

    /// Opens the session (MCP `initialize`, then `tools/list`) within `limit`, if it is not open: asks
    /// the agent whether it is an MCP server (super::mcp_detect).
    pub(crate) async fn initialize(
        &self,
        client: &AgentClient,
        endpoint: &str,
        limit: Duration,
    ) -> LeagueResult<()> {
        tokio::time::timeout(limit, self.open(client, endpoint))
            .await
            .map_err(|_| {
                LeagueError::new(
                    ErrorCode::Timeout,
                    format!("{endpoint} did not answer MCP initialize within {limit:?}"),
                )
            })?
            .map(drop)
    }

    /// Forgets the session (its transport failed): the next call opens another.
    async fn close(&self) {
        self.open.lock().await.take();
    }

    /// Sends `message` (a league message of type `kind`, as the agent takes it) to the tool that handles
    /// it, within `limit`. An agent with no tool for it answers "method not found", as any dialect's
    /// agent that lacks the method.
    pub(crate) async fn call<M: Serialize>(
        &self,
        client: &AgentClient,
        endpoint: &str,
        kind: MessageType,
        message: &M,
        limit: Duration,
    ) -> LeagueResult<Answer> {
        let sent = tokio::time::Instant::now();
        let open = tokio::time::timeout(limit, self.open(client, endpoint))
            .await
            .map_err(|_| {
                LeagueError::new(
                    ErrorCode::Timeout,
                    format!("{endpoint} did not open an MCP session within {limit:?}"),
                )
            })??;
        let Some(tool) = open.tools.get(kind) else {
            return Ok(Answer::Error(RpcError::new(
                METHOD_NOT_FOUND,
                format!("the agent's MCP server has no tool for {}", kind.as_str()),
            )));
        };
        // Written as the other dialects write it (shared JSON spliced in), then read as the arguments.
        let message = serde_json::from_slice(&league_v2::shared_json::to_vec(message)).map_err(|error| {
            LeagueError::new(
                ErrorCode::InvalidMessageFormat,
                format!("writing {}: {error}", kind.as_str()),
            )
        })?;
        let mut params =
            CallToolRequestParams::new(tool.name.clone()).with_arguments(tool.arguments(message));
        let span = tracing::info_span!(
            "agent_call",
            otel.name = tool.name.as_str(),
            otel.kind = "client",
            rpc.system = "mcp",
            rpc.method = "tools/call",
            url.full = endpoint,
        );
        // The call's trace context goes where MCP carries it, the request's `_meta` (the official SDKs
        // read `traceparent` there), as the JSON-RPC dialects' goes in the HTTP header.
        let mut carrier = ::http::HeaderMap::new();
        league_runtime::telemetry::inject_span(&span, &mut carrier);
        params.meta = trace_meta(&carrier);
        let remaining = limit.saturating_sub(sent.elapsed());
        let called = tokio::time::timeout(remaining, open.service.peer().call_tool(params))
            .instrument(span)
            .await;
        super::overhead::agent_time(sent.elapsed());
        match called {
            Ok(Ok(result)) => Ok(tools::answer(result)),
            Ok(Err(ServiceError::McpError(error))) => Ok(Answer::Error(RpcError {
                code: i64::from(error.code.0),
                message: error.message.into_owned(),
                data: error.data,
            })),
            Ok(Err(error)) => {
                if open.service.is_transport_closed() {
                    self.close().await;
                }
                Err(failed(endpoint, &tool.name, error))
            }
            Err(_) => Err(LeagueError::new(
                ErrorCode::Timeout,
                format!("{endpoint} did not answer {} within {limit:?}", tool.name),
            )),
        }
    }
}

/// The trace context `headers` carry (`traceparent`, `tracestate`) as an MCP request's `_meta`.
fn trace_meta(headers: &::http::HeaderMap) -> Option<RequestMetaObject> {
    let meta: serde_json::Map<String, serde_json::Value> = headers
        .iter()
        .filter_map(|(name, value)| Some((name.as_str().to_owned(), value.to_str().ok()?.into())))
        .collect();
    (!meta.is_empty()).then_some(RequestMetaObject(MetaObject(meta)))
}

/// A call in the session that got no answer.
fn failed(endpoint: &str, what: &str, error: ServiceError) -> LeagueError {
    tracing::debug!(%endpoint, %error, what, "no MCP answer");
    let code = match error {
        ServiceError::Timeout { .. } => ErrorCode::Timeout,
        ServiceError::UnexpectedResponse => ErrorCode::InvalidMessageFormat,
        _ => ErrorCode::ConnectionError,
    };
    let why = match &error {
        ServiceError::Timeout { .. } => "no answer in time".to_owned(),
        ServiceError::UnexpectedResponse => "an answer that is not the call's".to_owned(),
        other => plain(other),
    };
    LeagueError::new(code, format!("{endpoint} did not answer {what}: {why}"))
}

/// What went wrong in an MCP exchange, in plain words: the HTTP failure under it if there is one (the
/// gateway's own words), else what kind of failure it was — never rmcp's error text, which names the
/// library's types (`Transport [rmcp::transport::worker::…] error`) and may quote whole messages.
fn plain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = Some(error);
    while let Some(error) = cause {
        if let Some(http) = error.downcast_ref::<http::HttpError>() {
            return http.to_string();
        }
        // rmcp's wrappers name the transport's error without making it their source.
        cause = match error.downcast_ref() {
            Some(ServiceError::TransportSend(transport)) => Some(transport),
            _ => match error.downcast_ref() {
                Some(rmcp::service::ClientInitializeError::TransportError { error, .. }) => Some(error),
                _ => error.source(),
            },
        };
    }
    let closed = error.to_string().to_ascii_lowercase().contains("closed");
    if closed {
        "the connection closed".to_owned()
    } else {
        "its answer was not the MCP the gateway expected".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn failure_reasons_are_plain_words_without_the_library_s_types() {
        let transport = "rmcp::transport::worker::WorkerTransport<rmcp::transport::streamable_http_client::StreamableHttpClientWorker<HyperMcp>>";
        let under = |error: Box<dyn std::error::Error + Send + Sync>| {
            ServiceError::TransportSend(rmcp::transport::DynamicTransportError::from_parts(
                transport,
                std::any::TypeId::of::<()>(),
                error,
            ))
        };
        let cut = under(Box::new(http::HttpError::Cut(limits::Cut::Closed)));
        assert!(
            cut.to_string().contains("rmcp::"),
            "the library's own words: {cut}"
        );
        let failure = failed("http://agent/mcp", "choose_parity", cut);
        assert_eq!(
            failure.description,
            "http://agent/mcp did not answer choose_parity: the session was closed"
        );
        let other = failed(
            "http://agent/mcp",
            "initialize",
            under("worker quit: fatal".into()),
        );
        assert!(!other.description.contains("rmcp"), "{}", other.description);
        assert!(!other.description.contains("::"), "{}", other.description);
        let closed = failed("http://agent/mcp", "tools/list", ServiceError::TransportClosed);
        assert_eq!(
            closed.description,
            "http://agent/mcp did not answer tools/list: the connection closed"
        );
    }

    #[test]
    fn the_trace_context_goes_in_the_call_s_meta() {
        let mut headers = ::http::HeaderMap::new();
        assert_eq!(trace_meta(&headers), None);
        let traceparent = "00-5b8efff798038103d269b633813fc60c-eee19b7ec3c1b174-01";
        headers.insert("traceparent", ::http::HeaderValue::from_static(traceparent));
        let meta = trace_meta(&headers).expect("a _meta");
        let mut params = CallToolRequestParams::new("choose_parity");
        params.meta = Some(meta);
        let written = serde_json::to_value(params).expect("params");
        assert_eq!(written["_meta"], json!({"traceparent": traceparent}), "{written}");
    }
}
