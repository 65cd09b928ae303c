//! Between protobuf and league.v2 JSON: the league's records (standings rows, scheduled matches,
//! results) in the field names agents read, and `google.protobuf.Struct` game payloads both ways.

use std::sync::LazyLock;

use league_proto::v2::{
    LeagueStatus, MatchResult, MatchStatus, ResultStatus, ScheduledMatch, StandingRow, TieBreak,
};
use prost_types::value::Kind;
use serde_json::{Map, Number, Value, json};

use crate::shared_json::Recent;

pub fn standing(row: &StandingRow) -> Value {
    json!({
        "rank": row.rank,
        "player_id": row.player_id,
        "display_name": row.display_name,
        "played": row.played,
        "wins": row.wins,
        "draws": row.draws,
        "losses": row.losses,
        "technical_losses": row.technical_losses,
        "points": row.points,
        "tie_break": tie_break(row.above_next_by),
    })
}

/// The rule that ranks a row above the next one: "points" when they differ on points, else the
/// tie-break that separated them (null on the last row).
pub(crate) fn tie_break(rule: i32) -> Value {
    tie_break_name(rule).map_or(Value::Null, Value::from)
}

/// The rule's name in lower case (`head_to_head`…), as agents and the results report read it; None on
/// the last row.
pub fn tie_break_name(rule: i32) -> Option<&'static str> {
    match TieBreak::try_from(rule).unwrap_or(TieBreak::Unspecified) {
        TieBreak::Unspecified => None,
        TieBreak::Points => Some("points"),
        TieBreak::HeadToHead => Some("head_to_head"),
        TieBreak::WinRate => Some("win_rate"),
        TieBreak::Wins => Some("wins"),
        TieBreak::FewerDraws => Some("fewer_draws"),
        TieBreak::PlayerId => Some("player_id"),
    }
}

pub fn standings(rows: &[StandingRow]) -> Value {
    Value::Array(rows.iter().map(standing).collect())
}

/// [`standings`], converted once for the recent tables (every player gets the same one after a round)
/// and written into each message as it is (crate::shared_json).
pub fn shared_standings(rows: &[StandingRow]) -> Value {
    static RECENT: LazyLock<Recent<Vec<StandingRow>>> = LazyLock::new(|| Recent::new(8));
    RECENT
        .get(
            |known| known.as_slice() == rows,
            || rows.to_vec(),
            |rows| standings(rows),
        )
        .value()
}

/// A round's matches, converted once for the recent rounds (every player gets the same announcement)
/// and written into each message as it is (crate::shared_json).
pub fn shared_matches(matches: &[ScheduledMatch], referee_endpoint: &str) -> Value {
    static RECENT: LazyLock<Recent<(Vec<ScheduledMatch>, String)>> = LazyLock::new(|| Recent::new(8));
    RECENT
        .get(
            |(known, endpoint)| known.as_slice() == matches && endpoint == referee_endpoint,
            || (matches.to_vec(), referee_endpoint.to_owned()),
            |(matches, endpoint)| {
                Value::Array(matches.iter().map(|m| scheduled_match(m, endpoint)).collect())
            },
        )
        .value()
}

pub fn league_status(status: i32) -> &'static str {
    match LeagueStatus::try_from(status).unwrap_or(LeagueStatus::Unspecified) {
        LeagueStatus::Registering => "REGISTERING",
        LeagueStatus::Running => "RUNNING",
        LeagueStatus::Completed => "COMPLETED",
        LeagueStatus::Paused => "PAUSED",
        LeagueStatus::Cancelled => "CANCELLED",
        LeagueStatus::Unspecified => "UNKNOWN",
    }
}

pub fn match_status(status: i32) -> &'static str {
    match MatchStatus::try_from(status).unwrap_or(MatchStatus::Unspecified) {
        MatchStatus::Scheduled => "SCHEDULED",
        MatchStatus::Ready => "PENDING",
        MatchStatus::Running => "IN_PROGRESS",
        MatchStatus::Finished => "COMPLETED",
        MatchStatus::Cancelled => "CANCELLED",
        MatchStatus::Unspecified => "UNKNOWN",
    }
}

/// A scheduled match; `referee_endpoint` is where agents send replies meant for its referee.
pub fn scheduled_match(m: &ScheduledMatch, referee_endpoint: &str) -> Value {
    json!({
        "match_id": m.match_id,
        "league_id": m.league_id,
        "round_id": m.round_id,
        "game_type": m.game_type,
        "player_A_id": m.player_a_id,
        "player_B_id": m.player_b_id,
        "referee_id": if m.referee_id.is_empty() { Value::Null } else { m.referee_id.clone().into() },
        "referee_endpoint": referee_endpoint,
        "status": match_status(m.status),
    })
}

pub(crate) fn result_status(status: i32) -> &'static str {
    match ResultStatus::try_from(status).unwrap_or(ResultStatus::Unspecified) {
        ResultStatus::Win => "WIN",
        ResultStatus::Draw => "DRAW",
        // league.v2 knows no double forfeit: both players lost technically, and nobody won.
        ResultStatus::TechnicalLoss | ResultStatus::DoubleForfeit => "TECHNICAL_LOSS",
        ResultStatus::Unspecified => "UNKNOWN",
    }
}

/// GAME_OVER's `game_result`: status, winner, reason, and the game's own metadata (for even/odd:
/// `drawn_number`, `number_parity`, `choices`).
pub fn game_result(result: &MatchResult) -> Value {
    let mut object = Map::new();
    object.insert("status".into(), result_status(result.status).into());
    object.insert(
        "winner_player_id".into(),
        if result.winner_player_id.is_empty() {
            Value::Null
        } else {
            result.winner_player_id.clone().into()
        },
    );
    object.insert("reason".into(), result.reason.clone().into());
    if !result.at_fault_player_ids.is_empty() {
        object.insert("at_fault_player_ids".into(), json!(result.at_fault_player_ids));
    }
    if let Some(metadata) = &result.game_metadata {
        for (name, value) in &metadata.fields {
            object.insert(name.clone(), from_proto_value(value));
        }
    }
    object.insert(
        "score".into(),
        Value::Object(
            result
                .scores
                .iter()
                .map(|s| (s.player_id.clone(), s.points.into()))
                .collect(),
        ),
    );
    Value::Object(object)
}

/// A full match result, as queries return it.
pub fn match_result(result: &MatchResult) -> Value {
    let mut value = game_result(result);
    if let Value::Object(object) = &mut value {
        object.insert("match_id".into(), result.match_id.clone().into());
    }
    value
}

pub(crate) fn from_proto_value(value: &prost_types::Value) -> Value {
    match &value.kind {
        None | Some(Kind::NullValue(_)) => Value::Null,
        Some(Kind::BoolValue(flag)) => Value::Bool(*flag),
        Some(Kind::NumberValue(number)) => number_value(*number),
        Some(Kind::StringValue(text)) => Value::String(text.clone()),
        Some(Kind::ListValue(list)) => Value::Array(list.values.iter().map(from_proto_value).collect()),
        Some(Kind::StructValue(object)) => from_struct(object),
    }
}

pub fn from_struct(object: &prost_types::Struct) -> Value {
    Value::Object(
        object
            .fields
            .iter()
            .map(|(k, v)| (k.clone(), from_proto_value(v)))
            .collect(),
    )
}

/// Whole numbers print as integers (`7`, not `7.0`), as agents expect.
fn number_value(number: f64) -> Value {
    if number.fract() == 0.0 && number.abs() < 9.0e15 {
        #[allow(clippy::cast_possible_truncation)]
        return Value::Number(Number::from(number as i64));
    }
    Number::from_f64(number).map_or(Value::Null, Value::Number)
}

pub(crate) fn to_proto_value(value: &Value) -> prost_types::Value {
    let kind = match value {
        Value::Null => Kind::NullValue(prost_types::NullValue::NullValue.into()),
        Value::Bool(flag) => Kind::BoolValue(*flag),
        Value::Number(number) => Kind::NumberValue(number.as_f64().unwrap_or(0.0)),
        Value::String(text) => Kind::StringValue(text.clone()),
        Value::Array(items) => Kind::ListValue(prost_types::ListValue {
            values: items.iter().map(to_proto_value).collect(),
        }),
        Value::Object(object) => Kind::StructValue(to_struct(object)),
    };
    prost_types::Value { kind: Some(kind) }
}

pub fn to_struct(object: &Map<String, Value>) -> prost_types::Struct {
    prost_types::Struct {
        fields: object
            .iter()
            .map(|(k, v)| (k.clone(), to_proto_value(v)))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn structs_round_trip_and_integers_stay_integers() {
        let value = json!({"drawn_number": 7, "choices": {"P01": "odd"}, "list": [1.5, null, true]});
        let object = value.as_object().expect("object");
        assert_eq!(from_struct(&to_struct(object)), value);
    }

    #[test]
    fn a_double_forfeit_reads_as_a_technical_loss() {
        let result = MatchResult {
            match_id: "R1M1".into(),
            status: ResultStatus::DoubleForfeit as i32,
            ..MatchResult::default()
        };
        assert_eq!(game_result(&result)["status"], "TECHNICAL_LOSS");
        assert_eq!(game_result(&result)["winner_player_id"], Value::Null);
    }
}
