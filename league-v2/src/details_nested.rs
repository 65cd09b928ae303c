//! The `details_nested` dialect's shape: the envelope (`protocol`, `message_type`, `sender`,
//! `timestamp`, `conversation_id`, `auth_token`) at the top of the params, and only the message's own
//! details nested under its lower-case type name, the method naming the same type:
//! `game_invitation {"protocol": …, "sender": …, "game_invitation": {"match_id": …}}`. The `nested`
//! dialect nests the whole message instead.

use serde_json::{Map, Value};

/// The envelope's fields, which stay at the top.
const ENVELOPE: [&str; 6] = [
    "protocol",
    "message_type",
    "sender",
    "timestamp",
    "conversation_id",
    "auth_token",
];

/// `message` written in this shape: its envelope at the top, everything else under `name`.
pub fn split(message: Value, name: &str) -> Value {
    let Value::Object(fields) = message else {
        return message;
    };
    let (envelope, details): (Map<String, Value>, Map<String, Value>) = fields
        .into_iter()
        .partition(|(key, _)| ENVELOPE.contains(&key.as_str()));
    let mut params = envelope;
    params.insert(name.to_owned(), Value::Object(details));
    Value::Object(params)
}

/// The message `params` (the call's, method `method`) carries when written in this shape: an envelope
/// field at the top beside an object under the method's own name, merged into one message (a detail
/// never overrides an envelope field). `None` when the params are not in this shape.
pub fn merge(method: &str, params: &mut Map<String, Value>) -> Option<Map<String, Value>> {
    let has_envelope = params.keys().any(|key| ENVELOPE.contains(&key.as_str()));
    if !has_envelope || !matches!(params.get(method), Some(Value::Object(_))) {
        return None;
    }
    let Some(Value::Object(details)) = params.remove(method) else {
        return None;
    };
    let mut message = std::mem::take(params);
    for (key, value) in details {
        message.entry(key).or_insert(value);
    }
    Some(message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_envelope_stays_on_top_and_the_details_are_nested() {
        let message = json!({"protocol": "league.v2", "message_type": "GAME_INVITATION",
            "sender": "referee:REF01", "auth_token": "t", "match_id": "R1M1", "player_id": "P01"});
        let split = split(message.clone(), "game_invitation");
        assert_eq!(
            split,
            json!({"protocol": "league.v2", "message_type": "GAME_INVITATION", "sender": "referee:REF01",
                "auth_token": "t", "game_invitation": {"match_id": "R1M1", "player_id": "P01"}})
        );
        let Value::Object(mut params) = split else {
            panic!("an object")
        };
        assert_eq!(
            merge("game_invitation", &mut params),
            Some(message.as_object().cloned().expect("object"))
        );
    }

    #[test]
    fn other_shapes_are_not_taken_for_it() {
        // The whole message nested (the `nested` dialect): no envelope on top.
        let mut nested = json!({"game_invitation": {"protocol": "league.v2"}});
        assert_eq!(
            merge("game_invitation", nested.as_object_mut().expect("object")),
            None
        );
        // A flat message.
        let mut flat = json!({"protocol": "league.v2", "match_id": "R1M1"});
        assert_eq!(
            merge("game_invitation", flat.as_object_mut().expect("object")),
            None
        );
    }
}
