//! The messages a referee sends a player in every match (GAME_INVITATION, the move call, GAME_OVER), with
//! their fields typed. They are written exactly as [`crate::envelope::message`] and [`crate::addressed`] write a
//! JSON value (a test compares the two), without building a map for each call: at 40 external players
//! the gateway built, wrote and dropped about 14,000 such maps.

use std::borrow::Cow;

use league_domain::MessageType;
use serde::{Serialize, Serializer};

use crate::addressed::Outbound;
use crate::sender::SenderForm;
use crate::{envelope, timestamp};

/// A referee's message to a player: the envelope (`sender` as the league writes it, `referee:<id>`),
/// and `fields`, the message's own, a struct none of whose names is the envelope's.
#[derive(Debug, Clone)]
pub struct MatchMessage<'a, F> {
    pub message_type: MessageType,
    pub sender: String,
    pub conversation_id: &'a str,
    pub fields: F,
}

/// A [`MatchMessage`] as one agent receives it.
#[derive(Serialize)]
struct Written<'a, F> {
    protocol: &'static str,
    message_type: &'static str,
    sender: Cow<'a, str>,
    timestamp: String,
    /// No thread to echo is `null`, not an empty id.
    conversation_id: Option<&'a str>,
    #[serde(flatten)]
    fields: &'a F,
    auth_token: &'a str,
}

impl<F: Serialize> Outbound for MatchMessage<'_, F> {
    fn write<S: Serializer>(
        &self,
        form: SenderForm,
        auth_token: &str,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        Written {
            protocol: envelope::PROTOCOL,
            message_type: self.message_type.as_str(),
            sender: form
                .written(&self.sender)
                .map_or(Cow::Borrowed(self.sender.as_str()), Cow::Owned),
            timestamp: timestamp::now(),
            conversation_id: Some(self.conversation_id).filter(|id| !id.is_empty()),
            fields: &self.fields,
            auth_token,
        }
        .serialize(serializer)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::addressed::Addressed;

    #[derive(Serialize)]
    struct Fields<'a> {
        match_id: &'a str,
        round_id: u32,
        deadline: Option<String>,
        context: Nested,
    }

    #[derive(Serialize)]
    struct Nested {
        wins: u32,
    }

    /// The message as an agent receives it, without its timestamp (which is the time it is written).
    fn received(message: &impl Outbound, form: SenderForm) -> Value {
        let mut received = serde_json::to_value(Addressed::new(message, form, "league_out_x")).expect("JSON");
        let timestamp = received
            .as_object_mut()
            .and_then(|fields| fields.remove("timestamp"));
        assert!(matches!(timestamp, Some(Value::String(_))), "{received}");
        received
    }

    #[test]
    fn written_as_the_same_message_built_as_json_is() {
        for (sender, conversation_id) in [
            ("referee:ref01", "conv-1"),
            ("referee", ""),
            ("league_manager", "c"),
        ] {
            let fields = Fields {
                match_id: "R1M2",
                round_id: 1,
                deadline: None,
                context: Nested { wins: 3 },
            };
            let as_json = crate::envelope::message(
                MessageType::GameInvitation.as_str(),
                sender,
                conversation_id,
                json!({"match_id": "R1M2", "round_id": 1, "deadline": null, "context": {"wins": 3}}),
            );
            let typed = MatchMessage {
                message_type: MessageType::GameInvitation,
                sender: sender.to_owned(),
                conversation_id,
                fields,
            };
            for form in [SenderForm::Bare, SenderForm::Typed] {
                assert_eq!(
                    received(&typed, form),
                    received(&as_json, form),
                    "{sender} {form:?}"
                );
            }
        }
    }
}
