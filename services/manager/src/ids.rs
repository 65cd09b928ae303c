//! Ids where they enter the manager (docs/adr/0057-typed-ids.md): every id a request carries is parsed
//! here, once, into its league-domain type before anything reads the database, so a malformed one is
//! refused (E002, naming the field and what the id should be) and changes nothing; from then on it
//! travels typed to the statement that binds it. Ids read back from the database were written by the
//! manager under the same grammar; one that does not parse is a fault of the stored data, not the
//! caller's.

use std::str::FromStr;

use league_domain::InvalidId;
use league_proto::ErrorCode;

use crate::error::{ManagerResult, reject};

/// The request's `field`, which must name an id: E003 when it is empty, E002 when it is no such id.
pub fn required<Id: FromStr<Err = InvalidId>>(field: &str, text: &str) -> ManagerResult<Id> {
    if text.is_empty() {
        return Err(reject(
            ErrorCode::MissingRequiredField,
            format!("{field} is required"),
        ));
    }
    parsed(field, text)
}

/// The request's `field`, where empty means "none given" (the newest league, every agent).
pub fn optional<Id: FromStr<Err = InvalidId>>(field: &str, text: &str) -> ManagerResult<Option<Id>> {
    if text.is_empty() {
        return Ok(None);
    }
    parsed(field, text).map(Some)
}

fn parsed<Id: FromStr<Err = InvalidId>>(field: &str, text: &str) -> ManagerResult<Id> {
    text.parse()
        .map_err(|error: InvalidId| reject(ErrorCode::InvalidMessageFormat, format!("{field} {error}")))
}

/// An id read from the database's `column`.
pub fn stored<Id: FromStr<Err = InvalidId>>(column: &str, text: &str) -> ManagerResult<Id> {
    text.parse()
        .map_err(|error: InvalidId| anyhow::anyhow!("stored {column}: {error}").into())
}

#[cfg(test)]
mod tests {
    use league_domain::{LeagueId, PlayerId};

    use super::*;

    fn refusal<T: std::fmt::Debug>(result: ManagerResult<T>) -> Option<(ErrorCode, String)> {
        match result {
            Err(crate::error::ManagerError::Rejected { code, message }) => Some((code, message)),
            _ => None,
        }
    }

    #[test]
    fn a_malformed_id_is_refused_naming_its_field() {
        let (code, message) = refusal(required::<PlayerId>("player_id", "p1")).expect("refused");
        assert_eq!(code, ErrorCode::InvalidMessageFormat);
        assert!(
            message.starts_with("player_id \"p1\" is not a player id: a player id is P"),
            "{message}"
        );
        let (code, _) = refusal(optional::<LeagueId>("league_id", "../x")).expect("refused");
        assert_eq!(code, ErrorCode::InvalidMessageFormat);
    }

    #[test]
    fn an_empty_id_is_missing_where_required_and_none_where_optional() {
        let (code, message) = refusal(required::<LeagueId>("league_id", "")).expect("refused");
        assert_eq!(
            (code, message.as_str()),
            (ErrorCode::MissingRequiredField, "league_id is required")
        );
        assert!(matches!(optional::<LeagueId>("league_id", ""), Ok(None)));
        assert!(matches!(optional::<LeagueId>("league_id", "l1"), Ok(Some(id)) if id == "l1"));
    }

    #[test]
    fn a_malformed_stored_id_is_an_internal_fault() {
        let failed = stored::<PlayerId>("matches.player_a_id", "x");
        assert!(matches!(failed, Err(crate::error::ManagerError::Internal(_))));
    }
}
