//! `players/<id>.html`, a page per player of the results folder, and where each is: the player's line
//! of the table, its rating beside its neighbours', its head-to-head, and every match it played.

use std::fmt::Write;

use super::*;

impl Pages<'_> {
    /// The players in the table's order, each with its page's file name under `players/`.
    pub fn player_files(&self) -> impl Iterator<Item = (usize, String)> + '_ {
        self.data
            .standings
            .iter()
            .enumerate()
            .map(|(i, row)| (i, player_file(&row.player_id)))
    }

    /// `players/<id>.html`: the player at `index` in the table — its line of the table, its rating and
    /// its neighbours', its head-to-head against every opponent, and every match it played.
    pub fn player(&self, index: usize) -> String {
        let data = self.data;
        let Some(row) = data.standings.get(index) else {
            return String::new();
        };
        let id = escape(&row.player_id);
        let mut page = head(&format!("{id} in league {}", escape(data.league_id())));
        let _ = writeln!(
            page,
            "<p class=\"files\"><a href=\"../index.html\">League {}</a></p>\n<h1>{id} <span class=\"name\">{}</span></h1>\n\
             <p class=\"meta\">Strategy <b>{}</b> · rank <b>{}</b> of {} · <b>{}</b> · {}, {}, {}, {} · \
             {}</p>",
            escape(data.league_id()),
            escape(&row.display_name),
            escape(&strategy_of(&row.display_name)),
            row.rank,
            data.standings.len(),
            counted(u64::from(row.points), "point", "points"),
            counted(u64::from(row.wins), "win", "wins"),
            counted(u64::from(row.draws), "draw", "draws"),
            counted(u64::from(row.losses), "loss", "losses"),
            counted(
                u64::from(row.technical_losses),
                "technical loss",
                "technical losses"
            ),
            counted(u64::from(row.played), "match played", "matches played"),
        );
        self.rating_section(&mut page, index);
        self.head_to_head_section(&mut page, index);
        self.matches_section(&mut page, &row.player_id);
        page.push_str("</body></html>\n");
        page
    }

    /// The player's rating and the comparison with the players just above and below it.
    fn rating_section(&self, page: &mut String, index: usize) {
        if let Some(rated) = self.ratings.get(index) {
            let _ = write!(
                page,
                "<h2>Rating</h2>\n<p class=\"rating\">{} points per match ({} ± its deviation; the index \
                 page says how it is computed).</p>\n<table id=\"neighbours\"><thead><tr><th>neighbour</th>\
                 <th>upper ahead by</th><th>95 % interval</th><th>LOS of the upper</th></tr></thead><tbody>\n",
                rating_text(rated),
                escape(&rated.player_id),
            );
            if let Some(above) = index.checked_sub(1).and_then(|i| self.ratings.get(i)) {
                // The comparison is the upper player's: how far the one above is ahead of this one.
                let _ = writeln!(
                    page,
                    "<tr><td>{} above (#{index})</td>{}</tr>",
                    player_link(&above.player_id, "../"),
                    comparison_cells(above)
                );
            }
            if let Some(below) = self.ratings.get(index + 1) {
                let _ = writeln!(
                    page,
                    "<tr><td>{} below (#{})</td>{}</tr>",
                    player_link(&below.player_id, "../"),
                    index + 2,
                    comparison_cells(rated)
                );
            }
            page.push_str("</tbody></table>\n");
        }
    }

    /// The player's record against each opponent it met.
    fn head_to_head_section(&self, page: &mut String, index: usize) {
        let data = self.data;
        let _ = writeln!(
            page,
            "<h2>Head-to-head</h2>\n<table id=\"player-head-to-head\"><thead><tr><th>opponent</th><th>name\
             </th><th>rank</th><th>met</th><th>W–D–L</th><th>points</th><th>meetings</th></tr></thead><tbody>"
        );
        for (opponent, met) in self.head_to_head.of(index) {
            let rank = data
                .standings
                .iter()
                .find(|r| r.player_id == opponent.player_id)
                .map_or(0, |r| r.rank);
            let _ = writeln!(
                page,
                "<tr><td>{}</td><td>{}</td><td>{rank}</td><td>{}</td><td class=\"{}\">{}</td><td>{} of {}</td><td>{}</td></tr>",
                player_link(&opponent.player_id, "../"),
                escape(&opponent.display_name),
                met.played(),
                share_class(met),
                met.record(),
                met.points(),
                3 * met.played(),
                escape(&meetings_words(met)),
            );
        }
        page.push_str("</tbody></table>\n");
    }

    /// Every match the player played (or was scheduled for), its seat and result.
    fn matches_section(&self, page: &mut String, player_id: &str) {
        let _ = writeln!(
            page,
            "<h2>Matches</h2>\n<table id=\"player-matches\"><thead><tr><th>round</th><th>match</th><th>opponent\
             </th><th>seat</th><th>{}</th><th>result</th><th>points</th><th>reason</th></tr></thead><tbody>",
            self.game.play_heading()
        );
        for scheduled in self
            .data
            .matches()
            .filter(|m| m.player_a_id == player_id || m.player_b_id == player_id)
        {
            let (seat, opponent) = if scheduled.player_a_id == player_id {
                ("A", &scheduled.player_b_id)
            } else {
                ("B", &scheduled.player_a_id)
            };
            let mark = mark_for(scheduled, player_id);
            let _ = writeln!(
                page,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{seat}</td><td>{}</td><td class=\"{}\">{}</td><td>{}</td><td>{}</td></tr>",
                scheduled.round_id,
                escape(&scheduled.match_id),
                player_link(opponent, "../"),
                self.game.play_html(scheduled),
                mark.map_or("", mark_class),
                mark.map_or_else(|| outcome_text(scheduled), |m| mark_words(m).to_owned()),
                mark.map_or(String::new(), |m| crate::head_to_head::mark_points(m).to_string()),
                escape(scheduled.result.as_ref().map_or("", |r| r.reason.as_str())),
            );
        }
        page.push_str("</tbody></table>\n");
    }
}

/// Where a player's page is, from the league's folder: `players/<id>.html`. A player id is letters,
/// digits, `_` and `-` (`P07`); any other id is written as a results folder writes an odd league id
/// (`~` and hex), so no id leaves the folder.
pub fn player_file(player_id: &str) -> String {
    let plain = !player_id.is_empty()
        && player_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'));
    if plain {
        format!("players/{player_id}.html")
    } else {
        format!("players/{}.html", crate::folder_name(player_id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn player_pages_stay_in_the_players_folder() {
        assert_eq!(player_file("P07"), "players/P07.html");
        assert_eq!(player_file("../x"), "players/~~2e~2e~2fx.html");
        assert_eq!(player_file(""), "players/~.html");
    }
}
