//! Test support for the gateway's integration tests: a real manager over a fresh database, real gateways
//! (either compliance mode, limits selectable, every port 0), an HTTP client that shows exactly what came
//! back, fake external agents that behave like the players in the fixtures, and a database snapshot that
//! proves a refused call changed nothing.

use std::net::SocketAddr;
use std::time::Duration;

use axum::http::StatusCode;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use league_gateway::{GatewayApp, GatewayConfig};
use league_manager::ManagerConfig;
use league_proto::v2::player_service_client::PlayerServiceClient;
use league_runtime::Shutdown;
use league_runtime::grpc::GrpcChannel;
use league_v2::compliance::Mode;
use secrecy::SecretString;
use serde_json::{Value, json};
use sqlx::PgPool;
use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;

pub use league_testkit::manager::OPERATOR_TOKEN;
/// The league the manager creates: the id the fixtures' agents expect.
pub const LEAGUE_ID: &str = "league_2025_even_odd";
/// The longest wait for something the gateway does in the background (a compliance-warning flush).
pub const PATIENCE: Duration = Duration::from_secs(20);

pub use league_testkit::fixtures::{fixture, fixture_files, fixtures_dir};

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

pub use league_testkit::http::{HttpReply, post_to};

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

pub use league_testkit::fake_agent::player_registration;

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

pub use league_testkit::Registered;

/// Calls `method` with a registration and expects it ACCEPTED.
pub async fn register(gateway: &TestGateway, method: &str, params: Value) -> Registered {
    register_answered(gateway, method, params).await.0
}

/// Registers the player `name` through `gateway`, its contact endpoint `name`'s among `agents`.
pub async fn register_player(gateway: &TestGateway, agents: &FakeAgents, name: &str) -> Registered {
    register(
        gateway,
        "register_player",
        player_registration(name, &agents.endpoint(name)),
    )
    .await
}

/// [`register`], and the registration's whole answer (its `result`).
pub async fn register_answered(gateway: &TestGateway, method: &str, params: Value) -> (Registered, Value) {
    let response = gateway.rpc(method, params).await;
    let result = &response["result"];
    assert_eq!(result["status"], "ACCEPTED", "{method}: {response}");
    let id = result["player_id"]
        .as_str()
        .or_else(|| result["referee_id"].as_str());
    let registered = Registered {
        id: id.unwrap_or_else(|| panic!("no id in {response}")).to_owned(),
        token: result["auth_token"]
            .as_str()
            .unwrap_or_else(|| panic!("no token in {response}"))
            .to_owned(),
    };
    (registered, result.clone())
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
// Fake external agents: the test kit's, recording every call.

pub use league_testkit::fake_agent::Received;
pub use league_testkit::{Behaviour, FakeAgents};

pub async fn spawn_agents(behaviour: Behaviour) -> FakeAgents {
    FakeAgents::start(behaviour).await
}
