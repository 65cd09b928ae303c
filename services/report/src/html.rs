//! The folder's pages: `index.html` with everything — who won and why, the table with its tie-breaks,
//! the ratings, the head-to-head table, the charts, and every match — and `players/<id>.html`, one page
//! per player with its matches, its head-to-head and its rating. They open from disk (no server, no
//! script, no network: the charts are the SVG files beside them). The player pages are in
//! `html/player.rs`.

use std::fmt::Write;

use league_proto::v2::ScheduledMatch;

use crate::charts::Render;
use crate::data::{LeagueData, Mark, duration_ms, mark_for, strategy_of};
use crate::games::Game;
use crate::head_to_head::{HeadToHead, Meetings};
use crate::ratings::{self, Rated};
use crate::tables::outcome_name;
use league_v2::convert::tie_break_name;

mod player;
pub use player::player_file;

/// Matches listed on the page; a larger league's page points to matches.csv for the rest.
const LISTED_MATCHES: usize = 3_000;

/// Up to this many players the head-to-head table is open on the page; beyond, it is folded.
const OPEN_HEAD_TO_HEAD: usize = 20;

/// What every page of a league shows, computed once.
#[derive(Debug)]
pub struct Pages<'a> {
    data: &'a LeagueData,
    game: Game,
    head_to_head: HeadToHead,
    ratings: Vec<Rated>,
}

impl<'a> Pages<'a> {
    pub fn new(data: &'a LeagueData) -> Self {
        Self {
            data,
            game: Game::of(&data.status.game_type),
            head_to_head: HeadToHead::new(data),
            ratings: ratings::ratings(data),
        }
    }

    /// `index.html`.
    pub fn index(&self, charts: &[Box<dyn Render + '_>]) -> String {
        let data = self.data;
        let league = escape(data.league_id());
        let mut page = head(&format!("League {league}: results"));
        let _ = writeln!(page, "<h1>League {league}</h1>");
        self.summary(&mut page);
        if let Some(note) = crate::llm_moves::note(&data.llm_moves) {
            page.push_str(&note);
        }
        self.standings(&mut page);
        self.ratings(&mut page);
        self.head_to_head(&mut page);
        page.push_str("<h2>Charts</h2>\n");
        for chart in charts {
            let name = chart.name();
            let (width, height) = chart.size();
            let _ = writeln!(
                page,
                "<figure><figcaption>{}</figcaption><a href=\"{name}.svg\"><img src=\"{name}.svg\" \
                 width=\"{width}\" height=\"{height}\" alt=\"{}\"></a>\
                 <div class=\"files\"><a href=\"{name}.png\">PNG</a> · <a href=\"{name}.svg\">SVG</a></div></figure>",
                escape(chart.title()),
                escape(chart.title()),
            );
        }
        self.matches(&mut page);
        page.push_str(
            "<p class=\"files\">Data: <a href=\"standings.json\">standings.json</a> · \
             <a href=\"standings.csv\">standings.csv</a> · <a href=\"standings_by_round.csv\">standings_by_round.csv</a> · \
             <a href=\"matches.csv\">matches.csv</a> · <a href=\"head_to_head.csv\">head_to_head.csv</a> · \
             <a href=\"ratings.csv\">ratings.csv</a> · evidence: every match's transcript in \
             <a href=\"transcripts/\">transcripts/</a>, <a href=\"provenance.json\">provenance.json</a>, \
             <a href=\"manifest.sha256\">manifest.sha256</a> (<code>league verify</code> checks them)</p>\n</body></html>\n",
        );
        page
    }

    fn summary(&self, page: &mut String) {
        let data = self.data;
        let status = &data.status;
        let round = format!("round {} of {}", status.current_round_id, status.total_rounds);
        let state = if status.completed_at.is_some() {
            "completed".to_owned()
        } else if status.cancelled_at.is_some() {
            format!("cancelled in {round}")
        } else if data.stopped {
            // Read from a database nothing runs: its run was interrupted or killed.
            format!("stopped in {round} (its run was interrupted)")
        } else {
            format!("in progress: {round}")
        };
        let _ = writeln!(
            page,
            "<p class=\"meta\">Game <b>{}</b> · {} · {} · {} of {} matches played · {state}</p>",
            escape(&status.game_type),
            counted(data.standings.len() as u64, "player", "players"),
            counted(u64::from(status.total_rounds), "round", "rounds"),
            status.finished_matches,
            status.total_matches,
        );
        if let Some(luck) = ratings::luck(data) {
            let _ = writeln!(
                page,
                "<p class=\"luck\" id=\"luck\">{}</p>",
                escape(&luck.sentence(&status.game_type))
            );
        }
        let Some(first) = data.standings.first() else {
            return;
        };
        let title = if status.completed_at.is_some() {
            "Champion"
        } else {
            "Leader"
        };
        let why = match (data.standings.get(1), tie_break_name(first.above_next_by)) {
            (Some(second), Some("points")) => format!(
                "{}, {} ahead of {}.",
                counted(u64::from(first.points), "point", "points"),
                first.points - second.points,
                escape(&second.player_id)
            ),
            (Some(second), Some(rule)) => format!(
                "{}, level with {}: ahead by {}.",
                counted(u64::from(first.points), "point", "points"),
                escape(&second.player_id),
                rule_words(rule)
            ),
            _ => format!("{}.", counted(u64::from(first.points), "point", "points")),
        };
        let _ = writeln!(
            page,
            "<p class=\"champion\">{title}: <b>{}</b> ({}, {}) with {why}</p>",
            player_link(&first.player_id, ""),
            escape(&first.display_name),
            escape(&strategy_of(&first.display_name)),
        );
    }

    fn standings(&self, page: &mut String) {
        page.push_str(
            "<h2>Standings</h2>\n<p class=\"note\">3 points for a win, 1 for a draw. Players level on points \
             are ordered by head-to-head, then win rate, wins, fewer draws, and finally player id; the last \
             column says which rule put each player above the next. Each player's page has its matches, \
             head-to-head and rating.</p>\n<table id=\"standings\"><thead><tr><th>#</th><th>player</th>\
             <th>name</th><th>strategy</th><th>played</th><th>W</th><th>D</th><th>L</th><th>TL</th>\
             <th>points</th><th>above the next by</th></tr></thead><tbody>\n",
        );
        for row in &self.data.standings {
            let rule = tie_break_name(row.above_next_by).map_or(String::new(), rule_words);
            let _ = writeln!(
                page,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
                 <td>{}</td><td><b>{}</b></td><td>{rule}</td></tr>",
                row.rank,
                player_link(&row.player_id, ""),
                escape(&row.display_name),
                escape(&strategy_of(&row.display_name)),
                row.played,
                row.wins,
                row.draws,
                row.losses,
                row.technical_losses,
                row.points,
            );
        }
        page.push_str("</tbody></table>\n");
    }

    fn ratings(&self, page: &mut String) {
        page.push_str(
            "<h2>Ratings</h2>\n<p class=\"note\">A player's rating is its points per match in this league \
             (3 for a win, 1 for a draw, as the table counts them), ± its own deviation: the standard error \
             from its own results, so steady results are surer than mixed ones. Against the next player: \
             the difference, its 95 % interval, and the likelihood of superiority (LOS), the chance that \
             the upper player is truly the stronger. An interval that spans 0 (LOS well under 95 %) means \
             the two are not told apart by this league.</p>\n<table id=\"ratings\"><thead><tr><th>#</th>\
             <th>player</th><th>name</th><th>matches</th><th>points per match</th><th>ahead of the next by</th>\
             <th>95 % interval</th><th>LOS</th></tr></thead><tbody>\n",
        );
        for (row, rated) in self.data.standings.iter().zip(&self.ratings) {
            let _ = writeln!(
                page,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>{}</tr>",
                row.rank,
                player_link(&rated.player_id, ""),
                escape(&rated.display_name),
                rated.rating.matches,
                rating_text(rated),
                comparison_cells(rated),
            );
        }
        page.push_str("</tbody></table>\n");
    }

    fn head_to_head(&self, page: &mut String) {
        let players = &self.head_to_head.players;
        let open = if players.len() <= OPEN_HEAD_TO_HEAD {
            " open"
        } else {
            ""
        };
        let _ = writeln!(
            page,
            "<h2>Head-to-head</h2>\n<p class=\"note\">Each cell is the row player's wins–draws–losses \
             against the column player over all their meetings ({}), losses including technical ones; \
             green when the row player took more than half of the meetings' points, yellow for a third to a half, red for less. Columns are numbered by \
             final rank. head_to_head.csv has the same counts, technical losses apart.</p>\n\
             <details{open}><summary>The table ({} by {})</summary><div class=\"scroll\">\
             <table class=\"h2h\" id=\"head-to-head\"><thead><tr><th></th>",
            match self.head_to_head.most_meetings() {
                0 | 1 => "one per pair".to_owned(),
                n => format!("up to {n} per pair"),
            },
            players.len(),
            players.len(),
        );
        for (i, player) in players.iter().enumerate() {
            let _ = write!(
                page,
                "<th title=\"{}\">{}</th>",
                escape(&format!("{} {}", player.player_id, player.display_name)),
                i + 1
            );
        }
        page.push_str("</tr></thead><tbody>\n");
        for (row, player) in players.iter().enumerate() {
            let _ = write!(
                page,
                "<tr><th>{} {} <span class=\"name\">{}</span></th>",
                row + 1,
                player_link(&player.player_id, ""),
                escape(&player.display_name)
            );
            for (column, opponent) in players.iter().enumerate() {
                match self.head_to_head.between(row, column) {
                    Some(met) => {
                        let _ = write!(
                            page,
                            "<td class=\"{}\" title=\"{}\">{}</td>",
                            share_class(met),
                            escape(&format!(
                                "{} against {}: {}",
                                player.player_id,
                                opponent.player_id,
                                meetings_words(met)
                            )),
                            met.record()
                        );
                    }
                    None if row == column => page.push_str("<td class=\"self\"></td>"),
                    None => page.push_str("<td></td>"),
                }
            }
            page.push_str("</tr>\n");
        }
        page.push_str("</tbody></table></div></details>\n");
    }

    fn matches(&self, page: &mut String) {
        let data = self.data;
        let total = data.matches().count();
        let _ = writeln!(page, "<h2>Matches</h2>");
        if total > LISTED_MATCHES {
            let _ = writeln!(
                page,
                "<p class=\"note\">The first {LISTED_MATCHES} of {total} matches; matches.csv has them all.</p>"
            );
        }
        let mut listed = 0;
        for round in &data.rounds {
            if listed >= LISTED_MATCHES {
                break;
            }
            let byes = if round.bye_player_ids.is_empty() {
                String::new()
            } else {
                format!(" · bye: {}", escape(&round.bye_player_ids.join(", ")))
            };
            let _ = writeln!(
                page,
                "<details><summary>Round {} ({}{byes})</summary><table><thead><tr><th>match</th>\
                 <th>players</th><th>{}</th><th>outcome</th><th>winner</th><th>reason</th><th>duration</th>\
                 </tr></thead><tbody>",
                round.round_id,
                counted(round.matches.len() as u64, "match", "matches"),
                self.game.play_heading(),
            );
            for scheduled in round.matches.iter().take(LISTED_MATCHES - listed) {
                let result = scheduled.result.as_ref();
                let _ = writeln!(
                    page,
                    "<tr><td>{}</td><td>{} – {}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    escape(&scheduled.match_id),
                    player_link(&scheduled.player_a_id, ""),
                    player_link(&scheduled.player_b_id, ""),
                    self.game.play_html(scheduled),
                    escape(&outcome_text(scheduled)),
                    escape(result.map_or("", |r| r.winner_player_id.as_str())),
                    escape(result.map_or("", |r| r.reason.as_str())),
                    duration_ms(scheduled).map_or(String::new(), |ms| format!("{ms} ms")),
                );
                listed += 1;
            }
            page.push_str("</tbody></table></details>\n");
        }
    }
}

/// The start of a page, up to its body.
fn head(title: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title}</title><style>{STYLE}</style></head><body>\n"
    )
}

/// A link to the player's page; `root` leads from the linking page to the league's folder.
fn player_link(player_id: &str, root: &str) -> String {
    format!(
        "<a href=\"{root}{}\">{}</a>",
        escape(&player_file(player_id)),
        escape(player_id)
    )
}

fn rating_text(rated: &Rated) -> String {
    format!(
        "{:.2} ± {:.2}",
        rated.rating.points_per_match, rated.rating.deviation
    )
}

/// The difference, interval and LOS cells of `rated` against the next player (empty for the last).
fn comparison_cells(rated: &Rated) -> String {
    match &rated.above_next {
        Some(c) => format!(
            "<td>{:+.2}</td><td>{:+.2} to {:+.2}</td><td>{:.0} %</td>",
            c.difference,
            c.low,
            c.high,
            100.0 * c.los
        ),
        None => "<td></td><td></td><td></td>".to_owned(),
    }
}

/// A pair's meetings in words: `2 meetings: win, then loss (technical)`.
fn meetings_words(met: &Meetings) -> String {
    let marks: Vec<&str> = met.marks.iter().map(|&m| mark_words(m)).collect();
    format!(
        "{}: {}",
        counted(u64::from(met.played()), "meeting", "meetings"),
        marks.join(", then ")
    )
}

fn mark_words(mark: Mark) -> &'static str {
    match mark {
        Mark::Win => "win",
        Mark::Draw => "draw",
        Mark::Loss => "loss",
        Mark::TechnicalLoss => "technical loss",
    }
}

fn mark_class(mark: Mark) -> &'static str {
    match mark {
        Mark::Win => "win",
        Mark::Draw => "draw",
        Mark::Loss | Mark::TechnicalLoss => "loss",
    }
}

/// A head-to-head cell's colour class: the share of the meetings' points the row player took.
fn share_class(met: &Meetings) -> &'static str {
    let most = 3 * met.played();
    // More than half the points: ahead; at least a draw's share (a third): level-ish; less: behind.
    match met.points() {
        _ if most == 0 => "",
        p if 2 * p > most => "win",
        p if 3 * p >= most => "draw",
        _ => "loss",
    }
}

/// A match's outcome: win, draw, technical loss (with its cause), double forfeit, or where it is.
fn outcome_text(scheduled: &ScheduledMatch) -> String {
    let mut outcome = outcome_name(scheduled).replace('_', " ");
    if !scheduled.technical_loss_cause.is_empty() {
        let _ = write!(outcome, " ({})", scheduled.technical_loss_cause);
    }
    outcome
}

/// `n` and its noun, singular for exactly one: "1 loss", "0 losses", "2 losses".
pub fn counted(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn rule_words(rule: &str) -> String {
    match rule {
        "head_to_head" => "head-to-head",
        "win_rate" => "win rate",
        "fewer_draws" => "fewer draws",
        "player_id" => "player id",
        other => other,
    }
    .to_owned()
}

pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:1250px;padding:0 1rem;color:#222}\
table{border-collapse:collapse;margin:.5rem 0 1.5rem;font-size:.9rem}th,td{padding:.25rem .6rem;border-bottom:1px solid #ddd;text-align:left}\
th{background:#f3f3f3}.champion{font-size:1.3rem}.meta,.note{color:#555}figure{margin:1.5rem 0}\
figcaption{font-weight:600;margin-bottom:.4rem}img{max-width:100%;height:auto;border:1px solid #eee}\
.files{font-size:.85rem;color:#555}details{margin:.3rem 0}summary{cursor:pointer}\
.luck{background:#fff8e1;border-left:4px solid #f0b428;padding:.5rem .8rem}.name{color:#555;font-weight:normal}\
.scroll{overflow-x:auto}.h2h td,.h2h th{padding:.15rem .3rem;font-size:.8rem;white-space:nowrap;text-align:center}\
.h2h tbody th{text-align:left;background:#fafafa;position:sticky;left:0}td.win{background:#d3f0da}td.draw{background:#fcefc7}\
td.loss{background:#f8d4d4}td.self{background:#ddd}.board{border-collapse:collapse;display:inline-table;margin:0 .4rem 0 0;vertical-align:middle}\
.board td{width:1.3rem;height:1.3rem;border:1px solid #999;text-align:center;font-weight:700;padding:0}\
.board td.line{background:#d3f0da}.turns{color:#555;font-size:.8rem}.choice{margin-right:.5rem}";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_is_singular_everything_else_plural() {
        assert_eq!(counted(1, "loss", "losses"), "1 loss");
        assert_eq!(counted(0, "loss", "losses"), "0 losses");
        assert_eq!(counted(2, "match", "matches"), "2 matches");
    }

    #[test]
    fn names_are_escaped() {
        assert_eq!(
            escape("<b>\"Tom & Jerry's\"</b>"),
            "&lt;b&gt;&quot;Tom &amp; Jerry&#39;s&quot;&lt;/b&gt;"
        );
    }
}
