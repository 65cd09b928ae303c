//! Reading a match result that an external referee sends: MATCH_RESULT_REPORT's `result` (`winner`,
//! `score{pid: points}`, `details{drawn_number, choices}`) or GAME_OVER's `game_result` (`status`,
//! `winner_player_id`, `drawn_number`, `choices`…), in the spellings real referees use. The manager
//! checks that status, winner, scores and players at fault agree; this only reads.

use league_domain::points;
use league_proto::ErrorCode;
use league_proto::v2::{MatchResult, PlayerScore, ResultStatus};
use serde_json::{Map, Value};

use crate::compliance::{Checker, kinds};
use crate::convert;
use crate::league_error::{LeagueError, LeagueResult};

/// The players of the match the result is about.
#[derive(Debug, Clone, Copy)]
pub struct Players<'a> {
    pub a: &'a str,
    pub b: &'a str,
}

impl Players<'_> {
    fn other(&self, player: &str) -> String {
        if player == self.a { self.b } else { self.a }.to_owned()
    }

    fn contains(&self, player: &str) -> bool {
        player == self.a || player == self.b
    }
}

/// Fields that are the game's own account of the result, kept as its metadata.
const GAME_FIELDS: [&str; 4] = ["drawn_number", "number_parity", "choices", "player_choices"];

pub fn read(
    match_id: &str,
    players: Players<'_>,
    result: &Map<String, Value>,
    checker: &mut Checker,
) -> LeagueResult<MatchResult> {
    let winner_field = first(result, &["winner", "winner_player_id", "winner_id"]);
    let winner = read_winner(winner_field, players)?;
    let scores = read_scores(result, players, checker)?;
    let status = match read_status(result)? {
        Some(status) => status,
        None => implied_status(winner.is_some(), winner_field.is_some(), scores.as_deref())?,
    };
    let at_fault = read_at_fault(result, players, status, winner.as_deref())?;
    // No scores given: the 3/1/0 rule gives them.
    let scores = scores.unwrap_or_else(|| rule_scores(players, status, winner.as_deref()));
    let metadata = game_metadata(result);
    Ok(MatchResult {
        match_id: match_id.to_owned(),
        status: status as i32,
        // proto3's empty values: no winner (a draw), no scores, no reason given.
        winner_player_id: winner.unwrap_or_default(),
        scores,
        reason: result
            .get("reason")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        at_fault_player_ids: at_fault,
        game_metadata: (!metadata.is_empty()).then(|| convert::to_struct(&metadata)),
    })
}

fn invalid(why: String) -> LeagueError {
    LeagueError::new(ErrorCode::InvalidMessageFormat, why)
}

/// The winner, one of the players; none for a draw (`null`, `""` or `DRAW`).
fn read_winner(field: Option<&Value>, players: Players<'_>) -> LeagueResult<Option<String>> {
    match field {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) if text.is_empty() || text.eq_ignore_ascii_case("draw") => Ok(None),
        Some(Value::String(text)) if players.contains(text) => Ok(Some(text.clone())),
        Some(other) => Err(invalid(format!(
            "result.winner must be {} or {} (or DRAW), got {other}",
            players.a, players.b
        ))),
    }
}

/// The status of a result that gives none. The specification's report has no status
/// (`match_status: COMPLETED` says nothing more): the winner and the scores say which it was, and must
/// say it.
fn implied_status(
    has_winner: bool,
    declared_draw: bool,
    scores: Option<&[PlayerScore]>,
) -> LeagueResult<ResultStatus> {
    match (has_winner, scores) {
        (true, _) => Ok(ResultStatus::Win),
        (false, Some(scores)) if scores.iter().all(|s| s.points == points::LOSS) => {
            Ok(ResultStatus::DoubleForfeit)
        }
        (false, Some(scores)) if scores.iter().all(|s| s.points == points::DRAW) => Ok(ResultStatus::Draw),
        (false, None) if declared_draw => Ok(ResultStatus::Draw),
        (false, Some(_)) => Err(invalid(
            "result.winner is missing: the scores are a win's, so the winner must be named".to_owned(),
        )),
        (false, None) => Err(invalid(format!(
            "result.status is missing and so are result.winner and result.score: a result is {} \
             or the specification's winner and score",
            STATUSES.join(", ")
        ))),
    }
}

/// The players at fault: as named (each one of the players), or as the status implies.
fn read_at_fault(
    result: &Map<String, Value>,
    players: Players<'_>,
    status: ResultStatus,
    winner: Option<&str>,
) -> LeagueResult<Vec<String>> {
    match first(result, &["at_fault_player_ids", "technical_loss_players"]) {
        Some(Value::Array(ids)) => ids
            .iter()
            .map(|id| {
                id.as_str()
                    .filter(|id| players.contains(id))
                    .map(str::to_owned)
                    .ok_or_else(|| invalid(format!("at_fault_player_ids names {id}")))
            })
            .collect(),
        _ => Ok(match (status, winner) {
            (ResultStatus::TechnicalLoss, Some(winner)) => vec![players.other(winner)],
            (ResultStatus::DoubleForfeit, _) => vec![players.a.to_owned(), players.b.to_owned()],
            _ => Vec::new(),
        }),
    }
}

/// The scores the 3/1/0 rule gives a result that names none.
fn rule_scores(players: Players<'_>, status: ResultStatus, winner: Option<&str>) -> Vec<PlayerScore> {
    let (a, b) = match (status, winner) {
        (ResultStatus::Win | ResultStatus::TechnicalLoss, Some(w)) if w == players.a => {
            (points::WIN, points::LOSS)
        }
        (ResultStatus::Win | ResultStatus::TechnicalLoss, Some(_)) => (points::LOSS, points::WIN),
        (ResultStatus::Draw, _) => (points::DRAW, points::DRAW),
        _ => (points::LOSS, points::LOSS),
    };
    vec![score(players.a, a), score(players.b, b)]
}

/// The game's own account of the result (`drawn_number`, `choices`…), from `details` first.
fn game_metadata(result: &Map<String, Value>) -> Map<String, Value> {
    let mut metadata = Map::new();
    let details = result.get("details").and_then(Value::as_object);
    for source in details.into_iter().chain(std::iter::once(result)) {
        for field in GAME_FIELDS {
            if let Some(value) = source.get(field).filter(|v| !v.is_null()) {
                let name = if field == "player_choices" {
                    "choices"
                } else {
                    field
                };
                metadata.entry(name).or_insert_with(|| value.clone());
            }
        }
    }
    metadata
}

/// The statuses a result may have: anything else (ABORTED, CANCELLED…) is no result.
const STATUSES: [&str; 4] = ["WIN", "DRAW", "TECHNICAL_LOSS", "DOUBLE_FORFEIT"];

/// The result's status when it gives one; `None` for the specification's form (no status, or
/// `match_status: COMPLETED`). A status that is not one of [`STATUSES`] refuses the report, naming the
/// field: a referee that could not finish a match has no result to report.
fn read_status(result: &Map<String, Value>) -> LeagueResult<Option<ResultStatus>> {
    let Some((field, value)) = ["status", "result_status", "match_status"]
        .into_iter()
        .find_map(|field| result.get(field).map(|value| (field, value)))
    else {
        return Ok(None);
    };
    let text = value.as_str().map(str::to_ascii_uppercase);
    Ok(Some(match text.as_deref() {
        Some("WIN") => ResultStatus::Win,
        Some("DRAW") => ResultStatus::Draw,
        Some("TECHNICAL_LOSS") => ResultStatus::TechnicalLoss,
        Some("DOUBLE_FORFEIT") => ResultStatus::DoubleForfeit,
        Some("COMPLETED") if field == "match_status" => return Ok(None),
        _ => {
            return Err(LeagueError::new(
                ErrorCode::InvalidMessageFormat,
                format!(
                    "result.{field} must be {}, got {value}: a match that did not end has no result to report",
                    STATUSES.join(", ")
                ),
            ));
        }
    }))
}

fn first<'a>(object: &'a Map<String, Value>, names: &[&str]) -> Option<&'a Value> {
    names.iter().find_map(|name| object.get(*name))
}

fn score(player: &str, points: u32) -> PlayerScore {
    PlayerScore {
        player_id: player.to_owned(),
        points,
    }
}

/// `score` / `scores` as `{pid: points}`, or peer-b's `players{pid: {result, points}}`.
fn read_scores(
    result: &Map<String, Value>,
    players: Players<'_>,
    checker: &mut Checker,
) -> LeagueResult<Option<Vec<PlayerScore>>> {
    let (map, nested) = match (first(result, &["score", "scores"]), result.get("players")) {
        (Some(Value::Object(map)), _) => (map, false),
        (None | Some(Value::Null), Some(Value::Object(map))) => {
            checker.deviation(
                kinds::FIELD_ALIAS,
                "`players{id: {points}}` for `score{id: points}`",
                ErrorCode::MissingRequiredField,
            )?;
            (map, true)
        }
        (None | Some(Value::Null), _) => return Ok(None),
        (Some(other), _) => {
            return Err(LeagueError::new(
                ErrorCode::InvalidMessageFormat,
                format!("result.score must be an object of points per player, got {other}"),
            ));
        }
    };
    let mut scores = Vec::with_capacity(2);
    for (player, value) in map {
        let points = if nested { value.get("points") } else { Some(value) };
        let points = points
            .and_then(Value::as_u64)
            .and_then(|p| u32::try_from(p).ok())
            .filter(|p| points::is_valid(*p))
            .ok_or_else(|| {
                LeagueError::new(
                    ErrorCode::InvalidMessageFormat,
                    format!(
                        "result.score: points of {player} must be {}, {} or {}, got {value}",
                        points::LOSS,
                        points::DRAW,
                        points::WIN
                    ),
                )
            })?;
        if !players.contains(player) {
            return Err(LeagueError::new(
                ErrorCode::InvalidMessageFormat,
                format!(
                    "result.score names {player}, who is not in this match ({} v {})",
                    players.a, players.b
                ),
            ));
        }
        scores.push(score(player, points));
    }
    Ok(Some(scores))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compliance::Mode;
    use serde_json::json;

    const PLAYERS: Players<'static> = Players { a: "P01", b: "P02" };

    fn read_json(result: Value, mode: Mode) -> LeagueResult<MatchResult> {
        let mut checker = Checker::new(mode);
        read("R1M1", PLAYERS, result.as_object().expect("object"), &mut checker)
    }

    fn points(result: &MatchResult) -> Vec<(String, u32)> {
        let mut points: Vec<_> = result
            .scores
            .iter()
            .map(|s| (s.player_id.clone(), s.points))
            .collect();
        points.sort();
        points
    }

    #[test]
    fn the_specifications_report_reads_as_a_win() {
        let result = read_json(
            json!({"winner": "P02", "score": {"P01": 0, "P02": 3}, "details": {"drawn_number": 7, "choices": {"P01": "even", "P02": "odd"}}}),
            Mode::Strict,
        )
        .expect("reads");
        assert_eq!(result.status, ResultStatus::Win as i32);
        assert_eq!(result.winner_player_id, "P02");
        assert_eq!(points(&result), vec![("P01".into(), 0), ("P02".into(), 3)]);
        let metadata = convert::from_struct(result.game_metadata.as_ref().expect("metadata"));
        assert_eq!(metadata["drawn_number"], 7);
        assert_eq!(metadata["choices"]["P02"], "odd");
    }

    #[test]
    fn peer_a_draws_and_game_over_results_read() {
        let draw = read_json(
            json!({"winner": "DRAW", "score": {"P01": 1, "P02": 1}, "match_status": "COMPLETED"}),
            Mode::Strict,
        )
        .expect("reads");
        assert_eq!(draw.status, ResultStatus::Draw as i32);
        assert!(draw.winner_player_id.is_empty());
        let over = read_json(
            json!({"status": "TECHNICAL_LOSS", "winner_player_id": "P01", "reason": "P02 timed out", "player_choices": {"P01": "odd"}}),
            Mode::Strict,
        )
        .expect("reads");
        assert_eq!(over.status, ResultStatus::TechnicalLoss as i32);
        assert_eq!(over.at_fault_player_ids, vec!["P02".to_owned()]);
        assert_eq!(points(&over), vec![("P01".into(), 3), ("P02".into(), 0)]);
        let metadata = convert::from_struct(over.game_metadata.as_ref().expect("metadata"));
        assert_eq!(metadata["choices"]["P01"], "odd");
    }

    #[test]
    fn peer_b_players_form_is_lenient_only() {
        let sloppy = json!({"players": {"P01": {"result": "WIN", "points": 3}, "P02": {"result": "LOSS", "points": 0}}, "winner": "P01"});
        let result = read_json(sloppy.clone(), Mode::Lenient).expect("lenient reads it");
        assert_eq!(points(&result), vec![("P01".into(), 3), ("P02".into(), 0)]);
        assert!(read_json(sloppy, Mode::Strict).is_err());
    }

    #[test]
    fn results_about_someone_else_are_refused() {
        for bad in [
            json!({"winner": "P09"}),
            json!({"winner": "P01", "score": {"P01": 3, "P07": 0}}),
            json!({"winner": "P01", "score": {"P01": 30, "P02": 0}}),
            json!({"winner": 1}),
            json!({"winner": "P01", "score": [3, 0]}),
        ] {
            let error = read_json(bad.clone(), Mode::Lenient).expect_err("refused");
            assert_eq!(error.code, ErrorCode::InvalidMessageFormat, "{bad}");
        }
    }

    #[test]
    fn a_status_that_is_no_result_is_refused_naming_the_field() {
        for (bad, field) in [
            (json!({"status": "ABORTED"}), "result.status"),
            (
                json!({"status": "ABORTED", "reason": "'player_A_endpoint'"}),
                "result.status",
            ),
            (
                json!({"status": "CANCELLED", "winner": "DRAW", "score": {"P01": 1, "P02": 1}}),
                "result.status",
            ),
            (json!({"status": "MAYBE", "winner": "P01"}), "result.status"),
            (json!({"status": 3}), "result.status"),
            (json!({"result_status": "ERROR"}), "result.result_status"),
            (
                json!({"match_status": "ABORTED", "winner": "P01"}),
                "result.match_status",
            ),
            (json!({}), "result.status"),
            (json!({"reason": "crashed"}), "result.status"),
            (json!({"score": {"P01": 3, "P02": 0}}), "result.winner"),
            (json!({"winner": "P03", "status": "WIN"}), "result.winner"),
        ] {
            for mode in [Mode::Lenient, Mode::Strict] {
                let error = read_json(bad.clone(), mode).expect_err("refused");
                assert_eq!(error.code, ErrorCode::InvalidMessageFormat, "{bad}");
                assert!(error.description.contains(field), "{bad}: {}", error.description);
            }
        }
    }

    #[test]
    fn every_result_status_and_the_specifications_forms_read() {
        for (given, status) in [
            (json!({"status": "WIN", "winner": "P01"}), ResultStatus::Win),
            (json!({"status": "draw"}), ResultStatus::Draw),
            (
                json!({"status": "TECHNICAL_LOSS", "winner": "P02"}),
                ResultStatus::TechnicalLoss,
            ),
            (json!({"status": "DOUBLE_FORFEIT"}), ResultStatus::DoubleForfeit),
            (json!({"winner": "DRAW"}), ResultStatus::Draw),
            (
                json!({"winner": null, "score": {"P01": 0, "P02": 0}}),
                ResultStatus::DoubleForfeit,
            ),
            (
                json!({"score": {"P01": 1, "P02": 1}, "match_status": "COMPLETED"}),
                ResultStatus::Draw,
            ),
        ] {
            let read = read_json(given.clone(), Mode::Strict).expect("reads");
            assert_eq!(read.status, status as i32, "{given}");
        }
    }
}
