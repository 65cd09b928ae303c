//! One table of bad inputs, each sent to a real gateway in front of a real manager: the exact answer
//! expected (HTTP status, JSON-RPC code, league.v2 `error.data.error_code`), and a database snapshot
//! before and after proving the refused call changed nothing.

use crate::support;

use std::fmt::Write as _;

use league_v2::compliance::{Mode, kinds};
use serde_json::{Value, json};
use support::*;

/// Which gateway a case goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Via {
    Lenient,
    Strict,
    /// `LEAGUE_AGENT_RATE_LIMIT=1`.
    RateLimited,
    /// `LEAGUE_MAX_CONNECTIONS=1`.
    OneConnection,
}

impl Via {
    fn label(self) -> &'static str {
        match self {
            Via::Lenient => "lenient",
            Via::Strict => "strict",
            Via::RateLimited => "rate=1",
            Via::OneConnection => "conns=1",
        }
    }
}

#[derive(Debug, Clone)]
enum Send {
    Body(Vec<u8>),
    WithHeaders(Vec<u8>, Vec<(&'static str, String)>),
    /// The same body again and again until the gateway refuses it.
    Flood(Vec<u8>),
    /// A second connection while the only slot is held.
    ExtraConnection,
}

#[derive(Debug, Clone, PartialEq)]
enum Expect {
    /// HTTP status, JSON-RPC code, league.v2 code (`None`: a framing error without LEAGUE_ERROR data).
    Error(u16, i64, Option<&'static str>),
    /// A registration answered `status: REJECTED` with this code (HTTP 200, a JSON-RPC result).
    Rejected(&'static str),
    /// A LEAGUE_QUERY_RESPONSE with `success: false` and this code.
    QueryFailed(&'static str),
    /// HTTP 204, no body (nothing but notifications).
    NoContent,
    /// A batch answer: per response, `None` for a result or the JSON-RPC and league.v2 codes.
    Batch(Vec<Option<(i64, Option<&'static str>)>>),
}

#[derive(Debug)]
struct Case {
    name: String,
    via: Via,
    send: Send,
    expect: Expect,
    /// The one change a refusal is meant to make: a compliance warning of this kind for this agent,
    /// recorded once. The gateway flushes warnings in the background, so the case waits for it; without
    /// the wait it could land during a later case and be taken for that case's change.
    leaves: Option<(&'static str, String)>,
}

impl Case {
    fn leaving(self, kind: &'static str, agent_id: &str) -> Case {
        Case {
            leaves: Some((kind, agent_id.to_owned())),
            ..self
        }
    }
}

/// Table rows, `name => fields…;`, one to a line.
macro_rules! rows {
    ($($name:expr => $($field:expr),+;)*) => { vec![$(($name, $($field),+)),*] };
}

fn case(name: impl Into<String>, via: Via, send: Send, expect: Expect) -> Case {
    Case {
        name: name.into(),
        via,
        send,
        expect,
        leaves: None,
    }
}

fn error(http: u16, rpc: i64, league: &'static str) -> Expect {
    Expect::Error(http, rpc, Some(league))
}

/// An invalid-params error (E002, E003, E018, E021 answer as JSON-RPC -32602).
fn params(league: &'static str) -> Expect {
    Expect::Error(200, -32602, Some(league))
}

fn framing(rpc: i64) -> Expect {
    Expect::Error(200, rpc, None)
}

const ID: i64 = 7;

fn call(method: &str, params: Value) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "method": method, "params": params, "id": ID})
        .to_string()
        .into_bytes()
}

fn raw(text: &str) -> Send {
    Send::Body(text.as_bytes().to_vec())
}

fn body(method: &str, params: Value) -> Send {
    Send::Body(call(method, params))
}

/// `base` with `path` set to `value` (`Value::Null`… or removed when `value` is `None`).
fn set(base: &Value, path: &[&str], value: Option<Value>) -> Value {
    let mut edited = base.clone();
    let (last, parents) = path.split_last().expect("a path");
    let mut target = &mut edited;
    for key in parents {
        target = &mut target[*key];
    }
    let object = target.as_object_mut().expect("an object");
    match value {
        Some(value) => object.insert((*last).to_owned(), value),
        None => object.remove(*last),
    };
    edited
}

fn with(base: &Value, path: &[&str], value: Value) -> Value {
    set(base, path, Some(value))
}

fn without(base: &Value, path: &[&str]) -> Value {
    set(base, path, None)
}

/// A complete LEAGUE_QUERY from `who`.
fn query(who: &Registered, query_type: &str) -> Value {
    json!({
        "protocol": "league.v2",
        "message_type": "LEAGUE_QUERY",
        "sender": format!("player:{}", who.id),
        "timestamp": "2026-11-21T08:54:00Z",
        "conversation_id": "conv-query",
        "auth_token": who.token,
        "league_id": LEAGUE_ID,
        "query_type": query_type,
        "query_params": {},
    })
}

/// A complete separate-call reply (GAME_JOIN_ACK or CHOOSE_PARITY_RESPONSE) from `who`.
fn reply(message_type: &str, who: &Registered, match_id: &str) -> Value {
    let mut message = json!({
        "protocol": "league.v2",
        "message_type": message_type,
        "sender": format!("player:{}", who.id),
        "timestamp": "2026-11-21T08:54:00Z",
        "conversation_id": "conv-reply",
        "auth_token": who.token,
        "match_id": match_id,
        "player_id": who.id,
    });
    if message_type == "GAME_JOIN_ACK" {
        message["accept"] = true.into();
        message["arrival_timestamp"] = "2026-11-21T08:54:00Z".into();
    } else {
        message["parity_choice"] = "even".into();
    }
    message
}

/// What came back, in the table's terms (the form [`describe`] gives an expectation).
#[derive(Debug, Clone, PartialEq)]
struct Observed {
    answer: String,
    /// Something about the answer that no expectation allows (an id not echoed, a result and an error).
    flaw: Option<String>,
}

/// `rpc league` of an error response (`-` when it carries no league.v2 code), or `ok`.
fn codes(response: &Value) -> String {
    match response.get("error") {
        Some(error) => format!(
            "{} {}",
            error["code"],
            error["data"]["error_code"].as_str().unwrap_or("-")
        ),
        None => "ok".to_owned(),
    }
}

fn observe(status: u16, body: &[u8], request: Option<&[u8]>) -> Observed {
    let observed = |answer: String, flaw: Option<String>| Observed { answer, flaw };
    if body.is_empty() {
        let answer = if status == 204 {
            "204 no body".to_owned()
        } else {
            format!("{status} (empty body)")
        };
        return observed(answer, None);
    }
    let Ok(response) = serde_json::from_slice::<Value>(body) else {
        return observed(
            format!("{status} not JSON"),
            Some(String::from_utf8_lossy(body).into_owned()),
        );
    };
    if let Value::Array(items) = &response {
        let items: Vec<String> = items.iter().map(codes).collect();
        return observed(format!("{status} [{}]", items.join(", ")), None);
    }
    let mut flaw = None;
    if response.get("result").is_some() == response.get("error").is_some() {
        flaw = Some(format!("not exactly one of result/error: {response}"));
    }
    // Bounds answered before the body was read cannot know the id; everything else echoes it.
    let sent_id = request
        .and_then(|request| serde_json::from_slice::<Value>(request).ok())
        .and_then(|request| request.get("id").cloned())
        .filter(|id| id.is_string() || id.is_number());
    let expected_id = match status {
        200 | 429 => sent_id.unwrap_or(Value::Null),
        _ => Value::Null,
    };
    if response["id"] != expected_id {
        flaw = Some(format!("id {} where {expected_id} was expected", response["id"]));
    }
    if response.get("error").is_some() {
        return observed(format!("{status} {}", codes(&response)), flaw);
    }
    let result = &response["result"];
    let code = |value: &Value| value.as_str().unwrap_or("-").to_owned();
    let answer = match (result["status"].as_str(), result["success"].as_bool()) {
        (Some("REJECTED"), _) => format!("{status} REJECTED {}", code(&result["error_code"])),
        (_, Some(false)) => format!("{status} success:false {}", code(&result["error"]["error_code"])),
        _ => format!("{status} accepted"),
    };
    observed(answer, flaw)
}

fn describe(expect: &Expect) -> String {
    match expect {
        Expect::Error(http, rpc, league) => format!("{http} {rpc} {}", league.unwrap_or("-")),
        Expect::Rejected(code) => format!("200 REJECTED {code}"),
        Expect::QueryFailed(code) => format!("200 success:false {code}"),
        Expect::NoContent => "204 no body".to_owned(),
        Expect::Batch(items) => {
            let items: Vec<String> = items
                .iter()
                .map(|item| match item {
                    None => "ok".to_owned(),
                    Some((rpc, league)) => format!("{rpc} {}", league.unwrap_or("-")),
                })
                .collect();
            format!("200 [{}]", items.join(", "))
        }
    }
}

struct Gateways {
    lenient: TestGateway,
    strict: TestGateway,
    rate_limited: TestGateway,
    one_connection: TestGateway,
}

async fn run(gateways: &Gateways, case: &Case) -> Observed {
    let gateway = match case.via {
        Via::Lenient => &gateways.lenient,
        Via::Strict => &gateways.strict,
        Via::RateLimited => &gateways.rate_limited,
        Via::OneConnection => &gateways.one_connection,
    };
    match &case.send {
        Send::Body(body) => {
            let reply = gateway.post(body.clone()).await;
            observe(reply.status, &reply.body, Some(body))
        }
        Send::WithHeaders(body, headers) => {
            let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let reply = gateway.post_with(body.clone(), &headers).await;
            observe(reply.status, &reply.body, Some(body))
        }
        Send::Flood(body) => {
            // The bucket holds one request a second; far fewer than 50 requests fit in a second.
            for _ in 0..50 {
                let reply = gateway.post(body.clone()).await;
                if reply.status != 200 {
                    return observe(reply.status, &reply.body, Some(body));
                }
            }
            Observed {
                answer: "200 (never limited)".to_owned(),
                flaw: None,
            }
        }
        Send::ExtraConnection => {
            let held = hold_connection(gateway.http).await;
            let reply = unsolicited_reply(gateway.http).await;
            drop(held);
            observe(reply.status, &reply.body, None)
        }
    }
}

/// Cases that need no league in play (registration is open).
/// `endpoints`: alice's and the referee's contact endpoints.
fn registration_and_framing_cases(
    alice: &Registered,
    bob: &Registered,
    referee: &Registered,
    endpoints: (&str, &str),
) -> Vec<Case> {
    use Via::*;
    let endpoint = "http://127.0.0.1:9/newcomer/mcp";
    let player = player_registration("newcomer", endpoint);
    let referee_message = referee_registration("new-referee", "http://127.0.0.1:9/new-referee/mcp");
    let ask = query(alice, "GET_STANDINGS");
    let ping_note = json!({"jsonrpc": "2.0", "method": "ping"});
    let bad_note =
        json!({"jsonrpc": "2.0", "method": "register_player", "params": without(&player, &["player_meta"])});
    let mut cases = vec![
        // JSON and JSON-RPC framing.
        case("malformed JSON", Lenient, raw(r#"{"jsonrpc": "2.0", "method": "#), framing(-32700)),
        case("empty body", Lenient, raw(""), framing(-32700)),
        case("not UTF-8", Lenient, Send::Body(b"\xff\xfe{}".to_vec()), framing(-32700)),
        case("trailing garbage", Lenient, raw(r#"{"jsonrpc":"2.0","method":"ping","id":7} x"#), framing(-32700)),
        case("a JSON number", Lenient, raw("42"), framing(-32600)),
        case("a JSON string", Lenient, raw(r#""register_player""#), framing(-32600)),
        case("jsonrpc missing", Lenient, raw(r#"{"method":"ping","id":7}"#), framing(-32600)),
        case("jsonrpc \"1.0\"", Lenient, raw(r#"{"jsonrpc":"1.0","method":"ping","id":7}"#), framing(-32600)),
        case("jsonrpc a number", Lenient, raw(r#"{"jsonrpc":2.0,"method":"ping","id":7}"#), framing(-32600)),
        case("method missing", Lenient, raw(r#"{"jsonrpc":"2.0","params":{},"id":7}"#), framing(-32600)),
        case("method a number", Lenient, raw(r#"{"jsonrpc":"2.0","method":3,"id":7}"#), framing(-32600)),
        case("method empty", Lenient, raw(r#"{"jsonrpc":"2.0","method":"","id":7}"#), framing(-32600)),
        case("params a string", Lenient, raw(r#"{"jsonrpc":"2.0","method":"ping","params":"x","id":7}"#), framing(-32600)),
        case("params a number", Lenient, raw(r#"{"jsonrpc":"2.0","method":"ping","params":1,"id":7}"#), framing(-32600)),
        case("id an object", Lenient, raw(r#"{"jsonrpc":"2.0","method":"ping","id":{}}"#), framing(-32600)),
        case("id true", Lenient, raw(r#"{"jsonrpc":"2.0","method":"ping","id":true}"#), framing(-32600)),
        case("unknown method", Lenient, body("fly_to_the_moon", json!({})), framing(-32601)),
        case("params an array", Lenient, body("register_player", json!([player])), framing(-32602)),
        case("handle_message without message", Lenient, body("handle_message", json!({})), framing(-32602)),
        case("tools/call without name", Lenient, body("tools/call", json!({"arguments": {}})), framing(-32602)),
        case(
            "mcp_message, unknown message_type",
            Lenient,
            body("mcp_message", json!({"message_type": "NOT_A_MESSAGE"})),
            framing(-32602),
        ),
        // Batches.
        case("empty batch", Lenient, raw("[]"), framing(-32600)),
        case("batch of non-objects", Lenient, raw(r#"[1, "x"]"#), Expect::Batch(vec![Some((-32600, None)); 2])),
        case(
            "batch: a ping and a bad call",
            Lenient,
            raw(r#"[{"jsonrpc":"2.0","method":"ping","id":1},{"jsonrpc":"2.0","id":2}]"#),
            Expect::Batch(vec![None, Some((-32600, None))]),
        ),
        case(
            "batch of notifications only",
            Lenient,
            Send::Body(json!([ping_note, bad_note]).to_string().into_bytes()),
            Expect::NoContent,
        ),
        case("a bad notification", Lenient, Send::Body(bad_note.to_string().into_bytes()), Expect::NoContent),
        case(
            "batch: a query with a wrong token",
            Lenient,
            Send::Body(
                json!([{"jsonrpc": "2.0", "method": "league_query", "params": with(&ask, &["auth_token"], "nope".into()), "id": 1}])
                    .to_string()
                    .into_bytes(),
            ),
            Expect::Batch(vec![Some((-32012, Some("E012")))]),
        ),
    ];
    // LEAGUE_REGISTER_REQUEST, field by field.
    let top = |field: &str, value: Value| with(&player, &[field], value);
    let meta = |field: &str, value: Value| with(&player, &["player_meta", field], value);
    let meta_without = |field: &str| without(&player, &["player_meta", field]);
    let registrations: Vec<(&str, Value, Expect)> = rows![
        "player_meta missing" => without(&player, &["player_meta"]), params("E003");
        "player_meta null" => top("player_meta", Value::Null), params("E003");
        "player_meta a string" => top("player_meta", "meta".into()), params("E002");
        "display_name missing" => meta_without("display_name"), params("E003");
        "display_name a number" => meta("display_name", 7.into()), params("E002");
        "display_name blank" => meta("display_name", "  ".into()), params("E003");
        "display_name 300 chars" => meta("display_name", "n".repeat(300).into()), params("E002");
        "contact_endpoint missing" => meta_without("contact_endpoint"), params("E003");
        "contact_endpoint no scheme" => meta("contact_endpoint", "localhost:8101/mcp".into()), params("E002");
        "contact_endpoint ftp://" => meta("contact_endpoint", "ftp://host/mcp".into()), params("E002");
        "contact_endpoint a number" => meta("contact_endpoint", 8101.into()), params("E002");
        "game_types missing" => meta_without("game_types"), params("E003");
        "game_types a string" => meta("game_types", "even_odd".into()), params("E002");
        "game_types empty" => meta("game_types", json!([])), params("E002");
        "game_types [1]" => meta("game_types", json!([1])), params("E002");
        "version a number" => meta("version", 1.into()), params("E002");
        "protocol \"league.v1\"" => top("protocol", "league.v1".into()), params("E018");
        "protocol a number" => top("protocol", 2.into()), params("E018");
        "sender a number" => top("sender", 1.into()), params("E002");
        "sender without a role" => top("sender", "newcomer".into()), params("E002");
        "sender \"player:\"" => top("sender", "player:".into()), params("E002");
        "timestamp a number" => top("timestamp", 1_795_251_220.into()), params("E021");
        "timestamp \"tomorrow\"" => top("timestamp", "tomorrow".into()), params("E021");
        "timestamp without a zone" => top("timestamp", "2026-11-21T08:53:40".into()), params("E021");
        "timestamp month 13" => top("timestamp", "2026-13-01T00:00:00Z".into()), params("E021");
        "conversation_id an object" => top("conversation_id", json!({})), params("E002");
        "league_id a number" => top("league_id", 2025.into()), params("E002");
        "protocol_version 1.0.0" => meta("protocol_version", "1.0.0".into()), Expect::Rejected("E018");
        "protocol_version \"two\"" => meta("protocol_version", "two".into()), Expect::Rejected("E018");
        "game_types [chess]" => meta("game_types", json!(["chess"])), Expect::Rejected("E019");
        "unknown league_id" => top("league_id", "no_such_league".into()), Expect::Rejected("E006");
    ];
    for (name, message, expect) in registrations {
        cases.push(case(
            format!("register_player: {name}"),
            Lenient,
            body("register_player", message),
            expect,
        ));
    }
    // Registering again.
    let again = player_registration("alice-again", endpoints.0);
    cases.push(case(
        "duplicate contact_endpoint",
        Lenient,
        body("register_player", again.clone()),
        Expect::Rejected("E014"),
    ));
    cases.push(case(
        "duplicate contact_endpoint, other dialect",
        Lenient,
        body("LEAGUE_REGISTER_REQUEST", again),
        Expect::Rejected("E014"),
    ));
    // REFEREE_REGISTER_REQUEST.
    let referee_meta = |field: &str, value: Value| with(&referee_message, &["referee_meta", field], value);
    let referee_meta_without = |field: &str| without(&referee_message, &["referee_meta", field]);
    let referees: Vec<(&str, Value, Expect)> = rows![
        "referee_meta missing" => without(&referee_message, &["referee_meta"]), params("E003");
        "max_concurrent_matches \"ten\"" => referee_meta("max_concurrent_matches", "ten".into()), params("E002");
        "max_concurrent_matches 0" => referee_meta("max_concurrent_matches", 0.into()), params("E002");
        "max_concurrent_matches 5000" => referee_meta("max_concurrent_matches", 5000.into()), params("E002");
        "game_types missing" => referee_meta_without("game_types"), params("E003");
        "duplicate contact_endpoint" => referee_meta("contact_endpoint", endpoints.1.into()), Expect::Rejected("E014");
    ];
    for (name, message, expect) in referees {
        cases.push(case(
            format!("register_referee: {name}"),
            Lenient,
            body("register_referee", message),
            expect,
        ));
    }
    // Strict mode: the specification to the letter.
    let strict: Vec<(&str, &str, Value, Expect)> = rows![
        "non-UTC timestamp" => "register_player", top("timestamp", "2026-11-21T10:53:40+02:00".into()), params("E021");
        "basic-format timestamp" => "register_player", top("timestamp", "20261121T085340Z".into()), params("E021");
        "\"+00:00Z\" timestamp" => "register_player", top("timestamp", "2026-11-21T08:53:40.5+00:00Z".into()), params("E021");
        "lower-case z" => "register_player", top("timestamp", "2026-11-21T08:53:40z".into()), params("E021");
        "sender missing" => "register_player", without(&player, &["sender"]), params("E003");
        "timestamp missing" => "register_player", without(&player, &["timestamp"]), params("E003");
        "conversation_id missing" => "register_player", without(&player, &["conversation_id"]), params("E003");
        "protocol missing" => "register_player", without(&player, &["protocol"]), params("E003");
        "protocol \"LEAGUE.V2\"" => "register_player", top("protocol", "LEAGUE.V2".into()), params("E018");
        "version missing" => "register_player", meta_without("version"), params("E003");
        "max_concurrent_matches missing" => "register_referee", referee_meta_without("max_concurrent_matches"), params("E003");
        "query with a non-UTC timestamp" => "league_query", with(&ask, &["timestamp"], "2026-11-21T03:54:00-05:00".into()), params("E021");
    ];
    for (name, method, message, expect) in strict {
        cases.push(case(
            format!("strict: {name}"),
            Strict,
            body(method, message),
            expect,
        ));
    }
    // Tokens.
    let get_match = with(
        &with(&ask, &["query_type"], "GET_MATCH".into()),
        &["query_params"],
        json!({"match_id": "R9M9"}),
    );
    let tokens: Vec<(&str, Value, Expect)> = rows![
        "no auth_token" => without(&ask, &["auth_token"]), error(200, -32011, "E011");
        "auth_token empty" => with(&ask, &["auth_token"], "".into()), error(200, -32011, "E011");
        "auth_token null" => with(&ask, &["auth_token"], Value::Null), error(200, -32011, "E011");
        "auth_token wrong" => with(&ask, &["auth_token"], "not-a-token".into()), error(200, -32012, "E012");
        "auth_token a number" => with(&ask, &["auth_token"], 42.into()), error(200, -32012, "E012");
        "another player's token" => with(&ask, &["auth_token"], bob.token.clone().into()), error(200, -32012, "E012");
        "a referee's token" => with(&ask, &["auth_token"], referee.token.clone().into()), error(200, -32012, "E012");
        "sender not registered" => with(&ask, &["sender"], "player:P99".into()), error(200, -32012, "E012");
        "query_type missing" => without(&ask, &["query_type"]), params("E003");
        "query_type a number" => with(&ask, &["query_type"], 1.into()), params("E002");
        "query_type GET_EVERYTHING" => with(&ask, &["query_type"], "GET_EVERYTHING".into()), params("E002");
        // The registrations are for referees (and the operator) to ask.
        "GET_REGISTRATIONS from a player" => with(&ask, &["query_type"], "GET_REGISTRATIONS".into()), error(200, -32020, "E020");
        "query_params a string" => with(&ask, &["query_params"], "all".into()), params("E002");
        "GET_MATCH of an unknown match" => get_match, Expect::QueryFailed("E007");
        "GET_STANDINGS of an unknown league" => with(&ask, &["league_id"], "no_such_league".into()), Expect::QueryFailed("E006");
    ];
    for (name, message, expect) in tokens {
        cases.push(case(
            format!("league_query: {name}"),
            Lenient,
            body("league_query", message),
            expect,
        ));
    }
    let standings = call("get_standings", json!({}));
    cases.push(case(
        "get_standings without a token",
        Lenient,
        Send::Body(standings.clone()),
        error(200, -32011, "E011"),
    ));
    cases.push(case(
        "get_standings, wrong Bearer token",
        Lenient,
        Send::WithHeaders(
            standings.clone(),
            vec![("authorization", "Bearer not-a-token".to_owned())],
        ),
        error(200, -32012, "E012"),
    ));
    cases.push(case(
        "get_standings, Basic credentials",
        Lenient,
        Send::WithHeaders(
            standings,
            vec![("authorization", format!("Basic {}", alice.token))],
        ),
        error(200, -32011, "E011"),
    ));
    // Operator actions.
    let start = json!({"league_id": LEAGUE_ID});
    cases.push(case(
        "start_league without a token",
        Lenient,
        body("start_league", start.clone()),
        error(200, -32011, "E011"),
    ));
    cases.push(case(
        "start_league, wrong token",
        Lenient,
        body(
            "start_league",
            with(&start, &["auth_token"], "not-the-operator".into()),
        ),
        error(200, -32012, "E012"),
    ));
    // An agent's own valid token on an operator action: E020 PERMISSION_DENIED, as the manager answers.
    cases.push(case(
        "start_league with a player's token",
        Lenient,
        body(
            "start_league",
            with(&start, &["auth_token"], alice.token.clone().into()),
        ),
        error(200, -32020, "E020"),
    ));
    cases.push(case(
        "start_league of an unknown league",
        Lenient,
        body(
            "start_league",
            json!({"league_id": "no_such_league", "auth_token": OPERATOR_TOKEN}),
        ),
        error(200, -32006, "E006"),
    ));
    cases.push(case(
        "get_compliance_warnings without a token",
        Lenient,
        body("get_compliance_warnings", json!({})),
        error(200, -32011, "E011"),
    ));
    cases.push(case(
        "get_compliance_warnings, wrong token",
        Lenient,
        body(
            "get_compliance_warnings",
            json!({"auth_token": "not-the-operator"}),
        ),
        error(200, -32012, "E012"),
    ));
    // As above: E020 for an agent's own valid token.
    cases.push(case(
        "get_compliance_warnings with a player's token",
        Lenient,
        body("get_compliance_warnings", json!({"auth_token": alice.token})),
        error(200, -32020, "E020"),
    ));
    // Messages the league does not take from an agent.
    let report =
        fixture("peer-a/09_MATCH_RESULT_REPORT__MATCH_RESULT_REPORT__to_LM.json")["request"]["params"]
            .clone();
    let report = with(
        &with(&report, &["auth_token"], referee.token.clone().into()),
        &["sender"],
        format!("referee:{}", referee.id).into(),
    );
    // peer-a's report names its own league: no such match here.
    cases.push(case(
        "MATCH_RESULT_REPORT of another league's match",
        Lenient,
        body("MATCH_RESULT_REPORT", report.clone()),
        error(200, -32007, "E007"),
    ));
    cases.push(case(
        "the same result, replayed",
        Lenient,
        body("MATCH_RESULT_REPORT", report),
        error(200, -32007, "E007"),
    ));
    // peer-a's referee's token is not one of ours.
    let invitation =
        fixture("peer-a/06_GAME_INVITATION__GAME_INVITATION__to_P.json")["request"]["params"].clone();
    cases.push(case(
        "GAME_INVITATION with another league's token",
        Lenient,
        body("GAME_INVITATION", invitation),
        error(200, -32012, "E012"),
    ));
    // Bounds.
    let mut oversized = call("ping", json!({"sender": "player:big", "pad": ""}));
    let padding = 64 * 1024 + 1 - oversized.len();
    oversized = call(
        "ping",
        json!({"sender": "player:big", "pad": "x".repeat(padding)}),
    );
    assert_eq!(oversized.len(), 64 * 1024 + 1);
    cases.push(case(
        "body of 64 KiB + 1",
        Lenient,
        Send::Body(oversized),
        error(413, -32017, "E017"),
    ));
    cases.push(case(
        "requests past the agent's rate",
        RateLimited,
        Send::Flood(call("ping", json!({"sender": "player:flood"}))),
        error(429, -32016, "E016"),
    ));
    cases.push(case(
        "a connection past the limit",
        OneConnection,
        Send::ExtraConnection,
        error(503, -32023, "E023"),
    ));
    cases
}

/// Cases about a match in play: R1M1 between `a` and `b`, `bye` sitting round 1 out.
fn match_cases(
    a: &Registered,
    b: &Registered,
    bye: &Registered,
    referee: &Registered,
    newcomer: &str,
) -> Vec<Case> {
    use Via::*;
    let mut cases = referee_cases(a, b, bye, referee);
    for kind in ["GAME_JOIN_ACK", "CHOOSE_PARITY_RESPONSE"] {
        let short = if kind == "GAME_JOIN_ACK" {
            "join ack"
        } else {
            "parity response"
        };
        let own = reply(kind, a, "R1M1");
        let list: Vec<(&str, Via, Value, Expect)> = rows![
            "unknown match" => Lenient, reply(kind, a, "R9M9"), error(200, -32007, "E007");
            "a match the sender does not play" => Lenient, reply(kind, bye, "R1M1"), error(200, -32020, "E020");
            "match not running (replayed)" => Lenient, own.clone(), error(200, -32008, "E008");
            "replayed again" => Lenient, own.clone(), error(200, -32008, "E008");
            "match_id missing" => Lenient, without(&own, &["match_id"]), params("E003");
            "match_id a number" => Lenient, with(&own, &["match_id"], 11.into()), params("E002");
            "no auth_token" => Lenient, without(&own, &["auth_token"]), error(200, -32011, "E011");
            "the opponent's token" => Lenient, with(&own, &["auth_token"], b.token.clone().into()), error(200, -32012, "E012");
            "strict: basic-format timestamp" => Strict, with(&own, &["timestamp"], "20261121T085400Z".into()), params("E021");
        ];
        for (name, via, message, expect) in list {
            cases.push(case(format!("{short}: {name}"), via, body(kind, message), expect));
        }
    }
    cases.push(case(
        "start_league again",
        Lenient,
        body(
            "start_league",
            json!({"league_id": LEAGUE_ID, "auth_token": OPERATOR_TOKEN}),
        ),
        error(200, -32008, "E008"),
    ));
    cases.push(case(
        "register_player once the league runs",
        Lenient,
        body("register_player", player_registration("latecomer", newcomer)),
        Expect::Rejected("E008"),
    ));
    cases
}

/// An external referee's calls (to a player of R1M1 through `/mcp`, and its report) from the wrong sender
/// or about a match it does not hold: R1M1 is ready, nobody holds it.
fn referee_cases(a: &Registered, b: &Registered, bye: &Registered, referee: &Registered) -> Vec<Case> {
    use Via::*;
    let envelope = |message_type: &str, sender: String, token: &str, match_id: &str| {
        json!({
            "protocol": "league.v2",
            "message_type": message_type,
            "sender": sender,
            "timestamp": "2026-11-21T08:54:00Z",
            "conversation_id": "conv-referee",
            "auth_token": token,
            "league_id": LEAGUE_ID,
            "round_id": 1,
            "match_id": match_id,
            "game_type": "even_odd",
        })
    };
    let as_referee = |message_type: &str, match_id: &str| {
        envelope(
            message_type,
            format!("referee:{}", referee.id),
            &referee.token,
            match_id,
        )
    };
    let invitation = with(
        &as_referee("GAME_INVITATION", "R1M1"),
        &["player_id"],
        a.id.clone().into(),
    );
    let score = json!({a.id.clone(): 3, b.id.clone(): 0});
    let report = with(
        &as_referee("MATCH_RESULT_REPORT", "R1M1"),
        &["result"],
        json!({"winner": a.id, "score": score}),
    );
    let from_player = with(
        &with(&invitation, &["sender"], format!("player:{}", bye.id).into()),
        &["auth_token"],
        bye.token.clone().into(),
    );
    let rows: Vec<(&str, &str, Value, Expect)> = rows![
        "GAME_INVITATION from a player" => "GAME_INVITATION", from_player, error(200, -32020, "E020");
        "GAME_INVITATION by a referee not holding the match" => "GAME_INVITATION", invitation.clone(), error(200, -32015, "E015");
        "GAME_INVITATION for an unknown match" => "GAME_INVITATION", with(&invitation, &["match_id"], "R9M9".into()), error(200, -32007, "E007");
        "GAME_INVITATION without match_id" => "GAME_INVITATION", without(&invitation, &["match_id"]), params("E003");
        "GAME_INVITATION without a token" => "GAME_INVITATION", without(&invitation, &["auth_token"]), error(200, -32011, "E011");
        "CHOOSE_PARITY_CALL with a player's token" => "CHOOSE_PARITY_CALL", with(&invitation, &["auth_token"], a.token.clone().into()), error(200, -32012, "E012");
        "MATCH_RESULT_REPORT by a referee not holding the match" => "MATCH_RESULT_REPORT", report.clone(), error(200, -32015, "E015");
        "MATCH_RESULT_REPORT from a player" => "MATCH_RESULT_REPORT", with(&with(&report, &["sender"], format!("player:{}", a.id).into()), &["auth_token"], a.token.clone().into()), error(200, -32020, "E020");
        "MATCH_RESULT_REPORT without result" => "MATCH_RESULT_REPORT", without(&report, &["result"]), params("E003");
        "MATCH_RESULT_REPORT naming someone else the winner" => "MATCH_RESULT_REPORT", with(&report, &["result", "winner"], bye.id.clone().into()), params("E002");
        "MATCH_RESULT_REPORT with 30 points" => "MATCH_RESULT_REPORT", with(&report, &["result", "score", &a.id], 30.into()), params("E002");
        "MATCH_RESULT_REPORT for an unknown match" => "MATCH_RESULT_REPORT", with(&report, &["match_id"], "R9M9".into()), error(200, -32007, "E007");
    ];
    rows.into_iter()
        .map(|(name, method, message, expect)| {
            let refused = case(format!("referee: {name}"), Lenient, body(method, message), expect);
            // A referee's tokenless call is the one refusal the operator is told of.
            if name.ends_with("without a token") {
                refused.leaving(kinds::REFUSED_REFEREE_CALL, &referee.id)
            } else {
                refused
            }
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_inputs_get_their_error_and_change_nothing() {
    let manager = spawn_manager().await;
    let gateways = Gateways {
        lenient: spawn_gateway(&manager, Mode::Lenient, Limits::default()).await,
        strict: spawn_gateway(&manager, Mode::Strict, Limits::default()).await,
        rate_limited: spawn_gateway(
            &manager,
            Mode::Lenient,
            Limits {
                agent_rate_limit: 1,
                ..Limits::default()
            },
        )
        .await,
        one_connection: spawn_gateway(
            &manager,
            Mode::Lenient,
            Limits {
                max_connections: 2,
                max_connections_per_address: 1,
                ..Limits::default()
            },
        )
        .await,
    };
    let lenient = &gateways.lenient;
    // Agents that acknowledge every notification cleanly, so no compliance warning appears on its own.
    let agents = spawn_agents(Behaviour::Clean).await;
    let alice = register_player(lenient, &agents, "alice").await;
    let bob = register_player(lenient, &agents, "bob").await;
    let carol = register_player(lenient, &agents, "carol").await;
    // The referee referees tic-tac-toe only: the gateway claims matches for external referees, and an
    // even/odd match it held would change under the cases below (they need R1M1 ready, not running).
    let referee = register(
        lenient,
        "register_referee",
        with(
            &referee_registration("ref", &agents.endpoint("ref")),
            &["referee_meta", "game_types"],
            json!(["tic_tac_toe"]),
        ),
    )
    .await;

    let mut table = Vec::new();
    let mut failures = Vec::new();
    let endpoints = (agents.endpoint("alice"), agents.endpoint("ref"));
    let cases = registration_and_framing_cases(&alice, &bob, &referee, (&endpoints.0, &endpoints.1));
    run_cases(&gateways, &manager, &cases, &mut table, &mut failures).await;

    // A league in play: 3 players, so round 1 is one match and a bye.
    start_league(lenient).await;
    let schedule = lenient
        .rpc(
            "league_query",
            json!({"query_type": "GET_SCHEDULE", "league_id": LEAGUE_ID, "auth_token": OPERATOR_TOKEN}),
        )
        .await;
    let round = &schedule["result"]["data"]["rounds"][0];
    let first = &round["matches"][0];
    assert_eq!(first["match_id"], "R1M1", "{schedule}");
    let by_id = |id: &Value| {
        [&alice, &bob, &carol]
            .into_iter()
            .find(|p| p.id == id.as_str().unwrap_or_default())
            .cloned()
    };
    let a = by_id(&first["player_A_id"]).expect("player A");
    let b = by_id(&first["player_B_id"]).expect("player B");
    let bye = by_id(&round["bye_player_ids"][0]).unwrap_or_else(|| panic!("a bye in round 1: {schedule}"));
    let cases_in_play = match_cases(&a, &b, &bye, &referee, &agents.endpoint("latecomer"));
    run_cases(&gateways, &manager, &cases_in_play, &mut table, &mut failures).await;

    // No refused call left a warning waiting for the next flush: a deviation sent now (lenient mode) is
    // the only one the operator ever lists — but the one warning a refusal is meant to leave: the
    // referee's tokenless call to a player (`refused_referee_call`, so an operator sees why a referee
    // plays nothing).
    let sentinel = with(
        &query(&alice, "GET_STANDINGS"),
        &["timestamp"],
        "20261121T085400Z".into(),
    );
    let answer = lenient.rpc("league_query", sentinel).await;
    assert_eq!(answer["result"]["success"], true, "{answer}");
    let warnings = lenient
        .wait_for_warnings("the sentinel's warning", |w| {
            has_warning(w, &alice.id, "timestamp_format")
        })
        .await;
    let others: Vec<&Value> = warnings
        .iter()
        .filter(|w| w["kind"] != "refused_referee_call")
        .collect();
    assert_eq!(others.len(), 1, "only the sentinel's warning: {warnings:?}");

    let total = cases.len() + cases_in_play.len();
    println!("{}", table.join("\n"));
    println!(
        "{total} cases, {} as expected, {} not",
        total - failures.len(),
        failures.len()
    );
    assert!(total >= 60, "at least 60 cases: {total}");
    assert!(
        failures.is_empty(),
        "{} of {total} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

async fn run_cases(
    gateways: &Gateways,
    manager: &TestManager,
    cases: &[Case],
    table: &mut Vec<String>,
    failures: &mut Vec<String>,
) {
    if table.is_empty() {
        table.push(format!(
            "{:<3} {:<56} {:<8} {:<26} {}",
            "#", "case", "gateway", "expected", "observed"
        ));
    }
    for case in cases {
        let before = snapshot(&manager.pool).await;
        let observed = run(gateways, case).await;
        let mut expected = before.clone();
        if let Some((kind, agent_id)) = &case.leaves {
            gateways
                .lenient
                .wait_for_warnings(kind, |w| has_warning(w, agent_id, kind))
                .await;
            expected.warning_total += 1;
        }
        let after = snapshot(&manager.pool).await;
        if case.leaves.is_some() && after.warning_rows == before.warning_rows + 1 {
            // The first warning of its kind for the sender is a new row; later ones count up.
            expected.warning_rows += 1;
        }
        let mut problems = Vec::new();
        if observed.answer != describe(&case.expect) {
            problems.push(format!("answered {}", observed.answer));
        }
        if let Some(flaw) = &observed.flaw {
            problems.push(flaw.clone());
        }
        if expected != after {
            problems.push(format!("the database changed: {before:?} -> {after:?}"));
        }
        let number = table.len();
        let verdict = if problems.is_empty() {
            "ok".to_owned()
        } else {
            format!("FAIL: {}", problems.join("; "))
        };
        let mut line = String::new();
        let via = case.via.label();
        write!(
            line,
            "{number:<3} {:<56} {via:<8} {:<26} {verdict}",
            case.name,
            describe(&case.expect)
        )
        .ok();
        if !problems.is_empty() {
            failures.push(line.clone());
        }
        table.push(line);
    }
}
