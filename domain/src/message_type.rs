//! The league.v2 message types, each named once — the messages sent as calls and the league's answers
//! to them: its name on the wire is derived from the variant (`GameJoinAck` is `GAME_JOIN_ACK`), and so
//! is the list of all of them. How agents spell calls (method names, aliases) is the protocol layer's
//! dialect knowledge (league_v2::dialect), not this.

use strum::{EnumIter, EnumString, IntoEnumIterator, IntoStaticStr};

use crate::GameType;

/// The one game whose move keeps the specification's parity-specific message names.
const PARITY_GAME: GameType = GameType::EvenOdd;

/// A league.v2 message type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, EnumIter, EnumString, IntoStaticStr)]
#[strum(serialize_all = "SCREAMING_SNAKE_CASE", ascii_case_insensitive)]
pub enum MessageType {
    RefereeRegisterRequest,
    LeagueRegisterRequest,
    RoundAnnouncement,
    GameInvitation,
    GameJoinAck,
    ChooseParityCall,
    ChooseParityResponse,
    GameOver,
    MatchResultReport,
    LeagueStandingsUpdate,
    RoundCompleted,
    LeagueCompleted,
    GameError,
    LeagueQuery,
    GameMoveCall,
    GameMoveResponse,
    /// Manager → external referee: run this match (not in the specification's table; peer-a's manager
    /// sends it, and it is how the gateway hands matches to external referees).
    StartMatch,
    // The league's answers (`is_answer`): each is the result of an agent's call, never a call itself.
    RefereeRegisterResponse,
    LeagueRegisterResponse,
    LeagueQueryResponse,
    /// A LEAGUE_ERROR message: the `data` of a failed call's JSON-RPC error.
    LeagueError,
    /// The answer to a MATCH_RESULT_REPORT (not in the specification's table).
    MatchResultReportAck,
    // The answers to the operator's calls (not in the specification's table).
    LeagueCreateResponse,
    LeagueEnrollResponse,
    LeagueStartResponse,
    /// The answer to pausing, resuming or cancelling a league, or withdrawing a player.
    LeagueOperatorResponse,
    // The answers to a player's reply sent as a call of its own ([`MessageType::received`]; not in the
    // specification's table).
    GameJoinAckReceived,
    ChooseParityResponseReceived,
    GameMoveResponseReceived,
}

impl MessageType {
    /// The league.v2 name (`GAME_INVITATION`).
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// A message type from its league.v2 name, in any case.
    pub fn parse(name: &str) -> Option<MessageType> {
        name.parse().ok()
    }

    /// Every message type, in the order above.
    pub fn all() -> impl Iterator<Item = MessageType> {
        MessageType::iter()
    }

    /// Whether this is one of the league's answers: sent only as the result (or error) of an agent's
    /// call, so no method names it and no agent sends it.
    pub fn is_answer(self) -> bool {
        matches!(
            self,
            MessageType::RefereeRegisterResponse
                | MessageType::LeagueRegisterResponse
                | MessageType::LeagueQueryResponse
                | MessageType::LeagueError
                | MessageType::MatchResultReportAck
                | MessageType::LeagueCreateResponse
                | MessageType::LeagueEnrollResponse
                | MessageType::LeagueStartResponse
                | MessageType::LeagueOperatorResponse
                | MessageType::GameJoinAckReceived
                | MessageType::ChooseParityResponseReceived
                | MessageType::GameMoveResponseReceived
        )
    }

    /// The acknowledgement of a player's reply (GAME_JOIN_ACK, CHOOSE_PARITY_RESPONSE,
    /// GAME_MOVE_RESPONSE) that came as a call of its own, not as the result of the league's call:
    /// `<reply>_RECEIVED`. `None` for every other type.
    pub fn received(self) -> Option<MessageType> {
        match self {
            MessageType::GameJoinAck => Some(MessageType::GameJoinAckReceived),
            MessageType::ChooseParityResponse => Some(MessageType::ChooseParityResponseReceived),
            MessageType::GameMoveResponse => Some(MessageType::GameMoveResponseReceived),
            _ => None,
        }
    }
}

/// The call and response of a move in `game_type`: even_odd keeps the specification's parity-specific
/// names (CHOOSE_PARITY_CALL / CHOOSE_PARITY_RESPONSE), every other game the generic ones.
pub fn move_messages(game_type: &str) -> (MessageType, MessageType) {
    if game_type == PARITY_GAME.as_str() {
        (MessageType::ChooseParityCall, MessageType::ChooseParityResponse)
    } else {
        (MessageType::GameMoveCall, MessageType::GameMoveResponse)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_league_v2_names() {
        let names: Vec<&str> = MessageType::all().map(MessageType::as_str).collect();
        assert_eq!(
            names,
            [
                "REFEREE_REGISTER_REQUEST",
                "LEAGUE_REGISTER_REQUEST",
                "ROUND_ANNOUNCEMENT",
                "GAME_INVITATION",
                "GAME_JOIN_ACK",
                "CHOOSE_PARITY_CALL",
                "CHOOSE_PARITY_RESPONSE",
                "GAME_OVER",
                "MATCH_RESULT_REPORT",
                "LEAGUE_STANDINGS_UPDATE",
                "ROUND_COMPLETED",
                "LEAGUE_COMPLETED",
                "GAME_ERROR",
                "LEAGUE_QUERY",
                "GAME_MOVE_CALL",
                "GAME_MOVE_RESPONSE",
                "START_MATCH",
                "REFEREE_REGISTER_RESPONSE",
                "LEAGUE_REGISTER_RESPONSE",
                "LEAGUE_QUERY_RESPONSE",
                "LEAGUE_ERROR",
                "MATCH_RESULT_REPORT_ACK",
                "LEAGUE_CREATE_RESPONSE",
                "LEAGUE_ENROLL_RESPONSE",
                "LEAGUE_START_RESPONSE",
                "LEAGUE_OPERATOR_RESPONSE",
                "GAME_JOIN_ACK_RECEIVED",
                "CHOOSE_PARITY_RESPONSE_RECEIVED",
                "GAME_MOVE_RESPONSE_RECEIVED",
            ]
        );
        // The answers are the last twelve; everything before them is sent as a call.
        let answers: Vec<bool> = MessageType::all().map(MessageType::is_answer).collect();
        assert_eq!(answers.iter().filter(|answer| **answer).count(), 12);
        assert!(answers.ends_with(&[true; 12]));
    }

    #[test]
    fn a_reply_sent_as_a_call_is_acknowledged_by_its_own_name() {
        for kind in MessageType::all() {
            if let Some(received) = kind.received() {
                assert_eq!(received.as_str(), format!("{}_RECEIVED", kind.as_str()));
                assert!(received.is_answer());
            }
        }
        assert_eq!(
            MessageType::GameJoinAck.received(),
            Some(MessageType::GameJoinAckReceived)
        );
        assert_eq!(MessageType::GameInvitation.received(), None);
    }

    #[test]
    fn every_name_parses_back_in_any_case() {
        for kind in MessageType::all() {
            assert_eq!(MessageType::parse(kind.as_str()), Some(kind));
            assert_eq!(
                MessageType::parse(&kind.as_str().to_ascii_lowercase()),
                Some(kind)
            );
        }
        assert_eq!(
            MessageType::parse("game_join_ack"),
            Some(MessageType::GameJoinAck)
        );
        assert_eq!(MessageType::parse("PARITY_CHOOSE"), None);
        assert_eq!(MessageType::parse(""), None);
    }

    #[test]
    fn move_messages_keep_the_parity_names_for_even_odd() {
        assert_eq!(
            move_messages("even_odd"),
            (MessageType::ChooseParityCall, MessageType::ChooseParityResponse)
        );
        assert_eq!(
            move_messages("tic_tac_toe"),
            (MessageType::GameMoveCall, MessageType::GameMoveResponse)
        );
        assert_eq!(move_messages("").0, MessageType::GameMoveCall);
    }
}
