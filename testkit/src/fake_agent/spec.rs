//! Agents that follow the specification: at once and in full ([`Behaviour::Instant`]), with a bare
//! acknowledgement ([`Behaviour::Clean`]), or with their answers sent as separate calls
//! ([`Behaviour::SeparateReplies`]).
//!
//! [`Behaviour::Instant`]: super::Behaviour::Instant
//! [`Behaviour::Clean`]: super::Behaviour::Clean
//! [`Behaviour::SeparateReplies`]: super::Behaviour::SeparateReplies

use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};

use serde_json::{Map, Value, json};

use super::{Agents, Answer, Registered, now};
use crate::http::{socket_addr, try_post_to};

/// A reply message from the agent `me` in the exchange `call` belongs to, `fields` added.
fn reply(me: Option<&Registered>, call: &Map<String, Value>, message_type: &str, fields: Value) -> Value {
    let player_id = me.map_or_else(
        || call.get("player_id").cloned().unwrap_or(Value::Null),
        |me| Value::from(me.id.as_str()),
    );
    let mut message = json!({
        "protocol": "league.v2",
        "message_type": message_type,
        "sender": format!("player:{}", player_id.as_str().unwrap_or("")),
        "timestamp": now(),
        "conversation_id": call.get("conversation_id").cloned().unwrap_or(Value::Null),
        "match_id": call.get("match_id").cloned().unwrap_or(Value::Null),
        "player_id": player_id,
    });
    if let (Value::Object(message), Value::Object(fields)) = (&mut message, fields) {
        if let Some(me) = me {
            message.insert("auth_token".into(), me.token.as_str().into());
        }
        message.extend(fields);
    }
    message
}

pub(super) fn instant(
    agents: &Agents,
    agent: &str,
    message_type: &str,
    params: &Map<String, Value>,
    id: Value,
) -> Answer {
    // Read under the lock, not cloned: the bench's agents answer hundreds of thousands of calls.
    let credentials = agents.credentials.read().unwrap_or_else(PoisonError::into_inner);
    let me = credentials.get(agent);
    let result = match message_type {
        "GAME_INVITATION" => reply(
            me,
            params,
            "GAME_JOIN_ACK",
            json!({"arrival_timestamp": now(), "accept": true}),
        ),
        "CHOOSE_PARITY_CALL" => {
            let turn = agents.counts.parity_calls.load(Ordering::Relaxed);
            let choice = if turn.is_multiple_of(2) { "even" } else { "odd" };
            reply(
                me,
                params,
                "CHOOSE_PARITY_RESPONSE",
                json!({"parity_choice": choice}),
            )
        }
        "GAME_OVER"
        | "GAME_ERROR"
        | "ROUND_ANNOUNCEMENT"
        | "LEAGUE_STANDINGS_UPDATE"
        | "ROUND_COMPLETED"
        | "LEAGUE_COMPLETED" => json!({"status": "acknowledged", "message_type": message_type}),
        _ => {
            let error = json!({"code": -32601, "message": format!("Method not found: {message_type}")});
            return (200, json!({"jsonrpc": "2.0", "error": error, "id": id}));
        }
    };
    (200, json!({"jsonrpc": "2.0", "result": result, "id": id}))
}

pub(super) fn clean(id: Value) -> Answer {
    (
        200,
        json!({"jsonrpc": "2.0", "result": {"status": "acknowledged"}, "id": id}),
    )
}

pub(super) fn separate_replies(
    agents: &Arc<Agents>,
    agent: &str,
    params: &Map<String, Value>,
    id: Value,
) -> Answer {
    let answer = match params.get("message_type").and_then(Value::as_str) {
        Some("GAME_INVITATION") => Some(("GAME_JOIN_ACK", json!({"accept": true}))),
        Some("CHOOSE_PARITY_CALL") => Some(("CHOOSE_PARITY_RESPONSE", json!({"parity_choice": "odd"}))),
        _ => None,
    };
    let me = agents.credentials(agent);
    let endpoint = params.get("referee_endpoint").and_then(Value::as_str);
    if let (Some((message_type, fields)), Some(me), Some(endpoint)) = (answer, me, endpoint) {
        let message = reply(Some(&me), params, message_type, fields);
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
