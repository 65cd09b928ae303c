//! The league as the live page shows it: fetched from the manager with the gateway's operator credential
//! and reduced to public facts in plain JSON — the status and round progress, the table, a round's
//! matches with their outcomes, the points after each completed round, a match's transcript. Nothing
//! here carries a token, an endpoint or a lease: only what any spectator may see.

use std::time::SystemTime;

use futures::future::try_join_all;
use league_proto::v2::{
    GetLeagueStatusRequest, GetLeagueStatusResponse, GetMatchRequest, GetMatchResponse, GetScheduleRequest,
    LeagueStatus, MatchResult, MatchStatus, ScheduledMatch, ScheduledRound, StandingRow, TranscriptEntry,
    transcript_entry,
};
use serde_json::{Map, Value, json};

use super::rounds::Round;
use crate::league::League;
use crate::wire::{convert, timestamp};

pub fn league_status(status: i32) -> &'static str {
    match LeagueStatus::try_from(status).unwrap_or(LeagueStatus::Unspecified) {
        LeagueStatus::Registering => "REGISTERING",
        LeagueStatus::Running => "RUNNING",
        LeagueStatus::Completed => "COMPLETED",
        LeagueStatus::Unspecified => "UNKNOWN",
    }
}

fn time(at: Option<prost_types::Timestamp>) -> Value {
    at.and_then(|at| SystemTime::try_from(at).ok())
        .map_or(Value::Null, |at| timestamp::format(at).into())
}

/// Where the league is: status, rounds and matches done, the champion once it is completed.
pub async fn status(league: &League, league_id: &str) -> Result<GetLeagueStatusResponse, tonic::Status> {
    let request = league.as_operator(GetLeagueStatusRequest {
        league_id: league_id.to_owned(),
    });
    Ok(league
        .manager
        .clone()
        .get_league_status(request)
        .await?
        .into_inner())
}

/// The status as the page reads it. `rounds_completed`: rounds whose matches are all final.
pub fn status_json(status: &GetLeagueStatusResponse, rounds_completed: u32) -> Value {
    json!({
        "league_id": status.league_id,
        "game_type": status.game_type,
        "status": league_status(status.status),
        "current_round": status.current_round_id,
        "total_rounds": status.total_rounds,
        "rounds_completed": rounds_completed,
        "finished_matches": status.finished_matches,
        "total_matches": status.total_matches,
        "registered_players": status.registered_players,
        "champion": status.champion.as_ref().map_or(Value::Null, convert::standing),
        "started_at": time(status.started_at),
        "completed_at": time(status.completed_at),
    })
}

/// A round of the schedule (empty when the round does not exist, or the league is not scheduled yet).
pub async fn scheduled_round(
    league: &League,
    league_id: &str,
    round_id: u32,
) -> Result<Option<ScheduledRound>, tonic::Status> {
    let request = league.as_operator(GetScheduleRequest {
        league_id: league_id.to_owned(),
    });
    let schedule = league.manager.clone().get_schedule(request).await?.into_inner();
    Ok(schedule
        .rounds
        .into_iter()
        .find(|round| round.round_id == round_id))
}

/// A round's matches with each finished one's result (`None`: the round is not in the schedule).
pub async fn round(
    league: &League,
    league_id: &str,
    round_id: u32,
) -> Result<Option<(ScheduledRound, Vec<Option<MatchResult>>)>, tonic::Status> {
    let Some(round) = scheduled_round(league, league_id, round_id).await? else {
        return Ok(None);
    };
    let results = try_join_all(round.matches.iter().map(|scheduled| async move {
        if scheduled.status != MatchStatus::Finished as i32 {
            return Ok::<_, tonic::Status>(None);
        }
        Ok(one_match(league, league_id, &scheduled.match_id).await?.result)
    }))
    .await?;
    Ok(Some((round, results)))
}

/// One match: the schedule's entry, its result and its transcript.
pub async fn one_match(
    league: &League,
    league_id: &str,
    match_id: &str,
) -> Result<GetMatchResponse, tonic::Status> {
    let request = league.as_operator(GetMatchRequest {
        league_id: league_id.to_owned(),
        match_id: match_id.to_owned(),
    });
    Ok(league.manager.clone().get_match(request).await?.into_inner())
}

/// A round as the page lists it: each match with its players, status and (once finished) outcome.
pub fn round_json(round: &ScheduledRound, results: &[Option<MatchResult>]) -> Value {
    let matches: Vec<Value> = round
        .matches
        .iter()
        .zip(results.iter().chain(std::iter::repeat(&None)))
        .map(|(scheduled, result)| match_json(scheduled, result.as_ref()))
        .collect();
    json!({
        "round_id": round.round_id,
        "matches": matches,
        "byes": round.bye_player_ids,
    })
}

/// A match of a round: who plays, where it is, and how it ended.
pub fn match_json(scheduled: &ScheduledMatch, result: Option<&MatchResult>) -> Value {
    let mut object = Map::new();
    object.insert("match_id".into(), scheduled.match_id.clone().into());
    object.insert("round_id".into(), scheduled.round_id.into());
    object.insert("player_a_id".into(), scheduled.player_a_id.clone().into());
    object.insert("player_b_id".into(), scheduled.player_b_id.clone().into());
    object.insert("status".into(), convert::match_status(scheduled.status).into());
    object.insert("result".into(), result.map_or(Value::Null, convert::game_result));
    Value::Object(object)
}

/// The points each player had after each completed round: `players` in table order, each with
/// `points[r - 1]` after round `r`. Built from the rounds' results and the current table (which names
/// every player, byes included).
pub fn progression_json(standings: &[StandingRow], rounds: &[Round]) -> Value {
    let mut totals: Vec<(String, String, u32, Vec<u32>)> = standings
        .iter()
        .map(|row| (row.player_id.clone(), row.display_name.clone(), 0, Vec::new()))
        .collect();
    for round in rounds {
        for result in round.1.iter().flatten() {
            for score in &result.scores {
                if let Some(player) = totals.iter_mut().find(|player| player.0 == score.player_id) {
                    player.2 += score.points;
                }
            }
        }
        for player in &mut totals {
            player.3.push(player.2);
        }
    }
    let players: Vec<Value> = totals
        .into_iter()
        .map(|(player_id, display_name, _, points)| {
            json!({"player_id": player_id, "display_name": display_name, "points": points})
        })
        .collect();
    json!({"rounds": rounds.len(), "players": players})
}

/// A match with its transcript, every entry in order with its time.
pub fn transcript_json(answer: &GetMatchResponse) -> Value {
    let entries: Vec<Value> = answer
        .transcript
        .as_ref()
        .map(|transcript| transcript.entries.iter().map(entry_json).collect())
        .unwrap_or_default();
    json!({
        "match": answer.r#match.as_ref().map_or(Value::Null, |m| match_json(m, answer.result.as_ref())),
        "entries": entries,
    })
}

fn entry_json(entry: &TranscriptEntry) -> Value {
    let at = time(entry.at);
    match &entry.entry {
        Some(transcript_entry::Entry::StateTransition(transition)) => json!({
            "at": at,
            "kind": "state",
            "from": state_name(transition.from),
            "to": state_name(transition.to),
            "reason": transition.reason,
        }),
        Some(transcript_entry::Entry::Message(message)) => json!({
            "at": at,
            "kind": "message",
            "direction": if message.direction == league_proto::v2::Direction::FromPlayer as i32 {
                "from_player"
            } else {
                "to_player"
            },
            "player_id": message.player_id,
            "message_type": message.message_type,
            "attempt": message.attempt,
            "error_code": message.error_code,
            "payload": message.payload.as_ref().map_or(Value::Null, |payload| {
                without_secrets(convert::from_struct(payload))
            }),
        }),
        None => json!({"at": at, "kind": "unknown"}),
    }
}

fn state_name(state: i32) -> &'static str {
    use league_proto::v2::MatchState;
    match MatchState::try_from(state).unwrap_or(MatchState::Unspecified) {
        MatchState::Unspecified => "UNSPECIFIED",
        MatchState::WaitingForPlayers => "WAITING_FOR_PLAYERS",
        MatchState::CollectingChoices => "COLLECTING_CHOICES",
        MatchState::DrawingNumber => "DRAWING_NUMBER",
        MatchState::Evaluating => "EVALUATING",
        MatchState::Finished => "FINISHED",
        MatchState::Aborted => "ABORTED",
    }
}

/// Keys that name a credential. Transcripts record moves and outcomes, not envelopes, so none is
/// expected — but the page is public, so any that an agent slipped into a payload is dropped.
const SECRET_KEYS: &[&str] = &["auth_token", "token", "authorization", "password", "secret"];

fn without_secrets(value: Value) -> Value {
    match value {
        Value::Object(object) => Value::Object(
            object
                .into_iter()
                .filter(|(key, _)| !SECRET_KEYS.contains(&key.to_ascii_lowercase().as_str()))
                .map(|(key, value)| (key, without_secrets(value)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(without_secrets).collect()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use league_proto::v2::{PlayerScore, ResultStatus};

    use super::*;

    fn row(player_id: &str) -> StandingRow {
        StandingRow {
            player_id: player_id.into(),
            display_name: format!("bot-{player_id}"),
            ..StandingRow::default()
        }
    }

    fn win(winner: &str, loser: &str) -> Option<MatchResult> {
        Some(MatchResult {
            status: ResultStatus::Win as i32,
            winner_player_id: winner.into(),
            scores: vec![
                PlayerScore {
                    player_id: winner.into(),
                    points: 3,
                },
                PlayerScore {
                    player_id: loser.into(),
                    points: 0,
                },
            ],
            ..MatchResult::default()
        })
    }

    #[test]
    fn progression_accumulates_points_round_by_round() {
        let table = [row("P01"), row("P02"), row("P03")];
        let round = |id| ScheduledRound {
            round_id: id,
            ..ScheduledRound::default()
        };
        let rounds = vec![
            Arc::new((round(1), vec![win("P01", "P02")])),
            Arc::new((round(2), vec![win("P03", "P01")])),
            Arc::new((round(3), vec![win("P02", "P03"), None])),
        ];
        let progression = progression_json(&table, &rounds);
        assert_eq!(progression["rounds"], 3);
        assert_eq!(progression["players"][0]["points"], json!([3, 3, 3]));
        assert_eq!(progression["players"][1]["points"], json!([0, 0, 3]));
        assert_eq!(progression["players"][2]["points"], json!([0, 3, 3]));
        assert_eq!(progression["players"][2]["display_name"], "bot-P03");
    }

    #[test]
    fn payload_credentials_never_reach_the_page() {
        let payload = json!({"choice": "even", "auth_token": "s3cret", "nested": [{"Token": "x", "n": 1}]});
        assert_eq!(
            without_secrets(payload),
            json!({"choice": "even", "nested": [{"n": 1}]})
        );
    }
}
