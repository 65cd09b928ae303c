//! Agents that follow the specification: at once and in full ([`Behaviour::Instant`]), with a bare
//! acknowledgement ([`Behaviour::Clean`]), or with their answers sent as separate calls
//! ([`Behaviour::SeparateReplies`]).
//!
//! [`Behaviour::Instant`]: super::Behaviour::Instant
//! [`Behaviour::Clean`]: super::Behaviour::Clean
//! [`Behaviour::SeparateReplies`]: super::Behaviour::SeparateReplies

use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use league_domain::MessageType;

use super::light::Call;
use super::{Agents, Answer, Registered, Written, kind, now};
use crate::http::{socket_addr, try_post_to};

/// A reply message from the agent `me` in the exchange a call belongs to: its envelope, with the call's
/// `conversation_id` and `match_id` (`F`: as the call wrote them), and the fields of its type.
#[derive(Serialize)]
struct Reply<'a, F> {
    protocol: &'static str,
    message_type: &'static str,
    sender: String,
    timestamp: String,
    conversation_id: Option<F>,
    match_id: Option<F>,
    player_id: PlayerId<'a, F>,
    #[serde(skip_serializing_if = "Option::is_none")]
    auth_token: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    arrival_timestamp: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    accept: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parity_choice: Option<&'static str>,
}

/// The replying player: the agent's own id once it knows it, else the call's `player_id`.
#[derive(Serialize)]
#[serde(untagged)]
enum PlayerId<'a, F> {
    Own(&'a str),
    Called(Option<F>),
}

/// The fields of a reply's type.
#[derive(Default)]
struct Fields {
    arrival_timestamp: Option<String>,
    accept: Option<bool>,
    parity_choice: Option<&'static str>,
}

impl<'a, F: Serialize> Reply<'a, F> {
    /// The array: the call's `conversation_id`, `match_id` and `player_id`, in that order;
    /// `called_player`: that `player_id` as text, which names the sender of an agent that does not know
    /// its own id.
    fn new(
        me: Option<&'a Registered>,
        [conversation_id, match_id, player_id]: [Option<F>; 3],
        called_player: Option<String>,
        message_type: &'static str,
        fields: Fields,
    ) -> Self {
        let sender = match me {
            Some(me) => format!("player:{}", me.id),
            None => format!("player:{}", called_player.unwrap_or_default()),
        };
        Self {
            protocol: "league.v2",
            message_type,
            sender,
            timestamp: now(),
            conversation_id,
            match_id,
            player_id: me.map_or(PlayerId::Called(player_id), |me| PlayerId::Own(&me.id)),
            auth_token: me.map(|me| me.token.as_str()),
            arrival_timestamp: fields.arrival_timestamp,
            accept: fields.accept,
            parity_choice: fields.parity_choice,
        }
    }
}

/// A JSON-RPC answer with a result.
#[derive(Serialize)]
struct Answered<'a, R> {
    jsonrpc: &'static str,
    result: R,
    id: Option<&'a RawValue>,
}

/// A JSON-RPC answer with an error.
#[derive(Serialize)]
struct Refused<'a> {
    jsonrpc: &'static str,
    error: RpcError,
    id: Option<&'a RawValue>,
}

#[derive(Serialize)]
struct RpcError {
    code: i64,
    message: String,
}

/// A league event's or GAME_OVER's acknowledgement.
#[derive(Serialize)]
struct Acknowledged<'a> {
    status: &'static str,
    message_type: &'a str,
}

fn written(status: u16, body: &impl Serialize, error: bool) -> Written {
    // Room for a reply message, so writing it never grows the buffer.
    let mut bytes = Vec::with_capacity(512);
    if let Err(error) = serde_json::to_writer(&mut bytes, body) {
        bytes = error.to_string().into_bytes();
    }
    Written {
        status,
        body: bytes,
        error,
    }
}

/// The specification at once and in full: GAME_JOIN_ACK and CHOOSE_PARITY_RESPONSE messages, every
/// notification acknowledged, -32601 under HTTP 200 for anything else.
pub(super) fn instant(agents: &Agents, agent: &str, call: &Call<'_>) -> Written {
    // Read under the lock, not cloned: the bench's agents answer hundreds of thousands of calls.
    let credentials = agents.credentials.read().unwrap_or_else(PoisonError::into_inner);
    let me = credentials.get(agent);
    let params = &call.params;
    let copied = [params.conversation_id, params.match_id, params.player_id];
    let called_player = || {
        params
            .player_id
            .and_then(|id| serde_json::from_str::<String>(id.get()).ok())
    };
    let reply = |message_type, fields| {
        let reply = Reply::new(me, copied, called_player(), message_type, fields);
        let answer = Answered {
            jsonrpc: "2.0",
            result: reply,
            id: call.id,
        };
        written(200, &answer, false)
    };
    let message_type = call.message_type();
    match kind(message_type) {
        Some(MessageType::GameInvitation) => reply(
            MessageType::GameJoinAck.as_str(),
            Fields {
                arrival_timestamp: Some(now()),
                accept: Some(true),
                ..Fields::default()
            },
        ),
        Some(MessageType::ChooseParityCall) => {
            let turn = agents.counts.parity_calls.load(Ordering::Relaxed);
            let choice = if turn.is_multiple_of(2) { "even" } else { "odd" };
            reply(
                MessageType::ChooseParityResponse.as_str(),
                Fields {
                    parity_choice: Some(choice),
                    ..Fields::default()
                },
            )
        }
        Some(
            MessageType::GameOver
            | MessageType::GameError
            | MessageType::RoundAnnouncement
            | MessageType::LeagueStandingsUpdate
            | MessageType::RoundCompleted
            | MessageType::LeagueCompleted,
        ) => {
            let acknowledged = Acknowledged {
                status: "acknowledged",
                message_type,
            };
            let answer = Answered {
                jsonrpc: "2.0",
                result: acknowledged,
                id: call.id,
            };
            written(200, &answer, false)
        }
        _ => {
            let error = RpcError {
                code: -32601,
                message: format!("Method not found: {message_type}"),
            };
            let answer = Refused {
                jsonrpc: "2.0",
                error,
                id: call.id,
            };
            written(200, &answer, true)
        }
    }
}

pub(super) fn clean(id: Value) -> Answer {
    (
        200,
        json!({"jsonrpc": "2.0", "result": {"status": "acknowledged"}, "id": id}),
    )
}

pub(super) fn bare_ok(id: Value) -> Answer {
    (
        200,
        json!({"jsonrpc": "2.0", "result": {"status": "ok"}, "id": id}),
    )
}

pub(super) fn separate_replies(
    agents: &Arc<Agents>,
    agent: &str,
    params: &Map<String, Value>,
    id: Value,
) -> Answer {
    let answer = match params.get("message_type").and_then(Value::as_str).and_then(kind) {
        Some(MessageType::GameInvitation) => Some((
            MessageType::GameJoinAck.as_str(),
            Fields {
                accept: Some(true),
                ..Fields::default()
            },
        )),
        Some(MessageType::ChooseParityCall) => Some((
            MessageType::ChooseParityResponse.as_str(),
            Fields {
                parity_choice: Some("odd"),
                ..Fields::default()
            },
        )),
        _ => None,
    };
    let me = agents.credentials(agent);
    let endpoint = params.get("referee_endpoint").and_then(Value::as_str);
    if let (Some((message_type, fields)), Some(me), Some(endpoint)) = (answer, me, endpoint) {
        let copied = ["conversation_id", "match_id", "player_id"].map(|name| params.get(name));
        let message = Reply::new(Some(&me), copied, None, message_type, fields);
        let call = json!({"jsonrpc": "2.0", "method": message_type, "params": message, "id": 1});
        let agents = agents.clone();
        let endpoint = endpoint.to_owned();
        tokio::spawn(async move {
            let answered = match socket_addr(&endpoint) {
                Ok(addr) => try_post_to(addr, call.to_string(), &[])
                    .await
                    .and_then(|reply| Ok(serde_json::from_slice(&reply.body)?)),
                Err(error) => Err(error),
            };
            let answer = answered.unwrap_or_else(|error| json!({"fake agent": format!("{error:#}")}));
            agents
                .separate_answers
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(answer);
        });
    }
    (
        200,
        json!({"jsonrpc": "2.0", "result": {"status": "joined"}, "id": id}),
    )
}
