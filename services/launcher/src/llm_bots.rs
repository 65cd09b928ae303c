//! What `league run` and `league serve` ask of their `llm` bots from outside: whether the model answers
//! before the league starts, and at a run's end how each bot decided its moves, read from the player
//! host's `/metrics` (`league_player_llm_moves_total`) while it still answers. The report says what
//! was read (`league_report::llm_moves`).

use std::collections::BTreeMap;

use anyhow::Context;
use league_player::LlmMoves;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

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
