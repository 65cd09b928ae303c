//! The fields of the calls a referee makes to a player in every match, as the bridge writes them
//! ([`crate::wire::MatchMessage`]): GAME_INVITATION, the move call and GAME_OVER.

use serde::Serialize;
use serde_json::Value;

/// GAME_INVITATION's fields.
#[derive(Debug, Serialize)]
pub(super) struct Invitation<'a> {
    pub league_id: &'a str,
    pub round_id: u32,
    pub match_id: &'a str,
    pub game_type: &'a str,
    pub role_in_match: &'static str,
    pub player_id: &'a str,
    pub opponent_id: &'a str,
    pub referee_endpoint: &'a str,
    /// `null` when the referee set none.
    pub deadline: Option<String>,
}

/// The move call's fields (CHOOSE_PARITY_CALL, or the game's own move call).
#[derive(Debug, Serialize)]
pub(super) struct MoveCall<'a> {
    pub league_id: &'a str,
    pub round_id: u32,
    pub match_id: &'a str,
    pub player_id: &'a str,
    pub game_type: &'a str,
    pub context: MoveContext<'a>,
    pub deadline: Option<String>,
    pub attempt: u32,
    pub referee_endpoint: &'a str,
    /// Turn-based games only: the step and what the game tells the player before it (`null` if
    /// nothing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step_context: Option<Value>,
}

#[derive(Debug, Serialize)]
pub(super) struct MoveContext<'a> {
    pub opponent_id: &'a str,
    pub round_id: u32,
    pub your_standings: Record,
}

/// The player's record so far.
#[derive(Debug, Serialize)]
pub(super) struct Record {
    pub wins: u32,
    pub losses: u32,
    pub draws: u32,
}

/// GAME_OVER's fields.
#[derive(Debug, Serialize)]
pub(super) struct GameOver<'a> {
    pub league_id: &'a str,
    pub round_id: u32,
    pub match_id: &'a str,
    pub game_type: &'a str,
    pub player_id: &'a str,
    pub game_result: Value,
}
