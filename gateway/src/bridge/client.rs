//! Calling an external agent: one JSON-RPC request over HTTP/1.1 (connections kept alive, Nagle off),
//! `http://` or `https://` (the certificate verified against the system's roots and
//! `LEAGUE_EXTRA_ROOTS`: league_runtime::tls), bounded by the call's deadline, and tolerant reading of whatever comes back — a proper response, a
//! bare result object, `"error": null` beside a result, errors under HTTP 200, 4xx or 5xx.
//!
//! Each call is a client span (named after the JSON-RPC method, `rpc.system = jsonrpc`), a child of the
//! span current when it is made (the bridge's `PlayerService` server span), and the request's W3C
//! `traceparent` names that client span: the agent's own work joins the match's trace under it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use league_proto::ErrorCode;
use league_runtime::tls::{self, TlsConfig, TlsFailure};
use serde_json::Value;
use serde_json::value::RawValue;
use tracing::Instrument;
use tracing::field::Empty;

use league_v2::compliance::{Checker, kinds};
use league_v2::jsonrpc::{self, RpcError};
use league_v2::league_error::{LeagueError, LeagueResult};

/// The largest answer read from an agent.
pub(crate) const MAX_ANSWER_BYTES: usize = 1 << 20;

/// How long a connection to an agent stays open with no call on it (ADR 0090). Longer than the gap
/// between a match's messages to one agent and between a league's rounds (about 0.1 s,
/// docs/benchmarks.md), so a playing agent's connection is reused; short enough that the connections a flood of registrations
/// opened to hostile agents are let go well within the hostile-agent test's 12 s. The pool's timer
/// sweeps idle connections once every `IDLE_CONNECTION`, so one is closed between 4 and 8 s after its
/// last call.
pub(crate) const IDLE_CONNECTION: Duration = Duration::from_secs(4);

/// What an agent answered.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Answer {
    Result(Value),
    Error(RpcError),
    /// The agent is an MCP server, which takes calls only as MCP tool calls ([`super::mcp_detect`]).
    McpServer,
    /// An HTTP status an MCP server's transport gives a plain JSON-RPC call
    /// ([`super::mcp_detect::refuses_plain_calls`]): perhaps an MCP server. `plain` is the answer read
    /// as any agent's.
    NotPlain {
        status: http::StatusCode,
        plain: Box<LeagueResult<Answer>>,
    },
}

impl Answer {
    /// The answer as any agent's, but for a `406`: the streamable HTTP transport's refusal of a POST that
    /// does not accept event streams, which no JSON-RPC endpoint gives (for the calls that ask no more,
    /// as START_MATCH's `assign_match`).
    pub(crate) fn read_plainly(self) -> LeagueResult<Answer> {
        match self {
            Answer::NotPlain { status, .. } if status == http::StatusCode::NOT_ACCEPTABLE => {
                Ok(Answer::McpServer)
            }
            Answer::NotPlain { plain, .. } => *plain,
            other => Ok(other),
        }
    }
}

/// Where a call goes: the endpoint as the agent gave it (for errors and the span's `url.full`) and, when
/// the caller keeps one, the same endpoint parsed ([`super::external_agents::ExternalAgent`] parses its
/// own once, not on every call).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Endpoint<'a> {
    pub(crate) text: &'a str,
    pub(crate) uri: Option<&'a http::Uri>,
}

impl<'a> From<&'a str> for Endpoint<'a> {
    fn from(text: &'a str) -> Self {
        Endpoint { text, uri: None }
    }
}

/// The HTTP client every call to an agent goes through, in any dialect.
pub(crate) type HttpClient = Client<HttpsConnector<HttpConnector>, Full<Bytes>>;

#[derive(Debug, Clone)]
pub struct AgentClient {
    http: HttpClient,
    next_id: std::sync::Arc<AtomicU64>,
}

impl AgentClient {
    /// A client trusting the system's roots and the extra ones `tls` names.
    pub fn new(tls: &TlsConfig) -> anyhow::Result<Self> {
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        connector.set_connect_timeout(Some(Duration::from_secs(5)));
        // The timer is what makes the idle timeout hold: without one, hyper-util looks at idle
        // connections only when a call asks for one to the same host, and only until it finds a fresh
        // one, so a connection no call takes again stays open for ever (the hostile-agent flood's were,
        // issue 53).
        let http = Client::builder(TokioExecutor::new())
            .pool_timer(TokioTimer::new())
            .pool_idle_timeout(IDLE_CONNECTION)
            .build(tls::https_connector(tls.client_config()?, connector));
        Ok(Self {
            http,
            next_id: std::sync::Arc::new(AtomicU64::new(1)),
        })
    }

    /// The HTTP client, for the MCP client transport (super::mcp_agent).
    pub(crate) fn http(&self) -> &HttpClient {
        &self.http
    }

    /// Calls `method` on the agent at `endpoint` and waits at most `limit` for the answer. Deviations in
    /// the answer's framing are noted on `checker` (and are errors in strict mode).
    pub(crate) async fn call(
        &self,
        endpoint: Endpoint<'_>,
        method: &str,
        params: impl serde::Serialize,
        limit: Duration,
        checker: &mut Checker,
    ) -> LeagueResult<Answer> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        // Shared JSON in the message (a round's table, sent to every player) is written in as it is.
        let body = league_v2::shared_json::to_vec(&jsonrpc::request(method, params, id));
        let Endpoint { text: endpoint, uri } = endpoint;
        let request = match uri {
            Some(uri) => http::Request::post(uri.clone()),
            None => http::Request::post(endpoint),
        };
        let mut request = request
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::ACCEPT, "application/json")
            .body(Full::new(Bytes::from(body)))
            .map_err(|error| {
                LeagueError::new(
                    ErrorCode::ConnectionError,
                    format!("bad contact endpoint {endpoint}: {error}"),
                )
            })?;
        let span = tracing::info_span!(
            "agent_call",
            otel.name = method,
            otel.kind = "client",
            otel.status_code = Empty,
            otel.status_description = Empty,
            rpc.system = "jsonrpc",
            rpc.method = method,
            rpc.jsonrpc.version = "2.0",
            rpc.jsonrpc.request_id = id,
            rpc.jsonrpc.error_code = Empty,
            url.full = endpoint,
            http.response.status_code = Empty,
        );
        league_runtime::telemetry::inject_span(&span, request.headers_mut());
        let answer = self
            .exchange(request, endpoint, method, limit, checker)
            .instrument(span.clone())
            .await;
        match &answer {
            Ok(Answer::Result(_) | Answer::McpServer | Answer::NotPlain { .. }) => {}
            Ok(Answer::Error(error)) => {
                span.record("rpc.jsonrpc.error_code", error.code);
                span.record("otel.status_code", "ERROR");
                span.record("otel.status_description", error.message.as_str());
            }
            Err(error) => {
                span.record("otel.status_code", "ERROR");
                span.record("otel.status_description", error.description.as_str());
            }
        }
        answer
    }

    /// Sends `request` and reads the answer, within `limit`.
    async fn exchange(
        &self,
        request: http::Request<Full<Bytes>>,
        endpoint: &str,
        method: &str,
        limit: Duration,
        checker: &mut Checker,
    ) -> LeagueResult<Answer> {
        let exchange = async {
            let response = self
                .http
                .request(request)
                .await
                .map_err(|error| unreachable(endpoint, &error, checker))?;
            let status = response.status();
            tracing::Span::current().record("http.response.status_code", status.as_u16());
            let body = Limited::new(response.into_body(), MAX_ANSWER_BYTES)
                .collect()
                .await
                .map_err(|error| {
                    LeagueError::new(
                        ErrorCode::ConnectionError,
                        format!("reading {endpoint}'s answer: {error}"),
                    )
                })?
                .to_bytes();
            Ok::<_, LeagueError>((status, body))
        };
        let sent = tokio::time::Instant::now();
        let exchanged = tokio::time::timeout(limit, exchange).await;
        super::overhead::agent_time(sent.elapsed());
        let (status, body) = exchanged.map_err(|_| {
            LeagueError::new(
                ErrorCode::Timeout,
                format!("{endpoint} did not answer {method} within {limit:?}"),
            )
        })??;
        read_answer(status, &body, checker)
    }
}

/// Why `endpoint` could not be reached, in full (hyper's own words name only the stage that failed). A
/// certificate the league does not trust is also noted against the agent, in either mode: its operator
/// lists it with `league warnings`, and its author sees it in `league probe`.
fn unreachable(
    endpoint: &str,
    error: &(dyn std::error::Error + 'static),
    checker: &mut Checker,
) -> LeagueError {
    let why = match tls::failure(error) {
        Some(failure @ TlsFailure::UntrustedCertificate(_)) => {
            checker.note(kinds::UNTRUSTED_CERTIFICATE, format!("{endpoint}: {failure}"));
            failure.to_string()
        }
        Some(failure @ TlsFailure::Other(_)) => failure.to_string(),
        None => tls::chain(error),
    };
    LeagueError::new(
        ErrorCode::ConnectionError,
        format!("cannot reach {endpoint}: {why}"),
    )
}

/// The members of a JSON-RPC answer that decide what it is: `Some` when present, whatever their value
/// (`"error": null`, `"result": null` included). The result is read into its value in the same pass
/// (it was first borrowed and then parsed again); the others are only looked at.
#[derive(serde::Deserialize)]
struct Members<'a> {
    #[serde(default, borrow, deserialize_with = "present")]
    jsonrpc: Option<&'a RawValue>,
    #[serde(default, deserialize_with = "present")]
    result: Option<Value>,
    #[serde(default, borrow, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

fn present<'de, D: serde::Deserializer<'de>, T: serde::Deserialize<'de>>(
    value: D,
) -> Result<Option<T>, D::Error> {
    T::deserialize(value).map(Some)
}

/// Reads an agent's HTTP answer.
pub(crate) fn read_answer(
    status: http::StatusCode,
    body: &[u8],
    checker: &mut Checker,
) -> LeagueResult<Answer> {
    let plain = read_plain_answer(status, body, checker);
    if super::mcp_detect::refuses_plain_calls(status) {
        return Ok(Answer::NotPlain {
            status,
            plain: Box::new(plain),
        });
    }
    plain
}

/// Reads an agent's HTTP answer as a JSON-RPC agent's.
fn read_plain_answer(status: http::StatusCode, body: &[u8], checker: &mut Checker) -> LeagueResult<Answer> {
    // Nearly every answer is a plain response with a result: its result is read, and nothing else is
    // built. Anything else (an error, a bare result, `"error": null`, a repeated member) is read below.
    if let Ok(Members {
        jsonrpc: Some(_),
        result: Some(result),
        error: None,
    }) = serde_json::from_slice(body)
    {
        return Ok(Answer::Result(result));
    }
    let parsed: Option<Value> = serde_json::from_slice(body).ok();
    let Some(Value::Object(mut object)) = parsed else {
        if status.is_server_error() {
            return Err(LeagueError::new(
                ErrorCode::ConnectionError,
                format!("the agent failed with HTTP {status}"),
            ));
        }
        if status.is_success() && body.iter().all(u8::is_ascii_whitespace) {
            // An empty 200/204: the agent took the message and had nothing to say.
            return Ok(Answer::Result(Value::Null));
        }
        return Err(LeagueError::new(
            ErrorCode::InvalidMessageFormat,
            format!("the agent answered HTTP {status} with a body that is not a JSON object"),
        ));
    };
    let framed =
        object.contains_key("jsonrpc") && (object.contains_key("result") || object.contains_key("error"));
    if !framed {
        checker.deviation(
            kinds::BARE_RESULT,
            "answer without the JSON-RPC wrapper",
            ErrorCode::InvalidMessageFormat,
        )?;
        return Ok(Answer::Result(Value::Object(object)));
    }
    match (object.remove("result"), object.remove("error")) {
        (_, Some(Value::Object(error))) => {
            let code = error
                .get("code")
                .and_then(Value::as_i64)
                .unwrap_or(jsonrpc::INTERNAL_ERROR);
            // An error without its message (JSON-RPC requires one) still has its code to go by.
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            Ok(Answer::Error(RpcError {
                code,
                message,
                data: error.get("data").cloned(),
            }))
        }
        (Some(result), Some(Value::Null)) => {
            checker.deviation(
                kinds::RESULT_WITH_ERROR_NULL,
                "\"error\": null beside a result",
                ErrorCode::InvalidMessageFormat,
            )?;
            Ok(Answer::Result(result))
        }
        (Some(result), None) => Ok(Answer::Result(result)),
        _ => Err(LeagueError::new(
            ErrorCode::InvalidMessageFormat,
            "the agent's JSON-RPC answer has neither a result nor an error",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use league_v2::compliance::Mode;
    use serde_json::json;

    fn read(status: u16, body: Value, mode: Mode) -> (LeagueResult<Answer>, usize) {
        let mut checker = Checker::new(mode);
        let status = http::StatusCode::from_u16(status).expect("status");
        let answer = read_answer(status, body.to_string().as_bytes(), &mut checker);
        (answer, checker.into_deviations().len())
    }

    #[test]
    fn answers_as_the_fixtures_show_them() {
        // peer-a: "error": null next to the result.
        let (answer, warnings) = read(
            200,
            json!({"jsonrpc": "2.0", "result": {"accept": true}, "error": null, "id": 1}),
            Mode::Lenient,
        );
        assert_eq!(answer, Ok(Answer::Result(json!({"accept": true}))));
        assert_eq!(warnings, 1);
        // peer-b: a clean response.
        let (answer, warnings) = read(
            200,
            json!({"jsonrpc": "2.0", "result": {"acknowledged": true}, "id": 3}),
            Mode::Strict,
        );
        assert_eq!(answer, Ok(Answer::Result(json!({"acknowledged": true}))));
        assert_eq!(warnings, 0);
        // peer-a's probe: method not found under HTTP 404.
        let (answer, _) = read(
            404,
            json!({"jsonrpc": "2.0", "result": null, "error": {"code": -32601, "message": "Method not found"}, "id": 7}),
            Mode::Lenient,
        );
        // A 404 may be an MCP transport's: read as the agent's error, with the status kept for asking.
        let Ok(Answer::NotPlain { status, plain }) = answer else {
            panic!("a 404 is kept: {answer:?}");
        };
        assert_eq!(status, http::StatusCode::NOT_FOUND);
        assert!(matches!(*plain, Ok(Answer::Error(RpcError { code: -32601, .. }))));
    }

    #[test]
    fn plain_responses_read_as_the_general_reader_reads_them() {
        let mut checker = Checker::new(Mode::Strict);
        let ok = http::StatusCode::OK;
        let plain = br#"{"jsonrpc": "2.0", "result": {"accept": true, "n": 1.5}, "id": 7}"#;
        assert_eq!(
            read_answer(ok, plain, &mut checker),
            Ok(Answer::Result(json!({"accept": true, "n": 1.5})))
        );
        // A member given twice is not the usual answer: the last one counts, as before.
        let twice = br#"{"jsonrpc": "2.0", "result": 1, "result": 2, "id": 7}"#;
        assert_eq!(read_answer(ok, twice, &mut checker), Ok(Answer::Result(json!(2))));
        let null_result = br#"{"jsonrpc": "2.0", "result": null, "id": 7}"#;
        assert_eq!(
            read_answer(ok, null_result, &mut checker),
            Ok(Answer::Result(Value::Null))
        );
        assert!(checker.into_deviations().is_empty());
    }

    #[test]
    fn bare_bodies_and_failures() {
        let (answer, warnings) = read(200, json!({"status": "joined"}), Mode::Lenient);
        assert_eq!(
            (answer, warnings),
            (Ok(Answer::Result(json!({"status": "joined"}))), 1)
        );
        let (answer, _) = read(200, json!({"status": "joined"}), Mode::Strict);
        assert!(answer.is_err());
        let mut checker = Checker::new(Mode::Lenient);
        let failed = read_answer(http::StatusCode::BAD_GATEWAY, b"oops", &mut checker);
        assert_eq!(failed.map_err(|e| e.code), Err(ErrorCode::ConnectionError));
        let empty = read_answer(http::StatusCode::NO_CONTENT, b"", &mut checker);
        assert_eq!(empty, Ok(Answer::Result(Value::Null)));
    }

    #[test]
    fn an_mcp_server_s_refusal_of_a_plain_call_is_kept_with_its_plain_reading() {
        // The Python SDK's streamable HTTP server, to a POST accepting only JSON.
        let (answer, warnings) = read(
            406,
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600,
                "message": "Not Acceptable: Client must accept both application/json and text/event-stream"}}),
            Mode::Strict,
        );
        assert_eq!(warnings, 0);
        let answer = answer.expect("an answer");
        assert!(matches!(&answer, Answer::NotPlain { status, plain }
            if *status == http::StatusCode::NOT_ACCEPTABLE && matches!(**plain, Ok(Answer::Error(_)))));
        // A call that asks no more takes a 406 for an MCP server.
        assert_eq!(answer.read_plainly(), Ok(Answer::McpServer));
        // rmcp's, in plain text.
        let mut checker = Checker::new(Mode::Strict);
        let plain = read_answer(
            http::StatusCode::NOT_ACCEPTABLE,
            b"Not Acceptable: Client must accept both application/json and text/event-stream",
            &mut checker,
        );
        assert_eq!(plain.and_then(Answer::read_plainly), Ok(Answer::McpServer));
        // The TypeScript SDK's stateful example, to a POST without a session: its error, as any agent's.
        let no_session = read_answer(
            http::StatusCode::BAD_REQUEST,
            br#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}"#,
            &mut checker,
        );
        let Ok(Answer::NotPlain { status, .. }) = &no_session else {
            panic!("a 400 is kept: {no_session:?}");
        };
        assert_eq!(*status, http::StatusCode::BAD_REQUEST);
        assert!(matches!(
            no_session.and_then(Answer::read_plainly),
            Ok(Answer::Error(RpcError { code: -32000, .. }))
        ));
    }

    /// A JSON-RPC agent on a port of its own that keeps every connection open until the client closes
    /// it; its address and the count of connections it holds.
    async fn counting_agent() -> (
        std::net::SocketAddr,
        std::sync::Arc<std::sync::atomic::AtomicUsize>,
    ) {
        use std::sync::Arc;
        use std::sync::atomic::AtomicUsize;
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let address = listener.local_addr().expect("address");
        let open = Arc::new(AtomicUsize::new(0));
        let counted = open.clone();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let open = counted.clone();
                open.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    let mut read = Vec::new();
                    let mut buffer = [0u8; 4096];
                    while let Ok(count) = stream.read(&mut buffer).await
                        && count > 0
                    {
                        read.extend_from_slice(&buffer[..count]);
                        if whole_request(&read) {
                            let body = r#"{"jsonrpc": "2.0", "result": {"ok": true}, "id": 1}"#;
                            let answer = format!(
                                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                                body.len()
                            );
                            if stream.write_all(answer.as_bytes()).await.is_err() {
                                break;
                            }
                            read.clear();
                        }
                    }
                    open.fetch_sub(1, Ordering::SeqCst);
                });
            }
        });
        (address, open)
    }

    /// Whether `read` holds a request's head and its `content-length` body.
    fn whole_request(read: &[u8]) -> bool {
        let Some(end) = read.windows(4).position(|window| window == b"\r\n\r\n") else {
            return false;
        };
        let head = String::from_utf8_lossy(&read[..end]).to_ascii_lowercase();
        let length: usize = head
            .lines()
            .find_map(|line| line.strip_prefix("content-length:"))
            .and_then(|length| length.trim().parse().ok())
            .unwrap_or(0);
        read.len() >= end + 4 + length
    }

    #[tokio::test]
    async fn a_connection_no_call_takes_again_is_closed() {
        let client = AgentClient::new(&TlsConfig::default()).expect("a client");
        let (address, open) = counting_agent().await;
        let mut checker = Checker::new(Mode::Lenient);
        let answer = client
            .call(
                format!("http://{address}/").as_str().into(),
                "ping",
                json!({}),
                Duration::from_secs(5),
                &mut checker,
            )
            .await;
        assert_eq!(answer, Ok(Answer::Result(json!({"ok": true}))));
        // Kept alive for the next call...
        assert_eq!(open.load(Ordering::SeqCst), 1);
        // ...and let go once it has been idle for IDLE_CONNECTION (the pool sweeps once every
        // IDLE_CONNECTION, so within two of them), though no call comes to take it.
        let started = tokio::time::Instant::now();
        league_testkit::observe::observe(
            "the idle connection closed",
            IDLE_CONNECTION * 2 + Duration::from_secs(5),
            async || (open.load(Ordering::SeqCst) == 0).then_some(()),
        )
        .await;
        eprintln!("closed {:?} after the call", started.elapsed());
    }
}
