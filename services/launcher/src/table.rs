//! The final standings as a table for the terminal, and under it, after a blank line, which tie-break
//! rule put each player above another level on points.

use std::fmt::Write;

use league_proto::v2::StandingRow;

pub fn render(standings: &[StandingRow]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>4}  {:<6} {:<24} {:>6} {:>4} {:>4} {:>4} {:>4} {:>6}",
        "rank", "player", "name", "played", "W", "D", "L", "TL", "points"
    );
    for row in standings {
        let _ = writeln!(
            out,
            "{:>4}  {:<6} {:<24} {:>6} {:>4} {:>4} {:>4} {:>4} {:>6}",
            row.rank,
            row.player_id,
            truncate(&row.display_name, 24),
            row.played,
            row.wins,
            row.draws,
            row.losses,
            row.technical_losses,
            row.points
        );
    }
    let ties: Vec<String> = standings
        .windows(2)
        .filter_map(
            |pair| match league_v2::convert::tie_break_name(pair[0].above_next_by) {
                Some("points") | None => None,
                Some(rule) => Some(format!(
                    "{} above {} by {}",
                    pair[0].player_id,
                    pair[1].player_id,
                    rule.replace('_', " ")
                )),
            },
        )
        .collect();
    if !ties.is_empty() {
        let shown = ties.len().min(MAX_TIES_SHOWN);
        let _ = write!(out, "\nLevel on points: {}", ties[..shown].join("; "));
        if ties.len() > shown {
            // A big league has a tie on nearly every row: the rest is in the results (`tie_break`).
            let _ = write!(out, "; and {} more (results: standings.csv)", ties.len() - shown);
        }
        let _ = writeln!(out);
    }
    out
}

/// Tied pairs explained under the table; past this, a count (a line a terminal can still show).
const MAX_TIES_SHOWN: usize = 8;

fn truncate(text: &str, width: usize) -> String {
    text.chars().take(width).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use league_proto::v2::TieBreak;

    #[test]
    fn players_level_on_points_are_explained_under_the_table() {
        let row = |rank: u32, id: &str, points: u32, rule: TieBreak| StandingRow {
            rank,
            player_id: id.into(),
            points,
            above_next_by: rule as i32,
            ..StandingRow::default()
        };
        let rows = [
            row(1, "P03", 9, TieBreak::Points),
            row(2, "P01", 6, TieBreak::HeadToHead),
            row(3, "P02", 6, TieBreak::Unspecified),
        ];
        let table = render(&rows);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 6, "{table}");
        assert_eq!(lines[4], "", "a blank line ends the table");
        assert_eq!(lines[5], "Level on points: P01 above P02 by head to head");
    }

    #[test]
    fn many_tied_pairs_are_counted_not_listed() {
        let rows: Vec<StandingRow> = (1..=13)
            .map(|n| StandingRow {
                rank: n,
                player_id: format!("P{n:02}"),
                above_next_by: TieBreak::HeadToHead as i32,
                ..StandingRow::default()
            })
            .collect();
        let table = render(&rows);
        let last = table.lines().last().unwrap_or_default();
        assert_eq!(last.matches(" by head to head").count(), MAX_TIES_SHOWN, "{last}");
        assert!(last.ends_with("; and 4 more (results: standings.csv)"), "{last}");
    }

    #[test]
    fn one_line_per_player_under_a_header() {
        let rows = vec![StandingRow {
            rank: 1,
            player_id: "P01".into(),
            display_name: "bot-random".into(),
            played: 3,
            wins: 2,
            draws: 1,
            losses: 0,
            technical_losses: 0,
            points: 7,
            ..StandingRow::default()
        }];
        let table = render(&rows);
        assert_eq!(table.lines().count(), 2);
        assert!(
            table
                .lines()
                .nth(1)
                .is_some_and(|line| line.contains("P01") && line.trim_end().ends_with('7'))
        );
    }
}
