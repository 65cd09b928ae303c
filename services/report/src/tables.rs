//! The report's data files: `standings.json`, `standings.csv`, `standings_by_round.csv`,
//! `matches.csv`, `head_to_head.csv` and `ratings.csv` — plain CSV (RFC 4180 quoting) and JSON anyone's tools can read.

use std::fmt::Write;

use league_proto::v2::{ResultStatus, ScheduledMatch};
use league_v2::convert::tie_break_name;
use prost_types::value::Kind;
use serde_json::{Value, json};

use crate::columns;
use crate::data::{LeagueData, strategy_of};
use crate::head_to_head::HeadToHead;
use crate::ratings;

/// `standings.json`: the league and its final table, each row with its strategy group and the rule
/// that ranks it above the next row.
pub fn standings_json(data: &LeagueData) -> Value {
    let status = &data.status;
    json!({
        "league_id": status.league_id,
        "game_type": status.game_type,
        "completed": status.completed_at.is_some(),
        "total_rounds": status.total_rounds,
        "completed_rounds": data.by_round.len(),
        "total_matches": status.total_matches,
        "finished_matches": status.finished_matches,
        "champion": data.standings.first().map(|row| &row.player_id),
        "standings": data.standings.iter().map(|row| json!({
            "rank": row.rank,
            "player_id": row.player_id,
            "display_name": row.display_name,
            "strategy": strategy_of(&row.display_name),
            "played": row.played,
            "wins": row.wins,
            "draws": row.draws,
            "losses": row.losses,
            "technical_losses": row.technical_losses,
            "points": row.points,
            "above_next_by": tie_break_name(row.above_next_by),
        })).collect::<Vec<_>>(),
    })
}

/// `standings.csv`: the final table.
pub fn standings_csv(data: &LeagueData) -> String {
    let mut out = header(&columns::STANDINGS);
    for row in &data.standings {
        line(&mut out, &columns::standing(row));
    }
    out
}

/// `ratings.csv`: each player's points per match with its own deviation (docs/adr/0049), in the order
/// of the table, and against the next player the difference, its 95 % interval and the likelihood of
/// superiority (empty on the last line).
pub fn ratings_csv(data: &LeagueData) -> String {
    let mut out = header(&columns::LEAGUE_RATINGS);
    for (row, rated) in data.standings.iter().zip(ratings::ratings(data)) {
        line(&mut out, &columns::league_rating(row.rank, &rated));
    }
    out
}

/// `head_to_head.csv`: one line per player per opponent it met, counting every meeting (players and
/// their opponents in the table's order; the same columns as `standings.csv` where they mean the same).
pub fn head_to_head_csv(data: &LeagueData) -> String {
    let mut out = header(&columns::HEAD_TO_HEAD);
    for (player, opponent, met) in HeadToHead::new(data).pairs() {
        line(
            &mut out,
            &[
                player.player_id.clone(),
                player.display_name.clone(),
                opponent.player_id.clone(),
                opponent.display_name.clone(),
                met.played().to_string(),
                met.wins().to_string(),
                met.draws().to_string(),
                met.losses().to_string(),
                met.technical_losses().to_string(),
                met.points().to_string(),
            ],
        );
    }
    out
}

/// `standings_by_round.csv`: one line per player per completed round (long format).
pub fn standings_by_round_csv(data: &LeagueData) -> String {
    let mut out = header(&columns::STANDINGS_BY_ROUND);
    for round in &data.by_round {
        for row in &round.standings {
            line(&mut out, &columns::standing_after_round(round.round_id, row));
        }
    }
    out
}

/// `matches.csv`: one line per match, in play order.
pub fn matches_csv(data: &LeagueData) -> String {
    let mut out = header(&columns::MATCHES);
    for scheduled in data.matches() {
        line(&mut out, &columns::a_match(scheduled));
    }
    out
}

/// win, draw, technical_loss, double_forfeit; or the match's queue status while it is not finished.
pub fn outcome_name(scheduled: &ScheduledMatch) -> &'static str {
    match scheduled.result.as_ref().map(|r| r.status) {
        Some(status) => match ResultStatus::try_from(status).unwrap_or(ResultStatus::Unspecified) {
            ResultStatus::Win => "win",
            ResultStatus::Draw => "draw",
            ResultStatus::TechnicalLoss => "technical_loss",
            ResultStatus::DoubleForfeit => "double_forfeit",
            ResultStatus::Unspecified => "unknown",
        },
        None => "not_played",
    }
}

/// What the players did, from the game's own account: even_odd's choices (`P01=even P02=odd`), or
/// tic_tac_toe's final board (rows separated by `/`, `.` for an empty cell) and its number of turns.
pub fn choices_or_moves(scheduled: &ScheduledMatch) -> String {
    let Some(metadata) = scheduled.result.as_ref().and_then(|r| r.game_metadata.as_ref()) else {
        return String::new();
    };
    if let Some(Kind::StructValue(choices)) = metadata.fields.get("choices").and_then(|v| v.kind.as_ref()) {
        let mut players: Vec<_> = choices.fields.iter().collect();
        players.sort_by(|x, y| x.0.cmp(y.0));
        return players
            .into_iter()
            .map(|(player, choice)| format!("{player}={}", text(choice)))
            .collect::<Vec<_>>()
            .join(" ");
    }
    if let Some(Kind::ListValue(board)) = metadata.fields.get("final_board").and_then(|v| v.kind.as_ref()) {
        let cells: Vec<String> = board
            .values
            .iter()
            .map(|cell| match text(cell).as_str() {
                "" => ".".to_owned(),
                mark => mark.to_owned(),
            })
            .collect();
        let rows: Vec<String> = cells.chunks(3).map(|row| row.concat()).collect();
        let turns = metadata.fields.get("total_turns").map(text).unwrap_or_default();
        return format!("{} in {turns} turns", rows.join("/"));
    }
    String::new()
}

/// even_odd's drawn number; empty for other games.
pub fn drawn_number(scheduled: &ScheduledMatch) -> String {
    scheduled
        .result
        .as_ref()
        .and_then(|r| r.game_metadata.as_ref())
        .and_then(|metadata| metadata.fields.get("drawn_number"))
        .map(text)
        .unwrap_or_default()
}

fn text(value: &prost_types::Value) -> String {
    match &value.kind {
        Some(Kind::StringValue(text)) => text.clone(),
        Some(Kind::NumberValue(number)) if number.fract() == 0.0 => format!("{number:.0}"),
        Some(Kind::NumberValue(number)) => number.to_string(),
        Some(Kind::BoolValue(flag)) => flag.to_string(),
        _ => String::new(),
    }
}

/// A CSV file's first line: the column names.
fn header(columns: &[&str]) -> String {
    let mut out = String::new();
    line(
        &mut out,
        &columns.iter().map(|name| (*name).to_owned()).collect::<Vec<_>>(),
    );
    out
}

/// One CSV line: fields quoted when they hold a comma, a quote or a line break.
fn line(out: &mut String, fields: &[String]) {
    for (i, field) in fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        if field.contains([',', '"', '\n', '\r']) {
            let _ = write!(out, "\"{}\"", field.replace('"', "\"\""));
        } else {
            out.push_str(field);
        }
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_with_commas_quotes_or_newlines_are_quoted() {
        let mut out = String::new();
        line(
            &mut out,
            &[
                "plain".into(),
                "a,b".into(),
                "say \"hi\"".into(),
                "two\nlines".into(),
            ],
        );
        assert_eq!(out, "plain,\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\"\n");
    }
}
