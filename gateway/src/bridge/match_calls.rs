//! The fields of the calls a referee makes to a player in every match, as the bridge writes them
//! ([`league_v2::match_message::MatchMessage`]): GAME_INVITATION, the move call and GAME_OVER.

use league_domain::{LeagueId, MatchId, PlayerId};
use league_proto::v2::PlayerRecord;
use serde::Serialize;
use serde_json::Value;

use super::called::Context;

/// What every call of a match names: the match, and the player the call is for.
#[derive(Debug, Serialize)]
pub(super) struct InMatch<'a> {
    pub(crate) league_id: &'a LeagueId,
    pub(crate) round_id: u32,
    pub(crate) match_id: MatchId,
    pub(crate) game_type: &'a str,
    pub(crate) player_id: &'a PlayerId,
}

impl<'a> InMatch<'a> {
    pub(crate) fn new(context: &'a Context, player_id: &'a PlayerId) -> Self {
        Self {
            league_id: &context.league_id,
            round_id: context.round_id,
            match_id: context.match_id,
            game_type: &context.game_type,
            player_id,
        }
    }
}

/// GAME_INVITATION's fields.
#[derive(Debug, Serialize)]
pub(super) struct Invitation<'a> {
    #[serde(flatten)]
    pub(crate) in_match: InMatch<'a>,
    pub(crate) role_in_match: &'static str,
    pub(crate) opponent_id: &'a PlayerId,
    pub(crate) referee_endpoint: &'a str,
    /// `null` when the referee set none.
    pub(crate) deadline: Option<String>,
}

/// The move call's fields (CHOOSE_PARITY_CALL, or the game's own move call).
#[derive(Debug, Serialize)]
pub(super) struct MoveCall<'a> {
    #[serde(flatten)]
    pub(crate) in_match: InMatch<'a>,
    pub(crate) context: MoveContext<'a>,
    pub(crate) deadline: Option<String>,
    pub(crate) attempt: u32,
    pub(crate) referee_endpoint: &'a str,
    /// Turn-based games only: the step and what the game tells the player before it (`null` if
    /// nothing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) step: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) step_context: Option<Value>,
}

#[derive(Debug, Serialize)]
pub(super) struct MoveContext<'a> {
    pub(crate) opponent_id: &'a PlayerId,
    pub(crate) round_id: u32,
    pub(crate) your_standings: Record,
}

/// The player's record so far.
#[derive(Debug, Serialize)]
pub(super) struct Record {
    pub(crate) wins: u32,
    pub(crate) losses: u32,
    pub(crate) draws: u32,
}

impl From<PlayerRecord> for Record {
    fn from(record: PlayerRecord) -> Self {
        Self {
            wins: record.wins,
            losses: record.losses,
            draws: record.draws,
        }
    }
}

/// GAME_OVER's fields.
#[derive(Debug, Serialize)]
pub(super) struct GameOver<'a> {
    #[serde(flatten)]
    pub(crate) in_match: InMatch<'a>,
    pub(crate) game_result: Value,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn move_call(step: Option<u32>, step_context: Option<Value>) -> Value {
        let id = |text: &str| PlayerId::parse(text).expect("a player id");
        let (player, opponent) = (id("P01"), id("P02"));
        let context = Context {
            league_id: LeagueId::parse("l1").expect("a league id"),
            round_id: 2,
            match_id: MatchId::new(2, 1),
            game_type: "tic_tac_toe".into(),
            conversation_id: String::new(),
            referee_id: None,
        };
        serde_json::to_value(MoveCall {
            in_match: InMatch::new(&context, &player),
            context: MoveContext {
                opponent_id: &opponent,
                round_id: 2,
                your_standings: Record {
                    wins: 1,
                    losses: 0,
                    draws: 1,
                },
            },
            deadline: None,
            attempt: 1,
            referee_endpoint: "http://gateway/mcp",
            step,
            step_context,
        })
        .expect("JSON")
    }

    #[test]
    fn a_turn_based_move_call_carries_its_step_and_even_odd_none() {
        let turn_based = move_call(Some(3), Some(Value::Null));
        assert_eq!(
            (&turn_based["step"], &turn_based["step_context"]),
            (&json!(3), &Value::Null)
        );
        assert!(
            turn_based
                .as_object()
                .expect("object")
                .contains_key("step_context")
        );
        let even_odd = move_call(None, None);
        let fields = even_odd.as_object().expect("object");
        assert!(
            !fields.contains_key("step") && !fields.contains_key("step_context"),
            "{even_odd}"
        );
        assert_eq!(even_odd["deadline"], Value::Null);
        assert_eq!(
            (
                &even_odd["league_id"],
                &even_odd["round_id"],
                &even_odd["match_id"]
            ),
            (&json!("l1"), &json!(2), &json!("R2M1"))
        );
        assert_eq!(
            (&even_odd["game_type"], &even_odd["player_id"]),
            (&json!("tic_tac_toe"), &json!("P01"))
        );
        assert_eq!(
            even_odd["context"],
            json!({"opponent_id": "P02", "round_id": 2, "your_standings": {"wins": 1, "losses": 0, "draws": 1}})
        );
    }
}
