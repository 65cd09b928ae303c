//! A reported result judged against its match before anything is stored: it names the match, scores
//! exactly its two players, and its status, winner, scores and players at fault agree with the 3/1/0
//! rule (crate::league::report records what passes).

use league_domain::MatchId;
use league_domain::points::{DRAW, LOSS, WIN};
use league_proto::ErrorCode;
use league_proto::v2::{MatchResult, ResultStatus};

use crate::error::{ManagerResult, reject};
use crate::results::{Outcome, Side};

/// The columns standings need, checked against the match's players and the 3/1/0 scoring.
#[derive(Debug)]
pub(crate) struct Verdict<'a> {
    pub(crate) status: &'static str,
    pub(crate) winner: Option<&'a str>,
}

impl Verdict<'_> {
    /// How the match ended, by seat (`player_a` is seat A).
    pub(crate) fn outcome(&self, player_a: &str) -> Outcome {
        let winner = if self.winner == Some(player_a) {
            Side::A
        } else {
            Side::B
        };
        match self.status {
            "win" => Outcome::Win { winner },
            "draw" => Outcome::Draw,
            "technical_loss" => Outcome::TechnicalLoss {
                loser: match winner {
                    Side::A => Side::B,
                    Side::B => Side::A,
                },
            },
            _ => Outcome::DoubleForfeit,
        }
    }
}

/// A reported result checked against the match (`a`, `b` its players): it names this match, scores
/// exactly its two players, and its status, winner, scores and players at fault agree under 3/1/0.
pub(crate) fn verify<'a>(
    result: &'a MatchResult,
    match_id: MatchId,
    a: &str,
    b: &str,
) -> ManagerResult<Verdict<'a>> {
    let invalid = |why: String| {
        reject(
            ErrorCode::InvalidMessageFormat,
            format!("result of {match_id}: {why}"),
        )
    };
    if !result.match_id.is_empty() && match_id != result.match_id {
        return Err(invalid(format!("names match {}", result.match_id)));
    }
    let points = |player: &str| {
        result
            .scores
            .iter()
            .find(|score| score.player_id == player)
            .map(|score| score.points)
    };
    let (Some(points_a), Some(points_b)) = (points(a), points(b)) else {
        return Err(invalid(format!("scores must name exactly {a} and {b}")));
    };
    if result.scores.len() != 2 {
        return Err(invalid(format!("scores must name exactly {a} and {b}")));
    }
    let winner = (!result.winner_player_id.is_empty()).then_some(result.winner_player_id.as_str());
    let at_fault: Vec<&str> = result.at_fault_player_ids.iter().map(String::as_str).collect();
    let status = ResultStatus::try_from(result.status).unwrap_or(ResultStatus::Unspecified);
    let other = |player: &str| if player == a { b } else { a };
    let consistent = match status {
        ResultStatus::Win => {
            winner.is_some_and(|w| w == a || w == b)
                && at_fault.is_empty()
                && winner.map(points) == Some(Some(WIN))
                && winner.map(|w| points(other(w))) == Some(Some(LOSS))
        }
        ResultStatus::Draw => winner.is_none() && at_fault.is_empty() && points_a == DRAW && points_b == DRAW,
        ResultStatus::TechnicalLoss => {
            winner.is_some_and(|w| w == a || w == b)
                && winner.map(|w| vec![other(w)]) == Some(at_fault.clone())
                && winner.map(points) == Some(Some(WIN))
                && winner.map(|w| points(other(w))) == Some(Some(LOSS))
        }
        ResultStatus::DoubleForfeit => {
            winner.is_none()
                && points_a == LOSS
                && points_b == LOSS
                && at_fault.len() == 2
                && at_fault.contains(&a)
                && at_fault.contains(&b)
        }
        ResultStatus::Unspecified => false,
    };
    if !consistent {
        return Err(invalid(
            "status, winner, scores and players at fault disagree".to_owned(),
        ));
    }
    let status = match status {
        ResultStatus::Win => "win",
        ResultStatus::Draw => "draw",
        ResultStatus::TechnicalLoss => "technical_loss",
        _ => "double_forfeit",
    };
    Ok(Verdict { status, winner })
}
