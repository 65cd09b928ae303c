//! Fake external agents for `league bench --external`: players that answer at once, reached through the
//! real gateway the way agents written by other teams are. One HTTP/1.1 server (this process, one port)
//! serves every fake player at its own path (`/agent/<n>`), registers each through the gateway's `/mcp`
//! (`register_player`, canonical dialect, `player_meta.contact_endpoint` = its path), and answers
//! GAME_INVITATION with a GAME_JOIN_ACK accepting, CHOOSE_PARITY_CALL with a CHOOSE_PARITY_RESPONSE, and
//! every notification with an acknowledgement — all in the JSON-RPC result, with full envelopes, so the
//! gateway has nothing to warn about and nothing to wait for.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use anyhow::Context;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use league_gateway::wire::timestamp;
use serde_json::{Map, Value, json};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// What a fake player learned when it registered.
#[derive(Debug, Clone)]
pub struct Identity {
    pub player_id: String,
    pub token: String,
}

/// Calls the fake players answered, by kind.
#[derive(Debug, Default)]
pub struct Counts {
    pub invitations: AtomicU64,
    pub parity_calls: AtomicU64,
    pub game_overs: AtomicU64,
    pub notifications: AtomicU64,
    pub unknown: AtomicU64,
}

#[derive(Debug)]
struct Shared {
    identities: Vec<OnceLock<Identity>>,
    counts: Counts,
}

/// The fake players' server; stops when dropped.
#[derive(Debug)]
pub struct FakeAgents {
    shared: Arc<Shared>,
    server: JoinHandle<()>,
}

impl Drop for FakeAgents {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl FakeAgents {
    /// Starts `count` fake players on a free loopback port and registers each through the gateway at
    /// `gateway_mcp` (its `/mcp` URL).
    pub async fn start(gateway_mcp: &str, count: u32) -> anyhow::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .context("binding the fake agents' port")?;
        let base = format!("http://{}", listener.local_addr()?);
        let shared = Arc::new(Shared {
            identities: (0..count).map(|_| OnceLock::new()).collect(),
            counts: Counts::default(),
        });
        let app = Router::new()
            .route("/agent/{index}", post(answer))
            .with_state(shared.clone());
        let server = tokio::spawn(async move {
            if let Err(error) = axum::serve(listener, app).await {
                eprintln!("fake agents: server failed: {error}");
            }
        });
        let agents = Self { shared, server };
        let client = http_client();
        for index in 0..count {
            let name = format!("fake-{index:04}");
            let params = json!({
                "protocol": "league.v2",
                "message_type": "LEAGUE_REGISTER_REQUEST",
                "sender": format!("player:{name}"),
                "timestamp": timestamp::now(),
                "conversation_id": format!("conv-{name}-register"),
                "player_meta": {
                    "display_name": name,
                    "version": "1.0.0",
                    "protocol_version": "2.0.0",
                    "game_types": ["even_odd"],
                    "contact_endpoint": format!("{base}/agent/{index}"),
                },
            });
            let call = json!({"jsonrpc": "2.0", "method": "register_player", "params": params, "id": index});
            let answer = post_json(&client, gateway_mcp, &call, None)
                .await
                .with_context(|| format!("registering {name}"))?;
            let result = &answer["result"];
            anyhow::ensure!(
                result["status"] == "ACCEPTED",
                "{name} was not registered: {answer}"
            );
            let identity = Identity {
                player_id: result["player_id"].as_str().unwrap_or_default().to_owned(),
                token: result["auth_token"].as_str().unwrap_or_default().to_owned(),
            };
            agents.shared.identities[index as usize].set(identity).ok();
        }
        Ok(agents)
    }

    /// Each fake player's registration, in order.
    pub fn identities(&self) -> Vec<Identity> {
        self.shared
            .identities
            .iter()
            .filter_map(|id| id.get().cloned())
            .collect()
    }

    pub fn counts(&self) -> &Counts {
        &self.shared.counts
    }
}

/// The message type a call carries: `params.message_type`, else the canonical method's.
fn message_type<'a>(method: &'a str, params: &'a Map<String, Value>) -> &'a str {
    if let Some(Value::String(kind)) = params.get("message_type") {
        return kind;
    }
    match method {
        "handle_game_invitation" => "GAME_INVITATION",
        "choose_parity" => "CHOOSE_PARITY_CALL",
        "notify_match_result" => "GAME_OVER",
        other => other,
    }
}

async fn answer(State(shared): State<Arc<Shared>>, Path(index): Path<usize>, body: Bytes) -> Response {
    let call: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let id = call.get("id").cloned().unwrap_or(Value::Null);
    let method = call.get("method").and_then(Value::as_str).unwrap_or_default();
    let empty = Map::new();
    let params = call.get("params").and_then(Value::as_object).unwrap_or(&empty);
    let me = shared.identities.get(index).and_then(OnceLock::get);
    let (player_id, token) = me.map_or(("", ""), |me| (me.player_id.as_str(), me.token.as_str()));
    let counts = &shared.counts;
    let reply = |kind: &str, fields: Value| {
        let mut reply = json!({
            "protocol": "league.v2",
            "message_type": kind,
            "sender": format!("player:{player_id}"),
            "timestamp": timestamp::now(),
            "conversation_id": params.get("conversation_id").cloned().unwrap_or(Value::Null),
            "auth_token": token,
            "match_id": params.get("match_id").cloned().unwrap_or(Value::Null),
            "player_id": player_id,
        });
        if let (Value::Object(reply), Value::Object(fields)) = (&mut reply, fields) {
            reply.extend(fields);
        }
        reply
    };
    let body = match message_type(method, params) {
        "GAME_INVITATION" => {
            counts.invitations.fetch_add(1, Ordering::Relaxed);
            let result = reply(
                "GAME_JOIN_ACK",
                json!({"arrival_timestamp": timestamp::now(), "accept": true}),
            );
            json!({"jsonrpc": "2.0", "result": result, "id": id})
        }
        "CHOOSE_PARITY_CALL" => {
            let n = counts.parity_calls.fetch_add(1, Ordering::Relaxed);
            let choice = if n % 2 == 0 { "even" } else { "odd" };
            let result = reply("CHOOSE_PARITY_RESPONSE", json!({"parity_choice": choice}));
            json!({"jsonrpc": "2.0", "result": result, "id": id})
        }
        kind @ ("GAME_OVER"
        | "GAME_ERROR"
        | "ROUND_ANNOUNCEMENT"
        | "LEAGUE_STANDINGS_UPDATE"
        | "ROUND_COMPLETED"
        | "LEAGUE_COMPLETED") => {
            let counter = if kind == "GAME_OVER" {
                &counts.game_overs
            } else {
                &counts.notifications
            };
            counter.fetch_add(1, Ordering::Relaxed);
            json!({"jsonrpc": "2.0", "result": {"status": "acknowledged", "message_type": kind}, "id": id})
        }
        _ => {
            counts.unknown.fetch_add(1, Ordering::Relaxed);
            json!({"jsonrpc": "2.0", "error": {"code": -32601, "message": format!("Method not found: {method}")}, "id": id})
        }
    };
    (
        [(header::CONTENT_TYPE, "application/json")],
        serde_json::to_vec(&body).unwrap_or_default(),
    )
        .into_response()
}

pub type HttpClient = Client<HttpConnector, Full<Bytes>>;

pub fn http_client() -> HttpClient {
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    Client::builder(TokioExecutor::new()).build(connector)
}

/// POSTs `body` as JSON to `url` (with `Authorization: Bearer <bearer>` if given) and reads the JSON
/// answer.
pub async fn post_json(
    client: &HttpClient,
    url: &str,
    body: &Value,
    bearer: Option<&str>,
) -> anyhow::Result<Value> {
    let mut request = http::Request::post(url).header(header::CONTENT_TYPE, "application/json");
    if let Some(token) = bearer {
        request = request.header(header::AUTHORIZATION, format!("Bearer {token}"));
    }
    let request = request.body(Full::new(Bytes::from(serde_json::to_vec(body)?)))?;
    let text = exchange(client, request).await?;
    serde_json::from_slice(&text)
        .with_context(|| format!("{url} answered {}", String::from_utf8_lossy(&text)))
}

/// GETs `url`'s body as text.
pub async fn get_text(client: &HttpClient, url: &str) -> anyhow::Result<String> {
    let request = http::Request::get(url).body(Full::new(Bytes::new()))?;
    Ok(String::from_utf8_lossy(&exchange(client, request).await?).into_owned())
}

async fn exchange(client: &HttpClient, request: http::Request<Full<Bytes>>) -> anyhow::Result<Bytes> {
    let uri = request.uri().clone();
    let response = tokio::time::timeout(Duration::from_secs(10), client.request(request))
        .await
        .with_context(|| format!("{uri} did not answer within 10 s"))?
        .with_context(|| format!("calling {uri}"))?;
    let status = response.status();
    let body = response.into_body().collect().await?.to_bytes();
    anyhow::ensure!(status.is_success(), "{uri} answered HTTP {status}");
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn answers_invitations_parity_calls_and_notifications_at_once() {
        let shared = Arc::new(Shared {
            identities: vec![OnceLock::new()],
            counts: Counts::default(),
        });
        shared.identities[0]
            .set(Identity {
                player_id: "P07".to_owned(),
                token: "a".repeat(64),
            })
            .ok();
        let call = |method: &str, kind: &str| {
            let body = json!({"jsonrpc": "2.0", "method": method, "id": 3,
                "params": {"message_type": kind, "match_id": "R1M1", "conversation_id": "c1"}});
            answer(State(shared.clone()), Path(0), Bytes::from(body.to_string()))
        };
        let read = async |response: Response| -> Value {
            let bytes = response.into_body().collect().await.expect("body").to_bytes();
            serde_json::from_slice(&bytes).expect("json")
        };
        let ack = read(call("handle_game_invitation", "GAME_INVITATION").await).await;
        assert_eq!(ack["id"], 3);
        assert_eq!(ack["result"]["message_type"], "GAME_JOIN_ACK");
        assert_eq!(ack["result"]["accept"], true);
        assert_eq!(ack["result"]["player_id"], "P07");
        assert_eq!(ack["result"]["match_id"], "R1M1");
        let choice = read(call("choose_parity", "CHOOSE_PARITY_CALL").await).await;
        assert_eq!(choice["result"]["message_type"], "CHOOSE_PARITY_RESPONSE");
        assert!(matches!(
            choice["result"]["parity_choice"].as_str(),
            Some("even" | "odd")
        ));
        let over = read(call("notify_match_result", "GAME_OVER").await).await;
        assert_eq!(over["result"]["status"], "acknowledged");
        let unknown = read(call("request_move", "GAME_MOVE_CALL").await).await;
        assert_eq!(unknown["error"]["code"], -32601);
        let counts = &shared.counts;
        assert_eq!(counts.invitations.load(Ordering::Relaxed), 1);
        assert_eq!(counts.parity_calls.load(Ordering::Relaxed), 1);
        assert_eq!(counts.game_overs.load(Ordering::Relaxed), 1);
        assert_eq!(counts.unknown.load(Ordering::Relaxed), 1);
    }
}
