//! `league match <id>`: the whole match — the match's row (the columns of `matches.csv`: choices or
//! moves, the draw, outcome, reason, times), its players with their names, choices and points, and its
//! transcript line by line. Three tables: CSV prints the one `--section` names; JSON is the whole record
//! with the players' names.

use std::collections::BTreeMap;

use clap::Args;
use league_domain::MatchId;
use league_proto::v2::transcript_entry::Entry;
use league_proto::v2::{
    Direction, GetMatchRequest, GetMatchResponse, GetScheduleRequest, GetStandingsRequest, MatchState,
    MatchStatus, ScheduledMatch, TranscriptEntry,
};
use prost_types::value::Kind;
use serde_json::{Value, json};

use super::{Operator, Reading, failed};
use crate::output::{self, Rows, cell};
use league_report::columns::{self, time};

#[derive(Debug, Clone, Args)]
pub struct MatchArgs {
    /// The match, e.g. R1M1.
    pub match_id: MatchId,
    /// Only this table: match (its row), players, or transcript. CSV needs one.
    #[arg(long)]
    pub section: Option<String>,
    #[command(flatten)]
    pub reading: Reading,
}

pub async fn show(args: MatchArgs) -> anyhow::Result<()> {
    let mut operator = args.reading.connect().await?;
    let league_id = operator.league(args.reading.common.league).await?;
    let found = operator
        .manager
        .get_match(operator.request(GetMatchRequest {
            league_id: league_id.clone(),
            match_id: args.match_id.to_string(),
        }))
        .await
        .map_err(failed("reading the match"))?
        .into_inner();
    let names: BTreeMap<String, String> = operator
        .manager
        .get_standings(operator.request(GetStandingsRequest {
            league_id: league_id.clone(),
        }))
        .await
        .map_err(failed("reading the players' names"))?
        .into_inner()
        .standings
        .into_iter()
        .map(|row| (row.player_id, row.display_name))
        .collect();
    let mut scheduled = whole(&found)?;
    if scheduled.started_at.is_none() && scheduled.status == MatchStatus::Running as i32 {
        // Running: no transcript yet, but the schedule knows when a referee took it.
        scheduled.started_at = started_while_running(&mut operator, &league_id, &scheduled).await?;
    }
    let mut row = Rows::new(&columns::MATCHES);
    row.push(columns::a_match(&scheduled));
    let seats = [
        ("a", scheduled.player_a_id.as_str()),
        ("b", scheduled.player_b_id.as_str()),
    ];
    let players = players(&scheduled, &seats, &names);
    let mut transcript = Rows::new(&columns::TRANSCRIPT);
    for entry in found.transcript.iter().flat_map(|t| &t.entries) {
        transcript.push(transcript_line(entry));
    }
    output::print_sections(
        args.reading.common.output,
        args.section.as_deref(),
        &[("match", row), ("players", players), ("transcript", transcript)],
        || {
            // The record as the manager gave it, with the match's times from its transcript.
            let mut timed = found.clone();
            if let Some(shown) = timed.r#match.as_mut() {
                shown.started_at = scheduled.started_at;
                shown.finished_at = scheduled.finished_at;
            }
            let mut json = output::json("league.v2.GetMatchResponse", &timed)?;
            json["players"] = seats
                .iter()
                .map(|(seat, player_id)| {
                    json!({
                        "seat": seat,
                        "player_id": player_id,
                        "display_name": names.get(*player_id).cloned().unwrap_or_default(),
                    })
                })
                .collect::<Vec<_>>()
                .into();
            Ok(json)
        },
    )
}

/// The scheduled match with its result and times: `GetMatch` gives the result beside the match, and
/// the times only in its transcript (its first entry, and its last once the match is finished: the
/// referee's clock, as the schedule's `started_at` and `finished_at`).
fn whole(found: &GetMatchResponse) -> anyhow::Result<ScheduledMatch> {
    let mut scheduled = found
        .r#match
        .clone()
        .ok_or_else(|| anyhow::anyhow!("the manager's answer about the match has no match"))?;
    if scheduled.result.is_none() {
        scheduled.result = found.result.clone();
    }
    let entries = found
        .transcript
        .as_ref()
        .map_or(&[][..], |t| t.entries.as_slice());
    if scheduled.started_at.is_none() {
        scheduled.started_at = entries.first().and_then(|entry| entry.at).map(as_recorded);
    }
    if scheduled.finished_at.is_none() && scheduled.result.is_some() {
        scheduled.finished_at = entries.last().and_then(|entry| entry.at).map(as_recorded);
    }
    Ok(scheduled)
}

/// When a running match started, as its round in the schedule says (a referee took it then).
async fn started_while_running(
    operator: &mut Operator,
    league_id: &str,
    running: &ScheduledMatch,
) -> anyhow::Result<Option<prost_types::Timestamp>> {
    let request = operator.request(GetScheduleRequest {
        league_id: league_id.to_owned(),
        first_round_id: running.round_id,
        // The manager answers whole rounds: this one.
        max_matches: 1,
    });
    let schedule = operator
        .manager
        .get_schedule(request)
        .await
        .map_err(failed("reading the match's round"))?
        .into_inner();
    Ok(schedule
        .rounds
        .iter()
        .flat_map(|round| &round.matches)
        .find(|scheduled| scheduled.match_id == running.match_id)
        .and_then(|scheduled| scheduled.started_at))
}

/// A referee's time as the schedule gives it, so that a match's row reads the same here and in
/// `league schedule`: rounded to microseconds as the manager stores it, then to milliseconds as its
/// queries answer (`extract(epoch …) * 1000` cast to bigint: half away from zero).
fn as_recorded(at: prost_types::Timestamp) -> prost_types::Timestamp {
    let micros = at
        .seconds
        .saturating_mul(1_000_000)
        .saturating_add(i64::from(at.nanos).saturating_add(500).div_euclid(1_000));
    let millis = micros.saturating_add(500).div_euclid(1_000);
    prost_types::Timestamp {
        seconds: millis.div_euclid(1_000),
        // Below 1 000 000 000: a remainder of a division by 1 000, times a million.
        nanos: i32::try_from(millis.rem_euclid(1_000) * 1_000_000).unwrap_or_default(),
    }
}

/// Each seat's player: name, even_odd choice, points, and whether it was at fault.
fn players(scheduled: &ScheduledMatch, seats: &[(&str, &str)], names: &BTreeMap<String, String>) -> Rows {
    let result = scheduled.result.as_ref();
    let choices = result
        .and_then(|r| r.game_metadata.as_ref())
        .and_then(|metadata| metadata.fields.get("choices"))
        .and_then(|choices| match &choices.kind {
            Some(Kind::StructValue(choices)) => Some(choices.clone()),
            _ => None,
        })
        .unwrap_or_default();
    let mut rows = Rows::new(&columns::MATCH_PLAYERS);
    for (seat, player_id) in seats {
        let choice = choices
            .fields
            .get(*player_id)
            .map(|value| {
                plain(value)
                    .as_str()
                    .map_or_else(|| plain(value).to_string(), str::to_owned)
            })
            .unwrap_or_default();
        let points = result
            .and_then(|r| r.scores.iter().find(|score| score.player_id == *player_id))
            .map(|score| cell(score.points))
            .unwrap_or_default();
        let at_fault = result.is_some_and(|r| r.at_fault_player_ids.iter().any(|id| id == player_id));
        rows.push(vec![
            (*seat).to_owned(),
            (*player_id).to_owned(),
            names.get(*player_id).cloned().unwrap_or_default(),
            choice,
            points,
            if result.is_some() {
                cell(at_fault)
            } else {
                String::new()
            },
        ]);
    }
    rows
}

/// One transcript line: a message to or from a player (what it carried, compact JSON), or a change of
/// the match's state (`collecting_choices → drawing_number: …`).
fn transcript_line(entry: &TranscriptEntry) -> Vec<String> {
    let at = time(entry.at.as_ref());
    match &entry.entry {
        Some(Entry::Message(message)) => vec![
            at,
            word(
                Direction::try_from(message.direction).map_or("", |d| d.as_str_name()),
                "DIRECTION_",
            ),
            message.player_id.clone(),
            message.message_type.clone(),
            cell(message.attempt),
            message.error_code.clone(),
            message
                .payload
                .as_ref()
                .map(|payload| plain_struct(payload).to_string())
                .unwrap_or_default(),
        ],
        Some(Entry::StateTransition(change)) => {
            let state = |state: i32| {
                word(
                    MatchState::try_from(state).map_or("", |s| s.as_str_name()),
                    "MATCH_STATE_",
                )
            };
            // The match's first state comes from none: said alone, not "unspecified → …".
            let mut detail = match MatchState::try_from(change.from) {
                Ok(MatchState::Unspecified) => state(change.to),
                _ => format!("{} → {}", state(change.from), state(change.to)),
            };
            if !change.reason.is_empty() {
                detail.push_str(&format!(": {}", change.reason));
            }
            vec![
                at,
                String::new(),
                String::new(),
                "state".to_owned(),
                String::new(),
                String::new(),
                detail,
            ]
        }
        None => vec![
            at,
            String::new(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
        ],
    }
}

/// An enum value's name as the league says it.
fn word(name: &str, prefix: &str) -> String {
    name.strip_prefix(prefix).unwrap_or(name).to_lowercase()
}

/// A protobuf `Struct` as plain JSON.
fn plain_struct(fields: &prost_types::Struct) -> Value {
    Value::Object(
        fields
            .fields
            .iter()
            .map(|(name, value)| (name.clone(), plain(value)))
            .collect(),
    )
}

/// A protobuf `Value` as plain JSON.
fn plain(value: &prost_types::Value) -> Value {
    match &value.kind {
        Some(Kind::StringValue(text)) => Value::String(text.clone()),
        Some(Kind::NumberValue(number)) if number.fract() == 0.0 && number.abs() < 1e15 => {
            Value::from(*number as i64)
        }
        Some(Kind::NumberValue(number)) => json!(number),
        Some(Kind::BoolValue(flag)) => Value::Bool(*flag),
        Some(Kind::StructValue(fields)) => plain_struct(fields),
        Some(Kind::ListValue(list)) => Value::Array(list.values.iter().map(plain).collect()),
        Some(Kind::NullValue(_)) | None => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use league_proto::v2::{MessageRecord, StateTransition};

    use super::*;

    #[test]
    fn a_finished_match_has_its_times_from_its_transcript() {
        let at = |seconds| TranscriptEntry {
            at: Some(prost_types::Timestamp { seconds, nanos: 0 }),
            entry: None,
        };
        let mut found = GetMatchResponse {
            r#match: Some(ScheduledMatch::default()),
            transcript: Some(league_proto::v2::MatchTranscript {
                match_id: "R1M1".into(),
                entries: vec![at(100), at(101), at(103)],
            }),
            ..GetMatchResponse::default()
        };
        let running = whole(&found).expect("a match");
        assert_eq!(running.started_at.map(|t| t.seconds), Some(100));
        assert_eq!(running.finished_at, None, "not finished yet");
        found.result = Some(league_proto::v2::MatchResult::default());
        let finished = whole(&found).expect("a match");
        assert_eq!(finished.finished_at.map(|t| t.seconds), Some(103));
        assert_eq!(columns::a_match(&finished)[12], "3000", "duration_ms");
    }

    #[test]
    fn times_are_rounded_as_the_schedule_rounds_them() {
        let at = |seconds, nanos| prost_types::Timestamp { seconds, nanos };
        // 34.450528734 s: 34.450529 s stored, 34.451 s answered.
        assert_eq!(as_recorded(at(34, 450_528_734)), at(34, 451_000_000));
        assert_eq!(as_recorded(at(34, 613_079_053)), at(34, 613_000_000));
        assert_eq!(as_recorded(at(34, 999_600_000)), at(35, 0));
    }

    #[test]
    fn transcript_lines_say_what_happened_in_the_leagues_words() {
        let message = TranscriptEntry {
            at: None,
            entry: Some(Entry::Message(MessageRecord {
                direction: Direction::FromPlayer as i32,
                player_id: "P01".into(),
                message_type: "CHOOSE_PARITY_RESPONSE".into(),
                attempt: 1,
                payload: Some(prost_types::Struct {
                    fields: [(
                        "parity_choice".to_owned(),
                        prost_types::Value {
                            kind: Some(Kind::StringValue("even".into())),
                        },
                    )]
                    .into(),
                }),
                error_code: String::new(),
            })),
        };
        let line = transcript_line(&message);
        assert_eq!(line.len(), columns::TRANSCRIPT.len());
        assert_eq!(line[1], "from_player");
        assert_eq!(line[6], r#"{"parity_choice":"even"}"#);
        let change = TranscriptEntry {
            at: None,
            entry: Some(Entry::StateTransition(StateTransition {
                from: MatchState::CollectingChoices as i32,
                to: MatchState::DrawingNumber as i32,
                reason: "both chose".into(),
            })),
        };
        assert_eq!(
            transcript_line(&change)[6],
            "collecting_choices → drawing_number: both chose"
        );
    }
}
