//! The final standings as a table for the terminal.

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
    out
}

fn truncate(text: &str, width: usize) -> String {
    text.chars().take(width).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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
