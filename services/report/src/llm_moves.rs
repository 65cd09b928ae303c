//! How a league's `llm` bots decided their moves, as `league run` read them from its player host at
//! its end (the launcher's `llm_bots`), said three ways: a line in the run's summary, `llm_moves.csv` in
//! the results folder and a note on its page. A result credited to `llm` includes the moves its
//! fallback (adaptive) made; these say how many.

use std::collections::BTreeMap;
use std::fmt::Write;

use league_player::{Decider, LlmMoves};

use crate::columns;

/// Moves by the model and by the fallback over all the bots, with the fallbacks by reason.
fn totals(moves: &BTreeMap<String, LlmMoves>) -> LlmMoves {
    let mut total = LlmMoves::default();
    for counted in moves.values() {
        for (decider, count) in &counted.0 {
            *total.0.entry(*decider).or_default() += count;
        }
    }
    total
}

/// The run summary's line, e.g. `LLM moves: 30 by the model, 18 by the fallback (adaptive): slow 18`;
/// None without `llm` bots.
pub fn summary_line(moves: &BTreeMap<String, LlmMoves>) -> Option<String> {
    if moves.is_empty() {
        return None;
    }
    let total = totals(moves);
    let reasons: Vec<String> = Decider::ALL
        .into_iter()
        .filter(|decider| *decider != Decider::Model && total.of(*decider) > 0)
        .map(|decider| format!("{} {}", decider.reason(), total.of(decider)))
        .collect();
    let mut line = format!(
        "LLM moves of {} bot{}: {} by the model, {} by the fallback (adaptive)",
        moves.len(),
        if moves.len() == 1 { "" } else { "s" },
        total.of(Decider::Model),
        total.fallbacks()
    );
    if !reasons.is_empty() {
        let _ = write!(line, ": {}", reasons.join(", "));
    }
    Some(line)
}

/// `llm_moves.csv`: one line per `llm` bot, its moves by who decided them. `names` gives each player's
/// display name.
pub fn csv(moves: &BTreeMap<String, LlmMoves>, names: &BTreeMap<String, String>) -> anyhow::Result<String> {
    let mut writer = csv::Writer::from_writer(vec![]);
    writer.write_record(columns::LLM_MOVES)?;
    for (player_id, counted) in moves {
        let mut row = vec![
            player_id.clone(),
            names.get(player_id).cloned().unwrap_or_default(),
            (counted.of(Decider::Model) + counted.fallbacks()).to_string(),
        ];
        row.extend(Decider::ALL.map(|decider| counted.of(decider).to_string()));
        writer.write_record(&row)?;
    }
    Ok(String::from_utf8(writer.into_inner()?)?)
}

/// The results page's note: how many of the `llm` bots' moves the fallback made, and why.
pub fn note(moves: &BTreeMap<String, LlmMoves>) -> Option<String> {
    let line = summary_line(moves)?;
    Some(format!(
        "<p class=\"note\">{}. Results credited to llm include the fallback's moves; \
         <a href=\"llm_moves.csv\">llm_moves.csv</a> has them per bot.</p>\n",
        crate::html::escape(&line)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counted(pairs: &[(Decider, u64)]) -> LlmMoves {
        LlmMoves(pairs.iter().copied().collect())
    }

    #[test]
    fn the_summary_says_who_decided_and_why() {
        assert_eq!(summary_line(&BTreeMap::new()), None, "no llm bot, no line");
        let moves = BTreeMap::from([
            (
                "P01".to_owned(),
                counted(&[(Decider::Model, 5), (Decider::Slow, 2)]),
            ),
            ("P03".to_owned(), counted(&[(Decider::Nonsense, 7)])),
        ]);
        assert_eq!(
            summary_line(&moves).as_deref(),
            Some("LLM moves of 2 bots: 5 by the model, 9 by the fallback (adaptive): slow 2, nonsense 7")
        );
        let names = BTreeMap::from([("P01".to_owned(), "bot-llm".to_owned())]);
        assert_eq!(
            csv(&moves, &names).expect("csv"),
            "player_id,display_name,moves,model,slow,down,nonsense,other_game\n\
             P01,bot-llm,7,5,2,0,0,0\nP03,,7,0,0,0,7,0\n"
        );
        assert!(note(&moves).is_some_and(|note| note.contains("llm_moves.csv")));
    }
}
