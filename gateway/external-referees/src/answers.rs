//! What the players of an external referee's Even/Odd match said, as their answers passed through this
//! gateway (CHOOSE_PARITY_CALL → CHOOSE_PARITY_RESPONSE), and the check of the referee's report against
//! them: the choices it reports must be the players' own, and its outcome must follow from the choices
//! and the drawn number by the game's rule (`league_domain::even_odd`, the rule's one home).
//!
//! The answers are those of the match's transcript this replica relayed ([`super::relayed`]), kept until
//! the match's report: a report that reaches another replica is checked against the rule alone
//! (docs/protocol.md, "Reporting a result").

use std::collections::HashMap;

use league_domain::even_odd::{self, Parity};
use league_domain::{GameType, PlayerId};
use league_proto::ErrorCode;
use league_proto::v2::{MatchResult, ResultStatus};
use league_v2::convert;
use league_v2::league_error::LeagueError;
use serde_json::Value;

use super::{RefereedMatch, Referees};

impl Referees {
    /// Checks `reported` against the players' answers seen here and the game's rule: the refusal (E002,
    /// naming the field) when it does not follow from them.
    pub(super) fn check_against_answers(
        &self,
        found: &RefereedMatch,
        reported: &MatchResult,
    ) -> Result<(), LeagueError> {
        if GameType::parse(&found.game_type) != Some(GameType::EvenOdd) {
            return Ok(());
        }
        check(found, reported, &self.relayed_so_far(found).answers())
    }
}

fn refuse(why: String) -> LeagueError {
    LeagueError::new(ErrorCode::InvalidMessageFormat, why)
}

/// The check itself: `heard` holds the answers relayed here, by player.
fn check(
    found: &RefereedMatch,
    reported: &MatchResult,
    heard: &HashMap<PlayerId, Parity>,
) -> Result<(), LeagueError> {
    let seats = [found.player_a.as_str(), found.player_b.as_str()];
    let metadata = reported
        .game_metadata
        .as_ref()
        .map(convert::from_struct)
        .unwrap_or(Value::Null);
    // The reported choices: each must be a parity, and the player's own answer when it passed here.
    let mut choices: [Option<Parity>; 2] = [None, None];
    for (seat, player) in seats.iter().enumerate() {
        let reported_choice = match metadata.get("choices").and_then(|c| c.get(*player)) {
            None | Some(Value::Null) => None,
            Some(value) => Some(value.as_str().and_then(Parity::parse).ok_or_else(|| {
                refuse(format!(
                    "result.details.choices.{player} must be \"even\" or \"odd\", got {value}"
                ))
            })?),
        };
        let answered = heard.get(*player).copied();
        if let (Some(said), Some(answered)) = (reported_choice, answered)
            && said != answered
        {
            return Err(refuse(format!(
                "result.details.choices.{player} is \"{said}\", but {player} answered \"{answered}\""
            )));
        }
        choices[seat] = reported_choice.or(answered);
    }
    let status = ResultStatus::try_from(reported.status).unwrap_or(ResultStatus::Unspecified);
    // A technical loss or a double forfeit: a player did not answer in time, so no rule decides it.
    if !matches!(status, ResultStatus::Win | ResultStatus::Draw) {
        return Ok(());
    }
    let [Some(a), Some(b)] = choices else {
        return Ok(());
    };
    let drawn = match metadata.get("drawn_number") {
        None | Some(Value::Null) => None,
        Some(value) => Some(
            value
                .as_u64()
                .or_else(|| {
                    value
                        .as_f64()
                        .filter(|n| n.fract() == 0.0 && *n >= 0.0)
                        .map(|n| n as u64)
                })
                .and_then(|n| u32::try_from(n).ok())
                .filter(|n| even_odd::in_range(*n))
                .ok_or_else(|| {
                    refuse(format!(
                        "result.details.drawn_number must be a whole number from {} to {}, got {value}",
                        even_odd::LOWEST,
                        even_odd::HIGHEST
                    ))
                })?,
        ),
    };
    let winner = (!reported.winner_player_id.is_empty()).then_some(reported.winner_player_id.as_str());
    if a == b {
        return match status {
            ResultStatus::Draw => Ok(()),
            _ => Err(refuse(format!(
                "result.status: both players chose {a}, which is a draw by the rule, not a win"
            ))),
        };
    }
    if status == ResultStatus::Draw {
        return Err(refuse(format!(
            "result.status: {} chose {a} and {} chose {b}, so one of them won; it is no draw",
            seats[0], seats[1]
        )));
    }
    let Some(drawn) = drawn else {
        return Ok(());
    };
    let by_rule = even_odd::winner([a, b], drawn).map(|seat| seats[seat]);
    if by_rule != winner {
        return Err(refuse(format!(
            "result.winner: the number {drawn} is {}, so {} won ({} chose {a}, {} chose {b}), not {}",
            Parity::of(drawn),
            by_rule.unwrap_or("nobody"),
            seats[0],
            seats[1],
            winner.unwrap_or("nobody")
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use league_domain::{LeagueId, MatchId, RefereeId, Timing};
    use serde_json::json;

    fn found() -> RefereedMatch {
        RefereedMatch {
            league_id: LeagueId::parse("l1").expect("a league id"),
            match_id: MatchId::new(1, 1),
            round_id: 1,
            game_type: "even_odd".into(),
            player_a: player("P01"),
            player_b: player("P02"),
            referee_id: RefereeId::parse("REF01").ok(),
            running: true,
            timing: Timing::default(),
        }
    }

    fn result(status: ResultStatus, winner: &str, metadata: Value) -> MatchResult {
        MatchResult {
            match_id: "R1M1".into(),
            status: status as i32,
            winner_player_id: winner.into(),
            game_metadata: metadata.as_object().map(convert::to_struct),
            ..MatchResult::default()
        }
    }

    fn player(text: &str) -> PlayerId {
        PlayerId::parse(text).expect("a player id")
    }

    fn heard(a: Parity, b: Parity) -> HashMap<PlayerId, Parity> {
        HashMap::from([(player("P01"), a), (player("P02"), b)])
    }

    #[test]
    fn a_result_that_follows_from_the_answers_and_the_rule_passes() {
        let details = json!({"drawn_number": 7, "choices": {"P01": "even", "P02": "odd"}});
        let win = result(ResultStatus::Win, "P02", details);
        check(&found(), &win, &heard(Parity::Even, Parity::Odd)).expect("P02 matched 7's parity");
        check(&found(), &win, &HashMap::new()).expect("the rule alone agrees");
        let draw = result(
            ResultStatus::Draw,
            "",
            json!({"drawn_number": 4, "choices": {"P01": "odd", "P02": "odd"}}),
        );
        check(&found(), &draw, &heard(Parity::Odd, Parity::Odd)).expect("the same choices draw");
        let forfeit = result(ResultStatus::TechnicalLoss, "P01", json!({}));
        check(&found(), &forfeit, &heard(Parity::Odd, Parity::Even)).expect("no rule decides a forfeit");
    }

    #[test]
    fn choices_that_are_not_the_players_own_are_refused() {
        let details = json!({"drawn_number": 7, "choices": {"P01": "odd", "P02": "even"}});
        let error = check(
            &found(),
            &result(ResultStatus::Win, "P01", details),
            &heard(Parity::Even, Parity::Odd),
        )
        .expect_err("P01 answered even");
        assert_eq!(error.code, ErrorCode::InvalidMessageFormat);
        assert!(
            error.description.contains("result.details.choices.P01"),
            "{}",
            error.description
        );
    }

    #[test]
    fn an_outcome_against_the_rule_is_refused() {
        for (bad, field) in [
            (
                result(
                    ResultStatus::Win,
                    "P01",
                    json!({"drawn_number": 7, "choices": {"P01": "even", "P02": "odd"}}),
                ),
                "result.winner",
            ),
            (
                result(
                    ResultStatus::Draw,
                    "",
                    json!({"drawn_number": 7, "choices": {"P01": "even", "P02": "odd"}}),
                ),
                "result.status",
            ),
            (
                result(
                    ResultStatus::Win,
                    "P01",
                    json!({"drawn_number": 2, "choices": {"P01": "even", "P02": "even"}}),
                ),
                "result.status",
            ),
            (
                result(
                    ResultStatus::Win,
                    "P01",
                    json!({"drawn_number": 11, "choices": {"P01": "even", "P02": "odd"}}),
                ),
                "result.details.drawn_number",
            ),
            (
                result(
                    ResultStatus::Win,
                    "P01",
                    json!({"choices": {"P01": "EVEN", "P02": "odd"}}),
                ),
                "result.details.choices.P01",
            ),
        ] {
            let error = check(&found(), &bad, &HashMap::new()).expect_err("refused");
            assert!(
                error.description.contains(field),
                "{field}: {}",
                error.description
            );
        }
        // Without choices in the report, the answers relayed here decide: the same answers are a draw.
        let error = check(
            &found(),
            &result(ResultStatus::Win, "P01", json!({})),
            &heard(Parity::Odd, Parity::Odd),
        )
        .expect_err("both answered odd");
        assert!(
            error.description.contains("result.status"),
            "{}",
            error.description
        );
    }
}
