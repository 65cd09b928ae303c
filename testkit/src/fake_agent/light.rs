//! How the specification's agents ([`super::Behaviour::Instant`]) read a call: only the method, the id
//! and the envelope fields a reply copies, borrowed from the body, and nothing of a league event past
//! its method. Their answers ([`super::spec::instant`]) are written from these fields directly, without
//! building a JSON value.
//!
//! These are the bench's agents. A standings update carries every player's row and goes to every
//! player, so its bytes per match grow with the league; and every call of a league is one of theirs.
//! Reading calls into JSON values and building answers as JSON values made the bench's own process as
//! busy as the gateway (docs/benchmarks.md): the bench measured its fake agents rather than the server.
//! The agents' acknowledgement of a league event needs nothing but its type, which its method names
//! (the gateway writes `jsonrpc`, `id` and `method` before `params`), so reading stops there. Every other
//! call, or an event whose method or id comes after its params, is read in full (serde skips what it
//! does not keep without building it). A real agent's parse happens on its own machine.

use std::fmt;

use league_domain::MessageType;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

/// What the agents read of a call. A body that is not a JSON-RPC call reads as a call without a method.
#[derive(Debug, Default)]
pub(super) struct Call<'a> {
    pub method: String,
    /// The call's id as it was written (absent: none).
    pub id: Option<&'a RawValue>,
    pub params: Params<'a>,
    /// Reading stopped at the params of a league event.
    stopped: bool,
}

/// The envelope fields a reply copies, as they were written.
#[derive(Debug, Default, serde::Deserialize)]
pub(super) struct Params<'a> {
    pub message_type: Option<String>,
    #[serde(borrow)]
    pub player_id: Option<&'a RawValue>,
    #[serde(borrow)]
    pub conversation_id: Option<&'a RawValue>,
    #[serde(borrow)]
    pub match_id: Option<&'a RawValue>,
}

impl Call<'_> {
    /// The message type the call carries: `params.message_type`, else the one its method names.
    pub fn message_type(&self) -> &str {
        match &self.params.message_type {
            Some(kind) => kind,
            None => super::method_message_type(&self.method),
        }
    }
}

/// Reads what the agents need of `body`.
pub(super) fn read(body: &[u8]) -> Call<'_> {
    let mut call = Call::default();
    let mut reader = serde_json::Deserializer::from_slice(body);
    let read = Reader(&mut call)
        .deserialize(&mut reader)
        .and_then(|()| reader.end());
    if read.is_err() && !call.stopped {
        return Call::default();
    }
    call
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
        super::kind(super::method_message_type(method)),
        Some(
            MessageType::RoundAnnouncement
                | MessageType::LeagueStandingsUpdate
                | MessageType::RoundCompleted
                | MessageType::LeagueCompleted
        )
    )
}

/// Reads a call's members into the [`Call`] it holds, stopping at the params of a league event (by
/// returning an error once the call is known: serde has no other way to stop in the middle of a map).
struct Reader<'c, 'a>(&'c mut Call<'a>);

impl<'de> DeserializeSeed<'de> for Reader<'_, 'de> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Reader<'_, 'de> {
    type Value = ();

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON-RPC call")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let call = self.0;
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Method => call.method = map.next_value()?,
                Key::Id => call.id = Some(map.next_value()?),
                Key::Params if call.id.is_some() && names_an_event(&call.method) => {
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

    fn raw(value: Option<&RawValue>) -> Option<&str> {
        value.map(RawValue::get)
    }

    #[test]
    fn a_league_event_is_read_as_far_as_its_method() {
        // Not valid JSON after `params`: it is never read.
        let body = br#"{"jsonrpc":"2.0","id":9,"method":"update_standings","params":{"standings":[{"#;
        let call = read(body);
        assert_eq!(
            (call.method.as_str(), raw(call.id)),
            ("update_standings", Some("9"))
        );
        assert_eq!(call.message_type(), "LEAGUE_STANDINGS_UPDATE");
        assert!(call.params.match_id.is_none());
    }

    #[test]
    fn a_game_call_is_read_in_full() {
        let body = br#"{"jsonrpc":"2.0","id":"c-3","method":"handle_game_invitation",
            "params":{"message_type":"GAME_INVITATION","match_id":"R1M1","player_id":"P01",
                      "conversation_id":"c1","opponent_id":"P02","deadline":{"at":[1,2]}}}"#;
        let call = read(body);
        assert_eq!(raw(call.id), Some(r#""c-3""#));
        assert_eq!(call.message_type(), "GAME_INVITATION");
        let params = &call.params;
        assert_eq!(
            [params.match_id, params.player_id, params.conversation_id].map(raw),
            [Some(r#""R1M1""#), Some(r#""P01""#), Some(r#""c1""#)]
        );
    }

    #[test]
    fn an_event_with_its_id_after_its_params_is_read_in_full() {
        let body = br#"{"jsonrpc":"2.0","method":"notify_round","params":{"message_type":"ROUND_ANNOUNCEMENT","match_id":"R2M1"},"id":4}"#;
        let call = read(body);
        assert_eq!((call.method.as_str(), raw(call.id)), ("notify_round", Some("4")));
        assert_eq!(call.message_type(), "ROUND_ANNOUNCEMENT");
        assert_eq!(raw(call.params.match_id), Some(r#""R2M1""#));
    }

    #[test]
    fn what_is_not_json_reads_as_a_call_without_a_method() {
        for body in [
            &b"{\"method\": \"choose_parity\""[..],
            br#"{"jsonrpc":"2.0","id":1,"method":"choose_parity"} x"#,
        ] {
            let call = read(body);
            assert_eq!((call.method.as_str(), call.id.is_none()), ("", true));
        }
    }
}
