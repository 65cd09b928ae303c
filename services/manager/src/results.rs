//! Recorded match results and what each one is worth to the two players (league_domain::points: 3 for
//! a win, 1 each for a draw, 0 for a loss).

use league_domain::points;

/// One of the two seats in a match; player A is the one listed first in the schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    A,
    B,
}

/// How a match ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// Decided by the game's rules.
    Win {
        winner: Side,
    },
    Draw,
    /// One player failed the protocol (timeout, refusal, invalid moves); the opponent wins.
    TechnicalLoss {
        loser: Side,
    },
    /// Both players failed the protocol; neither wins.
    DoubleForfeit,
}

/// A finished match as the league records it. Byes are never results.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RecordedResult<P> {
    pub player_a: P,
    pub player_b: P,
    pub outcome: Outcome,
}

/// What one finished match means for one of its players.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mark {
    Win,
    Draw,
    Loss,
    /// A loss that also counts among the player's technical losses.
    TechnicalLoss,
}

impl Mark {
    pub(crate) fn points(self) -> u32 {
        match self {
            Mark::Win => points::WIN,
            Mark::Draw => points::DRAW,
            Mark::Loss | Mark::TechnicalLoss => points::LOSS,
        }
    }
}

impl Outcome {
    pub(crate) fn mark_for(self, side: Side) -> Mark {
        match self {
            Outcome::Win { winner } if winner == side => Mark::Win,
            Outcome::Win { .. } => Mark::Loss,
            Outcome::Draw => Mark::Draw,
            Outcome::TechnicalLoss { loser } if loser == side => Mark::TechnicalLoss,
            // The opponent's technical loss is an ordinary win: 3 points, counted among wins.
            Outcome::TechnicalLoss { .. } => Mark::Win,
            Outcome::DoubleForfeit => Mark::TechnicalLoss,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marks(outcome: Outcome) -> (Mark, Mark) {
        (outcome.mark_for(Side::A), outcome.mark_for(Side::B))
    }

    #[test]
    fn each_outcome_marks_both_players() {
        use Mark::*;
        assert_eq!(marks(Outcome::Win { winner: Side::A }), (Win, Loss));
        assert_eq!(marks(Outcome::Win { winner: Side::B }), (Loss, Win));
        assert_eq!(marks(Outcome::Draw), (Draw, Draw));
        let loser_a = Outcome::TechnicalLoss { loser: Side::A };
        assert_eq!(marks(loser_a), (TechnicalLoss, Win));
        let loser_b = Outcome::TechnicalLoss { loser: Side::B };
        assert_eq!(marks(loser_b), (Win, TechnicalLoss));
        assert_eq!(marks(Outcome::DoubleForfeit), (TechnicalLoss, TechnicalLoss));
    }

    #[test]
    fn points_are_three_one_zero() {
        let points = |outcome| {
            let (a, b) = marks(outcome);
            (a.points(), b.points())
        };
        assert_eq!(points(Outcome::Win { winner: Side::B }), (0, 3));
        assert_eq!(points(Outcome::Draw), (1, 1));
        assert_eq!(points(Outcome::TechnicalLoss { loser: Side::A }), (0, 3));
        assert_eq!(points(Outcome::DoubleForfeit), (0, 0));
    }
}
