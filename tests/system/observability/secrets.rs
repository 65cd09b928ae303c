//! No credential ever appears in what the services print, even at `RUST_LOG=trace` (invariant 6; issue
//! 53): a league with misbehaving bots, refused calls, players that are MCP servers and JSON-RPC agents
//! through the gateway, and an external referee registering with the referee registration token, is
//! played, and everything every service wrote to stdout and stderr is searched for every token issued:
//! the operator's, the referee registration token, every agent's (players and referees, ours and
//! external), and the outbound token the gateway puts on its messages to each agent.
//!
//! The manager keeps only SHA-256 hashes of the tokens it issued, so the search hashes every
//! 64-hex-digit string in the output and looks it up among them; the tokens the test knows (the
//! operator's, the registration token, its own bot's, every outbound token, derived from the operator's)
//! are also searched for as they are. The search is checked first on text that does contain a token,
//! so a search that finds nothing cannot pass.

use std::collections::HashSet;
use std::time::Duration;

use league_manager::tokens;
use league_proto::v2::ClaimMatchesRequest;
use league_runtime::Credentials;
use league_runtime::credentials::operator_request;
use league_testkit::league_run::{python, summaries};
use league_v2::outbound_token::OutboundToken;
use secrecy::{ExposeSecret, SecretString};

use super::harness::{self, OPERATOR_TOKEN, REFEREE_REGISTRATION_TOKEN, Setup, operator_token, var};

/// The issued tokens (by their hashes) that appear in `text`.
fn issued_tokens_in(text: &str, issued: &HashSet<[u8; 32]>) -> Vec<String> {
    let mut found = Vec::new();
    let bytes = text.as_bytes();
    let mut start = 0;
    while start < bytes.len() {
        if !bytes[start].is_ascii_hexdigit() {
            start += 1;
            continue;
        }
        let end = start
            + bytes[start..]
                .iter()
                .take_while(|byte| byte.is_ascii_hexdigit())
                .count();
        // A token may sit inside a longer run of hex digits: try every window of 64.
        for window in start..=end.saturating_sub(64) {
            let candidate = &text[window..window + 64];
            if issued.contains(&tokens::hash(&SecretString::from(candidate.to_owned()))) {
                found.push(candidate.to_owned());
            }
        }
        start = end;
    }
    found
}

#[test]
fn the_search_finds_a_token_wherever_it_hides() {
    let token = tokens::issue().expect("a token");
    let issued = HashSet::from([tokens::hash(&token)]);
    let token = token.expose_secret();
    for text in [
        format!("authorization: Bearer {token}\n"),
        format!("{{\"auth_token\":\"{token}\"}}"),
        format!("deadbeef{token}cafe"),
        token.to_owned(),
    ] {
        assert_eq!(issued_tokens_in(&text, &issued), vec![token.to_owned()], "{text}");
    }
    let other = tokens::issue().expect("a token");
    assert!(issued_tokens_in(other.expose_secret(), &issued).is_empty());
    assert!(issued_tokens_in("no secrets here", &issued).is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn no_token_is_printed_even_at_trace_level() {
    let sdk_python = crate::mcp_agents::sdk_python().await;
    let mut league = harness::start(Setup {
        players: 2,
        referees: 1,
        strategies: "random,invalid",
        external_players: 3,
        // Room for the Python agents, slowed as every service is by logging at trace level.
        timeout: Duration::from_millis(3000),
        env: vec![var("RUST_LOG", "trace"), var("LEAGUE_LOG_FORMAT", "json")],
    })
    .await;
    let gateway = format!("{}/mcp", league.process("gateway").url);
    // An external referee first, so that it is there to be pushed matches once the league starts.
    let mut referee = python(
        STRICT_REFEREE,
        &[
            &gateway,
            "outsider",
            "--style",
            "push",
            "--registration-token",
            REFEREE_REGISTRATION_TOKEN,
        ],
    );
    let agents = vec![
        crate::mcp_agents::mcp_player(&sdk_python, &gateway, "mcp-sessions", "sessions"),
        crate::mcp_agents::mcp_player(&sdk_python, &gateway, "mcp-stateless", "stateless"),
        python(JSON_RPC_AGENT, &[&gateway, "message_type", "jsonrpc"]),
    ];
    // Calls the manager refuses, with credentials it issued and with ones it did not.
    let bot = league.bot.credentials.clone();
    let refused = league
        .manager
        .claim_matches(bot.request(ClaimMatchesRequest::default()))
        .await;
    assert!(refused.is_err(), "a player may not claim matches");
    let forged = Credentials::new(bot.agent_id.clone(), "f".repeat(64));
    assert!(
        league
            .manager
            .claim_matches(forged.request(ClaimMatchesRequest::default()))
            .await
            .is_err()
    );
    let status = league
        .manager
        .get_league_status(operator_request(
            &operator_token(),
            league_proto::v2::GetLeagueStatusRequest {
                league_id: league.league_id.clone(),
            },
        ))
        .await;
    assert!(status.is_ok(), "the operator token works: {status:?}");
    // Every service logging at trace level, Python agents and referee: in CI's instrumented build the
    // league once took longer than the harness's usual 120 s.
    league.finished_within(Duration::from_secs(300)).await;
    summaries(agents).await;
    referee.start_kill().expect("stop the referee");
    let _ = referee.wait().await;

    let agents: Vec<(String, Vec<u8>)> = sqlx::query_as("select agent_id, token_hash from agents")
        .fetch_all(&league.pool)
        .await
        .expect("the issued tokens' hashes");
    let issued: HashSet<[u8; 32]> = agents
        .iter()
        .map(|(_, hash)| hash.clone().try_into().expect("a SHA-256 hash"))
        .collect();
    // Two referees (ours, the external one), two bots of the player host, the test's bot, three
    // external players.
    assert_eq!(issued.len(), 8, "{agents:?}");
    // What the gateway signs its messages to each agent with: the 64 hex digits after the prefix.
    let outbound: Vec<String> = agents
        .iter()
        .map(|(agent_id, _)| {
            let token = OutboundToken::for_agent(&operator_token(), agent_id);
            token.as_str().trim_start_matches("league_out_").to_owned()
        })
        .collect();
    let bot_token = bot.token.expose_secret().to_owned();
    let stopped = league.stop().await;

    for (process, output) in &stopped.output {
        let traced = output
            .lines()
            .filter(|line| line.contains("\"level\":\"TRACE\""))
            .count();
        // Our own spans and events only: the libraries that log whole messages (rmcp, h2, hyper, tonic,
        // …) are capped at INFO whatever RUST_LOG says (docs/observability.md), so a quiet service such
        // as the player host writes only a few TRACE lines; one proves the level took effect.
        assert!(
            traced > 0,
            "{process} really logged at trace level ({traced} lines)"
        );
        assert!(
            !output.contains(OPERATOR_TOKEN),
            "{process} printed the operator token"
        );
        assert!(!output.contains(&bot_token), "{process} printed a player's token");
        assert!(
            !output.contains(REFEREE_REGISTRATION_TOKEN),
            "{process} printed the referee registration token"
        );
        let leaked = issued_tokens_in(output, &issued);
        assert!(
            leaked.is_empty(),
            "{process} printed {} issued token(s)",
            leaked.len()
        );
        let outbound_leaked = outbound
            .iter()
            .filter(|token| output.contains(token.as_str()))
            .count();
        assert_eq!(outbound_leaked, 0, "{process} printed outbound token(s)");
    }
}

/// The JSON-RPC agent and the strict external referee (Python's standard library only).
const JSON_RPC_AGENT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/agents/league_agent.py");
const STRICT_REFEREE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/agents/strict_referee.py"
);
