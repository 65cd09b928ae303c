//! Each game as the report's pages show it: its own words for a match's play and a picture of how the
//! match went (even_odd: the two choices and the drawn number; tic_tac_toe: the final board with its
//! winning line). A game not listed here is shown by its result's reason alone.

use std::fmt::Write;

use league_domain::GameType;
use league_proto::v2::ScheduledMatch;
use prost_types::value::Kind;

use crate::html::{counted, escape};

/// A game as the report draws it: one the league knows, or another it shows by its reasons alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Game {
    Known(GameType),
    Other,
}

impl Game {
    pub fn of(game_type: &str) -> Game {
        GameType::parse(game_type).map_or(Game::Other, Game::Known)
    }

    /// The heading of the column that shows a match's play.
    pub fn play_heading(self) -> &'static str {
        match self {
            Game::Known(GameType::EvenOdd) => "choices and drawn number",
            Game::Known(GameType::TicTacToe) => "final board",
            Game::Other => "play",
        }
    }

    /// A match's play as HTML: empty until it is finished, or when the game recorded nothing to draw.
    pub fn play_html(self, scheduled: &ScheduledMatch) -> String {
        let Some(metadata) = scheduled.result.as_ref().and_then(|r| r.game_metadata.as_ref()) else {
            return String::new();
        };
        let field = |name: &str| metadata.fields.get(name).and_then(|v| v.kind.as_ref());
        match self {
            Game::Known(GameType::EvenOdd) => {
                let mut html = String::new();
                if let Some(Kind::StructValue(choices)) = field("choices") {
                    for player in [&scheduled.player_a_id, &scheduled.player_b_id] {
                        if let Some(Some(Kind::StringValue(choice))) =
                            choices.fields.get(player.as_str()).map(|v| v.kind.as_ref())
                        {
                            let _ = write!(
                                html,
                                "<span class=\"choice\">{} chose <b>{}</b></span> ",
                                escape(player),
                                escape(choice)
                            );
                        }
                    }
                }
                if let Some(Kind::NumberValue(drawn)) = field("drawn_number") {
                    let parity = if *drawn as i64 % 2 == 0 { "even" } else { "odd" };
                    let _ = write!(
                        html,
                        "<span class=\"drawn\">drew <b>{drawn:.0}</b> ({parity})</span>"
                    );
                }
                html
            }
            Game::Known(GameType::TicTacToe) => {
                let Some(Kind::ListValue(board)) = field("final_board") else {
                    return String::new();
                };
                let winning: Vec<usize> = match field("winning_line") {
                    Some(Kind::ListValue(line)) => line
                        .values
                        .iter()
                        .filter_map(|cell| match cell.kind {
                            Some(Kind::NumberValue(cell)) => Some(cell as usize),
                            _ => None,
                        })
                        .collect(),
                    _ => vec![],
                };
                let mut html = String::from("<table class=\"board\" aria-label=\"final board\">");
                for (row, cells) in board.values.chunks(3).enumerate() {
                    html.push_str("<tr>");
                    for (column, cell) in cells.iter().enumerate() {
                        let mark = match &cell.kind {
                            Some(Kind::StringValue(mark)) => mark.as_str(),
                            _ => "",
                        };
                        let class = if winning.contains(&(row * 3 + column)) {
                            " class=\"line\""
                        } else {
                            ""
                        };
                        let _ = write!(html, "<td{class}>{}</td>", escape(mark));
                    }
                    html.push_str("</tr>");
                }
                html.push_str("</table>");
                if let Some(Kind::NumberValue(turns)) = field("total_turns") {
                    let _ = write!(
                        html,
                        "<span class=\"turns\">{}</span>",
                        counted(*turns as u64, "turn", "turns")
                    );
                }
                html
            }
            Game::Other => String::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use league_proto::v2::MatchResult;
    use prost_types::{ListValue, Struct, Value};

    use super::*;

    fn value(kind: Kind) -> Value {
        Value { kind: Some(kind) }
    }

    fn finished(fields: Vec<(&str, Kind)>) -> ScheduledMatch {
        ScheduledMatch {
            player_a_id: "P01".into(),
            player_b_id: "P02".into(),
            result: Some(MatchResult {
                game_metadata: Some(Struct {
                    fields: fields
                        .into_iter()
                        .map(|(k, v)| (k.to_owned(), value(v)))
                        .collect(),
                }),
                ..MatchResult::default()
            }),
            ..ScheduledMatch::default()
        }
    }

    #[test]
    fn even_odd_shows_both_choices_and_the_number() {
        let choices = Struct {
            fields: [
                ("P01".to_owned(), value(Kind::StringValue("even".into()))),
                ("P02".to_owned(), value(Kind::StringValue("odd".into()))),
            ]
            .into(),
        };
        let html = Game::Known(GameType::EvenOdd).play_html(&finished(vec![
            ("choices", Kind::StructValue(choices)),
            ("drawn_number", Kind::NumberValue(7.0)),
        ]));
        assert_eq!(
            html,
            "<span class=\"choice\">P01 chose <b>even</b></span> <span class=\"choice\">P02 chose \
             <b>odd</b></span> <span class=\"drawn\">drew <b>7</b> (odd)</span>"
        );
    }

    #[test]
    fn tic_tac_toe_draws_the_board_and_marks_the_winning_line() {
        let cells = ["X", "O", "", "O", "X", "", "", "", "X"];
        let board = ListValue {
            values: cells
                .iter()
                .map(|c| value(Kind::StringValue((*c).into())))
                .collect(),
        };
        let line = ListValue {
            values: [0.0, 4.0, 8.0]
                .iter()
                .map(|&c| value(Kind::NumberValue(c)))
                .collect(),
        };
        let html = Game::Known(GameType::TicTacToe).play_html(&finished(vec![
            ("final_board", Kind::ListValue(board)),
            ("winning_line", Kind::ListValue(line)),
            ("total_turns", Kind::NumberValue(5.0)),
        ]));
        assert!(html.starts_with(
            "<table class=\"board\" aria-label=\"final board\"><tr><td class=\"line\">X</td><td>O</td><td></td></tr>"
        ));
        assert_eq!(html.matches("class=\"line\"").count(), 3);
        assert!(
            html.ends_with("</table><span class=\"turns\">5 turns</span>"),
            "{html}"
        );
        assert_eq!(Game::Known(GameType::TicTacToe).play_heading(), "final board");
        assert_eq!(
            Game::of(GameType::EvenOdd.as_str()).play_heading(),
            "choices and drawn number"
        );
    }
}
