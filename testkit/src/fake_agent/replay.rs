//! Agents that answer the way the captured agents in `tests/fixtures` did: their recorded answers,
//! with the fields that name the exchange taken from the call.

use serde_json::{Map, Value, json};

use league_domain::MessageType;

use super::{Answer, kind};
use crate::fixtures::fixture;

/// A recorded answer's `result`, with the fields that name the exchange taken from the call.
fn echoed(template: &Value, params: &Map<String, Value>) -> Map<String, Value> {
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

pub(super) fn peer_a(method: &str, params: &Map<String, Value>, id: Value) -> Answer {
    let message_type = params.get("message_type").and_then(Value::as_str).unwrap_or("");
    // peer-a's methods: three canonical names, and these message types as method names.
    let known = matches!(
        method,
        "handle_game_invitation" | "choose_parity" | "notify_match_result"
    ) || matches!(
        kind(method),
        Some(
            MessageType::GameInvitation
                | MessageType::ChooseParityCall
                | MessageType::GameOver
                | MessageType::RoundAnnouncement
                | MessageType::LeagueStandingsUpdate
                | MessageType::RoundCompleted
                | MessageType::LeagueCompleted
        )
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
        let status = recorded["status"]
            .as_u64()
            .and_then(|status| u16::try_from(status).ok());
        return (status.unwrap_or(404), body);
    }
    if !known {
        let error = json!({"code": -32601, "message": "Method not found"});
        return (
            404,
            json!({"jsonrpc": "2.0", "result": null, "error": error, "id": id}),
        );
    }
    let called = kind(message_type);
    let template = match called {
        Some(MessageType::GameInvitation) => probe_result("peer-a", "probe_04_msgtype_GAME_INVITATION.json"),
        Some(MessageType::ChooseParityCall) => {
            probe_result("peer-a", "probe_05_msgtype_CHOOSE_PARITY_CALL.json")
        }
        Some(MessageType::GameOver) => probe_result("peer-a", "probe_06_msgtype_GAME_OVER.json"),
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
        called,
        Some(MessageType::GameInvitation | MessageType::ChooseParityCall | MessageType::GameOver)
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

pub(super) fn peer_b(method: &str, params: &Map<String, Value>, id: Value) -> Answer {
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

pub(super) fn quirky(params: &Map<String, Value>) -> Answer {
    let match_id = params.get("match_id").cloned().unwrap_or(Value::Null);
    let body = match params.get("message_type").and_then(Value::as_str).and_then(kind) {
        Some(MessageType::GameInvitation) => json!({"match_id": match_id, "accepted": true}),
        Some(MessageType::ChooseParityCall) => json!({"match_id": match_id, "choice": "even"}),
        _ => json!({"ok": true}),
    };
    (200, body)
}
