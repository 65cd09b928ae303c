//! The one fake external agent: an HTTP server on 127.0.0.1:0 playing any number of league.v2 agents,
//! each at `/<name>/mcp`, all answering the way one [`Behaviour`] does — the specification to the
//! letter, as fast as it can (the bench), the dialects of the agents captured in `tests/fixtures`, or
//! the strict ways real agents refuse what they do not expect.
//! It counts the calls by message type and, unless it was started [`FakeAgents::start_unrecorded`],
//! keeps every call (with its `traceparent`) for the test to read.
//!
//! It is test and bench code only: the bench (services/bench) and the tests use it; nothing that ships
//! does.

mod light;
mod picky;
mod replay;
mod spec;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, SystemTime};

use anyhow::Context;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use league_domain::MessageType;
use league_runtime::Shutdown;
use league_v2::dialect::canonical_method;
use serde_json::{Map, Value, json};

use crate::http::{serve_on_loopback, socket_addr, try_post_to};

/// The longest a test waits for something the fake agents do in the background.
const PATIENCE: Duration = Duration::from_secs(20);

/// How the fake agents answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behaviour {
    /// The specification to the letter, at once: GAME_JOIN_ACK (accepting) and CHOOSE_PARITY_RESPONSE
    /// (even and odd in turn) with full envelopes in the JSON-RPC result, every notification
    /// acknowledged; a method it does not know is -32601 under HTTP 200. The bench's agents.
    Instant,
    /// Every call acknowledged with `{"status": "acknowledged"}` and nothing else, clean framing.
    Clean,
    /// Every call answered with a bare `{"status": "ok"}`: a GAME_INVITATION joined without a
    /// GAME_JOIN_ACK, ever.
    BareOk,
    /// The first captured agent (`tests/fixtures/peer-a`): message_type method names and the canonical
    /// game methods; full envelopes and `"error": null` beside every result; `parity_choose` is 404,
    /// `tools/call` 400.
    PeerA,
    /// The second captured agent (`tests/fixtures/peer-b`): only `handle_game_invitation`,
    /// `choose_parity`, `notify_match_result`; anything else is -32601 under HTTP 200; replies with
    /// `20261121T…Z` timestamps and a fixed placeholder token.
    PeerB,
    /// Unwrapped results, `accepted` for `accept`, `choice` for `parity_choice`.
    Quirky,
    /// A bare `{"status": "joined"}` result; the GAME_JOIN_ACK / CHOOSE_PARITY_RESPONSE follows as a
    /// separate call to the `referee_endpoint` the call named, with the agent's credentials.
    SeparateReplies,
    /// Validates every sender against `^(player|referee|league_manager):[A-Z0-9]+$` and answers a bare
    /// `league_manager` 400 -32602 "Sender not registered"; any method.
    TypedSenders,
    /// Knows only the message type in lower case as the method; 404 -32601 for anything else.
    LowerCaseMethods,
    /// Answers every call 401 -32001 "Missing auth token" (E012), whatever it carries.
    RefusesAuth,
    /// The lower-case message type as the method with the message nested under it; every other method
    /// 200 `{"status": "ok"}`.
    Nested,
}

/// A registered agent: its id and token.
#[derive(Debug, Clone)]
pub struct Registered {
    pub id: String,
    pub token: String,
}

/// One call a fake agent received.
#[derive(Debug, Clone)]
pub struct Received {
    /// The agent's name (the path segment of its contact endpoint).
    pub agent: String,
    pub method: String,
    pub params: Value,
    /// The W3C trace context the caller sent, if any.
    pub traceparent: Option<String>,
    /// The HTTP status the agent answered.
    pub status: u16,
}

impl Received {
    /// The message type the call carries (see [`message_type`]).
    pub fn message_type(&self) -> &str {
        match self.params.get("message_type") {
            Some(Value::String(kind)) => kind,
            _ => method_message_type(&self.method),
        }
    }
}

/// Calls the fake agents received, by message type.
#[derive(Debug, Default)]
pub struct Counts {
    pub invitations: AtomicU64,
    pub parity_calls: AtomicU64,
    pub game_overs: AtomicU64,
    pub notifications: AtomicU64,
    /// Calls answered with an error: a method the behaviour does not know.
    pub unknown: AtomicU64,
}

#[derive(Debug)]
struct Agents {
    behaviour: Behaviour,
    /// Whether every call is kept; off for the bench, whose leagues make hundreds of thousands of
    /// calls, each standings update carrying every player's row.
    record: bool,
    received: Mutex<Vec<Received>>,
    /// Per agent name: its id and token, for replies that carry them.
    credentials: RwLock<HashMap<String, Registered>>,
    /// What the gateway answered separate replies.
    separate_answers: Mutex<Vec<Value>>,
    counts: Counts,
}

/// The fake agents' server; it stops when dropped.
#[derive(Debug)]
pub struct FakeAgents {
    pub addr: SocketAddr,
    /// `http`, or `https` with the test certificate (crate::tls).
    scheme: &'static str,
    agents: Arc<Agents>,
    shutdown: Shutdown,
}

impl Drop for FakeAgents {
    fn drop(&mut self) {
        self.shutdown.trigger();
    }
}

impl FakeAgents {
    /// Fake agents of `behaviour` that keep every call they receive.
    pub async fn start(behaviour: Behaviour) -> Self {
        Self::serve(behaviour, true).await
    }

    /// Fake agents of `behaviour` that only count the calls they receive.
    pub async fn start_unrecorded(behaviour: Behaviour) -> Self {
        Self::serve(behaviour, false).await
    }

    /// Fake agents of `behaviour` on https, presenting the test certificate (crate::tls): trusted by a
    /// client given the test CA, untrusted by any other.
    pub async fn start_tls(behaviour: Behaviour) -> Self {
        Self::serve_with(behaviour, true, true).await
    }

    async fn serve(behaviour: Behaviour, record: bool) -> Self {
        Self::serve_with(behaviour, record, false).await
    }

    async fn serve_with(behaviour: Behaviour, record: bool, tls: bool) -> Self {
        let agents = Arc::new(Agents::new(behaviour, record));
        let router = Router::new()
            .route("/{agent}/mcp", post(answer))
            .with_state(agents.clone());
        let ((addr, shutdown), scheme) = if tls {
            (crate::tls::serve_tls_on_loopback(router).await, "https")
        } else {
            (serve_on_loopback(router).await, "http")
        };
        Self {
            addr,
            scheme,
            agents,
            shutdown,
        }
    }

    /// The contact endpoint of the agent called `name`.
    pub fn endpoint(&self, name: &str) -> String {
        format!("{}://{}/{name}/mcp", self.scheme, self.addr)
    }

    /// Tells the agent `name` who it is (for replies that carry its id and token).
    pub fn set_credentials(&self, name: &str, registered: &Registered) {
        self.agents
            .credentials
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(name.to_owned(), registered.clone());
    }

    /// Registers the agent `name` as a player through the gateway whose `/mcp` is at `gateway_mcp`,
    /// calling `method` (the canonical `register_player`, or the message type) with `headers`; on
    /// success the agent knows its credentials.
    pub async fn register(
        &self,
        gateway_mcp: &str,
        name: &str,
        method: &str,
        headers: &[(&str, &str)],
    ) -> anyhow::Result<Registered> {
        let call = json!({
            "jsonrpc": "2.0",
            "method": method,
            "params": player_registration(name, &self.endpoint(name)),
            "id": 1,
        });
        let reply = try_post_to(socket_addr(gateway_mcp)?, call.to_string(), headers).await?;
        let answer: Value = serde_json::from_slice(&reply.body)
            .with_context(|| format!("registering {name}: HTTP {} {}", reply.status, reply.text()))?;
        let result = &answer["result"];
        anyhow::ensure!(
            reply.status == 200 && result["status"] == "ACCEPTED",
            "{name} was not registered: HTTP {} {answer}",
            reply.status
        );
        let field = |name: &str| {
            result[name]
                .as_str()
                .map(str::to_owned)
                .with_context(|| format!("no {name} in {answer}"))
        };
        let registered = Registered {
            id: field("player_id")?,
            token: field("auth_token")?,
        };
        self.set_credentials(name, &registered);
        Ok(registered)
    }

    /// Registers `count` agents, `fake-0000` on, as players through the gateway at `gateway_mcp`.
    pub async fn register_players(&self, gateway_mcp: &str, count: u32) -> anyhow::Result<Vec<Registered>> {
        let mut registered = Vec::with_capacity(count as usize);
        for index in 0..count {
            let name = format!("fake-{index:04}");
            registered.push(self.register(gateway_mcp, &name, "register_player", &[]).await?);
        }
        Ok(registered)
    }

    /// Every call received so far, in order (none when unrecorded).
    pub fn received(&self) -> Vec<Received> {
        self.agents
            .received
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The methods `name` was called with, in order.
    pub fn methods(&self, name: &str) -> Vec<String> {
        self.received()
            .into_iter()
            .filter(|r| r.agent == name)
            .map(|r| r.method)
            .collect()
    }

    pub fn counts(&self) -> &Counts {
        &self.agents.counts
    }

    /// What the gateway answered the separate replies, once there are `count` (for at most 20 s).
    pub async fn wait_for_separate_answers(&self, count: usize) -> Vec<Value> {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            let answers = self
                .agents
                .separate_answers
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone();
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

/// A complete, compliant LEAGUE_REGISTER_REQUEST (no deviation in either compliance mode).
pub fn player_registration(name: &str, contact_endpoint: &str) -> Value {
    json!({
        "protocol": "league.v2",
        "message_type": "LEAGUE_REGISTER_REQUEST",
        "sender": format!("player:{name}"),
        "timestamp": now(),
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

/// The current time as league.v2 writes it (ISO-8601, UTC, `Z`).
pub fn now() -> String {
    humantime_serde::re::humantime::format_rfc3339_millis(SystemTime::now()).to_string()
}

/// The message type a call carries: `params.message_type`, else the canonical method's, else the
/// method itself (the message-type dialect).
pub fn message_type<'a>(method: &'a str, params: &'a Map<String, Value>) -> &'a str {
    match params.get("message_type") {
        Some(Value::String(kind)) => kind,
        _ => method_message_type(method),
    }
}

/// The message type a method names: the canonical method's (league_v2's dialect), else the method
/// itself.
fn method_message_type(method: &str) -> &str {
    MessageType::all()
        .find(|kind| canonical_method(*kind).is_some_and(|name| name == method))
        .map_or(method, |kind| kind.as_str())
}

/// The message type spelled exactly `name` (as the league writes it; fake agents match it to the
/// letter, as the field's agents do).
fn kind(name: &str) -> Option<MessageType> {
    MessageType::all().find(|kind| kind.as_str() == name)
}

/// What one behaviour answers one call: an HTTP status and a JSON body.
type Answer = (u16, Value);

/// An answer as it is sent: the HTTP status, the body, and whether it is a JSON-RPC error.
struct Written {
    status: u16,
    body: Vec<u8>,
    error: bool,
}

impl From<Answer> for Written {
    fn from((status, body): Answer) -> Self {
        Self {
            status,
            body: serde_json::to_vec(&body).unwrap_or_else(|error| format!("{error}").into_bytes()),
            error: body.get("error").is_some_and(|error| !error.is_null()),
        }
    }
}

/// The largest call an agent reads: a 500-player league's standings update is about 20 KB.
const MAX_CALL_BYTES: usize = 1 << 20;

async fn answer(
    State(agents): State<Arc<Agents>>,
    Path(agent): Path<String>,
    request: axum::extract::Request,
) -> Response {
    // The request taken whole, not its headers as a copy: the bench's agents answer every call of a
    // league.
    let (parts, body) = request.into_parts();
    match axum::body::to_bytes(body, MAX_CALL_BYTES).await {
        Ok(body) => respond(&agents, &agent, &parts.headers, &body),
        Err(error) => (StatusCode::BAD_REQUEST, format!("unreadable call: {error}")).into_response(),
    }
}

/// The answer of the agent `agent` to the call `body`.
fn respond(agents: &Arc<Agents>, agent: &str, headers: &HeaderMap, body: &[u8]) -> Response {
    // The specification's agents read only what they answer with (`light`); the others, and any agent
    // that keeps its calls, read the whole call.
    let call: Value = if agents.record || agents.behaviour != Behaviour::Instant {
        serde_json::from_slice(body).unwrap_or(Value::Null)
    } else {
        Value::Null
    };
    let method = call.get("method").and_then(Value::as_str).unwrap_or("");
    let id = call.get("id").cloned().unwrap_or(Value::Null);
    let empty = Map::new();
    let params = call.get("params").and_then(Value::as_object).unwrap_or(&empty);
    let read_in_full = |answer: Answer| (message_type(method, params), Written::from(answer));
    let light;
    let (kind, written) = match agents.behaviour {
        Behaviour::Instant => {
            light = light::read(body);
            (light.message_type(), spec::instant(agents, agent, &light))
        }
        Behaviour::Clean => read_in_full(spec::clean(id)),
        Behaviour::BareOk => read_in_full(spec::bare_ok(id)),
        Behaviour::SeparateReplies => read_in_full(spec::separate_replies(agents, agent, params, id)),
        Behaviour::PeerA => read_in_full(replay::peer_a(method, params, id)),
        Behaviour::PeerB => read_in_full(replay::peer_b(method, params, id)),
        Behaviour::Quirky => read_in_full(replay::quirky(params)),
        Behaviour::TypedSenders => read_in_full(picky::typed_senders(params, id)),
        Behaviour::LowerCaseMethods => read_in_full(picky::lower_case_methods(method, params, id)),
        Behaviour::RefusesAuth => read_in_full(picky::refuses_auth(id)),
        Behaviour::Nested => read_in_full(picky::nested(method, params, id)),
    };
    if agents.record {
        agents
            .received
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Received {
                agent: agent.to_owned(),
                method: method.to_owned(),
                params: Value::Object(params.clone()),
                traceparent: headers
                    .get("traceparent")
                    .and_then(|value| value.to_str().ok())
                    .map(str::to_owned),
                status: written.status,
            });
    }
    count(&agents.counts, kind, written.error);
    let status = StatusCode::from_u16(written.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, [(header::CONTENT_TYPE, "application/json")], written.body).into_response()
}

fn count(counts: &Counts, kind: &str, error: bool) {
    let counter = if error {
        &counts.unknown
    } else {
        match self::kind(kind) {
            Some(MessageType::GameInvitation) => &counts.invitations,
            Some(MessageType::ChooseParityCall) => &counts.parity_calls,
            Some(MessageType::GameOver) => &counts.game_overs,
            _ => &counts.notifications,
        }
    };
    counter.fetch_add(1, Ordering::Relaxed);
}

impl Agents {
    fn new(behaviour: Behaviour, record: bool) -> Self {
        Self {
            behaviour,
            record,
            received: Mutex::default(),
            credentials: RwLock::default(),
            separate_answers: Mutex::default(),
            counts: Counts::default(),
        }
    }

    /// The credentials of the agent `name`, if it registered through [`FakeAgents::register`] or was
    /// told them.
    fn credentials(&self, name: &str) -> Option<Registered> {
        self.credentials
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(name)
            .cloned()
    }
}

#[cfg(test)]
mod tests {
    use http_body_util::BodyExt;

    use super::*;

    fn agents(behaviour: Behaviour, record: bool) -> Arc<Agents> {
        let agents = Arc::new(Agents::new(behaviour, record));
        let me = Registered {
            id: "P07".to_owned(),
            token: "a".repeat(64),
        };
        agents
            .credentials
            .write()
            .expect("lock")
            .insert("fake-0007".to_owned(), me);
        agents
    }

    async fn call(agents: &Arc<Agents>, method: &str, message_type: &str) -> (u16, Value) {
        let body = json!({"jsonrpc": "2.0", "method": method, "id": 3,
            "params": {"message_type": message_type, "match_id": "R1M1", "conversation_id": "c1"}});
        let mut headers = HeaderMap::new();
        headers.insert("traceparent", "00-abc-def-01".parse().expect("header"));
        let response = respond(agents, "fake-0007", &headers, body.to_string().as_bytes());
        let status = response.status().as_u16();
        let bytes = response.into_body().collect().await.expect("body").to_bytes();
        (status, serde_json::from_slice(&bytes).expect("json"))
    }

    #[tokio::test]
    async fn instant_agents_answer_in_full_at_once_and_count_what_they_received() {
        let agents = agents(Behaviour::Instant, false);
        let (status, ack) = call(&agents, "handle_game_invitation", "GAME_INVITATION").await;
        assert_eq!(status, 200);
        assert_eq!(ack["id"], 3);
        let ack = &ack["result"];
        assert_eq!(ack["message_type"], "GAME_JOIN_ACK");
        assert_eq!(ack["accept"], true);
        assert_eq!(ack["player_id"], "P07");
        assert_eq!(ack["sender"], "player:P07");
        assert_eq!(ack["auth_token"], "a".repeat(64));
        assert_eq!(ack["match_id"], "R1M1");
        assert_eq!(ack["conversation_id"], "c1");
        let (_, first) = call(&agents, "choose_parity", "CHOOSE_PARITY_CALL").await;
        let (_, second) = call(&agents, "choose_parity", "CHOOSE_PARITY_CALL").await;
        assert_eq!(first["result"]["message_type"], "CHOOSE_PARITY_RESPONSE");
        let choices = [&first, &second].map(|answer| answer["result"]["parity_choice"].clone());
        assert_eq!(choices, [json!("even"), json!("odd")], "even and odd in turn");
        let (_, over) = call(&agents, "notify_match_result", "GAME_OVER").await;
        assert_eq!(over["result"]["status"], "acknowledged");
        let (_, standings) = call(&agents, "notify", "LEAGUE_STANDINGS_UPDATE").await;
        assert_eq!(standings["result"]["message_type"], "LEAGUE_STANDINGS_UPDATE");
        let (status, unknown) = call(&agents, "request_move", "GAME_MOVE_CALL").await;
        assert_eq!((status, &unknown["error"]["code"]), (200, &json!(-32601)));
        let counts = &agents.counts;
        let seen = [
            &counts.invitations,
            &counts.parity_calls,
            &counts.game_overs,
            &counts.notifications,
            &counts.unknown,
        ]
        .map(|count| count.load(Ordering::Relaxed));
        assert_eq!(seen, [1, 2, 1, 1, 1]);
        assert!(
            agents.received.lock().expect("lock").is_empty(),
            "unrecorded agents keep no call"
        );
    }

    #[tokio::test]
    async fn an_instant_agent_that_does_not_know_its_credentials_replies_as_the_player_called() {
        let agents = agents(Behaviour::Instant, true);
        let body = json!({"jsonrpc": "2.0", "method": "handle_game_invitation", "id": "x-1",
            "params": {"message_type": "GAME_INVITATION", "player_id": "P09", "match_id": "R2M3"}});
        let response = respond(
            &agents,
            "stranger",
            &HeaderMap::new(),
            body.to_string().as_bytes(),
        );
        let bytes = response.into_body().collect().await.expect("body").to_bytes();
        let answer: Value = serde_json::from_slice(&bytes).expect("json");
        assert_eq!(answer["id"], "x-1");
        let ack = &answer["result"];
        assert_eq!(
            [
                &ack["player_id"],
                &ack["sender"],
                &ack["match_id"],
                &ack["conversation_id"]
            ],
            [&json!("P09"), &json!("player:P09"), &json!("R2M3"), &Value::Null]
        );
        assert!(ack.get("auth_token").is_none(), "{ack}");
        let received = agents.received.lock().expect("lock").clone();
        assert_eq!(received.len(), 1, "a recording agent keeps the call");
        assert_eq!(received[0].params["player_id"], "P09");
    }

    #[tokio::test]
    async fn recording_agents_keep_every_call_with_its_trace_context() {
        let agents = agents(Behaviour::Clean, true);
        let (_, answer) = call(&agents, "GAME_INVITATION", "GAME_INVITATION").await;
        assert_eq!(answer["result"], json!({"status": "acknowledged"}));
        let received = agents.received.lock().expect("lock").clone();
        assert_eq!(received.len(), 1);
        assert_eq!(received[0].agent, "fake-0007");
        assert_eq!(received[0].method, "GAME_INVITATION");
        assert_eq!(received[0].message_type(), "GAME_INVITATION");
        assert_eq!(received[0].params["match_id"], "R1M1");
        assert_eq!(received[0].traceparent.as_deref(), Some("00-abc-def-01"));
    }

    #[test]
    fn the_message_type_is_the_params_field_else_the_method_names_it() {
        let params = json!({"message_type": "ROUND_COMPLETED"});
        let params = params.as_object().expect("object");
        assert_eq!(message_type("notify", params), "ROUND_COMPLETED");
        let empty = Map::new();
        assert_eq!(message_type("choose_parity", &empty), "CHOOSE_PARITY_CALL");
        assert_eq!(message_type("handle_game_invitation", &empty), "GAME_INVITATION");
        assert_eq!(message_type("notify_match_result", &empty), "GAME_OVER");
        assert_eq!(message_type("GAME_OVER", &empty), "GAME_OVER");
    }
}
