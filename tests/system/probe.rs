//! `league probe` against real agents on real HTTP: tests/agents/league_agent.py in its styles registers
//! with a stand-in league (it only answers the registration), then the probe plays every message a
//! player receives with it and reports the dialect, what it took, and what it got wrong. An https agent
//! is verified as the gateway verifies it: one whose certificate the league does not trust is told so.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;
use tokio::process::{Child, Command};

const AGENT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/agents/league_agent.py");
const STRICT_PLAYER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/agents/strict_player.py");

/// Starts tests/agents/league_agent.py in `style` against a stand-in league that accepts its
/// registration; returns the agent and its contact endpoint.
async fn registered_agent(style: &str) -> (Child, String) {
    registered(AGENT, &[style, "probed"]).await
}

/// Starts `script <league url> <args>` against a stand-in league that accepts its registration.
async fn registered(script: &str, args: &[&str]) -> (Child, String) {
    let league = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/mcp", league.local_addr().expect("address"));
    let agent = Command::new("python3")
        .arg(script)
        .arg(&url)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("python3 runs the agent");
    let (stream, _) = tokio::time::timeout(Duration::from_secs(30), league.accept())
        .await
        .expect("the agent registers")
        .expect("a connection");
    let mut stream = BufReader::new(stream);
    let mut length = 0;
    loop {
        let mut line = String::new();
        stream.read_line(&mut line).await.expect("a header");
        if line.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().expect("a length");
        }
    }
    let mut body = vec![0; length];
    stream.read_exact(&mut body).await.expect("the body");
    let request: Value = serde_json::from_slice(&body).expect("JSON");
    let contact = request["params"]["player_meta"]["contact_endpoint"]
        .as_str()
        .expect("a contact endpoint")
        .to_owned();
    let answer = json!({"jsonrpc": "2.0", "id": request["id"], "result": {
        "protocol": "league.v2", "message_type": "LEAGUE_REGISTER_RESPONSE", "sender": "league_manager",
        "timestamp": "2026-11-24T10:00:00Z", "conversation_id": request["params"]["conversation_id"],
        "status": "ACCEPTED", "player_id": "P01", "auth_token": "0".repeat(64), "league_id": "probe_league",
    }})
    .to_string();
    let response = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
        answer.len()
    );
    stream
        .get_mut()
        .write_all(response.as_bytes())
        .await
        .expect("answer");
    (agent, contact)
}

async fn probe(url: &str) -> (bool, Value) {
    let output = probe_command(url, &["--json"], None).await;
    let report = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|_| panic!("a JSON report: {}", String::from_utf8_lossy(&output.stdout)));
    (output.status.success(), report)
}

/// `league probe <url> <args>`, trusting `extra_roots` (LEAGUE_EXTRA_ROOTS) beside the system's roots.
async fn probe_command(url: &str, args: &[&str], extra_roots: Option<&str>) -> std::process::Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_league"));
    command
        .args(["probe", url, "--timeout", "3s"])
        .args(args)
        .env("RUST_LOG", "error")
        .env_remove("LEAGUE_EXTRA_ROOTS");
    if let Some(roots) = extra_roots {
        command.env("LEAGUE_EXTRA_ROOTS", roots);
    }
    command.output().await.expect("league probe runs")
}

fn message<'a>(report: &'a Value, message_type: &str) -> &'a Value {
    report["messages"]
        .as_array()
        .and_then(|messages| messages.iter().find(|m| m["message_type"] == message_type))
        .unwrap_or_else(|| panic!("{message_type} in {report}"))
}

fn kinds(step: &Value) -> Vec<&str> {
    step["problems"]
        .as_array()
        .map(|problems| problems.iter().filter_map(|p| p["kind"].as_str()).collect())
        .unwrap_or_default()
}

const EVERY_MESSAGE: [&str; 8] = [
    "GAME_INVITATION",
    "CHOOSE_PARITY_CALL",
    "GAME_OVER",
    "GAME_ERROR",
    "ROUND_ANNOUNCEMENT",
    "LEAGUE_STANDINGS_UPDATE",
    "ROUND_COMPLETED",
    "LEAGUE_COMPLETED",
];

#[tokio::test]
async fn the_probe_reports_a_sloppy_agent_s_dialect_and_every_deviation_with_its_rule() {
    let (_agent, url) = registered_agent("sloppy").await;
    let (success, report) = probe(&url).await;
    assert!(success, "every message taken: {report}");
    assert_eq!(report["dialect"], "canonical", "{report}");
    for message_type in EVERY_MESSAGE {
        assert_eq!(message(&report, message_type)["accepted"], true, "{report}");
    }
    // `accepted` for `accept`, `choice` for `parity_choice`, a placeholder token, compact timestamps,
    // its own name as player_id: each named, each with its rule.
    let join = kinds(message(&report, "GAME_INVITATION"));
    for kind in [
        "field_alias",
        "placeholder_token_in_reply",
        "timestamp_format",
        "reply_player_id_not_assigned",
    ] {
        assert!(join.contains(&kind), "{kind} in {join:?}: {report}");
    }
    assert!(
        kinds(message(&report, "CHOOSE_PARITY_CALL")).contains(&"field_alias"),
        "{report}"
    );
    let rule = &message(&report, "GAME_INVITATION")["problems"][0]["rule"];
    assert!(rule.as_str().is_some_and(|rule| !rule.is_empty()), "{report}");
}

#[tokio::test]
async fn the_probe_finds_a_message_type_agent_and_its_error_null_answers() {
    let (_agent, url) = registered_agent("message_type").await;
    let (success, report) = probe(&url).await;
    assert!(success, "every message taken: {report}");
    for message_type in EVERY_MESSAGE {
        let step = message(&report, message_type);
        assert_eq!(step["accepted"], true, "{report}");
        // peer-a's `"error": null` beside every result.
        assert!(
            kinds(step).contains(&"result_with_error_null"),
            "{message_type}: {report}"
        );
    }
}

#[tokio::test]
async fn a_strict_player_takes_every_message_the_probe_sends() {
    // Everything it receives is checked against the specification (envelope, sender, token, fields).
    let (_agent, url) = registered(STRICT_PLAYER, &["bare", "probed"]).await;
    let (success, report) = probe(&url).await;
    assert!(success, "every message taken: {report}");
    assert_eq!(report["sender_form"], "bare", "{report}");
    for message_type in EVERY_MESSAGE {
        assert_eq!(message(&report, message_type)["accepted"], true, "{report}");
    }
}

#[tokio::test]
async fn an_agent_that_is_not_there_is_reported_and_the_probe_fails() {
    let unused = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/mcp", unused.local_addr().expect("address"));
    drop(unused);
    let (success, report) = probe(&url).await;
    assert!(!success, "{report}");
    assert_eq!(report["dialect"], Value::Null, "{report}");
    assert_eq!(message(&report, "GAME_INVITATION")["accepted"], false, "{report}");
}

#[tokio::test]
async fn an_https_agent_is_probed_over_tls_and_a_certificate_the_league_does_not_trust_is_named() {
    let agents = league_testkit::FakeAgents::start_tls(league_testkit::Behaviour::Clean).await;
    let url = agents.endpoint("alpha");
    assert!(url.starts_with("https://"), "{url}");

    // Its CA is not trusted: nothing reaches it, and the report says why and what to set.
    let (success, report) = probe(&url).await;
    assert!(!success, "{report}");
    assert_eq!(report["dialect"], Value::Null, "{report}");
    let invitation = message(&report, "GAME_INVITATION");
    let error = invitation["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("certificate is not trusted") && error.contains("LEAGUE_EXTRA_ROOTS"),
        "{report}"
    );
    assert!(kinds(invitation).contains(&"untrusted_certificate"), "{report}");
    assert!(agents.received().is_empty(), "{:?}", agents.received());
    // The same in the table an agent's author reads.
    let table = probe_command(&url, &[], None).await;
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(
        table.contains("untrusted_certificate") && table.contains("LEAGUE_EXTRA_ROOTS"),
        "{table}"
    );

    // Its CA given as an extra root: the invitation reaches it over TLS.
    let trusted = probe_command(&url, &["--json"], Some(league_testkit::tls::CA)).await;
    let report: Value = serde_json::from_slice(&trusted.stdout).expect("a JSON report");
    assert!(
        !report.to_string().contains("certificate"),
        "no TLS complaint: {report}"
    );
    assert!(
        agents
            .methods("alpha")
            .iter()
            .any(|method| method.to_ascii_lowercase().contains("invitation")),
        "{:?}",
        agents.received()
    );
}

#[tokio::test]
async fn every_kind_of_refusal_counts_in_the_agent_s_own_words_and_the_probe_fails() {
    let (_agent, url) = registered_agent("refusing").await;
    let (success, report) = probe(&url).await;
    assert!(!success, "refusals fail the probe: {report}");
    assert_eq!(report["dialect"], "canonical", "{report}");
    for message_type in [
        "GAME_INVITATION",
        "CHOOSE_PARITY_CALL",
        "GAME_OVER",
        "LEAGUE_STANDINGS_UPDATE",
    ] {
        assert_eq!(message(&report, message_type)["verdict"], "accepted", "{report}");
    }
    // (message, verdict, the agent's words in the reason, the warning kind)
    let expected = [
        (
            "GAME_ERROR",
            "not_implemented",
            "-32000 Unknown message type",
            "unimplemented_notification",
        ),
        (
            "LEAGUE_COMPLETED",
            "not_implemented",
            "unknown_message_type",
            "unimplemented_notification",
        ),
        (
            "ROUND_ANNOUNCEMENT",
            "refused",
            "-32602 Missing required field: round_deadline",
            "refused_params",
        ),
        ("ROUND_COMPLETED", "refused", "-32001 Auth failed", "refused_auth"),
    ];
    for (message_type, verdict, words, kind) in expected {
        let step = message(&report, message_type);
        assert_eq!(step["verdict"], verdict, "{message_type}: {report}");
        assert_eq!(step["accepted"], false, "{message_type}: {report}");
        let error = step["error"].as_str().unwrap_or_default();
        assert!(
            error.contains(words),
            "{message_type}: {words} in {error}: {report}"
        );
        assert!(kinds(step).contains(&kind), "{message_type}: {kind}: {report}");
    }
}

#[tokio::test]
async fn an_agent_refusing_every_call_is_reported_with_its_own_refusal() {
    let (_agent, url) = registered_agent("auth_refusing").await;
    let (success, report) = probe(&url).await;
    assert!(!success, "{report}");
    assert_eq!(report["dialect"], Value::Null, "{report}");
    let invitation = message(&report, "GAME_INVITATION");
    assert_eq!(invitation["verdict"], "refused", "{report}");
    let error = invitation["error"].as_str().unwrap_or_default();
    assert!(error.contains("-32001 Auth failed"), "{error}: {report}");
}

/// An MCP server on the official Python SDK (tests/agents/mcp_server_player.py), answering a plain
/// call with an ordinary JSON-RPC error (`json`) or, with sessions, with a 400/406: the probe asks it
/// `initialize` and says what it is on its `mcp` line — also when, registered with a league, it refuses
/// every call for the probe's token, so that no dialect works.
#[tokio::test]
async fn the_probe_says_an_mcp_server_is_one() {
    let python = crate::mcp_agents::sdk_python().await;
    // A league for the players to register with; it waits for a third player that never comes.
    let args = ["--players", "0", "--external-players", "3", "--referees", "1"];
    let league = league_testkit::LeagueRun::start(env!("CARGO_BIN_EXE_league"), &args, 1).await;
    for mode in ["json", "sessions"] {
        let mut player = Command::new(&python)
            .arg(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../tests/agents/mcp_server_player.py"
            ))
            .args([league.gateways[0].as_str(), mode, mode])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("the MCP player starts");
        let mut stderr = BufReader::new(player.stderr.take().expect("its stderr")).lines();
        let url = tokio::time::timeout(Duration::from_secs(60), async {
            while let Some(line) = stderr.next_line().await.expect("a line") {
                if let Some(url) = line.strip_prefix("registered, listening on ") {
                    return url.to_owned();
                }
            }
            panic!("the MCP player stopped before it registered");
        })
        .await
        .expect("the MCP player registers");
        let output = probe_command(&url, &[], None).await;
        let text = String::from_utf8_lossy(&output.stdout);
        let mcp = text
            .lines()
            .find_map(|line| line.strip_prefix("mcp "))
            .unwrap_or_else(|| panic!("an mcp line ({mode}): {text}"));
        assert!(
            mcp.contains("and MCP initialize: an MCP server"),
            "{mode}: {mcp}\n{text}"
        );
        let (success, report) = probe(&url).await;
        assert!(!success, "it refuses the probe's token: {report}");
        assert!(report["dialect"].is_null(), "{mode}: {report}");
        assert_eq!(report["mcp"]["is_mcp_server"], true, "{mode}: {report}");
    }
    league.interrupt().await;
}
