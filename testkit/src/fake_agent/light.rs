//! How the bench's agents (instant, unrecorded) read a call: only the method, the id and the envelope
//! fields a reply copies, and nothing of a league event past its method.
//!
//! A standings update carries every player's row and goes to every player, so its bytes per match grow
//! with the league. Parsing them all made the bench's own process the league's busiest at 200 players
//! (docs/benchmarks.md): the bench measured its fake agents rather than the server. The agents'
//! acknowledgement of a league event needs nothing but its type, which its method names (the gateway
//! writes `jsonrpc`, `id` and `method` before `params`), so reading stops there. Every other call, or an
//! event whose method or id comes after its params, is read in full (serde skips what it does not
//! keep without building it). A real agent's parse happens on its own machine.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::{Map, Value, json};

/// The call as a JSON value holding only those fields (null if it is not JSON).
pub(super) fn read(body: &[u8]) -> Value {
    let mut call = Call::default();
    let mut reader = serde_json::Deserializer::from_slice(body);
    let read = Reader(&mut call)
        .deserialize(&mut reader)
        .and_then(|()| reader.end());
    if read.is_err() && !call.stopped {
        return Value::Null;
    }
    let fields = [
        ("message_type", call.params.message_type.map(Value::String)),
        ("player_id", call.params.player_id),
        ("conversation_id", call.params.conversation_id),
        ("match_id", call.params.match_id),
    ];
    let params: Map<String, Value> = fields
        .into_iter()
        .filter_map(|(name, value)| Some((name.to_owned(), value?)))
        .collect();
    json!({"method": call.method, "id": call.id, "params": params})
}

#[derive(Debug, Default)]
struct Call {
    method: String,
    id: Value,
    params: Params,
    /// Reading stopped at the params of a league event.
    stopped: bool,
}

#[derive(Debug, Default, serde::Deserialize)]
struct Params {
    message_type: Option<String>,
    player_id: Option<Value>,
    conversation_id: Option<Value>,
    match_id: Option<Value>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "lowercase")]
enum Key {
    Method,
    Id,
    Params,
    #[serde(other)]
    Other,
}

/// Whether `method` names a league event whose acknowledgement needs only its type.
fn names_an_event(method: &str) -> bool {
    matches!(
        super::method_message_type(method),
        "ROUND_ANNOUNCEMENT" | "LEAGUE_STANDINGS_UPDATE" | "ROUND_COMPLETED" | "LEAGUE_COMPLETED"
    )
}

/// Reads a call's members into the [`Call`] it holds, stopping at the params of a league event (by
/// returning an error once the call is known: serde has no other way to stop in the middle of a map).
struct Reader<'c>(&'c mut Call);

impl<'de> DeserializeSeed<'de> for Reader<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Reader<'_> {
    type Value = ();

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON-RPC call")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let call = self.0;
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Method => call.method = map.next_value()?,
                Key::Id => call.id = map.next_value()?,
                Key::Params if !call.id.is_null() && names_an_event(&call.method) => {
                    call.stopped = true;
                    return Err(de::Error::custom("a league event: read as far as its method"));
                }
                Key::Params => call.params = map.next_value()?,
                Key::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_league_event_is_read_as_far_as_its_method() {
        // Not valid JSON after `params`: it is never read.
        let body = br#"{"jsonrpc":"2.0","id":9,"method":"update_standings","params":{"standings":[{"#;
        assert_eq!(
            read(body),
            json!({"method": "update_standings", "id": 9, "params": {}})
        );
    }

    #[test]
    fn a_game_call_is_read_in_full() {
        let body = br#"{"jsonrpc":"2.0","id":3,"method":"handle_game_invitation",
            "params":{"message_type":"GAME_INVITATION","match_id":"R1M1","player_id":"P01",
                      "conversation_id":"c1","opponent_id":"P02"}}"#;
        assert_eq!(
            read(body),
            json!({"method": "handle_game_invitation", "id": 3, "params": {
                "message_type": "GAME_INVITATION", "match_id": "R1M1", "player_id": "P01",
                "conversation_id": "c1"}})
        );
    }

    #[test]
    fn an_event_with_its_id_after_its_params_is_read_in_full() {
        let body = br#"{"jsonrpc":"2.0","method":"notify_round","params":{"message_type":"ROUND_ANNOUNCEMENT"},"id":4}"#;
        assert_eq!(
            read(body),
            json!({"method": "notify_round", "id": 4, "params": {"message_type": "ROUND_ANNOUNCEMENT"}})
        );
    }

    #[test]
    fn what_is_not_json_reads_as_null() {
        assert_eq!(read(b"{\"method\": \"choose_parity\""), Value::Null);
        assert_eq!(
            read(br#"{"jsonrpc":"2.0","id":1,"method":"choose_parity"} x"#),
            Value::Null
        );
    }
}
