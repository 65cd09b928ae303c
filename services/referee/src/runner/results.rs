//! The result a match ends with: played to the game's outcome, or a technical loss, a double forfeit
//! or a referee's forfeit when seats failed or the game could not be played.

use super::*;

impl<P: Players> Runner<'_, P> {
    /// The result when one or both seats failed (→ ABORTED), or `None` when neither did.
    pub(super) fn failed(&self, failures: [Option<SeatFailure>; 2]) -> Option<MatchResult> {
        match failures {
            [None, None] => None,
            [Some(failure), None] | [None, Some(failure)] => Some(self.technical_loss(failure)),
            [Some(a), Some(b)] => {
                metrics::player_at_fault(a.cause);
                metrics::player_at_fault(b.cause);
                Some(self.double_forfeit(format!("{}; {}", a.reason, b.reason)))
            }
        }
    }

    pub(super) fn technical_loss(&self, failure: SeatFailure) -> MatchResult {
        metrics::player_at_fault(failure.cause);
        self.transition(MatchState::Aborted, failure.reason.clone());
        let winner = failure.seat.other();
        let mut scores = [points::LOSS; 2];
        scores[winner.index()] = points::WIN;
        self.result(
            ResultStatus::TechnicalLoss,
            Some(winner),
            scores,
            failure.reason,
            vec![self.id(failure.seat).to_owned()],
            None,
        )
    }

    /// A double forfeit that is the referee's doing, not the players' (no engine, an engine bug).
    pub(super) fn referee_forfeit(&self, reason: String) -> MatchResult {
        metrics::player_at_fault("referee_error");
        metrics::player_at_fault("referee_error");
        self.double_forfeit(reason)
    }

    pub(super) fn double_forfeit(&self, reason: String) -> MatchResult {
        self.transition(MatchState::Aborted, reason.clone());
        self.result(
            ResultStatus::DoubleForfeit,
            None,
            [points::LOSS; 2],
            reason,
            self.ids.to_vec(),
            None,
        )
    }

    pub(super) fn played(&self, outcome: GameOutcome) -> MatchResult {
        let winner = match outcome.result {
            GameResult::Win { winner } => Some(winner),
            GameResult::Draw => None,
        };
        self.result(
            outcome.result.into(),
            winner,
            outcome.points,
            outcome.reason,
            Vec::new(),
            Some(outcome.metadata),
        )
    }

    pub(super) fn result(
        &self,
        status: ResultStatus,
        winner: Option<Seat>,
        points: [u32; 2],
        reason: String,
        at_fault_player_ids: Vec<String>,
        game_metadata: Option<Struct>,
    ) -> MatchResult {
        MatchResult {
            match_id: self.context.match_id.clone(),
            status: status.into(),
            winner_player_id: winner.map(|seat| self.id(seat).to_owned()).unwrap_or_default(),
            scores: Seat::BOTH
                .iter()
                .map(|&seat| PlayerScore {
                    player_id: self.id(seat).to_owned(),
                    points: points[seat.index()],
                })
                .collect(),
            reason,
            at_fault_player_ids,
            game_metadata,
        }
    }
}
