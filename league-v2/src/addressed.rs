//! A league message as one agent receives it: the message the league built, its `sender` written in the
//! agent's form ([`SenderForm`]) and the agent's outbound `auth_token` added, written straight from the
//! message without a copy of it. A league event is built once and sent to every player this way, and a
//! call tried in several dialects or sender forms never copies its message.
//!
//! A message is a JSON value ([`crate::envelope::message`]) or, for the calls of every match, a
//! [`crate::match_message::MatchMessage`] whose fields are typed: written the same way without building a map.

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::sender::SenderForm;

/// A message the league sends, written for one agent: its sender in the agent's form, with the agent's
/// outbound token.
pub trait Outbound {
    fn write<S: Serializer>(
        &self,
        form: SenderForm,
        auth_token: &str,
        serializer: S,
    ) -> Result<S::Ok, S::Error>;
}

/// `message` as the agent with this sender form and outbound token receives it.
#[derive(Debug, Clone, Copy)]
pub struct Addressed<'a, M: ?Sized = Value> {
    message: &'a M,
    form: SenderForm,
    auth_token: &'a str,
}

impl<'a, M: ?Sized> Addressed<'a, M> {
    pub fn new(message: &'a M, form: SenderForm, auth_token: &'a str) -> Self {
        Self {
            message,
            form,
            auth_token,
        }
    }
}

impl<M: Outbound + ?Sized> Serialize for Addressed<'_, M> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.message.write(self.form, self.auth_token, serializer)
    }
}

impl Outbound for Value {
    fn write<S: Serializer>(
        &self,
        form: SenderForm,
        auth_token: &str,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        let Value::Object(fields) = self else {
            // Not a message at all: sent as it is (an agent will say what it thinks of it).
            return self.serialize(serializer);
        };
        let len = fields.len() + usize::from(!fields.contains_key("auth_token"));
        let mut map = serializer.serialize_map(Some(len))?;
        for (key, value) in fields {
            match key.as_str() {
                "auth_token" => {}
                "sender" => match value.as_str().and_then(|sender| form.written(sender)) {
                    Some(sender) => map.serialize_entry(key, &sender)?,
                    None => map.serialize_entry(key, value)?,
                },
                _ => map.serialize_entry(key, value)?,
            }
        }
        map.serialize_entry("auth_token", auth_token)?;
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_agents_sender_and_token_and_nothing_else_changed() {
        let message = json!({
            "protocol": "league.v2",
            "message_type": "LEAGUE_STANDINGS_UPDATE",
            "sender": "league_manager",
            "auth_token": "someone else's",
            "standings": [{"player_id": "P01"}],
        });
        for form in [SenderForm::Bare, SenderForm::Typed] {
            let written =
                serde_json::to_value(Addressed::new(&message, form, "league_out_x")).expect("serializes");
            let mut expected = message.clone();
            form.apply(&mut expected);
            expected["auth_token"] = "league_out_x".into();
            assert_eq!(written, expected, "{form:?}");
        }
        // The message itself is left as it was.
        assert_eq!(message["sender"], "league_manager");
    }

    #[test]
    fn a_referee_sender_is_normalised_and_anything_else_kept() {
        let sent = |sender: &str| {
            let message = json!({"sender": sender});
            serde_json::to_value(Addressed::new(&message, SenderForm::Typed, "t")).expect("serializes")
        };
        assert_eq!(sent("referee:ref01")["sender"], "referee:REF01");
        assert_eq!(sent("player:P01")["sender"], "player:P01");
        let null = Value::Null;
        assert_eq!(
            serde_json::to_value(Addressed::new(&null, SenderForm::Bare, "t")).expect("serializes"),
            Value::Null
        );
    }
}
