//! The league as the live page shows it: fetched from the manager with the gateway's operator credential
//! and reduced to public facts in plain JSON — the status and round progress, the table, a round's
//! matches with their outcomes, the points after each completed round, a match's transcript. Nothing
//! here carries a token, an endpoint or a lease: only what any spectator may see.

use std::time::SystemTime;

use league_domain::{LeagueId, MatchId};
use league_manager_link::ManagerLink;
use league_proto::v2::{
    GetLeagueStatusRequest, GetLeagueStatusResponse, GetMatchRequest, GetMatchResponse, GetScheduleRequest,
    LeagueStall, LeagueSummary, ListLeaguesRequest, MatchResult, ScheduledMatch, ScheduledRound, StallReason,
    StandingRow, TranscriptEntry, transcript_entry,
};
use league_v2::{convert, timestamp};
use serde_json::{Map, Value, json};

use super::rounds::Points;

fn time(at: Option<prost_types::Timestamp>) -> Value {
    at.and_then(|at| SystemTime::try_from(at).ok())
        .map_or(Value::Null, |at| timestamp::format(at).into())
}

/// To the millisecond: a match's transcript entries often fall within one second.
fn precise_time(at: Option<prost_types::Timestamp>) -> Value {
    at.and_then(|at| SystemTime::try_from(at).ok())
        .map_or(Value::Null, |at| {
            let millis = at
                .duration_since(SystemTime::UNIX_EPOCH)
                .map(|since| since.subsec_millis())
                // Before 1970 (never a league's time): whole seconds.
                .unwrap_or_default();
            let seconds = timestamp::format(at);
            format!("{}.{millis:03}Z", seconds.trim_end_matches('Z')).into()
        })
}

/// Where the league is: status, rounds and matches done, the champion once it is completed.
pub(crate) async fn status(
    manager_link: &ManagerLink,
    league_id: &LeagueId,
) -> Result<GetLeagueStatusResponse, tonic::Status> {
    let request = manager_link.as_operator(GetLeagueStatusRequest {
        league_id: league_id.to_string(),
    });
    Ok(manager_link
        .manager
        .clone()
        .get_league_status(request)
        .await?
        .into_inner())
}

/// The status as the page reads it. `rounds_completed`: rounds whose matches are all final.
pub(crate) fn status_json(status: &GetLeagueStatusResponse, rounds_completed: u32) -> Value {
    json!({
        "league_id": status.league_id,
        "game_type": status.game_type,
        "status": convert::league_status(status.status),
        "current_round": status.current_round_id,
        "total_rounds": status.total_rounds,
        "rounds_completed": rounds_completed,
        "finished_matches": status.finished_matches,
        "total_matches": status.total_matches,
        "registered_players": status.registered_players,
        "expected_players": status.expected_players,
        "champion": status.champion.as_ref().map_or(Value::Null, convert::standing),
        "started_at": time(status.started_at),
        "completed_at": time(status.completed_at),
        "cancelled_at": time(status.cancelled_at),
        "stall": status.stall.as_ref().map_or(Value::Null, stall_json),
    })
}

/// Why the league is not moving, in the page's words: the manager's reason, since when, and how many
/// matches wait (null while the league moves).
fn stall_json(stall: &LeagueStall) -> Value {
    let waiting = stall.waiting_matches;
    let matches = if waiting == 1 { "match" } else { "matches" };
    let (reason, message) = match StallReason::try_from(stall.reason).unwrap_or(StallReason::Unspecified) {
        StallReason::Paused => (
            "PAUSED",
            format!("Paused by the operator: {waiting} {matches} wait until it resumes"),
        ),
        StallReason::LeasesExpired => (
            "LEASES_EXPIRED",
            format!("{waiting} {matches} wait on a referee that stopped renewing its lease"),
        ),
        StallReason::NoReferee if stall.referees == 0 => (
            "NO_REFEREE",
            format!("{waiting} {matches} wait for a referee: none is registered for this game"),
        ),
        StallReason::NoReferee => (
            "NO_REFEREE",
            format!("{waiting} {matches} wait for a referee: none has taken a match for a while"),
        ),
        StallReason::Unspecified => ("UNKNOWN", "Not moving".to_owned()),
    };
    // What the league told a referee of the game, when it refused its calls: why none plays.
    let message = match stall.cause.as_str() {
        "" => message,
        cause => format!("{message} ({cause})"),
    };
    json!({
        "reason": reason,
        "message": message,
        "since": time(stall.since),
        "waiting_matches": waiting,
    })
}

/// A round of the schedule, each finished match with its result (`None`: no such round, or the league
/// is not scheduled yet).
pub(crate) async fn round(
    manager_link: &ManagerLink,
    league_id: &LeagueId,
    round_id: u32,
) -> Result<Option<ScheduledRound>, tonic::Status> {
    // One match asked for: the manager answers whole rounds, so exactly this one.
    let request = manager_link.as_operator(GetScheduleRequest {
        league_id: league_id.to_string(),
        first_round_id: round_id,
        max_matches: 1,
    });
    let schedule = manager_link
        .manager
        .clone()
        .get_schedule(request)
        .await?
        .into_inner();
    Ok(schedule
        .rounds
        .into_iter()
        .find(|round| round.round_id == round_id))
}

/// The leagues, newest first (one page).
pub(crate) async fn leagues(manager_link: &ManagerLink) -> Result<Vec<LeagueSummary>, tonic::Status> {
    let request = manager_link.as_operator(ListLeaguesRequest {
        page_size: MAX_LEAGUES_LISTED,
        page_token: String::new(),
    });
    Ok(manager_link
        .manager
        .clone()
        .list_leagues(request)
        .await?
        .into_inner()
        .leagues)
}

/// Leagues the page's list offers.
const MAX_LEAGUES_LISTED: u32 = 50;

/// A league in the list of leagues.
pub(crate) fn summary_json(summary: &LeagueSummary) -> Value {
    json!({
        "league_id": summary.league_id,
        "game_type": summary.game_type,
        "status": convert::league_status(summary.status),
        "current_round": summary.current_round_id,
        "total_rounds": summary.total_rounds,
        "registered_players": summary.registered_players,
        "created_at": time(summary.created_at),
        "started_at": time(summary.started_at),
        "completed_at": time(summary.completed_at),
        "champion": summary.champion.as_ref().map_or(Value::Null, convert::standing),
    })
}

/// One match: the schedule's entry, its result and its transcript.
pub(crate) async fn one_match(
    manager_link: &ManagerLink,
    league_id: &LeagueId,
    match_id: MatchId,
) -> Result<GetMatchResponse, tonic::Status> {
    let request = manager_link.as_operator(GetMatchRequest {
        league_id: league_id.to_string(),
        match_id: match_id.to_string(),
    });
    Ok(manager_link
        .manager
        .clone()
        .get_match(request)
        .await?
        .into_inner())
}

/// A round as the page lists it: each match with its players, status and (once finished) outcome.
pub(crate) fn round_json(round: &ScheduledRound) -> Value {
    let matches: Vec<Value> = round
        .matches
        .iter()
        .map(|scheduled| match_json(scheduled, scheduled.result.as_ref()))
        .collect();
    json!({
        "round_id": round.round_id,
        "matches": matches,
        "byes": round.bye_player_ids,
    })
}

/// A match of a round: who plays, where it is, how it ended and how long it took.
pub(crate) fn match_json(scheduled: &ScheduledMatch, result: Option<&MatchResult>) -> Value {
    let duration_ms = match (scheduled.started_at, scheduled.finished_at) {
        (Some(started), Some(finished)) => {
            let started = SystemTime::try_from(started).ok();
            let finished = SystemTime::try_from(finished).ok();
            started
                .zip(finished)
                .and_then(|(started, finished)| finished.duration_since(started).ok())
                .map_or(Value::Null, |took| (took.as_millis() as u64).into())
        }
        _ => Value::Null,
    };
    let mut object = Map::new();
    object.insert("match_id".into(), scheduled.match_id.clone().into());
    object.insert("round_id".into(), scheduled.round_id.into());
    object.insert("player_a_id".into(), scheduled.player_a_id.clone().into());
    object.insert("player_b_id".into(), scheduled.player_b_id.clone().into());
    object.insert("status".into(), convert::match_status(scheduled.status).into());
    object.insert("duration_ms".into(), duration_ms);
    object.insert("result".into(), result.map_or(Value::Null, convert::game_result));
    Value::Object(object)
}

/// The points each player had after each completed round: `players` in table order, each with
/// `points[r - 1]` after round `r` (`rounds`: each round's points by player, in order).
pub(crate) fn progression_json(standings: &[StandingRow], rounds: &[Points]) -> Value {
    let players: Vec<Value> = standings
        .iter()
        .map(|row| {
            let points: Vec<u32> = rounds
                .iter()
                // Not in that round's table (enrolled later): no points yet.
                .map(|round| round.get(&row.player_id).copied().unwrap_or_default())
                .collect();
            json!({"player_id": row.player_id, "display_name": row.display_name, "points": points})
        })
        .collect();
    json!({"rounds": rounds.len(), "players": players})
}

/// A match with its transcript, every entry in order with its time.
pub(crate) fn transcript_json(answer: &GetMatchResponse) -> Value {
    let entries: Vec<Value> = answer
        .transcript
        .as_ref()
        .map(|transcript| transcript.entries.iter().map(entry_json).collect())
        // No transcript yet (the match has not started): no entries.
        .unwrap_or_default();
    json!({
        "match": answer.r#match.as_ref().map_or(Value::Null, |m| match_json(m, answer.result.as_ref())),
        "entries": entries,
    })
}

fn entry_json(entry: &TranscriptEntry) -> Value {
    let at = precise_time(entry.at);
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

/// A match state by its name, e.g. `WAITING_FOR_PLAYERS`.
fn state_name(state: i32) -> &'static str {
    // A state this gateway does not know (a newer manager's) shows as unspecified.
    let state = league_proto::v2::MatchState::try_from(state).unwrap_or_default();
    state.as_str_name().trim_start_matches("MATCH_STATE_")
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

    use super::*;

    fn row(player_id: &str) -> StandingRow {
        StandingRow {
            player_id: player_id.into(),
            display_name: format!("bot-{player_id}"),
            ..StandingRow::default()
        }
    }

    fn points(after: &[(&str, u32)]) -> Points {
        Arc::new(after.iter().map(|(id, p)| ((*id).to_owned(), *p)).collect())
    }

    #[test]
    fn a_stall_s_message_names_its_cause_when_the_manager_knows_it() {
        let mut stall = LeagueStall {
            reason: StallReason::NoReferee as i32,
            waiting_matches: 1,
            referees: 1,
            ..LeagueStall::default()
        };
        let plain = "1 match wait for a referee: none has taken a match for a while";
        assert_eq!(stall_json(&stall)["message"], plain);
        stall.cause = "REF01's calls to players are refused: no auth_token".into();
        assert_eq!(
            stall_json(&stall)["message"],
            format!("{plain} (REF01's calls to players are refused: no auth_token)")
        );
    }

    #[test]
    fn progression_follows_the_table_round_by_round() {
        let table = [row("P01"), row("P02"), row("P03")];
        let rounds = vec![
            points(&[("P01", 3), ("P02", 0), ("P03", 0)]),
            points(&[("P01", 3), ("P02", 0), ("P03", 3)]),
            points(&[("P01", 3), ("P02", 3), ("P03", 3)]),
        ];
        let progression = progression_json(&table, &rounds);
        assert_eq!(progression["rounds"], 3);
        assert_eq!(progression["players"][0]["points"], json!([3, 3, 3]));
        assert_eq!(progression["players"][1]["points"], json!([0, 0, 3]));
        assert_eq!(progression["players"][2]["points"], json!([0, 3, 3]));
        assert_eq!(progression["players"][2]["display_name"], "bot-P03");
    }

    #[test]
    fn transcript_times_keep_their_milliseconds() {
        let at = prost_types::Timestamp {
            seconds: 1_795_000_000,
            nanos: 42_000_000,
        };
        assert_eq!(precise_time(Some(at)), json!("2026-11-18T11:06:40.042Z"));
        assert_eq!(precise_time(None), Value::Null);
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
