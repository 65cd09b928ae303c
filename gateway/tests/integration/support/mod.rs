//! Test support for the gateway's integration tests: a real manager over a fresh database, real gateways
//! (either compliance mode, limits selectable, every port 0), an HTTP client that shows exactly what came
//! back, fake external agents that behave like the players in the fixtures, and a database snapshot that
//! proves a refused call changed nothing.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::post;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use league_gateway::compliance::Mode;
use league_gateway::{GatewayApp, GatewayConfig};
use league_manager::ManagerConfig;
use league_proto::v2::player_service_client::PlayerServiceClient;
use league_runtime::Shutdown;
use league_runtime::grpc::GrpcChannel;
use secrecy::SecretString;
use serde_json::{Map, Value, json};
use sqlx::PgPool;
use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;

pub use league_testkit::manager::OPERATOR_TOKEN;
/// The league the manager creates: the id the fixtures' agents expect.
pub const LEAGUE_ID: &str = "league_2025_even_odd";
/// The longest wait for something the gateway does in the background (a compliance-warning flush).
pub const PATIENCE: Duration = Duration::from_secs(20);

/// The captured traffic in `tests/fixtures` (README there), or `LEAGUE_FIXTURES_DIR`.
pub fn fixtures_dir() -> PathBuf {
    std::env::var_os("LEAGUE_FIXTURES_DIR").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures"),
        PathBuf::from,
    )
}

/// A fixture file, parsed.
pub fn fixture(relative: &str) -> Value {
    let path = fixtures_dir().join(relative);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()))
}

/// The names of the files directly in a fixture folder, sorted.
pub fn fixture_files(folder: &str) -> Vec<String> {
    let dir = fixtures_dir().join(folder);
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("listing {}: {e}", dir.display()))
        .filter_map(|entry| entry.ok())
        .filter(|entry| entry.path().is_file())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

// ---------------------------------------------------------------------------------------------------
// The manager

pub use league_testkit::TestManager;

/// A manager on 127.0.0.1:0 serving a fresh database, with the league [`LEAGUE_ID`] open for
/// registration (started by the operator).
pub async fn spawn_manager() -> TestManager {
    spawn_manager_with(|_| {}).await
}

/// [`spawn_manager`], its configuration changed by `configure`.
pub async fn spawn_manager_with(configure: impl FnOnce(&mut ManagerConfig)) -> TestManager {
    league_testkit::spawn_manager("gateway_test", LEAGUE_ID, configure).await
}

// ---------------------------------------------------------------------------------------------------
// Gateways

/// The gateway's bounds; the defaults are the configuration's.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_body_bytes: usize,
    pub agent_rate_limit: u32,
    pub max_connections: usize,
    pub max_connections_per_address: usize,
}

impl Default for Limits {
    fn default() -> Self {
        let config = GatewayConfig::default();
        Self {
            max_body_bytes: config.max_body_bytes,
            agent_rate_limit: config.agent_rate_limit,
            max_connections: config.max_connections,
            max_connections_per_address: config.max_connections_per_address,
        }
    }
}

#[derive(Debug)]
pub struct TestGateway {
    pub http: SocketAddr,
    pub grpc: SocketAddr,
    shutdown: Shutdown,
}

impl Drop for TestGateway {
    fn drop(&mut self) {
        self.shutdown.trigger();
    }
}

/// A gateway in front of `manager`, every port 0.
pub async fn spawn_gateway(manager: &TestManager, mode: Mode, limits: Limits) -> TestGateway {
    let config = GatewayConfig {
        http_addr: "127.0.0.1:0".parse().expect("address"),
        listen_addr: "127.0.0.1:0".parse().expect("address"),
        manager_url: manager.url.clone(),
        operator_token: Some(SecretString::from(OPERATOR_TOKEN.to_owned())),
        compliance: mode,
        max_body_bytes: limits.max_body_bytes,
        agent_rate_limit: limits.agent_rate_limit,
        max_connections: limits.max_connections,
        max_connections_per_address: limits.max_connections_per_address,
        ..GatewayConfig::default()
    };
    let app = GatewayApp::build(config).await.expect("gateway builds");
    let (http, grpc) = (app.http_addr(), app.grpc_addr());
    let shutdown = Shutdown::new();
    tokio::spawn(app.run(shutdown.signal()));
    TestGateway { http, grpc, shutdown }
}

/// A gateway in front of the manager at `manager_url` (which need not answer), every port 0, its
/// configuration changed by `configure`.
pub async fn spawn_gateway_with(
    manager_url: &str,
    configure: impl FnOnce(&mut GatewayConfig),
) -> TestGateway {
    let mut config = GatewayConfig {
        http_addr: "127.0.0.1:0".parse().expect("address"),
        listen_addr: "127.0.0.1:0".parse().expect("address"),
        manager_url: manager_url.to_owned(),
        operator_token: Some(SecretString::from(OPERATOR_TOKEN.to_owned())),
        ..GatewayConfig::default()
    };
    configure(&mut config);
    let app = GatewayApp::build(config).await.expect("gateway builds");
    let (http, grpc) = (app.http_addr(), app.grpc_addr());
    let shutdown = Shutdown::new();
    tokio::spawn(app.run(shutdown.signal()));
    TestGateway { http, grpc, shutdown }
}

/// What an HTTP request got back.
#[derive(Debug, Clone)]
pub struct HttpReply {
    pub status: u16,
    pub body: Bytes,
}

impl HttpReply {
    /// The body as JSON (panics with the body when it is not).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "HTTP {} body is not JSON ({e}): {:?}",
                self.status,
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// POSTs `body` to `http://addr/mcp` on a connection of its own.
pub async fn post_to(addr: SocketAddr, body: impl Into<Bytes>, headers: &[(&str, &str)]) -> HttpReply {
    let stream = TcpStream::connect(addr).await.expect("connect");
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .expect("HTTP handshake");
    tokio::spawn(connection);
    let mut request = http::Request::post("/mcp")
        .header(http::header::HOST, addr.to_string())
        .header(http::header::CONTENT_TYPE, "application/json");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request.body(Full::new(body.into())).expect("request");
    let response = sender.send_request(request).await.expect("HTTP response");
    let status = response.status().as_u16();
    let body = response
        .into_body()
        .collect()
        .await
        .expect("response body")
        .to_bytes();
    HttpReply { status, body }
}

/// A connection that was served and is kept open: it holds one of the gateway's connection slots.
#[derive(Debug)]
pub struct HeldConnection {
    _sender: hyper::client::conn::http1::SendRequest<Full<Bytes>>,
}

/// Opens a keep-alive connection, proves it is being served (a `ping`), and keeps it open.
pub async fn hold_connection(addr: SocketAddr) -> HeldConnection {
    let stream = TcpStream::connect(addr).await.expect("connect");
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .expect("HTTP handshake");
    tokio::spawn(connection);
    let body = json!({"jsonrpc": "2.0", "method": "ping", "id": 1}).to_string();
    let request = http::Request::post("/mcp")
        .header(http::header::HOST, addr.to_string())
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(body)))
        .expect("request");
    let response = sender.send_request(request).await.expect("served");
    assert_eq!(response.status(), StatusCode::OK, "the held connection is served");
    response.into_body().collect().await.expect("body");
    HeldConnection { _sender: sender }
}

/// Connects and reads whatever the gateway says without being asked (its answer past the connection
/// limit), until it closes the connection.
pub async fn unsolicited_reply(addr: SocketAddr) -> HttpReply {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.expect("read until closed");
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((text.as_str(), ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no HTTP status line in {text:?}"));
    HttpReply {
        status,
        body: Bytes::from(body.to_owned()),
    }
}

impl TestGateway {
    pub async fn post(&self, body: impl Into<Bytes>) -> HttpReply {
        post_to(self.http, body, &[]).await
    }

    pub async fn post_with(&self, body: impl Into<Bytes>, headers: &[(&str, &str)]) -> HttpReply {
        post_to(self.http, body, headers).await
    }

    /// A JSON-RPC call with id 1; the whole response (expected with HTTP 200).
    pub async fn rpc(&self, method: &str, params: Value) -> Value {
        let body = json!({"jsonrpc": "2.0", "method": method, "params": params, "id": 1});
        let reply = self.post(body.to_string()).await;
        assert_eq!(
            reply.status,
            200,
            "{method}: HTTP {} {}",
            reply.status,
            reply.text()
        );
        reply.json()
    }

    /// A gRPC client of the gateway's `PlayerService` bridge, as a referee would use it.
    pub fn players(&self) -> PlayerServiceClient<GrpcChannel> {
        let channel = league_runtime::grpc::channel(&format!("http://{}", self.grpc)).expect("channel");
        PlayerServiceClient::new(channel)
    }

    /// Every agent's compliance warnings, as the operator lists them.
    pub async fn compliance_warnings(&self) -> Vec<Value> {
        let response = self
            .rpc("get_compliance_warnings", json!({"auth_token": OPERATOR_TOKEN}))
            .await;
        let warnings = response["result"]["warnings"].as_array().cloned();
        warnings.unwrap_or_else(|| panic!("get_compliance_warnings answered {response}"))
    }

    /// Polls the operator's list (flushed to the manager every 500 ms) until `done` holds, for at most
    /// [`PATIENCE`]; returns the list.
    pub async fn wait_for_warnings(&self, what: &str, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            let warnings = self.compliance_warnings().await;
            if done(&warnings) {
                return warnings;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "waited {PATIENCE:?} for {what}; the operator lists {}",
                serde_json::to_string_pretty(&warnings).unwrap_or_default()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// Whether `warnings` holds one for `agent_id` of `kind`.
pub fn has_warning(warnings: &[Value], agent_id: &str, kind: &str) -> bool {
    warnings
        .iter()
        .any(|w| w["agent_id"] == agent_id && w["kind"] == kind)
}

/// The kinds of `agent_id`'s warnings, sorted.
pub fn warning_kinds(warnings: &[Value], agent_id: &str) -> Vec<String> {
    let mut kinds: Vec<String> = warnings
        .iter()
        .filter(|w| w["agent_id"] == agent_id)
        .filter_map(|w| w["kind"].as_str().map(str::to_owned))
        .collect();
    kinds.sort();
    kinds
}

// ---------------------------------------------------------------------------------------------------
// Registering through the gateway

/// A complete, compliant LEAGUE_REGISTER_REQUEST (no deviation in either mode).
pub fn player_registration(name: &str, contact_endpoint: &str) -> Value {
    json!({
        "protocol": "league.v2",
        "message_type": "LEAGUE_REGISTER_REQUEST",
        "sender": format!("player:{name}"),
        "timestamp": "2026-11-21T08:53:40Z",
        "conversation_id": format!("conv-register-{name}"),
        "player_meta": {
            "display_name": name,
            "version": "1.0.0",
            "game_types": ["even_odd"],
            "contact_endpoint": contact_endpoint,
            "protocol_version": "2.1.0",
        },
    })
}

/// A complete, compliant REFEREE_REGISTER_REQUEST.
pub fn referee_registration(name: &str, contact_endpoint: &str) -> Value {
    json!({
        "protocol": "league.v2",
        "message_type": "REFEREE_REGISTER_REQUEST",
        "sender": format!("referee:{name}"),
        "timestamp": "2026-11-21T08:53:37Z",
        "conversation_id": format!("conv-register-{name}"),
        "referee_meta": {
            "display_name": name,
            "version": "1.0.0",
            "game_types": ["even_odd"],
            "contact_endpoint": contact_endpoint,
            "max_concurrent_matches": 2,
        },
    })
}

/// A registered agent: its id and token.
#[derive(Debug, Clone)]
pub struct Registered {
    pub id: String,
    pub token: String,
}

/// Calls `method` with a registration and expects it ACCEPTED.
pub async fn register(gateway: &TestGateway, method: &str, params: Value) -> Registered {
    let response = gateway.rpc(method, params).await;
    let result = &response["result"];
    assert_eq!(result["status"], "ACCEPTED", "{method}: {response}");
    let id = result["player_id"]
        .as_str()
        .or_else(|| result["referee_id"].as_str());
    Registered {
        id: id.unwrap_or_else(|| panic!("no id in {response}")).to_owned(),
        token: result["auth_token"]
            .as_str()
            .unwrap_or_else(|| panic!("no token in {response}"))
            .to_owned(),
    }
}

/// Starts the league as the operator.
pub async fn start_league(gateway: &TestGateway) -> Value {
    let response = gateway
        .rpc(
            "start_league",
            json!({"league_id": LEAGUE_ID, "auth_token": OPERATOR_TOKEN}),
        )
        .await;
    assert_eq!(response["result"]["status"], "STARTED", "{response}");
    response
}

// ---------------------------------------------------------------------------------------------------
// "Nothing changed"

/// What a call from outside could change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    pub agents: i64,
    pub league_players: i64,
    pub matches: i64,
    pub results: i64,
    pub league_events: i64,
    pub warning_rows: i64,
    pub warning_total: i64,
    pub leagues: Option<String>,
}

pub async fn snapshot(pool: &PgPool) -> Snapshot {
    let row: (i64, i64, i64, i64, i64, i64, i64, Option<String>) = sqlx::query_as(
        "select (select count(*) from agents),
                (select count(*) from league_players),
                (select count(*) from matches),
                (select count(*) from matches where result is not null),
                (select count(*) from league_events),
                (select count(*) from compliance_warnings),
                (select coalesce(sum(count), 0)::bigint from compliance_warnings),
                (select string_agg(league_id || ':' || status, ',' order by league_id) from leagues)",
    )
    .fetch_one(pool)
    .await
    .expect("snapshot");
    Snapshot {
        agents: row.0,
        league_players: row.1,
        matches: row.2,
        results: row.3,
        league_events: row.4,
        warning_rows: row.5,
        warning_total: row.6,
        leagues: row.7,
    }
}

// ---------------------------------------------------------------------------------------------------
// Fake external agents

/// How a fake agent answers, after the fixtures and probes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behaviour {
    /// peer-a's players: message_type method names and the canonical game methods; full envelopes and
    /// `"error": null` beside every result; `parity_choose` is 404, `tools/call` 400.
    PeerA,
    /// peer-b's players: only `handle_game_invitation`, `choose_parity`, `notify_match_result`; anything
    /// else is -32601 under HTTP 200; replies with `20261121T…Z` timestamps and `tok_p01_temp`.
    PeerB,
    /// Unwrapped results, `accepted` for `accept`, `choice` for `parity_choice`.
    Quirky,
    /// A bare `{"status": "joined"}` result; the GAME_JOIN_ACK / CHOOSE_PARITY_RESPONSE follows as a
    /// separate call to the `referee_endpoint` the call named.
    SeparateReplies,
    /// The specification to the letter: every call acknowledged, clean framing.
    Clean,
}

/// One call a fake agent received.
#[derive(Debug, Clone)]
pub struct Received {
    /// The agent's name (the path segment of its contact endpoint).
    pub agent: String,
    pub method: String,
    pub params: Value,
}

#[derive(Debug)]
struct AgentState {
    behaviour: Behaviour,
    received: Mutex<Vec<Received>>,
    /// Per agent name: its id and token (for separate replies).
    credentials: Mutex<Vec<(String, Registered)>>,
    /// What separate replies got back from the gateway.
    separate_answers: Mutex<Vec<Value>>,
}

/// An HTTP server on 127.0.0.1:0 playing any number of agents of one behaviour, each at
/// `/<name>/mcp`.
#[derive(Debug)]
pub struct FakeAgents {
    pub addr: SocketAddr,
    state: Arc<AgentState>,
    shutdown: Shutdown,
}

impl Drop for FakeAgents {
    fn drop(&mut self) {
        self.shutdown.trigger();
    }
}

pub async fn spawn_agents(behaviour: Behaviour) -> FakeAgents {
    let state = Arc::new(AgentState {
        behaviour,
        received: Mutex::new(Vec::new()),
        credentials: Mutex::new(Vec::new()),
        separate_answers: Mutex::new(Vec::new()),
    });
    let router = Router::new()
        .route("/{agent}/mcp", post(answer))
        .with_state(state.clone());
    let (addr, shutdown) = serve_on_loopback(router).await;
    FakeAgents {
        addr,
        state,
        shutdown,
    }
}

impl FakeAgents {
    /// The contact endpoint of the agent called `name`.
    pub fn endpoint(&self, name: &str) -> String {
        format!("http://{}/{name}/mcp", self.addr)
    }

    /// Tells the agent `name` who it is (for replies it sends as separate calls).
    pub fn set_credentials(&self, name: &str, registered: &Registered) {
        self.state
            .credentials
            .lock()
            .expect("lock")
            .push((name.to_owned(), registered.clone()));
    }

    /// Every call received so far, in order.
    pub fn received(&self) -> Vec<Received> {
        self.state.received.lock().expect("lock").clone()
    }

    /// The methods `name` was called with, in order.
    pub fn methods(&self, name: &str) -> Vec<String> {
        self.received()
            .into_iter()
            .filter(|r| r.agent == name)
            .map(|r| r.method)
            .collect()
    }

    /// What the gateway answered the separate replies, once there are `count` (for at most
    /// [`PATIENCE`]).
    pub async fn wait_for_separate_answers(&self, count: usize) -> Vec<Value> {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            let answers = self.state.separate_answers.lock().expect("lock").clone();
            if answers.len() >= count {
                return answers;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "waited {PATIENCE:?} for {count} answers: {answers:?}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

async fn answer(
    State(state): State<Arc<AgentState>>,
    Path(agent): Path<String>,
    body: Bytes,
) -> (StatusCode, axum::Json<Value>) {
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let method = request["method"].as_str().unwrap_or_default().to_owned();
    let params = request.get("params").cloned().unwrap_or(Value::Null);
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    state.received.lock().expect("lock").push(Received {
        agent: agent.clone(),
        method: method.clone(),
        params: params.clone(),
    });
    let (status, body) = match state.behaviour {
        Behaviour::PeerA => peer_a(&method, &params, id),
        Behaviour::PeerB => peer_b(&method, &params, id),
        Behaviour::Quirky => quirky(&params),
        Behaviour::SeparateReplies => separate_replies(&state, &agent, &params, id),
        Behaviour::Clean => (
            200,
            json!({"jsonrpc": "2.0", "result": {"status": "acknowledged"}, "id": id}),
        ),
    };
    (StatusCode::from_u16(status).expect("status"), axum::Json(body))
}

/// A recorded answer's `result`, with the fields that name the exchange taken from the call.
fn echoed(template: &Value, params: &Value) -> Map<String, Value> {
    let mut result = template.as_object().cloned().unwrap_or_default();
    for field in ["conversation_id", "match_id"] {
        if result.contains_key(field) {
            result.insert(field.into(), params.get(field).cloned().unwrap_or(Value::Null));
        }
    }
    if let Some(player_id) = params.get("player_id").and_then(Value::as_str) {
        if result.contains_key("player_id") {
            result.insert("player_id".into(), player_id.into());
        }
        if result.contains_key("sender") {
            result.insert("sender".into(), format!("player:{player_id}").into());
        }
    }
    result
}

fn probe_result(peer: &str, probe: &str) -> Value {
    fixture(&format!("{peer}/probes/{probe}"))["response"]["body"]["result"].clone()
}

fn peer_a(method: &str, params: &Value, id: Value) -> (u16, Value) {
    let message_type = params["message_type"].as_str().unwrap_or_default();
    let known = matches!(
        method,
        "handle_game_invitation"
            | "choose_parity"
            | "notify_match_result"
            | "GAME_INVITATION"
            | "CHOOSE_PARITY_CALL"
            | "GAME_OVER"
            | "ROUND_ANNOUNCEMENT"
            | "LEAGUE_STANDINGS_UPDATE"
            | "ROUND_COMPLETED"
            | "LEAGUE_COMPLETED"
    );
    if method == "parity_choose" || method == "tools/call" {
        let probe = if method == "parity_choose" {
            "probe_07_ch6_parity_choose.json"
        } else {
            "probe_08_mcp_tools_call_handle_game_invitation.json"
        };
        let recorded = fixture(&format!("peer-a/probes/{probe}"))["response"].clone();
        let mut body = recorded["body"].clone();
        body["id"] = id;
        return (
            u16::try_from(recorded["status"].as_u64().unwrap_or(404)).unwrap_or(404),
            body,
        );
    }
    if !known {
        let error = json!({"code": -32601, "message": "Method not found"});
        return (
            404,
            json!({"jsonrpc": "2.0", "result": null, "error": error, "id": id}),
        );
    }
    let template = match message_type {
        "GAME_INVITATION" => probe_result("peer-a", "probe_04_msgtype_GAME_INVITATION.json"),
        "CHOOSE_PARITY_CALL" => probe_result("peer-a", "probe_05_msgtype_CHOOSE_PARITY_CALL.json"),
        "GAME_OVER" => probe_result("peer-a", "probe_06_msgtype_GAME_OVER.json"),
        _ => fixture("peer-a/11_ROUND_COMPLETED__ROUND_COMPLETED__to_P.json")["response"]["result"].clone(),
    };
    let mut result = echoed(&template, params);
    // peer-a echoes the token it was sent, and names the message it acknowledges.
    if result.contains_key("auth_token") {
        result.insert(
            "auth_token".into(),
            params.get("auth_token").cloned().unwrap_or(Value::Null),
        );
    }
    if !matches!(
        message_type,
        "GAME_INVITATION" | "CHOOSE_PARITY_CALL" | "GAME_OVER"
    ) {
        result.insert("message_type".into(), message_type.into());
        result.insert(
            "round_id".into(),
            params.get("round_id").cloned().unwrap_or(Value::Null),
        );
    }
    (
        200,
        json!({"jsonrpc": "2.0", "result": result, "error": null, "id": id}),
    )
}

fn peer_b(method: &str, params: &Value, id: Value) -> (u16, Value) {
    let template = match method {
        "handle_game_invitation" => probe_result("peer-b", "probe_01_canonical_handle_game_invitation.json"),
        "choose_parity" => probe_result("peer-b", "probe_02_canonical_choose_parity.json"),
        "notify_match_result" => probe_result("peer-b", "probe_03_canonical_notify_match_result.json"),
        _ => {
            let error = json!({"code": -32601, "message": format!("Method not found: {method}")});
            return (200, json!({"jsonrpc": "2.0", "error": error, "id": id}));
        }
    };
    (
        200,
        json!({"jsonrpc": "2.0", "result": echoed(&template, params), "id": id}),
    )
}

fn quirky(params: &Value) -> (u16, Value) {
    let body = match params["message_type"].as_str() {
        Some("GAME_INVITATION") => json!({"match_id": params["match_id"], "accepted": true}),
        Some("CHOOSE_PARITY_CALL") => json!({"match_id": params["match_id"], "choice": "even"}),
        _ => json!({"ok": true}),
    };
    (200, body)
}

fn separate_replies(state: &Arc<AgentState>, agent: &str, params: &Value, id: Value) -> (u16, Value) {
    let registered = state
        .credentials
        .lock()
        .expect("lock")
        .iter()
        .find(|(name, _)| name == agent)
        .map(|(_, registered)| registered.clone());
    let reply = match params["message_type"].as_str() {
        Some("GAME_INVITATION") => Some(("GAME_JOIN_ACK", json!({"accept": true}))),
        Some("CHOOSE_PARITY_CALL") => Some(("CHOOSE_PARITY_RESPONSE", json!({"parity_choice": "odd"}))),
        _ => None,
    };
    if let (Some((message_type, fields)), Some(me), Some(endpoint)) =
        (reply, registered, params["referee_endpoint"].as_str())
    {
        let mut message = json!({
            "protocol": "league.v2",
            "message_type": message_type,
            "sender": format!("player:{}", me.id),
            "timestamp": league_gateway::wire::timestamp::now(),
            "conversation_id": params["conversation_id"],
            "auth_token": me.token,
            "match_id": params["match_id"],
            "player_id": me.id,
        });
        if let (Value::Object(message), Value::Object(fields)) = (&mut message, fields) {
            message.extend(fields);
        }
        let call = json!({"jsonrpc": "2.0", "method": message_type, "params": message, "id": 1});
        let endpoint: SocketAddr = endpoint
            .trim_start_matches("http://")
            .trim_end_matches("/mcp")
            .parse()
            .expect("the referee endpoint is the gateway's /mcp");
        let state = state.clone();
        tokio::spawn(async move {
            let reply = post_to(endpoint, call.to_string(), &[]).await;
            state.separate_answers.lock().expect("lock").push(reply.json());
        });
    }
    (
        200,
        json!({"jsonrpc": "2.0", "result": {"status": "joined"}, "id": id}),
    )
}

/// Serves `router` on 127.0.0.1:0 until the returned `Shutdown` is triggered; the address it listens on.
pub async fn serve_on_loopback(router: axum::Router) -> (SocketAddr, Shutdown) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("address");
    let shutdown = Shutdown::new();
    let signal = shutdown.signal();
    tokio::spawn(async move {
        axum::serve(listener, router)
            .with_graceful_shutdown(signal.wait())
            .await
    });
    (addr, shutdown)
}
