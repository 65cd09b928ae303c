//! Strict external referees (tests/agents/strict_referee.py: everything they receive checked with
//! conformance.py, anything off-spec refused) in each style real referees use — pushed `START_MATCH`,
//! pushed `assign_match` only, and pulling `get_assigned_matches` without a token — are each the only
//! referee of a real `league run`: the league finishes with no technical loss and a table that adds up.
//! They are as picky as the field's: the push handler indexes `player_A_id`/`player_B_id`, the puller
//! runs only matches listed `"status": "PENDING"`.
//! And a tokenless pull is answered only from the address of the referee's contact endpoint.

use std::process::Stdio;
use std::time::Duration;

use league_testkit::LeagueRun;
use league_testkit::league_run::{WorkDir, checked_table, python};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpSocket;
use tokio::process::{Child, ChildStdout, Command};

const AGENT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/agents/league_agent.py");
const REFEREE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/agents/strict_referee.py"
);

/// The league every test here plays: two bots and two external players.
const TWO_AND_TWO: [&str; 6] = [
    "--players",
    "2",
    "--external-players",
    "2",
    "--move-timeout",
    "3s",
];

/// Starts `league run --referees 0` with two bots and two external players; returns it, its output and
/// the gateway's `/mcp`.
async fn start_league() -> (Child, BufReader<ChildStdout>, String, WorkDir) {
    start_league_with(&TWO_AND_TWO).await
}

/// The same, kept whole (to be interrupted).
async fn start_league_run() -> LeagueRun {
    league_run_with(&TWO_AND_TWO).await
}

/// `league run --referees 0` with `args` (players and move timeout): the process, its output, the
/// gateway's `/mcp` and the run's working folder (kept as long as the run).
async fn start_league_with(args: &[&str]) -> (Child, BufReader<ChildStdout>, String, WorkDir) {
    let LeagueRun {
        process,
        stdout,
        mut gateways,
        workdir,
        ..
    } = league_run_with(args).await;
    (process, stdout, gateways.remove(0), workdir)
}

async fn league_run_with(args: &[&str]) -> LeagueRun {
    let args = [args, &["--referees", "0"]].concat();
    LeagueRun::start(env!("CARGO_BIN_EXE_league"), &args, 1).await
}

/// A whole league refereed by one strict referee of `style`.
async fn league_refereed_in(style: &str) {
    let (mut league, mut stdout, gateway, _workdir) = start_league().await;
    let mut referee = python(REFEREE, &[&gateway, "strict", "--style", style]);
    let players = [
        python(AGENT, &[&gateway, "message_type", "alpha"]),
        python(AGENT, &[&gateway, "sloppy", "charlie"]),
    ];
    let mut output = String::new();
    tokio::time::timeout(Duration::from_secs(180), stdout.read_to_string(&mut output))
        .await
        .expect("the league finishes")
        .expect("launcher output");
    let status = league.wait().await.expect("league run exits");
    referee.start_kill().expect("stop the referee");
    let printed = referee.wait_with_output().await.expect("referee output");
    let lines: Vec<Value> = String::from_utf8_lossy(&printed.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect();
    assert!(
        status.success(),
        "league run failed ({style}):\n{output}\nreferee: {lines:?}"
    );
    checked_table(&output, 4, 3, &[]);
    let complaints: Vec<_> = lines
        .iter()
        .filter(|line| line.get("error").is_some() || line.get("refused").is_some())
        .collect();
    assert!(
        complaints.is_empty(),
        "the {style} referee complained: {complaints:?}"
    );
    let mut reported: Vec<&str> = lines
        .iter()
        .filter_map(|line| line["reported"].as_str())
        .collect();
    reported.sort_unstable();
    assert_eq!(
        reported,
        ["R1M1", "R1M2", "R2M1", "R2M2", "R3M1", "R3M2"],
        "{style}: {lines:?}"
    );
    for player in players {
        let output = tokio::time::timeout(Duration::from_secs(60), player.wait_with_output())
            .await
            .expect("the player stops after LEAGUE_COMPLETED")
            .expect("player output");
        let summary: Value = serde_json::from_slice(&output.stdout).expect("the player's summary");
        assert_eq!(summary["completed"], true, "{summary}");
        assert_eq!(summary["received"]["GAME_OVER"], 3, "{summary}");
    }
}

#[tokio::test]
async fn a_strict_referee_that_takes_start_match_runs_a_league() {
    league_refereed_in("push").await;
}

#[tokio::test]
async fn a_strict_referee_that_answers_only_assign_match_runs_a_league() {
    league_refereed_in("assign").await;
}

#[tokio::test]
async fn a_strict_referee_that_pulls_without_a_token_runs_a_league() {
    league_refereed_in("pull").await;
}

/// A player that notes how long each CHOOSE_PARITY_CALL gives it (`deadline` minus the moment it
/// arrives) and prints the list once the league completes.
const TIMED_PLAYER: &str = r#"
import json, sys, threading, urllib.request
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

state, done = {"windows": []}, threading.Event()

def stamp():
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")

class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        params = request.get("params") or {}
        kind, result = params.get("message_type"), {"status": "ok"}
        if kind == "GAME_INVITATION":
            result = {"message_type": "GAME_JOIN_ACK", "match_id": params["match_id"], "player_id": state["id"],
                      "arrival_timestamp": stamp(), "accept": True}
        elif kind == "CHOOSE_PARITY_CALL":
            deadline = datetime.fromisoformat(params["deadline"].replace("Z", "+00:00"))
            state["windows"].append((deadline - datetime.now(timezone.utc)).total_seconds())
            result = {"message_type": "CHOOSE_PARITY_RESPONSE", "match_id": params["match_id"],
                      "player_id": state["id"], "parity_choice": "even"}
        elif kind == "LEAGUE_COMPLETED":
            done.set()
        body = json.dumps({"jsonrpc": "2.0", "result": result, "id": request.get("id")}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
meta = {"display_name": "timed", "version": "1.0.0", "game_types": ["even_odd"],
        "contact_endpoint": f"http://127.0.0.1:{server.server_address[1]}/mcp"}
params = {"protocol": "league.v2", "message_type": "LEAGUE_REGISTER_REQUEST", "sender": "player:timed",
          "timestamp": stamp(), "conversation_id": "conv-timed", "player_meta": meta}
body = json.dumps({"jsonrpc": "2.0", "method": "register_player", "params": params, "id": 1}).encode()
request = urllib.request.Request(sys.argv[1], data=body, headers={"Content-Type": "application/json"})
state["id"] = json.loads(urllib.request.urlopen(request, timeout=10).read())["result"]["player_id"]
done.wait(120)
print(json.dumps(state), flush=True)
"#;

#[tokio::test]
async fn an_external_referee_s_players_get_the_league_s_move_timeout() {
    // The specification's default is 30 s; this league gives 45 s, through the external referee too.
    let (mut league, mut stdout, gateway, _workdir) = start_league_with(&[
        "--players",
        "1",
        "--external-players",
        "1",
        "--move-timeout",
        "45s",
    ])
    .await;
    let mut referee = python(REFEREE, &[&gateway, "strict", "--style", "pull"]);
    let player = Command::new("python3")
        .args(["-c", TIMED_PLAYER, &gateway])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("python3 runs the player");
    let mut output = String::new();
    tokio::time::timeout(Duration::from_secs(180), stdout.read_to_string(&mut output))
        .await
        .expect("the league finishes")
        .expect("launcher output");
    let finished = league.wait().await.expect("league run exits").success();
    referee.start_kill().expect("stop the referee");
    let refereed = referee.wait_with_output().await.expect("referee output");
    let refereed = String::from_utf8_lossy(&refereed.stdout);
    assert!(finished, "{output}\nreferee: {refereed}");
    let printed = player.wait_with_output().await.expect("player output");
    let state: Value = serde_json::from_slice(&printed.stdout).expect("the player's notes");
    let windows = state["windows"].as_array().expect("windows");
    assert_eq!(windows.len(), 1, "one match, one parity call: {state}");
    let window = windows[0].as_f64().expect("seconds");
    assert!(
        (40.0..=45.5).contains(&window),
        "the player had {window} s to choose, not the league's 45 s"
    );
}

/// One JSON-RPC call over HTTP/1.1 from the loopback address `from`; the response body.
async fn call_from(from: [u8; 4], gateway: &str, method: &str, params: Value) -> Value {
    let address = gateway
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .parse()
        .expect("the gateway's address");
    let socket = TcpSocket::new_v4().expect("socket");
    socket
        .bind((std::net::Ipv4Addr::from(from), 0).into())
        .expect("bind a loopback source address");
    let mut stream = socket.connect(address).await.expect("connect to the gateway");
    let body = json!({"jsonrpc": "2.0", "method": method, "params": params, "id": 1}).to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.expect("send");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.expect("answer");
    let body = answer.split("\r\n\r\n").nth(1).expect("a body");
    serde_json::from_str(body).unwrap_or_else(|_| panic!("JSON body: {answer}"))
}

#[tokio::test]
async fn a_tokenless_pull_is_answered_only_from_the_referee_s_own_address() {
    let league = start_league_run().await;
    let gateway = league.gateways[0].clone();
    let register = |contact: &str| {
        json!({
            "protocol": "league.v2", "message_type": "REFEREE_REGISTER_REQUEST", "sender": "referee:PULLER",
            "timestamp": "2026-11-24T10:00:00Z", "conversation_id": "conv-register",
            "referee_meta": {"display_name": "puller", "version": "1.0.0", "game_types": ["even_odd"],
                             "contact_endpoint": contact, "max_concurrent_matches": 1,
                             "protocol_version": "league.v2"},
        })
    };
    let registered = call_from(
        [127, 0, 0, 1],
        &gateway,
        "register_referee",
        register("http://127.0.0.1:9/mcp"),
    )
    .await;
    let referee_id = registered["result"]["referee_id"]
        .as_str()
        .expect("registered")
        .to_owned();
    let token = registered["result"]["auth_token"]
        .as_str()
        .expect("a token")
        .to_owned();
    let other = call_from(
        [127, 0, 0, 1],
        &gateway,
        "register_referee",
        // Another port: every loopback address reaches the same agents, so 127.0.0.3:9 would be the
        // first referee's endpoint again (ADR 0081).
        register("http://127.0.0.3:10/mcp"),
    )
    .await;
    let other_token = other["result"]["auth_token"]
        .as_str()
        .expect("a token")
        .to_owned();

    // From the address of its contact endpoint, without a token: its (still empty) assignments.
    let pull = json!({"referee_id": referee_id});
    let own = call_from([127, 0, 0, 1], &gateway, "get_assigned_matches", pull.clone()).await;
    assert_eq!(own["result"]["matches"], json!([]), "{own}");
    let registrations = json!({"query_type": "GET_REGISTRATIONS"});
    let seen = call_from([127, 0, 0, 1], &gateway, "league_query", registrations.clone()).await;
    assert_eq!(seen["result"]["success"], true, "{seen}");
    assert!(
        !seen.to_string().contains(&token),
        "no token is ever shown: {seen}"
    );

    // From anywhere else, without a token: nothing.
    let stranger = call_from([127, 0, 0, 2], &gateway, "get_assigned_matches", pull.clone()).await;
    assert_eq!(stranger["error"]["data"]["error_code"], "E011", "{stranger}");
    let stranger = call_from([127, 0, 0, 2], &gateway, "league_query", registrations).await;
    assert_eq!(stranger["error"]["data"]["error_code"], "E011", "{stranger}");

    // With its token, from anywhere; another referee's token does not pull its matches.
    let with_token = json!({"referee_id": referee_id, "auth_token": token});
    let anywhere = call_from([127, 0, 0, 2], &gateway, "get_assigned_matches", with_token).await;
    assert_eq!(anywhere["result"]["matches"], json!([]), "{anywhere}");
    let impostor = json!({"referee_id": referee_id, "auth_token": other_token});
    let refused = call_from([127, 0, 0, 3], &gateway, "get_assigned_matches", impostor).await;
    assert_eq!(refused["error"]["data"]["error_code"], "E020", "{refused}");
    league.interrupt().await;
}
