//! The gateway against the real traffic of two independent league.v2 implementations
//! (tests/fixtures): every request their agents sent to the league manager is answered in
//! the shape that agent reads (or with our documented refusal), and every call our bridge makes to a
//! player is in a dialect and shape that implementation's players accepted in the probes — with the
//! deviations in their answers accepted and recorded in lenient mode, refused in strict mode.

use crate::support;

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, SystemTime};

use league_domain::MessageType;
use league_proto::ErrorCode;
use league_proto::v2::notify_league_event_request::Event;
use league_proto::v2::*;
use league_v2::compliance::Mode;
use league_v2::convert;
use league_v2::dialect::{self, Action, Dialect};
use league_v2::query::Query;
use league_v2::timestamp::{self, Reading};
use serde_json::{Value, json};
use support::*;

// ---------------------------------------------------------------------------------------------------
// Requests to the league manager

/// What the gateway makes of each method the captured agents call the manager with.
fn expected_resolution(method: &str) -> Result<(Action, Dialect), i64> {
    use MessageType::*;
    Ok(match method {
        "REFEREE_REGISTER_REQUEST" => (Action::Message(RefereeRegisterRequest), Dialect::MessageType),
        "LEAGUE_REGISTER_REQUEST" => (Action::Message(LeagueRegisterRequest), Dialect::MessageType),
        // Resolves; handling refuses it (results come from the league's own referees, over gRPC).
        "MATCH_RESULT_REPORT" => (Action::Message(MatchResultReport), Dialect::MessageType),
        "report_match_result" => (Action::Message(MatchResultReport), Dialect::Canonical),
        "register_referee" => (Action::Message(RefereeRegisterRequest), Dialect::Canonical),
        "register_player" => (Action::Message(LeagueRegisterRequest), Dialect::Canonical),
        "league_query" => (Action::Message(LeagueQuery), Dialect::Canonical),
        "start_league" => (Action::StartLeague, Dialect::Canonical),
        "get_standings" => (Action::Query(Query::Standings), Dialect::Canonical),
        // peer-b's referees pull their matches.
        "get_assigned_matches" => (Action::AssignedMatches, Dialect::Canonical),
        other => panic!("the fixtures call the manager with {other:?}: add it to this table"),
    })
}

#[test]
fn every_request_to_the_manager_in_the_captured_leagues_resolves() {
    let mut summary: BTreeMap<(String, String), (usize, String)> = BTreeMap::new();
    for peer in ["peer-a", "peer-b"] {
        let path = fixtures_dir().join(peer).join("full_league_traffic_4p.jsonl");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut requests = 0;
        for (number, line) in text
            .lines()
            .enumerate()
            .filter(|(_, line)| !line.trim().is_empty())
        {
            let entry: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{peer}:{number}: {e}"));
            if entry["dst_port"] != 8000 {
                continue;
            }
            let body = &entry["body"];
            let method = body["method"].as_str().unwrap_or_else(|| {
                panic!("{peer}:{number}: a message to the manager that is no request: {body}")
            });
            requests += 1;
            let params = body.get("params").cloned().unwrap_or(Value::Null);
            let resolved = dialect::resolve(method, params)
                .map(|r| (r.action, r.dialect))
                .map_err(|e| e.code);
            assert_eq!(resolved, expected_resolution(method), "{peer}:{number}: {method}");
            let outcome = match resolved {
                Ok((action, dialect)) => format!("{action:?} ({})", dialect.as_str()),
                Err(code) => format!("refused {code}"),
            };
            summary
                .entry((peer.to_owned(), method.to_owned()))
                .or_insert((0, outcome))
                .0 += 1;
        }
        assert!(
            requests > 0,
            "{peer}: no requests to the manager in {}",
            path.display()
        );
    }
    for ((peer, method), (count, outcome)) in &summary {
        println!("{peer:7} {method:26} x{count:<3} -> {outcome}");
    }
}

/// The fixture files of requests to the manager, registrations first (in the order captured).
fn requests_to_the_manager() -> Vec<(&'static str, String, Value)> {
    let mut files = Vec::new();
    for peer in ["peer-a", "peer-b"] {
        for name in fixture_files(peer)
            .into_iter()
            .filter(|name| name.ends_with("__to_LM.json"))
        {
            let fixture = fixture(&format!("{peer}/{name}"));
            files.push((peer, name, fixture));
        }
    }
    let is_registration = |fixture: &Value| {
        fixture["request"]["params"]["message_type"]
            .as_str()
            .is_some_and(|t| t.ends_with("REGISTER_REQUEST"))
    };
    files.sort_by_key(|(peer, name, fixture)| (!is_registration(fixture), *peer, name.clone()));
    files
}

/// The checks every JSON-RPC response of ours passes: 2.0, the id echoed, exactly one of result/error.
fn assert_framed(response: &Value, id: &Value, context: &str) {
    assert_eq!(response["jsonrpc"], "2.0", "{context}: {response}");
    assert_eq!(&response["id"], id, "{context}: id not echoed: {response}");
    let (result, error) = (response.get("result"), response.get("error"));
    assert!(
        result.is_some() != error.is_some(),
        "{context}: exactly one of result/error: {response}"
    );
}

/// A JSON-RPC error with this code and league.v2 error code (`None`: a framing error, no LEAGUE_ERROR).
fn assert_error(response: &Value, rpc: i64, league: Option<&str>, context: &str) {
    assert_eq!(response["error"]["code"], rpc, "{context}: {response}");
    match league {
        Some(code) => {
            assert_eq!(
                response["error"]["data"]["error_code"], code,
                "{context}: {response}"
            );
            assert_eq!(
                response["error"]["data"]["message_type"], "LEAGUE_ERROR",
                "{context}: {response}"
            );
        }
        None => assert!(response["error"].get("data").is_none(), "{context}: {response}"),
    }
}

fn assert_utc(value: &Value, context: &str) {
    let text = value
        .as_str()
        .unwrap_or_else(|| panic!("{context}: no timestamp"));
    assert_eq!(timestamp::read(text), Reading::Utc, "{context}: {text}");
}

/// Ids and tokens the fixture's agents were given, and ours for the same registrations.
#[derive(Default)]
struct Substitutions {
    tokens: HashMap<String, String>,
    ids: HashMap<(&'static str, String), String>,
}

impl Substitutions {
    /// The fixture's request with our tokens and ids where it used theirs.
    fn apply(&self, peer: &'static str, mut request: Value) -> Value {
        let params = &mut request["params"];
        if let Some(ours) = params["auth_token"]
            .as_str()
            .and_then(|theirs| self.tokens.get(theirs))
        {
            params["auth_token"] = ours.clone().into();
        }
        if let Some((role, id)) = params["sender"].as_str().and_then(|s| s.split_once(':'))
            && let Some(ours) = self.ids.get(&(peer, id.to_owned()))
        {
            params["sender"] = format!("{role}:{ours}").into();
        }
        // A pulling referee names itself.
        if let Some(ours) = params["referee_id"]
            .as_str()
            .and_then(|theirs| self.ids.get(&(peer, theirs.to_owned())))
        {
            params["referee_id"] = ours.clone().into();
        }
        request
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn fixture_requests_to_the_manager_get_the_answers_their_agents_read() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway(&manager, Mode::Lenient, Limits::default()).await;
    let agents_a = spawn_agents(Behaviour::PeerA).await;
    let agents_b = spawn_agents(Behaviour::PeerB).await;
    let mut substitutions = Substitutions::default();
    let mut registered: Vec<(&str, String, String)> = Vec::new();
    let mut started = false;
    let mut table = Vec::new();
    let files = requests_to_the_manager();
    assert_eq!(
        files.len(),
        11,
        "every __to_LM.json fixture (4 of peer-a, 7 of peer-b)"
    );
    for (peer, name, fixture) in &files {
        let context = format!("{peer}/{name}");
        let mut request = fixture["request"].clone();
        let recorded = &fixture["response"]["result"];
        let method = request["method"].as_str().expect("method").to_owned();
        let id = request["id"].clone();
        let message_type = request["params"]["message_type"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if message_type.ends_with("REGISTER_REQUEST") {
            // Both implementations ran on the same localhost ports: each registration gets an endpoint
            // of its own (a fake agent that behaves like that implementation's players).
            let meta = if message_type.starts_with("REFEREE") {
                "referee_meta"
            } else {
                "player_meta"
            };
            let agents = if *peer == "peer-a" { &agents_a } else { &agents_b };
            let agent_name = name.split('_').next().expect("NN").to_owned();
            request["params"][meta]["contact_endpoint"] = agents.endpoint(&agent_name).into();
            let response = gateway.post(request.to_string()).await.json();
            assert_framed(&response, &id, &context);
            let result = &response["result"];
            assert_eq!(result["status"], "ACCEPTED", "{context}: {response}");
            assert_eq!(result["protocol"], "league.v2", "{context}");
            assert_eq!(result["message_type"], recorded["message_type"], "{context}");
            assert_utc(&result["timestamp"], &context);
            if let Some(conversation) = request["params"]["conversation_id"].as_str() {
                assert_eq!(
                    result["conversation_id"], conversation,
                    "{context}: the conversation is echoed"
                );
            }
            let (id_field, prefix) = if meta == "referee_meta" {
                ("referee_id", "REF")
            } else {
                ("player_id", "P")
            };
            let ours = result[id_field]
                .as_str()
                .unwrap_or_else(|| panic!("{context}: no {id_field}"));
            assert!(
                ours.strip_prefix(prefix)
                    .is_some_and(|n| n.len() == 2 && n.chars().all(|c| c.is_ascii_digit())),
                "{context}: {id_field} {ours}"
            );
            let token = result["auth_token"].as_str().filter(|t| t.len() >= 32);
            let token = token.unwrap_or_else(|| panic!("{context}: no usable auth_token: {response}"));
            if meta == "player_meta" {
                assert_eq!(
                    result["league_id"], recorded["league_id"],
                    "{context}: the league the player joined"
                );
            }
            let theirs = recorded["auth_token"].as_str().expect("their token");
            substitutions.tokens.insert(theirs.to_owned(), token.to_owned());
            let their_id = recorded[id_field].as_str().expect("their id").to_owned();
            substitutions.ids.insert((peer, their_id), ours.to_owned());
            registered.push((peer, ours.to_owned(), token.to_owned()));
            table.push(format!("{context:60} ACCEPTED {ours}"));
            continue;
        }
        let request = substitutions.apply(peer, request);
        let response = gateway.post(request.to_string()).await.json();
        assert_framed(&response, &id, &context);
        let outcome = match method.as_str() {
            // peer-b's referee asks without a token, from the address of its contact endpoint (this
            // machine): the registrations, never a token.
            "league_query" => {
                let result = &response["result"];
                assert_eq!(result["success"], true, "{context}: {response}");
                assert!(
                    result["players"].as_array().is_some_and(|p| !p.is_empty()),
                    "{context}: {response}"
                );
                assert!(
                    result["referees"].as_array().is_some_and(|r| !r.is_empty()),
                    "{context}: {response}"
                );
                for (_, _, token) in &registered {
                    assert!(
                        !response.to_string().contains(token.as_str()),
                        "{context}: a token shown"
                    );
                }
                "the registrations (tokenless, from the referee's address)".to_owned()
            }
            "get_assigned_matches" => {
                let matches = response["result"]["matches"].as_array();
                assert!(matches.is_some(), "{context}: {response}");
                "its matches (tokenless, from the referee's address)".to_owned()
            }
            "start_league" => {
                // An operator action: refused without the operator's token, whoever asks.
                assert_error(&response, -32011, Some("E011"), &context);
                let mut with_token = request.clone();
                with_token["params"]["auth_token"] = OPERATOR_TOKEN.into();
                let response = gateway.post(with_token.to_string()).await.json();
                assert_framed(&response, &id, &context);
                if started {
                    assert_error(&response, -32008, Some("E008"), &format!("{context} (again)"));
                    "E011; with the operator token: E008 already running".to_owned()
                } else {
                    started = true;
                    let result = &response["result"];
                    assert_eq!(result["status"], "STARTED", "{context}: {response}");
                    assert_eq!(result["success"], true, "{context}");
                    assert_eq!(result["league_id"], LEAGUE_ID, "{context}");
                    for field in ["total_rounds", "total_matches"] {
                        assert!(
                            recorded.get(field).is_some(),
                            "{context}: the agent reads {field}"
                        );
                        assert!(
                            result[field].as_u64().is_some_and(|n| n >= 1),
                            "{context}: {field}"
                        );
                    }
                    "E011; with the operator token: STARTED".to_owned()
                }
            }
            // peer-a's referee reports a match it was never given here (and names players by peer-a's
            // ids): E002 when a named player is not in our R1M1, else E015 (it holds no lease). peer-b's
            // report carries no token.
            "MATCH_RESULT_REPORT" => {
                let code = response["error"]["data"]["error_code"]
                    .as_str()
                    .unwrap_or_default();
                assert!(matches!(code, "E002" | "E015"), "{context}: {response}");
                format!("{code} not this referee's match")
            }
            "report_match_result" => {
                assert_error(&response, -32011, Some("E011"), &context);
                "E011 no token".to_owned()
            }
            "get_standings" => {
                assert_error(&response, -32011, Some("E011"), &context);
                // peer-b sends no token; the player's own, as a Bearer header, is what we require.
                let (_, _, token) = registered
                    .iter()
                    .find(|(p, id, _)| p == peer && id.starts_with('P'))
                    .expect("a player of this peer");
                let bearer = format!("Bearer {token}");
                let reply = gateway
                    .post_with(request.to_string(), &[("authorization", bearer.as_str())])
                    .await;
                let response = reply.json();
                assert_framed(&response, &id, &context);
                let result = &response["result"];
                assert_eq!(
                    result["message_type"], "LEAGUE_QUERY_RESPONSE",
                    "{context}: {response}"
                );
                assert_eq!(result["success"], true, "{context}: {response}");
                let rows = result["data"]["standings"].as_array().expect("standings");
                assert_eq!(rows.len(), 2, "{context}: both registered players: {response}");
                let read = recorded["standings"][0].as_object().expect("their row");
                for row in rows {
                    for field in read.keys() {
                        assert!(
                            row.get(field).is_some(),
                            "{context}: the agent reads {field}: {row}"
                        );
                    }
                }
                "E011; with the player's token as Bearer: LEAGUE_QUERY_RESPONSE".to_owned()
            }
            other => panic!("{context}: no expectation for {other}"),
        };
        table.push(format!("{context:60} {outcome}"));
    }
    for line in &table {
        println!("{line}");
    }
    // peer-b's registrations deviate (no envelope, basic-format timestamps): accepted, and recorded.
    let b_referee = substitutions.ids[&("peer-b", "REF01".to_owned())].clone();
    let b_player = substitutions.ids[&("peer-b", "P01".to_owned())].clone();
    let warnings = gateway
        .wait_for_warnings("peer-b's registration warnings", |w| {
            has_warning(w, &b_referee, "timestamp_format")
                && has_warning(w, &b_player, "missing_envelope_field")
        })
        .await;
    let missing = warnings
        .iter()
        .find(|w| w["agent_id"] == b_player.as_str() && w["kind"] == "missing_envelope_field")
        .expect("listed");
    // sender, timestamp and conversation_id (get_standings above is a debug shorthand: no envelope
    // expected, none counted).
    assert!(missing["count"].as_u64().is_some_and(|n| n >= 3), "{missing}");
    for (peer, id, _) in &registered {
        if *peer == "peer-a" {
            let kinds = warning_kinds(&warnings, id);
            assert!(
                !kinds
                    .iter()
                    .any(|k| k == "timestamp_format" || k == "missing_envelope_field"),
                "peer-a's {id} registered to the letter: {kinds:?}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn strict_mode_refuses_peer_b_registrations_and_accepts_peer_a() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway(&manager, Mode::Strict, Limits::default()).await;
    let agents = spawn_agents(Behaviour::Clean).await;
    let cases = [
        (
            "peer-a/01_REFEREE_REGISTER_REQUEST__REFEREE_REGISTER_REQUEST__to_LM.json",
            "referee_meta",
            None,
        ),
        (
            "peer-a/02_LEAGUE_REGISTER_REQUEST__LEAGUE_REGISTER_REQUEST__to_LM.json",
            "player_meta",
            None,
        ),
        // `"timestamp": "20261121T090441Z"`: basic format.
        (
            "peer-b/01_register_referee__REFEREE_REGISTER_REQUEST__to_LM.json",
            "referee_meta",
            Some("E021"),
        ),
        // No sender, timestamp or conversation_id.
        (
            "peer-b/04_register_player__LEAGUE_REGISTER_REQUEST__to_LM.json",
            "player_meta",
            Some("E003"),
        ),
    ];
    for (index, (file, meta, refusal)) in cases.into_iter().enumerate() {
        let mut request = fixture(file)["request"].clone();
        request["params"][meta]["contact_endpoint"] = agents.endpoint(&format!("strict{index}")).into();
        let before = snapshot(&manager.pool).await;
        let response = gateway.post(request.to_string()).await.json();
        assert_framed(&response, &request["id"], file);
        match refusal {
            None => assert_eq!(response["result"]["status"], "ACCEPTED", "{file}: {response}"),
            Some(code) => {
                assert_error(&response, -32602, Some(code), file);
                assert_eq!(
                    snapshot(&manager.pool).await,
                    before,
                    "{file}: nothing registered"
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------------
// Calls to players, through the PlayerService bridge

/// Every method a peer's players answered with a result, in the probes and the captured traffic, with
/// the params of each such request.
fn accepted_calls(peer: &str) -> BTreeMap<String, Vec<Value>> {
    let mut accepted: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    let mut note = |request: &Value, status_ok: bool, body: &Value| {
        let answered =
            body.get("result").is_some_and(|r| !r.is_null()) && body.get("error").is_none_or(Value::is_null);
        if status_ok && answered {
            let method = request["method"].as_str().expect("method").to_owned();
            accepted
                .entry(method)
                .or_default()
                .push(request["params"].clone());
        }
    };
    for name in fixture_files(&format!("{peer}/probes")) {
        let probe = fixture(&format!("{peer}/probes/{name}"));
        note(
            &probe["request"],
            probe["response"]["status"] == 200,
            &probe["response"]["body"],
        );
    }
    for name in fixture_files(peer)
        .into_iter()
        .filter(|name| name.ends_with("__to_P.json"))
    {
        let file = fixture(&format!("{peer}/{name}"));
        let ok = file["response_status"]
            .as_str()
            .is_some_and(|s| s.contains(" 200 "));
        note(&file["request"], ok, &file["response"]);
    }
    accepted
}

/// Keys (as paths) present in `reference` with a value and missing from `ours`. Maps keyed by player id
/// are not compared key by key; `auth_token` is left out (our calls carry none, see the report in
/// `bridge_calls_each_peer_in_a_dialect_its_players_accept`).
fn missing_keys(reference: &Value, ours: &Value, path: &str, missing: &mut Vec<String>) {
    match (reference, ours) {
        (Value::Object(reference), Value::Object(ours)) => {
            for (key, value) in reference {
                let here = format!("{path}.{key}");
                // A field sent as null says nothing the agent could need.
                if key == "auth_token" || value.is_null() {
                    continue;
                }
                match ours.get(key) {
                    None => missing.push(here),
                    Some(_) if matches!(key.as_str(), "choices" | "player_choices" | "score") => {}
                    Some(mine) => missing_keys(value, mine, &here, missing),
                }
            }
        }
        (Value::Array(reference), Value::Array(ours)) => {
            if let (Some(first), Some(mine)) = (reference.first(), ours.first()) {
                missing_keys(first, mine, &format!("{path}[]"), missing);
            }
        }
        _ => {}
    }
}

/// Where the specification and a peer's own manager disagree, we send the specification's field.
const SPECIFICATION_OVER_TRAFFIC: &[&str] = &[
    // The specification's standings rows have `played`; peer-a's manager sends `matches_played`.
    "params.standings[].matches_played",
    "params.final_standings[].matches_played",
];

/// Checks the calls `agent` received against what its peer's players accepted.
fn assert_calls_accepted(peer: &str, calls: &[Received], player_id: &str) -> Vec<String> {
    let accepted = accepted_calls(peer);
    let mut lines = Vec::new();
    for call in calls {
        let references = accepted.get(&call.method).unwrap_or_else(|| {
            panic!(
                "{peer} never answered {} (accepted: {:?})",
                call.method,
                accepted.keys()
            )
        });
        let mut best: Option<Vec<String>> = None;
        for reference in references {
            let mut missing = Vec::new();
            missing_keys(reference, &call.params, "params", &mut missing);
            missing.retain(|path| !SPECIFICATION_OVER_TRAFFIC.contains(&path.as_str()));
            if best.as_ref().is_none_or(|b| missing.len() < b.len()) {
                best = Some(missing);
            }
        }
        let missing = best.unwrap_or_default();
        assert!(
            missing.is_empty(),
            "{peer}: our {} lacks fields every accepted {} had: {missing:?}\nours: {}",
            call.method,
            call.method,
            call.params
        );
        let params = &call.params;
        assert_eq!(params["protocol"], "league.v2", "{}", call.method);
        assert_utc(&params["timestamp"], &call.method);
        let sender = params["sender"].as_str().unwrap_or_default();
        assert!(
            sender == "league_manager" || sender == "referee:REF01",
            "{}: sender {sender}",
            call.method
        );
        if let Some(player) = params.get("player_id") {
            assert_eq!(player, player_id, "{}", call.method);
        }
        lines.push(format!("{peer}: {:24} accepted by {peer}'s players", call.method));
    }
    lines
}

fn context(conversation_id: &str) -> Option<MatchContext> {
    Some(MatchContext {
        league_id: LEAGUE_ID.into(),
        round_id: 1,
        match_id: "R1M1".into(),
        game_type: "even_odd".into(),
        conversation_id: conversation_id.into(),
        referee_id: "REF01".into(),
    })
}

fn deadline() -> Option<prost_types::Timestamp> {
    Some(prost_types::Timestamp::from(
        SystemTime::now() + Duration::from_secs(10),
    ))
}

fn invitation(player_id: &str, opponent_id: &str) -> InviteToMatchRequest {
    InviteToMatchRequest {
        player_id: player_id.into(),
        context: context("conv-invite"),
        role_in_match: Role::PlayerA as i32,
        opponent_id: opponent_id.into(),
        deadline: deadline(),
    }
}

fn move_request(player_id: &str, opponent_id: &str) -> RequestMoveRequest {
    RequestMoveRequest {
        player_id: player_id.into(),
        context: context("conv-move"),
        opponent_id: opponent_id.into(),
        step: 1,
        attempt: 1,
        deadline: deadline(),
        your_standings: Some(PlayerRecord::default()),
        step_context: None,
    }
}

fn game_over(player_id: &str, opponent_id: &str) -> NotifyGameOverRequest {
    let metadata = json!({
        "drawn_number": 8,
        "number_parity": "even",
        "choices": {player_id: "even", opponent_id: "odd"},
    });
    NotifyGameOverRequest {
        player_id: player_id.into(),
        context: context("conv-over"),
        result: Some(MatchResult {
            match_id: "R1M1".into(),
            status: ResultStatus::Win as i32,
            winner_player_id: player_id.into(),
            scores: vec![
                PlayerScore {
                    player_id: player_id.into(),
                    points: 3,
                },
                PlayerScore {
                    player_id: opponent_id.into(),
                    points: 0,
                },
            ],
            reason: "even_odd: 8 is even".into(),
            at_fault_player_ids: vec![],
            game_metadata: Some(convert::to_struct(metadata.as_object().expect("object"))),
        }),
    }
}

fn league_events(player_id: &str, opponent_id: &str) -> NotifyLeagueEventsRequest {
    let row = |rank: u32, id: &str, points: u32| StandingRow {
        rank,
        player_id: id.into(),
        display_name: id.into(),
        played: 1,
        wins: u32::from(points == 3),
        draws: 0,
        losses: u32::from(points == 0),
        technical_losses: 0,
        points,
        ..StandingRow::default()
    };
    let standings = vec![row(1, player_id, 3), row(2, opponent_id, 0)];
    let scheduled = ScheduledMatch {
        league_id: LEAGUE_ID.into(),
        round_id: 1,
        match_id: "R1M1".into(),
        game_type: "even_odd".into(),
        player_a_id: player_id.into(),
        player_b_id: opponent_id.into(),
        status: MatchStatus::Ready as i32,
        referee_id: String::new(),
        ..ScheduledMatch::default()
    };
    let events = vec![
        Event::RoundAnnouncement(RoundAnnouncement {
            round_id: 1,
            matches: vec![scheduled],
        }),
        Event::StandingsUpdate(StandingsUpdate {
            round_id: 1,
            standings: standings.clone(),
        }),
        Event::RoundCompleted(RoundCompleted {
            round_id: 1,
            matches_completed: 1,
            next_round_id: 0,
            summary: Some(RoundSummary {
                total_matches: 1,
                wins: 1,
                draws: 0,
                technical_losses: 0,
            }),
        }),
        Event::LeagueCompleted(LeagueCompleted {
            total_rounds: 1,
            total_matches: 1,
            champion: standings.first().cloned(),
            final_standings: standings,
        }),
    ];
    NotifyLeagueEventsRequest {
        deliveries: events
            .into_iter()
            .enumerate()
            .map(|(n, event)| LeagueEventDelivery {
                event: Some(NotifyLeagueEventRequest {
                    player_id: String::new(),
                    league_id: LEAGUE_ID.into(),
                    event_id: format!("event-{n}"),
                    event: Some(event),
                }),
                player_ids: vec![player_id.into()],
            })
            .collect(),
    }
}

/// The league.v2 code of a refused bridge call.
fn refusal<T>(outcome: Result<tonic::Response<T>, tonic::Status>, what: &str) -> ErrorCode {
    let status = outcome.err().unwrap_or_else(|| panic!("{what}: accepted"));
    league_proto::error_code::code_of(&status)
        .unwrap_or_else(|| panic!("{what}: no league.v2 code: {status}"))
}

fn parity(response: &RequestMoveResponse) -> Option<String> {
    let payload = response.move_payload.as_ref()?;
    match &payload.fields.get("parity_choice")?.kind {
        Some(prost_types::value::Kind::StringValue(choice)) => Some(choice.clone()),
        _ => None,
    }
}

/// Registers a fake agent with the fixture's own registration request (its method, so its dialect).
async fn register_like(gateway: &TestGateway, file: &str, agents: &FakeAgents, name: &str) -> Registered {
    let mut request = fixture(file)["request"].clone();
    let meta = if request["params"].get("referee_meta").is_some() {
        "referee_meta"
    } else {
        "player_meta"
    };
    request["params"][meta]["contact_endpoint"] = agents.endpoint(name).into();
    let method = request["method"].as_str().expect("method").to_owned();
    register(gateway, &method, request["params"].clone()).await
}

const PEER_A_PLAYER: &str = "peer-a/02_LEAGUE_REGISTER_REQUEST__LEAGUE_REGISTER_REQUEST__to_LM.json";
const PEER_B_PLAYER: &str = "peer-b/04_register_player__LEAGUE_REGISTER_REQUEST__to_LM.json";

/// Every call a referee and the manager make, through the bridge, to one agent.
async fn play_everything(
    gateway: &TestGateway,
    player: &str,
    opponent: &str,
) -> (bool, Option<String>, Vec<bool>) {
    let mut players = gateway.players();
    let joined = players
        .invite_to_match(invitation(player, opponent))
        .await
        .expect("invitation")
        .into_inner();
    let moved = players
        .request_move(move_request(player, opponent))
        .await
        .expect("move")
        .into_inner();
    players
        .notify_game_over(game_over(player, opponent))
        .await
        .expect("game over");
    let events = players
        .notify_league_events(league_events(player, opponent))
        .await
        .expect("events");
    (joined.accept, parity(&moved), events.into_inner().accepted)
}

#[tokio::test(flavor = "multi_thread")]
async fn bridge_calls_each_peer_in_a_dialect_its_players_accept() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway(&manager, Mode::Lenient, Limits::default()).await;
    let agents_a = spawn_agents(Behaviour::PeerA).await;
    let agents_b = spawn_agents(Behaviour::PeerB).await;
    let a = register_like(&gateway, PEER_A_PLAYER, &agents_a, "a").await;
    let b = register_like(&gateway, PEER_B_PLAYER, &agents_b, "b").await;

    // peer-a registered with the message type as method, so it is called that way; its answers carry
    // `"error": null` beside the result.
    let (accept, choice, events) = play_everything(&gateway, &a.id, &b.id).await;
    assert!(accept, "peer-a's GAME_JOIN_ACK says accept: true");
    assert_eq!(choice.as_deref(), Some("odd"), "peer-a's probe answer");
    assert_eq!(events, vec![true; 4]);
    // First the greeting its registration got (docs/protocol.md, "Sender forms").
    assert_eq!(
        agents_a.methods("a"),
        [
            "LEAGUE_STANDINGS_UPDATE",
            "GAME_INVITATION",
            "CHOOSE_PARITY_CALL",
            "GAME_OVER",
            "ROUND_ANNOUNCEMENT",
            "LEAGUE_STANDINGS_UPDATE",
            "ROUND_COMPLETED",
            "LEAGUE_COMPLETED"
        ]
    );
    let mut table = assert_calls_accepted("peer-a", &agents_a.received(), &a.id);

    // peer-b registered with the canonical names; its players know only the three game methods and
    // answer -32601 to everything else, so each notification is tried canonically, then by message
    // type, then by the message type in lower case, then recorded as not implemented (never retried).
    let (accept, choice, events) = play_everything(&gateway, &b.id, &a.id).await;
    assert!(accept, "peer-b's GAME_JOIN_ACK says accept: true");
    assert_eq!(choice.as_deref(), Some("even"), "peer-b's probe answer");
    assert_eq!(
        events,
        vec![true; 4],
        "a notification an agent does not implement is not retried"
    );
    let methods = agents_b.methods("b");
    assert_eq!(
        methods,
        [
            // The greeting its registration got, which it implements in no dialect: its first -32601
            // (before any result) has the league ask it whether it is an MCP server, once (ADR 0071).
            "update_standings",
            "initialize",
            "LEAGUE_STANDINGS_UPDATE",
            "league_standings_update",
            "handle_game_invitation",
            "choose_parity",
            "notify_match_result",
            "notify_round",
            "ROUND_ANNOUNCEMENT",
            "round_announcement",
            "update_standings",
            "LEAGUE_STANDINGS_UPDATE",
            "league_standings_update",
            "notify_round_completed",
            "ROUND_COMPLETED",
            "round_completed",
            "notify_league_completed",
            "LEAGUE_COMPLETED",
            "league_completed"
        ]
    );
    let game_calls: Vec<Received> = agents_b.received().into_iter().skip(4).take(3).collect();
    table.extend(assert_calls_accepted("peer-b", &game_calls, &b.id));
    for line in &table {
        println!("{line}");
    }

    // Lenient mode: the deviations in their answers were accepted, and recorded against each.
    let warnings = gateway
        .wait_for_warnings("both peers' answer warnings", |w| {
            has_warning(w, &a.id, "result_with_error_null")
                && has_warning(w, &b.id, "timestamp_format")
                && has_warning(w, &b.id, "unimplemented_notification")
                && has_warning(w, &b.id, "missing_envelope_field")
        })
        .await;
    for id in [&a.id, &b.id] {
        println!("{id}: {:?}", warning_kinds(&warnings, id));
    }
    assert!(
        !has_warning(&warnings, &a.id, "timestamp_format"),
        "peer-a's timestamps are UTC"
    );
    assert!(
        !has_warning(&warnings, &a.id, "method_dialect_fallback"),
        "peer-a was called in its own dialect"
    );
    assert!(
        !has_warning(&warnings, &b.id, "method_dialect_fallback"),
        "peer-b was called in its own dialect"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn placeholder_tokens_in_replies_are_recorded_in_lenient_mode() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway(&manager, Mode::Lenient, Limits::default()).await;
    let agents_b = spawn_agents(Behaviour::PeerB).await;
    let b = register_like(&gateway, PEER_B_PLAYER, &agents_b, "b").await;
    let joined = gateway
        .players()
        .invite_to_match(invitation(&b.id, "P99"))
        .await
        .expect("invitation");
    assert!(joined.into_inner().accept);
    // The answer's timestamp and token deviations are noted together, so they reach the list together.
    let warnings = gateway
        .wait_for_warnings("peer-b's timestamp warning", |w| {
            has_warning(w, &b.id, "timestamp_format")
        })
        .await;
    // peer-b's GAME_JOIN_ACK carries `"auth_token": "tok_p01_temp"`, a placeholder, not the token it was
    // issued: a lenient-mode deviation, recorded.
    assert!(
        has_warning(&warnings, &b.id, "placeholder_token_in_reply"),
        "no placeholder_token_in_reply warning for {}: {:?}",
        b.id,
        warning_kinds(&warnings, &b.id)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn strict_mode_refuses_the_deviating_answers() {
    let manager = spawn_manager().await;
    let lenient = spawn_gateway(&manager, Mode::Lenient, Limits::default()).await;
    let strict = spawn_gateway(&manager, Mode::Strict, Limits::default()).await;
    let agents_a = spawn_agents(Behaviour::PeerA).await;
    let agents_b = spawn_agents(Behaviour::PeerB).await;
    let agents_q = spawn_agents(Behaviour::Quirky).await;
    // Registered through the lenient gateway; the strict one finds them through the manager, as a
    // second replica would.
    let a = register_like(&lenient, PEER_A_PLAYER, &agents_a, "a").await;
    let b = register_like(&lenient, PEER_B_PLAYER, &agents_b, "b").await;
    let q = register(
        &lenient,
        "register_player",
        player_registration("quirky", &agents_q.endpoint("q")),
    )
    .await;
    let mut players = strict.players();
    let invite = |id: &str| invitation(id, "P99");
    let mut table = Vec::new();
    // peer-b: `"timestamp": "20261121T090508Z"` in its answers.
    let code = refusal(players.invite_to_match(invite(&b.id)).await, "peer-b invitation");
    assert_eq!(code, ErrorCode::InvalidTimestamp);
    table.push(format!("peer-b  InviteToMatch   -> {code}"));
    let code = refusal(
        players.request_move(move_request(&b.id, "P99")).await,
        "peer-b move",
    );
    assert_eq!(code, ErrorCode::InvalidTimestamp);
    table.push(format!("peer-b  RequestMove     -> {code}"));
    // Its GAME_OVER acknowledgement is a clean JSON-RPC response.
    players
        .notify_game_over(game_over(&b.id, "P99"))
        .await
        .expect("peer-b's clean answer");
    table.push("peer-b  NotifyGameOver  -> ok".to_owned());
    // peer-a: `"error": null` beside every result.
    let code = refusal(players.invite_to_match(invite(&a.id)).await, "peer-a invitation");
    assert_eq!(code, ErrorCode::InvalidMessageFormat);
    table.push(format!("peer-a  InviteToMatch   -> {code}"));
    let code = refusal(
        players.request_move(move_request(&a.id, "P99")).await,
        "peer-a move",
    );
    assert_eq!(code, ErrorCode::InvalidMessageFormat);
    table.push(format!("peer-a  RequestMove     -> {code}"));
    // A notification's answer that strict mode refuses still means the agent got it: delivered, with a
    // warning, never sent again (it would get the same answer).
    players
        .notify_game_over(game_over(&a.id, "P99"))
        .await
        .expect("peer-a's game over is delivered");
    table.push("peer-a  NotifyGameOver  -> ok, refused_notification_answer".to_owned());
    let events = players
        .notify_league_events(league_events(&a.id, "P99"))
        .await
        .expect("events")
        .into_inner();
    assert_eq!(
        events.accepted,
        vec![true; 4],
        "refused answers are deliveries with a warning"
    );
    table.push("peer-a  NotifyLeagueEvents -> accepted [true; 4]".to_owned());
    strict
        .wait_for_warnings("peer-a's refused notification answers", |w| {
            has_warning(w, &a.id, "refused_notification_answer")
        })
        .await;
    // Unwrapped answers, `accepted` and `choice`.
    let code = refusal(players.invite_to_match(invite(&q.id)).await, "quirky invitation");
    assert_eq!(code, ErrorCode::InvalidMessageFormat);
    table.push(format!("quirky  InviteToMatch   -> {code}"));
    let code = refusal(
        players.request_move(move_request(&q.id, "P99")).await,
        "quirky move",
    );
    assert_eq!(code, ErrorCode::InvalidMessageFormat);
    table.push(format!("quirky  RequestMove     -> {code}"));
    for line in &table {
        println!("strict: {line}");
    }
    // The same answers through the lenient gateway: accepted.
    let mut players = lenient.players();
    for id in [&a.id, &b.id, &q.id] {
        let joined = players
            .invite_to_match(invite(id))
            .await
            .expect("lenient invitation")
            .into_inner();
        assert!(joined.accept, "{id}");
        let moved = players
            .request_move(move_request(id, "P99"))
            .await
            .expect("lenient move")
            .into_inner();
        assert!(parity(&moved).is_some(), "{id}");
    }
    lenient
        .wait_for_warnings("the quirky agent's warnings", |w| {
            has_warning(w, &q.id, "bare_result") && has_warning(w, &q.id, "field_alias")
        })
        .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bare_ok_to_an_invitation_joins_inside_the_referee_s_join_deadline() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway(&manager, Mode::Lenient, Limits::default()).await;
    let agents = spawn_agents(Behaviour::BareOk).await;
    let okay = register_player(&gateway, &agents, "okay").await;
    // As an external referee's invitation reaches the bridge: the deadline in the message is the league's
    // join timeout (5 s) from when the gateway took the referee's call, and the referee's own 5 s began
    // before that (its sending, the network, the gateway's lookups): a second earlier here. Counting the
    // "ok" as joining only once the message's deadline had passed, as before, left the referee with
    // nothing in its time (E001 "no answer to GAME_JOIN_ACK within 5s").
    let join_timeout = Duration::from_secs(5);
    let mut request = tonic::Request::new(InviteToMatchRequest {
        deadline: Some(prost_types::Timestamp::from(SystemTime::now() + join_timeout)),
        ..invitation(&okay.id, "P99")
    });
    request.set_timeout(join_timeout - Duration::from_secs(1));
    let joined = gateway
        .players()
        .invite_to_match(request)
        .await
        .expect("joined within the referee's deadline")
        .into_inner();
    assert!(joined.accept, "a bare ok is a join: {joined:?}");
    let invited = agents
        .received()
        .iter()
        .filter(|call| call.message_type() == "GAME_INVITATION")
        .count();
    assert_eq!(invited, 1, "one invitation, answered once");
}

#[tokio::test(flavor = "multi_thread")]
async fn separate_replies_and_a_dialect_learned_from_the_answers() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway(&manager, Mode::Lenient, Limits::default()).await;
    let separate = spawn_agents(Behaviour::SeparateReplies).await;
    let agents_b = spawn_agents(Behaviour::PeerB).await;

    // An agent that answers `{"status": "joined"}` and sends GAME_JOIN_ACK / CHOOSE_PARITY_RESPONSE as
    // calls of its own to the referee endpoint it was given (the gateway's /mcp).
    let s = register(
        &gateway,
        "register_player",
        player_registration("separate", &separate.endpoint("s")),
    )
    .await;
    separate.set_credentials("s", &s);
    let mut players = gateway.players();
    let joined = players
        .invite_to_match(invitation(&s.id, "P99"))
        .await
        .expect("invitation")
        .into_inner();
    assert!(joined.accept, "the separate GAME_JOIN_ACK said accept: true");
    let moved = players
        .request_move(move_request(&s.id, "P99"))
        .await
        .expect("move")
        .into_inner();
    assert_eq!(
        parity(&moved).as_deref(),
        Some("odd"),
        "the separate CHOOSE_PARITY_RESPONSE"
    );
    // The gateway hands a reply to the waiting call before it answers the reply's own HTTP request.
    let answers = separate.wait_for_separate_answers(2).await;
    for answer in &answers {
        assert_eq!(answer["result"]["status"], "received", "{answer}");
    }

    // A peer-b player registered with the message type as method: its -32601 teaches the bridge its
    // dialect, once.
    let mut message = player_registration("b-msgtype", &agents_b.endpoint("b"));
    message["sender"] = "player:b-msgtype".into();
    let b = register(&gateway, "LEAGUE_REGISTER_REQUEST", message).await;
    let joined = players
        .invite_to_match(invitation(&b.id, "P99"))
        .await
        .expect("invitation")
        .into_inner();
    assert!(joined.accept);
    players
        .request_move(move_request(&b.id, "P99"))
        .await
        .expect("move");
    assert_eq!(
        agents_b.methods("b"),
        [
            // The greeting, in no dialect it knows (so it teaches nothing; asked once whether it is an
            // MCP server after its first -32601)...
            "LEAGUE_STANDINGS_UPDATE",
            "initialize",
            "update_standings",
            "league_standings_update",
            // ...then the game's calls.
            "GAME_INVITATION",
            "handle_game_invitation",
            "choose_parity"
        ]
    );
    gateway
        .wait_for_warnings("the dialect fallback warning", |w| {
            has_warning(w, &b.id, "method_dialect_fallback")
        })
        .await;
}
