//! Picky agents: the strict ways real agents refuse what they do not expect — a sender they cannot
//! parse, a method that is not theirs, any call at all, a message that is not nested the way they nest
//! theirs.

use league_v2::sender::{MANAGER, PLAYER, REFEREE};
use serde_json::{Map, Value, json};

use super::Answer;

/// A JSON-RPC error answer under `status`.
fn error(status: u16, code: i64, message: &str, data: Value, id: Value) -> Answer {
    let error = json!({"code": code, "message": message, "data": data});
    (status, json!({"jsonrpc": "2.0", "error": error, "id": id}))
}

fn ok(result: Value, id: Value) -> Answer {
    (200, json!({"jsonrpc": "2.0", "result": result, "id": id}))
}

/// Every sender checked against `^(player|referee|league_manager):[A-Z0-9]+$`; a bare `league_manager`
/// (or anything else) is 400 -32602 "Sender not registered".
pub(super) fn typed_senders(params: &Map<String, Value>, id: Value) -> Answer {
    let sender = params.get("sender").and_then(Value::as_str).unwrap_or("");
    let (kind, rest) = sender.split_once(':').unwrap_or((sender, ""));
    let valid = [PLAYER, REFEREE, MANAGER].contains(&kind)
        && !rest.is_empty()
        && rest.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit());
    if valid {
        ok(json!({"status": "ok"}), id)
    } else {
        let data = json!({"sender": sender});
        error(400, -32602, "Sender not registered", data, id)
    }
}

/// Only the message type in lower case is a method; anything else is 404 -32601.
pub(super) fn lower_case_methods(method: &str, params: &Map<String, Value>, id: Value) -> Answer {
    let lower_type = lower_message_type(params);
    if lower_type.as_deref().is_some_and(|lower| lower == method) {
        ok(json!({"status": "ok"}), id)
    } else {
        error(404, -32601, "Method not found", Value::Null, id)
    }
}

/// Every call is 401 -32001 "Missing auth token" (E012), whatever it carries.
pub(super) fn refuses_auth(id: Value) -> Answer {
    let data = json!({"error_code": "E012"});
    error(401, -32001, "Missing auth token", data, id)
}

/// The lower-case message type as the method, with the message nested under it; an invitation is
/// accepted. Every other call is 200 `{"status": "ok"}`.
pub(super) fn nested(method: &str, params: &Map<String, Value>, id: Value) -> Answer {
    let message = params.get(method).and_then(Value::as_object);
    match message {
        Some(message) if lower_message_type(message).as_deref() == Some(method) => {
            if method == "game_invitation" {
                let match_id = message.get("match_id").cloned().unwrap_or(Value::Null);
                ok(json!({"match_id": match_id, "accept": true}), id)
            } else {
                ok(json!({"status": "ok"}), id)
            }
        }
        _ => ok(json!({"status": "ok"}), id),
    }
}

fn lower_message_type(message: &Map<String, Value>) -> Option<String> {
    message
        .get("message_type")
        .and_then(Value::as_str)
        .map(str::to_ascii_lowercase)
}
