//! `index.html`: one page with everything in the folder — who won and why, the table with its
//! tie-breaks, the charts, and every match — that opens from disk (no server, no script, no network:
//! the charts are the SVG files beside it).

use std::fmt::Write;

use super::charts::Render;
use super::data::{LeagueData, duration_ms, strategy_of};
use super::tables::{choices_or_moves, drawn_number, outcome_name, tie_break_name};

/// Matches listed on the page; a larger league's page points to matches.csv for the rest.
const LISTED_MATCHES: usize = 3_000;

pub fn index(data: &LeagueData, charts: &[Box<dyn Render + '_>]) -> String {
    let league = escape(data.league_id());
    let mut page = String::new();
    let _ = write!(
        page,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>League {league}: results</title><style>{STYLE}</style></head><body>\n\
         <h1>League {league}</h1>\n"
    );
    summary(&mut page, data);
    if let Some(note) = crate::llm_moves::note(&data.llm_moves) {
        page.push_str(&note);
    }
    standings(&mut page, data);
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
    matches(&mut page, data);
    page.push_str(
        "<p class=\"files\">Data: <a href=\"standings.json\">standings.json</a> · \
         <a href=\"standings.csv\">standings.csv</a> · <a href=\"standings_by_round.csv\">standings_by_round.csv</a> · \
         <a href=\"matches.csv\">matches.csv</a> · <a href=\"ratings.csv\">ratings.csv</a></p>\n</body></html>\n",
    );
    page
}

fn summary(page: &mut String, data: &LeagueData) {
    let status = &data.status;
    let state = if status.completed_at.is_some() {
        "completed".to_owned()
    } else {
        format!(
            "in progress: round {} of {}",
            status.current_round_id, status.total_rounds
        )
    };
    let _ = writeln!(
        page,
        "<p class=\"meta\">Game <b>{}</b> · {} players · {} rounds · {} of {} matches played · {state}</p>",
        escape(&status.game_type),
        data.standings.len(),
        status.total_rounds,
        status.finished_matches,
        status.total_matches,
    );
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
            "{} points, {} ahead of {}.",
            first.points,
            first.points - second.points,
            escape(&second.player_id)
        ),
        (Some(second), Some(rule)) => format!(
            "{} points, level with {}: ahead by {}.",
            first.points,
            escape(&second.player_id),
            rule_words(rule)
        ),
        _ => format!("{} points.", first.points),
    };
    let _ = writeln!(
        page,
        "<p class=\"champion\">{title}: <b>{}</b> ({}, {}) with {why}</p>",
        escape(&first.player_id),
        escape(&first.display_name),
        escape(&strategy_of(&first.display_name)),
    );
}

fn standings(page: &mut String, data: &LeagueData) {
    page.push_str(
        "<h2>Standings</h2>\n<p class=\"note\">3 points for a win, 1 for a draw. Players level on points are \
         ordered by head-to-head, then win rate, wins, fewer draws, and finally player id; the last column \
         says which rule put each player above the next. The rating is Glicko-2 across every completed \
         league of the deployment, ± two deviations.</p>\n<table><thead><tr><th>#</th><th>player</th>\
         <th>name</th><th>strategy</th><th>played</th><th>W</th><th>D</th><th>L</th><th>TL</th>\
         <th>points</th><th>above the next by</th><th>rating</th></tr></thead><tbody>\n",
    );
    for row in &data.standings {
        let rule = tie_break_name(row.above_next_by).map_or(String::new(), rule_words);
        let rating = data.ratings.get(&row.player_id).map_or(String::new(), |rated| {
            let (rating, error) = rated.shown();
            format!("{rating} ± {error}")
        });
        let _ = writeln!(
            page,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td><b>{}</b></td><td>{rule}</td><td>{rating}</td></tr>",
            row.rank,
            escape(&row.player_id),
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

fn matches(page: &mut String, data: &LeagueData) {
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
            "<details><summary>Round {} ({} matches{byes})</summary><table><thead><tr><th>match</th>\
             <th>players</th><th>choices / moves</th><th>number</th><th>outcome</th><th>winner</th>\
             <th>reason</th><th>duration</th></tr></thead><tbody>",
            round.round_id,
            round.matches.len()
        );
        for scheduled in round.matches.iter().take(LISTED_MATCHES - listed) {
            let result = scheduled.result.as_ref();
            let mut outcome = outcome_name(scheduled).replace('_', " ");
            if !scheduled.technical_loss_cause.is_empty() {
                let _ = write!(outcome, " ({})", scheduled.technical_loss_cause);
            }
            let _ = writeln!(
                page,
                "<tr><td>{}</td><td>{} – {}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&scheduled.match_id),
                escape(&scheduled.player_a_id),
                escape(&scheduled.player_b_id),
                escape(&choices_or_moves(scheduled)),
                escape(&drawn_number(scheduled)),
                escape(&outcome),
                escape(result.map_or("", |r| r.winner_player_id.as_str())),
                escape(result.map_or("", |r| r.reason.as_str())),
                duration_ms(scheduled).map_or(String::new(), |ms| format!("{ms} ms")),
            );
            listed += 1;
        }
        page.push_str("</tbody></table></details>\n");
    }
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
.files{font-size:.85rem;color:#555}details{margin:.3rem 0}summary{cursor:pointer}";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_escaped() {
        assert_eq!(
            escape("<b>\"Tom & Jerry's\"</b>"),
            "&lt;b&gt;&quot;Tom &amp; Jerry&#39;s&quot;&lt;/b&gt;"
        );
    }
}
