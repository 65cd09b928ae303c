//! Ids where a league.v2 message enters the gateway (docs/adr/0061-typed-ids-at-the-gateways-boundary.md):
//! every id a message carries is parsed here, once, into its league-domain type (`LeagueId`, `PlayerId`,
//! `RefereeId`, `AgentId`, `MatchId`) before anything asks the manager, so a malformed one is refused
//! (E002, naming the field and what the id should be, as the manager words it) and changes nothing.
//! Ids the gateway reads back from the manager's answers are parsed too, where they arrive
//! ([`answered`]): the manager wrote them under the same grammars, so one that does not parse is the
//! league's fault (E000 with what was read), never the caller's and never a panic.

use std::str::FromStr;

use league_domain::InvalidId;
use league_proto::ErrorCode;
use serde_json::{Map, Value};

use crate::league_error::{LeagueError, LeagueResult};

/// The message's `field`, which must name an id: E003 when it is absent, null or empty, E002 when it
/// is not a string or not such an id.
pub fn required<Id: FromStr<Err = InvalidId>>(message: &Map<String, Value>, field: &str) -> LeagueResult<Id> {
    optional(message, field)?
        .ok_or_else(|| LeagueError::new(ErrorCode::MissingRequiredField, format!("{field} is required")))
}

/// The message's `field`, where absent, null or empty means "none named" (the newest league, every
/// agent); E002 when it is not a string or not such an id.
pub fn optional<Id: FromStr<Err = InvalidId>>(
    message: &Map<String, Value>,
    field: &str,
) -> LeagueResult<Option<Id>> {
    match message.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) if text.is_empty() => Ok(None),
        Some(Value::String(text)) => parsed(field, text).map(Some),
        Some(other) => Err(LeagueError::new(
            ErrorCode::InvalidMessageFormat,
            format!("{field} must be a string, got {}", kind_of(other)),
        )),
    }
}

/// `text` given as `field` (a path segment, a shorthand's argument) as an id: E002 naming the field.
pub fn parsed<Id: FromStr<Err = InvalidId>>(field: &str, text: &str) -> LeagueResult<Id> {
    text.parse().map_err(|error| malformed(field, error))
}

/// [`parsed`], for a string the caller owns (a gRPC request's field): the id keeps it, no copy is made.
pub fn taken<Id: TryFrom<String, Error = InvalidId>>(field: &str, text: String) -> LeagueResult<Id> {
    Id::try_from(text).map_err(|error| malformed(field, error))
}

fn malformed(field: &str, error: InvalidId) -> LeagueError {
    LeagueError::new(ErrorCode::InvalidMessageFormat, format!("{field} {error}"))
}

/// An id the manager answered with, in its `field`: the manager makes ids under the same grammars, so
/// one that does not parse is an internal fault, said with what was read.
pub fn answered<Id: FromStr<Err = InvalidId>>(field: &str, text: &str) -> LeagueResult<Id> {
    text.parse().map_err(|error: InvalidId| {
        LeagueError::new(
            ErrorCode::InternalError,
            format!("the manager answered {field} {error}"),
        )
    })
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use league_domain::{LeagueId, MatchId, PlayerId};
    use serde_json::json;

    use super::*;

    fn message(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    #[test]
    fn a_malformed_id_is_refused_naming_its_field_and_grammar() {
        let refused = required::<PlayerId>(&message(json!({"player_id": "p1"})), "player_id");
        let error = refused.err();
        assert_eq!(
            error.as_ref().map(|error| error.code),
            Some(ErrorCode::InvalidMessageFormat)
        );
        let description = error.map_or_else(String::new, |error| error.description);
        assert!(
            description.starts_with("player_id \"p1\" is not a player id: a player id is P"),
            "{description}"
        );
        let refused = optional::<LeagueId>(&message(json!({"league_id": 7})), "league_id");
        assert_eq!(
            refused.err().map(|error| error.code),
            Some(ErrorCode::InvalidMessageFormat)
        );
    }

    #[test]
    fn an_absent_id_is_missing_where_required_and_none_where_optional() {
        for absent in [json!({}), json!({"match_id": null}), json!({"match_id": ""})] {
            let refused = required::<MatchId>(&message(absent.clone()), "match_id");
            assert_eq!(
                refused.err().map(|error| (error.code, error.description)),
                Some((ErrorCode::MissingRequiredField, "match_id is required".to_owned()))
            );
            assert_eq!(optional::<MatchId>(&message(absent), "match_id"), Ok(None));
        }
        let named = optional::<LeagueId>(&message(json!({"league_id": "evening"})), "league_id");
        assert!(matches!(named, Ok(Some(id)) if id == "evening"));
    }

    #[test]
    fn a_malformed_answer_is_an_internal_fault() {
        let error = answered::<PlayerId>("player_id", "x").err();
        assert_eq!(error.map(|error| error.code), Some(ErrorCode::InternalError));
    }
}
