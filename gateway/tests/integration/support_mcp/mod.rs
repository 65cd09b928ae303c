//! Support for the MCP tests: a real manager (fresh database) and a real gateway in-process on port 0,
//! a small HTTP client that shows exactly what came back, league.v2 registration through the gateway,
//! and the Python environment with the official MCP SDK (`scripts/python-env`).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use league_domain::Timing;
use league_gateway::{GatewayApp, GatewayConfig};
use league_manager::{ManagerApp, ManagerConfig};
use league_runtime::Shutdown;
use league_testkit::TestDatabase;
use secrecy::SecretString;
use serde_json::{Value, json};
use tokio::net::TcpStream;

pub const OPERATOR_TOKEN: &str = "mcp-tests-operator-token";
pub const LEAGUE_ID: &str = "mcp_test_league";
/// What MCP's streamable HTTP transport requires a client to accept.
pub const MCP_ACCEPT: &str = "application/json, text/event-stream";

pub fn repository() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A manager over a fresh database (league [`LEAGUE_ID`] open for registration, started by command) and
/// a gateway in front of it, both on 127.0.0.1:0. Dropping it stops both.
#[derive(Debug)]
pub struct League {
    /// The gateway's public HTTP address (`/mcp`).
    pub http: SocketAddr,
    /// The manager's gRPC address, for tests that play matches as a referee would.
    pub manager_url: String,
    gateway: Shutdown,
    manager: Shutdown,
    _database: TestDatabase,
}

impl Drop for League {
    fn drop(&mut self) {
        self.gateway.trigger();
        self.manager.trigger();
    }
}

impl League {
    pub async fn start() -> Self {
        Self::start_with(|_| {}).await
    }

    /// As [`League::start`], with the gateway's configuration adjusted by `adjust`.
    pub async fn start_with(adjust: impl FnOnce(&mut GatewayConfig)) -> Self {
        let database = TestDatabase::create("gateway_mcp_test").await;
        let database_url = database.url().clone();
        let config = ManagerConfig {
            listen_addr: "127.0.0.1:0".parse().expect("address"),
            database_url: Some(database_url),
            db_max_connections: 4,
            operator_token: Some(SecretString::from(OPERATOR_TOKEN.to_owned())),
            league_id: LEAGUE_ID.into(),
            game_type: "even_odd".into(),
            auto_start_players: 0,
            timing: Timing::default(),
            ..ManagerConfig::default()
        };
        // A local trial: any referee registers.
        let mut config = config;
        config.registration.referee_registration_open = true;
        let manager_app = ManagerApp::build(&config).await.expect("manager builds");
        let manager_url = format!("http://{}", manager_app.local_addr());
        let manager = Shutdown::new();
        tokio::spawn(manager_app.run(manager.signal()));

        let mut config = GatewayConfig {
            http_addr: "127.0.0.1:0".parse().expect("address"),
            listen_addr: "127.0.0.1:0".parse().expect("address"),
            manager_url: manager_url.clone(),
            operator_token: Some(SecretString::from(OPERATOR_TOKEN.to_owned())),
            ..GatewayConfig::default()
        };
        adjust(&mut config);
        // The listeners are bound by `build`: connections made before `run` serves wait in the backlog.
        let gateway_app = GatewayApp::build(config).await.expect("gateway builds");
        let http = gateway_app.http_addr();
        let gateway = Shutdown::new();
        tokio::spawn(gateway_app.run(gateway.signal()));
        Self {
            http,
            manager_url,
            gateway,
            manager,
            _database: database,
        }
    }

    pub fn mcp_url(&self) -> String {
        format!("http://{}/mcp", self.http)
    }

    /// Registers a player the way a league.v2 agent does (plain JSON-RPC on `/mcp`); its id and token.
    pub async fn register_player(&self, name: &str) -> (String, String) {
        let body = json!({
            "jsonrpc": "2.0",
            "method": "register_player",
            "id": 1,
            "params": {
                "protocol": "league.v2",
                "message_type": "LEAGUE_REGISTER_REQUEST",
                "sender": format!("player:{name}"),
                "timestamp": "2026-01-31T12:00:00Z",
                "conversation_id": format!("register-{name}"),
                "player_meta": {
                    "display_name": name,
                    "version": "1.0.0",
                    "game_types": ["even_odd"],
                    // Nothing listens here; the league is never started in these tests.
                    "contact_endpoint": format!("http://127.0.0.1:9/{name}/mcp"),
                    "protocol_version": "2.1.0",
                },
            },
        });
        let reply = post(self.http, &[("accept", "application/json")], &body).await;
        let response = reply.json();
        let result = &response["result"];
        assert_eq!(
            result["status"],
            json!("ACCEPTED"),
            "registering {name}: {response}"
        );
        let id = result["player_id"].as_str().expect("player_id").to_owned();
        let token = result["auth_token"].as_str().expect("auth_token").to_owned();
        (id, token)
    }
}

/// What an HTTP request got back.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: http::HeaderMap,
    pub body: Bytes,
}

impl Reply {
    /// The body as JSON (panics showing the body when it is not).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|error| {
            panic!(
                "HTTP {} body is not JSON ({error}): {:?}",
                self.status,
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|value| value.to_str().ok())
    }
}

/// POSTs `body` as JSON to `/mcp` with these extra headers, on a connection of its own.
pub async fn post(addr: SocketAddr, headers: &[(&str, &str)], body: &Value) -> Reply {
    let body = serde_json::to_vec(body).expect("JSON");
    send(addr, http::Method::POST, headers, Bytes::from(body)).await
}

/// Sends one request to `/mcp` (`Host` is the address unless `headers` names another).
pub async fn send(addr: SocketAddr, method: http::Method, headers: &[(&str, &str)], body: Bytes) -> Reply {
    let stream = TcpStream::connect(addr).await.expect("connect to the gateway");
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .expect("HTTP handshake");
    tokio::spawn(connection);
    let mut request = http::Request::builder().method(method).uri("/mcp");
    if !headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("host")) {
        request = request.header(http::header::HOST, addr.to_string());
    }
    if !body.is_empty() {
        request = request.header(http::header::CONTENT_TYPE, "application/json");
    }
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request.body(Full::new(body)).expect("request");
    let response = sender.send_request(request).await.expect("an HTTP response");
    let (parts, body) = response.into_parts();
    let body = body.collect().await.expect("the response body").to_bytes();
    Reply {
        status: parts.status.as_u16(),
        headers: parts.headers,
        body,
    }
}

/// The Python interpreter of the environment `scripts/python-env` prepares (the official MCP SDK
/// installed). Fails the test, saying why, when the environment cannot be made.
pub async fn python() -> PathBuf {
    let script = repository().join("scripts/python-env");
    let output = tokio::process::Command::new(&script)
        .output()
        .await
        .unwrap_or_else(|error| panic!("cannot run {}: {error}", script.display()));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "scripts/python-env could not prepare the Python environment with the MCP SDK \
         ({}); the MCP client test needs it:\n{stderr}",
        output.status
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let python = PathBuf::from(stdout.lines().last().unwrap_or_default().trim());
    assert!(
        python.is_file(),
        "scripts/python-env printed {stdout:?}, not an interpreter\n{stderr}"
    );
    python
}

/// Runs a Python script of this folder with `python`; its stdout parsed as JSON.
pub async fn run_python(python: &Path, script: &str, args: &[&str]) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/integration/support_mcp")
        .join(script);
    let output = tokio::process::Command::new(python)
        .arg(&path)
        .args(args)
        .kill_on_drop(true)
        .output()
        .await
        .unwrap_or_else(|error| panic!("cannot run {}: {error}", path.display()));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{script} failed ({}):\nstdout:\n{stdout}\nstderr:\n{stderr}",
        output.status
    );
    serde_json::from_str(&stdout)
        .unwrap_or_else(|error| panic!("{script} printed no JSON ({error}):\n{stdout}\nstderr:\n{stderr}"))
}
