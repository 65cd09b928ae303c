//! The state of one match as the referee runs it, and the only moves between states.
//!
//! WAITING_FOR_PLAYERS → COLLECTING_CHOICES → DRAWING_NUMBER → EVALUATING → FINISHED, or from any state
//! that is not terminal to ABORTED. Games without chance (tic-tac-toe) pass through DRAWING_NUMBER too,
//! drawing nothing, so every match leaves the same transcript shape whatever its game.

use std::fmt;

use league_proto::v2;

/// Where a match is; FINISHED and ABORTED are terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum MatchState {
    /// Invitations are out; waiting for both players to join.
    #[default]
    WaitingForPlayers,
    /// Both joined; waiting for their moves (all the moves, in a multi-step game).
    CollectingChoices,
    /// Every move is in; a game of chance draws now.
    DrawingNumber,
    /// The game decides the result.
    Evaluating,
    /// The result is decided.
    Finished,
    /// A player failed the protocol or the referee hit an error; the result, if any, is technical.
    Aborted,
}

impl MatchState {
    /// Every state, in the order a match goes through them.
    pub const ALL: [MatchState; 6] = [
        MatchState::WaitingForPlayers,
        MatchState::CollectingChoices,
        MatchState::DrawingNumber,
        MatchState::Evaluating,
        MatchState::Finished,
        MatchState::Aborted,
    ];

    /// The seed's name, e.g. `"WAITING_FOR_PLAYERS"`.
    pub fn as_str(self) -> &'static str {
        match self {
            MatchState::WaitingForPlayers => "WAITING_FOR_PLAYERS",
            MatchState::CollectingChoices => "COLLECTING_CHOICES",
            MatchState::DrawingNumber => "DRAWING_NUMBER",
            MatchState::Evaluating => "EVALUATING",
            MatchState::Finished => "FINISHED",
            MatchState::Aborted => "ABORTED",
        }
    }

    pub fn is_terminal(self) -> bool {
        matches!(self, MatchState::Finished | MatchState::Aborted)
    }

    /// The state after moving to `next`, if the seed allows that move.
    pub fn advance(self, next: MatchState) -> Result<MatchState, IllegalTransition> {
        use MatchState::*;
        let allowed = match (self, next) {
            (WaitingForPlayers, CollectingChoices)
            | (CollectingChoices, DrawingNumber)
            | (DrawingNumber, Evaluating)
            | (Evaluating, Finished) => true,
            (from, Aborted) => !from.is_terminal(),
            _ => false,
        };
        if allowed {
            Ok(next)
        } else {
            Err(IllegalTransition { from: self, to: next })
        }
    }
}

impl fmt::Display for MatchState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<MatchState> for v2::MatchState {
    fn from(state: MatchState) -> v2::MatchState {
        match state {
            MatchState::WaitingForPlayers => v2::MatchState::WaitingForPlayers,
            MatchState::CollectingChoices => v2::MatchState::CollectingChoices,
            MatchState::DrawingNumber => v2::MatchState::DrawingNumber,
            MatchState::Evaluating => v2::MatchState::Evaluating,
            MatchState::Finished => v2::MatchState::Finished,
            MatchState::Aborted => v2::MatchState::Aborted,
        }
    }
}

/// A move between match states that the match state machine does not allow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a match cannot go from {from} to {to}")]
pub struct IllegalTransition {
    pub from: MatchState,
    pub to: MatchState,
}

#[cfg(test)]
mod tests {
    use super::MatchState::*;
    use super::*;

    #[test]
    fn exactly_the_seeds_transitions_are_allowed() {
        let allowed = [
            (WaitingForPlayers, CollectingChoices),
            (CollectingChoices, DrawingNumber),
            (DrawingNumber, Evaluating),
            (Evaluating, Finished),
            (WaitingForPlayers, Aborted),
            (CollectingChoices, Aborted),
            (DrawingNumber, Aborted),
            (Evaluating, Aborted),
        ];
        let mut pairs = 0;
        for from in MatchState::ALL {
            for to in MatchState::ALL {
                pairs += 1;
                let expected = if allowed.contains(&(from, to)) {
                    Ok(to)
                } else {
                    Err(IllegalTransition { from, to })
                };
                assert_eq!(from.advance(to), expected, "{from} → {to}");
            }
        }
        assert_eq!(pairs, 36);
    }

    #[test]
    fn a_match_starts_waiting_for_players() {
        assert_eq!(MatchState::default(), WaitingForPlayers);
    }

    #[test]
    fn the_happy_path_ends_finished() -> Result<(), IllegalTransition> {
        let state = MatchState::default()
            .advance(CollectingChoices)?
            .advance(DrawingNumber)?
            .advance(Evaluating)?
            .advance(Finished)?;
        assert!(state.is_terminal());
        assert!(state.advance(Aborted).is_err(), "a finished match stays finished");
        Ok(())
    }

    #[test]
    fn an_abort_is_final() -> Result<(), IllegalTransition> {
        let state = MatchState::default()
            .advance(CollectingChoices)?
            .advance(Aborted)?;
        assert!(state.is_terminal());
        for next in MatchState::ALL {
            assert_eq!(
                state.advance(next),
                Err(IllegalTransition {
                    from: Aborted,
                    to: next
                })
            );
        }
        Ok(())
    }

    #[test]
    fn an_illegal_transition_names_both_states() {
        let error = Finished.advance(CollectingChoices).expect_err("illegal");
        assert_eq!(
            error.to_string(),
            "a match cannot go from FINISHED to COLLECTING_CHOICES"
        );
    }

    #[test]
    fn states_map_to_the_wire_enum_by_name() {
        for state in MatchState::ALL {
            let wire = v2::MatchState::from(state);
            assert_eq!(wire.as_str_name(), format!("MATCH_STATE_{state}"));
            assert_eq!(state.is_terminal(), matches!(state, Finished | Aborted));
        }
    }
}
