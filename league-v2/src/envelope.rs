//! The envelope every league.v2 message carries (`protocol`, `message_type`, `sender`, `timestamp`,
//! `conversation_id`, `auth_token`): written on every message the league sends ([`message`]) and
//! checked the same way for every message an agent sends us ([`check`]).

use league_proto::ErrorCode;
use serde_json::{Map, Value};

use crate::compliance::{Checker, kinds};
use crate::league_error::{LeagueError, LeagueResult};
use crate::sender;
use crate::timestamp::{self, Reading};

pub const PROTOCOL: &str = "league.v2";

/// A message from the league (`sender` = `league_manager` or `referee:<id>`), with its envelope filled
/// in; `fields` are the message's own. The bridge writes the sender in the receiving agent's form
/// ([`crate::sender::SenderForm`]) and adds its `auth_token` ([`crate::outbound_token`]) when it sends
/// it ([`crate::addressed::Addressed`]). `conversation_id` is empty when the message belongs to none
/// (written `null`), so a caller with none passes `""`.
pub fn message(message_type: &str, sender: &str, conversation_id: &str, fields: Value) -> Value {
    let mut object = Map::new();
    object.insert("protocol".into(), PROTOCOL.into());
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

/// Who a message says it is from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sender {
    Manager,
    Referee(String),
    Player(String),
}

impl Sender {
    pub fn parse(text: &str) -> Option<Sender> {
        let (role, id) = match text.split_once(':') {
            None if text == sender::MANAGER => return Some(Sender::Manager),
            Some((sender::MANAGER, _)) => return Some(Sender::Manager),
            None => return None,
            Some((role, id)) => (role, id.trim()),
        };
        if id.is_empty() || id.len() > 128 {
            return None;
        }
        match role {
            sender::REFEREE => Some(Sender::Referee(id.to_owned())),
            sender::PLAYER => Some(Sender::Player(id.to_owned())),
            _ => None,
        }
    }

    pub fn id(&self) -> Option<&str> {
        match self {
            Sender::Manager => None,
            Sender::Referee(id) | Sender::Player(id) => Some(id),
        }
    }
}

/// The envelope fields a handler needs.
#[derive(Debug, Clone, Default)]
pub struct Envelope {
    pub sender: Option<Sender>,
    pub conversation_id: Option<String>,
    pub auth_token: Option<String>,
}

/// A string field, if present and a string.
pub fn text<'a>(message: &'a Map<String, Value>, field: &str) -> Option<&'a str> {
    message.get(field).and_then(Value::as_str)
}

/// A text field the message must carry (an `error_code`…): a non-empty string of at most 128
/// characters, else E003. Ids are parsed into their types instead ([`crate::ids`]).
pub fn required_text<'a>(message: &'a Map<String, Value>, field: &str) -> LeagueResult<&'a str> {
    text(message, field)
        .filter(|id| !id.is_empty() && id.len() <= 128)
        .ok_or_else(|| LeagueError::new(ErrorCode::MissingRequiredField, format!("{field} is required")))
}

/// Checks the envelope of a message an agent sent. `needs_token`: the agent must be registered and
/// authenticate (E011 when the token is missing, in both modes).
pub fn check(
    message: &Map<String, Value>,
    checker: &mut Checker,
    needs_token: bool,
) -> LeagueResult<Envelope> {
    match message.get("protocol") {
        None | Some(Value::Null) => missing(checker, "protocol")?,
        Some(Value::String(protocol)) if protocol == PROTOCOL => {}
        Some(Value::String(protocol)) if protocol.eq_ignore_ascii_case(PROTOCOL) => checker.deviation(
            kinds::WRONG_PROTOCOL_FIELD,
            format!("protocol {protocol:?}"),
            ErrorCode::ProtocolVersionMismatch,
        )?,
        Some(other) => {
            return Err(LeagueError::new(
                ErrorCode::ProtocolVersionMismatch,
                format!("protocol must be \"{PROTOCOL}\", got {other}"),
            ));
        }
    }
    if message.get("message_type").is_none_or(Value::is_null) {
        missing(checker, "message_type")?;
    }
    let sender = match message.get("sender") {
        None | Some(Value::Null) => {
            missing(checker, "sender")?;
            None
        }
        Some(Value::String(text)) => Some(Sender::parse(text).ok_or_else(|| {
            LeagueError::new(
                ErrorCode::InvalidMessageFormat,
                format!("sender must be \"player:<id>\" or \"referee:<id>\", got {text:?}"),
            )
        })?),
        Some(other) => {
            return Err(LeagueError::new(
                ErrorCode::InvalidMessageFormat,
                format!("sender must be a string, got {other}"),
            ));
        }
    };
    match message.get("timestamp") {
        None | Some(Value::Null) => missing(checker, "timestamp")?,
        Some(Value::String(text)) => check_timestamp(text, "timestamp", checker)?,
        Some(other) => {
            return Err(LeagueError::new(
                ErrorCode::InvalidTimestamp,
                format!("timestamp must be an ISO-8601 string, got {other}"),
            ));
        }
    }
    let conversation_id = match message.get("conversation_id") {
        None | Some(Value::Null) => {
            missing(checker, "conversation_id")?;
            None
        }
        Some(Value::String(id)) if id.len() <= 256 => Some(id.clone()),
        Some(Value::Number(id)) => Some(id.to_string()),
        Some(_) => {
            return Err(LeagueError::new(
                ErrorCode::InvalidMessageFormat,
                "conversation_id must be a string of at most 256 characters",
            ));
        }
    };
    let auth_token = match message.get("auth_token") {
        Some(Value::String(token)) if !token.is_empty() => Some(token.clone()),
        None | Some(Value::Null) | Some(Value::String(_)) => None,
        Some(_) => {
            return Err(LeagueError::new(
                ErrorCode::AuthTokenInvalid,
                "auth_token must be a string",
            ));
        }
    };
    if needs_token && auth_token.is_none() {
        return Err(LeagueError::new(
            ErrorCode::AuthTokenMissing,
            "auth_token is required",
        ));
    }
    Ok(Envelope {
        sender,
        conversation_id,
        auth_token,
    })
}

/// Checks one timestamp field (the envelope's, or one like `arrival_timestamp`).
pub fn check_timestamp(text: &str, field: &str, checker: &mut Checker) -> LeagueResult<()> {
    match timestamp::read(text) {
        Reading::Utc => Ok(()),
        Reading::UtcVariant(variant) => checker.deviation(
            kinds::TIMESTAMP_FORMAT,
            format!("{field} {text:?} ({variant})"),
            ErrorCode::InvalidTimestamp,
        ),
        Reading::NonUtc => checker.deviation(
            kinds::TIMESTAMP_NOT_UTC,
            format!("{field} {text:?} is not in UTC"),
            ErrorCode::InvalidTimestamp,
        ),
        Reading::Invalid => Err(LeagueError::new(
            ErrorCode::InvalidTimestamp,
            format!("{field} {text:?} is not an ISO-8601 UTC timestamp"),
        )),
    }
}

fn missing(checker: &mut Checker, field: &str) -> LeagueResult<()> {
    checker.deviation(
        kinds::MISSING_ENVELOPE_FIELD,
        format!("{field} missing"),
        ErrorCode::MissingRequiredField,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compliance::Mode;
    use serde_json::json;

    fn object(value: Value) -> Map<String, Value> {
        value.as_object().cloned().expect("object")
    }

    #[test]
    fn a_full_envelope_passes_strict_mode() {
        let message = object(json!({
            "protocol": "league.v2", "message_type": "LEAGUE_QUERY", "sender": "player:P01",
            "timestamp": "2026-11-21T08:53:37Z", "conversation_id": "c1", "auth_token": "t"
        }));
        let mut checker = Checker::new(Mode::Strict);
        let envelope = check(&message, &mut checker, true).expect("valid");
        assert_eq!(envelope.sender, Some(Sender::Player("P01".into())));
        assert!(checker.into_deviations().is_empty());
    }

    #[test]
    fn peer_b_registration_is_lenient_only() {
        let message = object(json!({"protocol": "league.v2", "message_type": "LEAGUE_REGISTER_REQUEST"}));
        let mut lenient = Checker::new(Mode::Lenient);
        check(&message, &mut lenient, false).expect("lenient accepts");
        assert_eq!(lenient.into_deviations().len(), 3);
        let error = check(&message, &mut Checker::new(Mode::Strict), false).expect_err("strict refuses");
        assert_eq!(error.code, ErrorCode::MissingRequiredField);
    }

    #[test]
    fn meaning_changing_faults_fail_in_both_modes() {
        for mode in [Mode::Lenient, Mode::Strict] {
            let no_token = object(
                json!({"protocol": "league.v2", "message_type": "X", "sender": "player:P01",
                "timestamp": "2026-11-21T08:53:37Z", "conversation_id": "c"}),
            );
            assert_eq!(
                check(&no_token, &mut Checker::new(mode), true)
                    .map(|_| ())
                    .map_err(|e| e.code),
                Err(ErrorCode::AuthTokenMissing)
            );
            let old = object(json!({"protocol": "league.v1"}));
            assert_eq!(
                check(&old, &mut Checker::new(mode), false)
                    .map(|_| ())
                    .map_err(|e| e.code),
                Err(ErrorCode::ProtocolVersionMismatch)
            );
            let bad_time = object(
                json!({"protocol": "league.v2", "message_type": "X", "sender": "player:P01",
                "timestamp": "tomorrow", "conversation_id": "c"}),
            );
            assert_eq!(
                check(&bad_time, &mut Checker::new(mode), false)
                    .map(|_| ())
                    .map_err(|e| e.code),
                Err(ErrorCode::InvalidTimestamp)
            );
        }
    }

    #[test]
    fn senders() {
        assert_eq!(
            Sender::parse("referee:REF02"),
            Some(Sender::Referee("REF02".into()))
        );
        assert_eq!(Sender::parse("league_manager:LM01"), Some(Sender::Manager));
        assert_eq!(Sender::parse("P01"), None);
        assert_eq!(Sender::parse("player:"), None);
    }
}
