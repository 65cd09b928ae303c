//! league.v2 on the wire: the envelope, timestamps, and conversions from the league's protobuf records.

pub mod addressed;
pub mod convert;
pub mod envelope;
pub mod match_message;
pub mod outbound_token;
pub mod result;
pub mod sender;
pub mod timestamp;

use serde_json::{Map, Value};

pub use match_message::MatchMessage;

/// A message from the league (`sender` = `league_manager` or `referee:<id>`), with its envelope filled
/// in; `fields` are the message's own. The bridge writes the sender in the receiving agent's form
/// ([`sender::SenderForm`]) and adds its `auth_token` ([`outbound_token`]) when it sends it
/// ([`addressed::Addressed`]).
pub fn message(message_type: &str, sender: &str, conversation_id: &str, fields: Value) -> Value {
    let mut object = Map::new();
    object.insert("protocol".into(), envelope::PROTOCOL.into());
    object.insert("message_type".into(), message_type.into());
    object.insert("sender".into(), sender.into());
    object.insert("timestamp".into(), timestamp::now().into());
    // No thread to echo is `null`, not an empty id.
    object.insert(
        "conversation_id".into(),
        if conversation_id.is_empty() {
            Value::Null
        } else {
            conversation_id.into()
        },
    );
    if let Value::Object(fields) = fields {
        object.extend(fields);
    }
    Value::Object(object)
}
