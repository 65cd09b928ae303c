//! Reading what a player answered (the call's result, or the separate call that carries it): the
//! fields each message needs, in the spellings agents use, and the reply's own checks. A deviation is
//! recorded on the checker, or refused in strict mode.

use league_domain::PlayerId;
use league_proto::ErrorCode;
use serde_json::{Map, Value};

use league_v2::compliance::{Checker, kinds};
use league_v2::envelope;
use league_v2::league_error::LeagueError;

/// Reads a GAME_JOIN_ACK (the call's result or a separate call): `Some(accept)` when it says.
pub(super) fn read_accept(
    reply: &Map<String, Value>,
    checker: &mut Checker,
) -> Result<Option<bool>, LeagueError> {
    match (reply.get("accept"), reply.get("accepted")) {
        (Some(Value::Bool(accept)), _) => Ok(Some(*accept)),
        (None, Some(Value::Bool(accept))) => {
            checker.deviation(
                kinds::FIELD_ALIAS,
                "`accepted` for `accept`",
                ErrorCode::MissingRequiredField,
            )?;
            Ok(Some(*accept))
        }
        (Some(other), _) | (None, Some(other)) if !other.is_null() => Err(LeagueError::new(
            ErrorCode::InvalidMessageFormat,
            format!("accept must be true or false, got {other}"),
        )),
        _ => Ok(None),
    }
}

/// Reads a parity choice: `Some(value)` as given (the referee's engine judges it).
pub(super) fn read_choice(
    reply: &Map<String, Value>,
    checker: &mut Checker,
) -> Result<Option<Value>, LeagueError> {
    if let Some(choice) = reply.get("parity_choice").filter(|v| !v.is_null()) {
        return Ok(Some(choice.clone()));
    }
    if let Some(choice) = reply.get("choice").filter(|v| !v.is_null()) {
        checker.deviation(
            kinds::FIELD_ALIAS,
            "`choice` for `parity_choice`",
            ErrorCode::MissingRequiredField,
        )?;
        return Ok(Some(choice.clone()));
    }
    Ok(None)
}

/// The reply's own checks: its timestamp, a token that cannot be one we issued (a placeholder such as
/// `tok_p01_temp`), and a `player_id` that is not the id we assigned.
pub(super) fn check_reply(
    reply: &Map<String, Value>,
    player_id: &PlayerId,
    checker: &mut Checker,
) -> Result<(), LeagueError> {
    if let Some(Value::String(at)) = reply.get("timestamp") {
        envelope::check_timestamp(at, "timestamp", checker)?;
    }
    if let Some(Value::String(token)) = reply.get("auth_token")
        && !is_issued_form(token)
    {
        let detail = if league_v2::outbound_token::is_outbound(token) {
            "reply echoes the league's outbound token, not the agent's token".to_owned()
        } else {
            format!(
                "reply carries auth_token {:?}, not the agent's token",
                shorten(token)
            )
        };
        checker.deviation(kinds::PLACEHOLDER_TOKEN, detail, ErrorCode::AuthTokenInvalid)?;
    }
    if let Some(Value::String(claimed)) = reply.get("player_id")
        && player_id != claimed
    {
        checker.deviation(
            kinds::REPLY_PLAYER_ID,
            format!("reply names player {claimed:?}, assigned id is {player_id}"),
            ErrorCode::InvalidMessageFormat,
        )?;
    }
    Ok(())
}

/// Tokens the league issues are 64 lowercase hex digits (256 random bits).
fn is_issued_form(token: &str) -> bool {
    token.len() == 64
        && token
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Enough of a value to recognise it in a warning, never a whole secret-looking string.
fn shorten(token: &str) -> String {
    token.chars().take(16).collect()
}

pub(super) fn as_object(result: Value) -> Map<String, Value> {
    match result {
        Value::Object(object) => object,
        _ => Map::new(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use league_v2::compliance::Mode;

    #[test]
    fn join_acks_in_both_spellings() {
        let mut lenient = Checker::new(Mode::Lenient);
        let reply = json!({"accept": true});
        assert_eq!(
            read_accept(reply.as_object().expect("object"), &mut lenient).ok(),
            Some(Some(true))
        );
        let alias = json!({"accepted": false});
        assert_eq!(
            read_accept(alias.as_object().expect("object"), &mut lenient).ok(),
            Some(Some(false))
        );
        assert_eq!(lenient.into_deviations().len(), 1);
        let mut strict = Checker::new(Mode::Strict);
        assert!(read_accept(alias.as_object().expect("object"), &mut strict).is_err());
        let bare = json!({"status": "joined"});
        assert_eq!(
            read_accept(bare.as_object().expect("object"), &mut Checker::new(Mode::Strict)).ok(),
            Some(None)
        );
    }

    #[test]
    fn choices_pass_through_for_the_engine_to_judge() {
        let mut lenient = Checker::new(Mode::Lenient);
        let reply = json!({"choice": "maybe"});
        assert_eq!(
            read_choice(reply.as_object().expect("object"), &mut lenient).ok(),
            Some(Some(json!("maybe")))
        );
        let reply = json!({"parity_choice": 3});
        assert_eq!(
            read_choice(reply.as_object().expect("object"), &mut lenient).ok(),
            Some(Some(json!(3)))
        );
    }
}
