//! How a league's `llm` bots decided their moves, read from the player host's `/metrics`
//! (`league_player_llm_moves_total`) at the end of `league run`, while it still answers: a line in the
//! run's summary, `llm_moves.csv` in the results folder and a note on its page. A result credited to
//! `llm` includes the moves its fallback (adaptive) made; these say how many.

use std::collections::BTreeMap;
use std::fmt::Write;

use anyhow::Context;
use league_player::{Decider, LlmMoves};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::columns;

/// Asks the model one move before the league starts, when `strategies` has `llm` bots: the warning to
/// print if it does not answer with a parity (its bots would then play adaptive's moves, credited to
/// `llm`), `None` when it answers or no bot asks it.
pub async fn check_model(strategies: &str) -> anyhow::Result<Option<String>> {
    let behaviours = league_player::Behaviour::parse_list(strategies)?;
    if !behaviours.contains(&league_player::Behaviour::Llm) {
        return Ok(None);
    }
    let config: league_player::llm::LlmConfig = league_runtime::config::load()?;
    let Some(client) = league_player::llm::LlmClient::from_config(&config)? else {
        return Ok(None);
    };
    let url = config.llm_url.unwrap_or_default();
    Ok(client.choose("P00", &[]).await.err().map(|error| {
        format!(
            "warning: the llm strategy's model at {url} did not give a move when asked before the league \
             ({error}): its bots will play the fallback's (adaptive's) moves while it does not, and the \
             run counts them (LEAGUE_LLM_URL, LEAGUE_LLM_MODEL, LEAGUE_LLM_TIMEOUT)"
        )
    }))
}

/// The largest `/metrics` answer read.
const MAX_METRICS_BYTES: u64 = 16 * 1024 * 1024;

/// Each `llm` bot's moves by who decided them, from the player hosts among `admin_urls` (`(service,
/// admin URL)`, the hosts named `players…`); empty when the league has no `llm` bot.
pub async fn read(admin_urls: &[(String, String)]) -> anyhow::Result<BTreeMap<String, LlmMoves>> {
    let mut all = BTreeMap::new();
    for (_, admin_url) in admin_urls.iter().filter(|(name, _)| name.starts_with("players")) {
        let text = metrics_text(admin_url).await?;
        all.extend(league_player::llm_moves::parse_metrics(&text));
    }
    Ok(all)
}

/// `GET <admin_url>/metrics` (a loopback `http://host:port` of one of this run's children).
async fn metrics_text(admin_url: &str) -> anyhow::Result<String> {
    let authority = admin_url
        .strip_prefix("http://")
        .with_context(|| format!("the admin URL {admin_url:?} is not http://"))?
        .trim_end_matches('/');
    let mut stream = tokio::net::TcpStream::connect(authority)
        .await
        .with_context(|| format!("connecting to {admin_url}"))?;
    let request = format!("GET /metrics HTTP/1.0\r\nHost: {authority}\r\n\r\n");
    stream.write_all(request.as_bytes()).await?;
    let mut response = Vec::new();
    stream
        .take(MAX_METRICS_BYTES)
        .read_to_end(&mut response)
        .await
        .with_context(|| format!("reading {admin_url}/metrics"))?;
    let response = String::from_utf8_lossy(&response);
    let (head, body) = response
        .split_once("\r\n\r\n")
        .with_context(|| format!("{admin_url}/metrics gave no HTTP answer"))?;
    let status = head
        .split_whitespace()
        .nth(1)
        .with_context(|| format!("{admin_url}/metrics gave no HTTP status"))?;
    anyhow::ensure!(status == "200", "{admin_url}/metrics answered HTTP {status}");
    Ok(body.to_owned())
}

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
        crate::report::html::escape(&line)
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
