//! End to end with strict players (tests/agents/strict_player.py): agents that check every message they
//! receive against the specification with tests/agents/conformance.py and refuse anything off-spec the
//! way real agents do (HTTP 401 for a missing token, 400 "Sender not registered" for a manager sender
//! of the other family's form, 400 for a missing field). Each league is a real `league run` with the
//! players in their own processes; it must finish with no technical loss and a table that adds up.

use league_testkit::LeagueRun;
use league_testkit::league_run::{checked_table, python, summaries};
use tokio::process::Child;

const STRICT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/agents/strict_player.py");

/// `league run` with `args` and one gateway.
async fn start_league(args: &[&str]) -> LeagueRun {
    let args = [args, &["--move-timeout", "3s"]].concat();
    LeagueRun::start(env!("CARGO_BIN_EXE_league"), &args, 1).await
}

fn strict_player(gateway: &str, family: &str, name: &str, methods: &str) -> Child {
    python(STRICT, &[gateway, family, name, methods])
}

/// Every match, every league event and every refusal a strict player saw: it played `played`
/// matches, registered exactly once (its first registration answer was in its family's form: the
/// gateway greeted it before answering) and refused nothing but, at most once, that greeting in the
/// other family's form: the league's other calls wait for the greeting, including the events queued by
/// the registration that starts the league, which can reach the gateway before that registration's
/// answer does (ManagerLink::registering).
fn check_received(summary: &serde_json::Value, played: u64) {
    for kind in [
        "GAME_INVITATION",
        "CHOOSE_PARITY_CALL",
        "GAME_OVER",
        "ROUND_ANNOUNCEMENT",
    ] {
        assert_eq!(summary["received"][kind], played, "{kind}: {summary}");
    }
    assert_eq!(summary["received"]["LEAGUE_COMPLETED"], 1, "{summary}");
    assert_eq!(summary["registrations"], 1, "one registration: {summary}");
    let refused = summary["refused"].as_object().expect("refusals");
    assert!(
        refused
            .iter()
            .all(|(reason, count)| reason == "sender" && count.as_u64() <= Some(1)),
        "only the greeting in the other form may be refused: {summary}"
    );
}

#[tokio::test]
async fn strict_players_of_both_sender_families_finish_a_league() {
    let league = start_league(&["--players", "2", "--external-players", "4", "--referees", "2"]).await;
    let gateway = league.gateways[0].clone();
    let agents = vec![
        strict_player(&gateway, "typed", "alpha", "both"),
        strict_player(&gateway, "typed", "bravo", "both"),
        strict_player(&gateway, "bare", "charlie", "both"),
        strict_player(&gateway, "bare", "delta", "both"),
    ];
    let output = league.finish().await;
    let summaries = summaries(agents).await;
    for summary in &summaries {
        // Six players: five rounds, five matches each.
        check_received(summary, 5);
    }
    checked_table(&output, 6, 5, &summaries);
}

#[tokio::test]
async fn strict_players_that_name_methods_in_lower_case_or_nested_finish_a_league() {
    let league = start_league(&["--players", "1", "--external-players", "3", "--referees", "2"]).await;
    let gateway = league.gateways[0].clone();
    let agents = vec![
        strict_player(&gateway, "typed", "golf", "lower"),
        strict_player(&gateway, "bare", "hotel", "nested"),
        strict_player(&gateway, "typed", "india", "details"),
    ];
    let output = league.finish().await;
    let summaries = summaries(agents).await;
    for summary in &summaries {
        // Four players: three rounds, three matches each.
        check_received(summary, 3);
    }
    // The lower-case player registered with the canonical name: each message type costs it the
    // canonical and the upper-case name once (two -32601s), never again.
    let lower = &summaries[0];
    let kinds = lower["received"].as_object().expect("received").len() as u64;
    let unknown = lower["unknown_methods"].as_u64().expect("a count");
    assert!(
        unknown <= 2 * kinds,
        "{unknown} -32601s for {kinds} message types: {lower}"
    );
    // The nested players registered nested (the whole message, or only its details): each is called
    // so from the start, and refused nothing over its shape.
    for nested in &summaries[1..] {
        assert_eq!(nested["unknown_methods"], 0, "{nested}");
        assert!(nested["refused"].get("nesting").is_none(), "{nested}");
    }
    checked_table(&output, 4, 3, &summaries);
}

/// The other framings of the field, each registering in its own (so called in it from the start):
/// `receive_<type>`, `handle_message`, `mcp_message`, MCP's `tools/call` framing without a session (in
/// both sender families), and the older revision's `parity_choose`.
#[tokio::test]
async fn strict_players_in_the_other_framings_finish_a_league() {
    let league = start_league(&["--players", "0", "--external-players", "6", "--referees", "2"]).await;
    let gateway = league.gateways[0].clone();
    let agents = vec![
        strict_player(&gateway, "typed", "juliett", "receive"),
        strict_player(&gateway, "bare", "kilo", "handle_message"),
        strict_player(&gateway, "typed", "lima", "mcp_message"),
        strict_player(&gateway, "bare", "mike", "legacy"),
        strict_player(&gateway, "typed", "november", "tools_call"),
        strict_player(&gateway, "bare", "oscar", "tools_call"),
    ];
    let output = league.finish().await;
    let summaries = summaries(agents).await;
    for summary in &summaries {
        check_received(summary, 5);
        // Called in its framing from the start; at most MCP's `initialize`, asked once after a first
        // refusal (the typed family's of the bare sender: ADR 0071), is a method it lacks.
        let unknown = summary["unknown_methods"].as_u64().expect("a count");
        assert!(unknown <= 1, "{summary}");
    }
    checked_table(&output, 6, 5, &summaries);
}
