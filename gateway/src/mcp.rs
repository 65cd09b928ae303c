//! MCP over the streamable HTTP transport, on the same `/mcp` path as league.v2 (ADR 0010): rmcp's
//! `StreamableHttpService`, stateless and answering in JSON, with the league's calls as MCP tools.
//!
//! Each tool is one league.v2 call: `tools/call {name, arguments}` becomes the JSON-RPC call
//! `name(arguments)` and goes through [`Inbound::handle`], exactly the path a league.v2 agent's call
//! takes (dialect, envelope checks in the configured mode, authentication, the manager over gRPC). The
//! request's `Authorization: Bearer` header is the call's credential, as it is for league.v2. The call's
//! JSON-RPC `result` is the tool's structured content; a JSON-RPC error is a tool error
//! (`isError: true`) carrying the league.v2 LEAGUE_ERROR (`error_code`, `error_description`…), so a
//! client reads the league's refusal instead of a transport failure.

use std::sync::{Arc, LazyLock};

use axum::body::Body;
use axum::http::{Request, header};
use axum::response::Response;
use league_domain::MessageType;
use league_proto::ErrorCode;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, JsonObject, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Map, Value, json};

use crate::inbound::{HttpContext, Inbound};
use crate::jsonrpc::{Call, METHOD_NOT_FOUND};
use crate::league_error::LeagueError;

/// The MCP endpoint. Stateless: every POST is complete in itself (no `Mcp-Session-Id`, no server
/// state between requests), so any gateway replica can answer any request and replicas behind one
/// address need no sticky sessions. Answers are `application/json` (the league's tools answer once
/// and never stream). GET and DELETE, which only sessions use, answer 405.
#[derive(Clone)]
pub struct McpService {
    http: StreamableHttpService<LeagueTools, NeverSessionManager>,
}

impl std::fmt::Debug for McpService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpService")
            .field("config", &self.http.config)
            .finish_non_exhaustive()
    }
}

impl McpService {
    pub fn new(inbound: Inbound) -> Self {
        let max_body_bytes = inbound.config.max_body_bytes;
        let tools = LeagueTools { inbound };
        let config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true)
            .with_max_request_body_bytes(max_body_bytes)
            // Any Host is accepted. rmcp's default (loopback names only) guards a server on a user's
            // own machine against DNS rebinding; the gateway is a public server reached under whatever
            // name its deployment gives it (a compose service, a Kubernetes Service, an ingress host,
            // an IP), so a fixed list would refuse real clients. Nothing is lost: every tool that reads
            // the league needs a bearer token, which a rebinding page does not have, and league.v2 on
            // this same path never looked at Host either.
            .disable_allowed_hosts();
        let http = StreamableHttpService::new(
            move || Ok(tools.clone()),
            Arc::new(NeverSessionManager::default()),
            config,
        );
        Self { http }
    }

    pub async fn handle(&self, request: Request<Body>) -> Response {
        self.http.handle(request).await.map(Body::new)
    }
}

/// A `tools/call` whose `arguments` is not an object: rmcp cannot read it as a tool call and would
/// answer "method not found"; it is invalid params (-32602), answered here with the call's id.
pub fn invalid_tool_arguments(body: &[u8]) -> Option<Value> {
    if !body.windows(10).any(|window| window == b"tools/call") {
        return None;
    }
    let call: Value = serde_json::from_slice(body).ok()?;
    let arguments = call.get("params")?.get("arguments")?;
    if call.get("method")?.as_str()? != "tools/call" || arguments.is_object() || arguments.is_null() {
        return None;
    }
    let error = crate::jsonrpc::RpcError::new(
        crate::jsonrpc::INVALID_PARAMS,
        "Invalid params: tools/call `arguments` must be an object",
    );
    Some(crate::jsonrpc::failure(
        call.get("id").cloned().unwrap_or(Value::Null),
        &error,
    ))
}

/// The transport's own refusals (a wrong `Content-Type` or `Accept`, a body that is not a JSON-RPC
/// message) come from rmcp as plain text; they are rewritten as JSON-RPC errors (-32600, or -32700 for
/// a body that is not JSON) with the same HTTP status, so every answer on `/mcp` is JSON-RPC.
pub async fn json_rpc_transport_error(response: Response) -> Response {
    let is_json = crate::http::is_json(response.headers());
    if !(response.status().is_client_error() || response.status().is_server_error()) || is_json {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, 4096).await.unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let code = if text.to_ascii_lowercase().contains("parse") || text.contains("deserialize") {
        crate::jsonrpc::PARSE_ERROR
    } else {
        crate::jsonrpc::INVALID_REQUEST
    };
    let message = format!("MCP transport: {}", text.trim());
    let body = crate::jsonrpc::failure(Value::Null, &crate::jsonrpc::RpcError::new(code, message));
    parts.headers.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(serde_json::to_vec(&body).unwrap_or_default()))
}

/// The league's tools, served to MCP clients.
#[derive(Debug, Clone)]
struct LeagueTools {
    inbound: Inbound,
}

impl ServerHandler for LeagueTools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("league-gateway", env!("CARGO_PKG_VERSION"))
                    .with_title("League (league.v2)"),
            )
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(TOOLS.clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        TOOLS.iter().find(|tool| tool.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let http = HttpContext {
            bearer: context
                .extensions
                .get::<http::request::Parts>()
                .and_then(|parts| bearer(&parts.headers)),
            player_path: None,
        };
        let arguments = request.arguments.unwrap_or_default();
        let arguments = match SPECS.iter().find(|spec| spec.name == request.name) {
            Some(spec) => match spec.message(arguments) {
                Ok(arguments) => arguments,
                Err(error) => {
                    return Ok(tool_error(&error.league_error_message(None), &error.to_string()).into());
                }
            },
            // Not a listed tool: any other league.v2 method is accepted under its own name (a reply sent
            // as a separate call, `get_league_status`, `start_league`…), as league.v2's own `tools/call`
            // framing accepts it, so this path can do whatever the league.v2 one can.
            None => arguments,
        };
        let call = Call {
            method: request.name.clone().into_owned(),
            params: Value::Object(arguments),
            id: Some(1.into()),
        };
        let Some(response) = self.inbound.handle(call, &http).await else {
            return Err(ErrorData::internal_error("the call was not answered", None));
        };
        if response["error"]["code"] == json!(METHOD_NOT_FOUND) {
            return Err(ErrorData::invalid_params(
                format!("unknown tool {:?}", request.name),
                None,
            ));
        }
        Ok(tool_result(response).into())
    }
}

const INSTRUCTIONS: &str = "An Even/Odd league of autonomous agents (league.v2). Read it with \
get_standings, get_standings_by_round, get_schedule, get_match, get_next_match, get_player_stats, \
get_leagues or league_query; join it with \
register_player or register_referee. Queries need a token: send `Authorization: Bearer <token>` (an \
agent's auth_token from its registration, or the operator token), or pass `auth_token` in the arguments. \
Results are league.v2 messages; a refusal is a tool error carrying the league.v2 error_code.";

/// The `Authorization: Bearer` token, if any (the scheme's case does not matter, RFC 9110 §11.1).
fn bearer(headers: &http::HeaderMap) -> Option<String> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then(|| token.to_owned())
}

/// A JSON-RPC response from [`Inbound::handle`] as a tool result.
fn tool_result(response: Value) -> CallToolResult {
    if let Some(error) = response.get("error") {
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("the call failed");
        let league_error = match error.get("data") {
            Some(data @ Value::Object(_)) => data.clone(),
            // Framing errors (invalid params…) carry no league.v2 error; say what JSON-RPC said.
            _ => json!({
                "error_code": null,
                "error_description": message,
                "jsonrpc_code": error.get("code"),
            }),
        };
        return tool_error(&league_error, message);
    }
    match response.get("result") {
        Some(result @ Value::Object(_)) => CallToolResult::structured(result.clone()),
        // MCP's structured content is an object; no league call answers anything else, but be exact.
        other => CallToolResult::structured(json!({ "result": other.cloned().unwrap_or(Value::Null) })),
    }
}

fn tool_error(league_error: &Value, message: &str) -> CallToolResult {
    let mut result = CallToolResult::structured_error(league_error.clone());
    // The first text block is what a model reads: the error's name and description first.
    result
        .content
        .insert(0, rmcp::model::ContentBlock::text(message.to_owned()));
    result
}

/// One tool: its league.v2 method, the message it carries when it carries one, and its schema.
struct Spec {
    name: &'static str,
    title: &'static str,
    description: &'static str,
    /// The message type the tool sends: filled in when absent, refused when another is named.
    message_type: Option<MessageType>,
    read_only: bool,
    schema: fn() -> Value,
}

impl Spec {
    /// The league.v2 message (the call's params) for these arguments.
    fn message(&self, mut arguments: JsonObject) -> Result<Map<String, Value>, LeagueError> {
        let named = arguments.get("message_type").filter(|value| !value.is_null());
        match (self.message_type, named) {
            (Some(kind), None) => {
                arguments.insert("message_type".into(), kind.as_str().into());
                arguments
                    .entry("protocol")
                    .or_insert_with(|| crate::wire::envelope::PROTOCOL.into());
            }
            (Some(kind), Some(named)) => {
                if named.as_str().and_then(crate::dialect::message_type) != Some(kind) {
                    return Err(wrong_message_type(self.name, named, Some(kind)));
                }
            }
            (None, Some(named)) => return Err(wrong_message_type(self.name, named, None)),
            (None, None) => {}
        }
        Ok(arguments)
    }

    fn tool(&self) -> Tool {
        let Value::Object(schema) = (self.schema)() else {
            unreachable!("every tool's schema is a JSON object")
        };
        let mut tool = Tool::new(self.name, self.description, schema);
        tool.title = Some(self.title.to_owned());
        tool.annotations = Some(
            ToolAnnotations::with_title(self.title)
                .read_only(self.read_only)
                .destructive(false)
                .open_world(false),
        );
        tool
    }
}

fn wrong_message_type(tool: &str, named: &Value, expected: Option<MessageType>) -> LeagueError {
    let expected = match expected {
        Some(kind) => format!("{} (or none)", kind.as_str()),
        None => "none".to_owned(),
    };
    LeagueError::new(
        ErrorCode::InvalidMessageFormat,
        format!("tool {tool} sends message_type {expected}, not {named}"),
    )
}

static SPECS: &[Spec] = &[
    Spec {
        name: "register_player",
        title: "Register a player",
        description: "Join the league as a player (LEAGUE_REGISTER_REQUEST). The answer is \
            LEAGUE_REGISTER_RESPONSE: status ACCEPTED with player_id and auth_token (keep it: it \
            authenticates every later call), or REJECTED with a reason. The league calls the player back \
            at player_meta.contact_endpoint with league.v2 JSON-RPC (invitations, parity choices, results).",
        message_type: Some(MessageType::LeagueRegisterRequest),
        read_only: false,
        schema: register_player_schema,
    },
    Spec {
        name: "register_referee",
        title: "Register a referee",
        description: "Join the league as a referee (REFEREE_REGISTER_REQUEST). The answer is \
            REFEREE_REGISTER_RESPONSE: status ACCEPTED with referee_id and auth_token, or REJECTED with a \
            reason.",
        message_type: Some(MessageType::RefereeRegisterRequest),
        read_only: false,
        schema: register_referee_schema,
    },
    Spec {
        name: "league_query",
        title: "Query the league (LEAGUE_QUERY)",
        description: "Any league query as a full league.v2 LEAGUE_QUERY: query_type GET_STANDINGS, \
            GET_SCHEDULE, GET_NEXT_MATCH, GET_PLAYER_STATS, GET_MATCH, GET_LEAGUE_STATUS, \
            GET_STANDINGS_BY_ROUND or GET_LEAGUES, with query_params. The answer is LEAGUE_QUERY_RESPONSE {query_type, success, data, error}.",
        message_type: Some(MessageType::LeagueQuery),
        read_only: true,
        schema: league_query_schema,
    },
    Spec {
        name: "get_standings",
        title: "Standings",
        description: "The league table, best first: rank, player_id, display_name, played, wins, \
            draws, losses, technical_losses, points (3 for a win, 1 for a draw), and tie_break: the \
            rule that ranks the row above the next (points, head_to_head, win_rate, wins, fewer_draws, \
            player_id; null on the last row). Answered as LEAGUE_QUERY_RESPONSE with data {league_id, \
            round_id, standings}.",
        message_type: None,
        read_only: true,
        schema: league_only_schema,
    },
    Spec {
        name: "get_standings_by_round",
        title: "Standings after each round",
        description: "The table as it stood after each completed round (same rows as get_standings), a \
            page of rounds at a time. Answered as LEAGUE_QUERY_RESPONSE with data {league_id, rounds: \
            [{round_id, standings}], next_round_id} (next_round_id null on the last page).",
        message_type: None,
        read_only: true,
        schema: schedule_schema,
    },
    Spec {
        name: "get_schedule",
        title: "Schedule",
        description: "The rounds of the league and their matches (match_id, players, status and, once \
            played, result {status, winner_player_id, score, reason, at_fault_player_ids, the game's own \
            account}, started_at, finished_at, duration_ms), and the player with a bye in each round, a \
            page of whole rounds at a time. Answered as LEAGUE_QUERY_RESPONSE with data {league_id, \
            rounds, next_round_id} (next_round_id null on the last page).",
        message_type: None,
        read_only: true,
        schema: schedule_schema,
    },
    Spec {
        name: "get_match",
        title: "Match detail",
        description: "One match: its schedule entry and, once played, its result (winner, scores, the \
            drawn number and each player's choice) and its transcript (every message and state change, \
            timestamped). Answered as LEAGUE_QUERY_RESPONSE with data {match, result, transcript}.",
        message_type: None,
        read_only: true,
        schema: match_schema,
    },
    Spec {
        name: "get_next_match",
        title: "Next match",
        description: "A player's next match not yet played (null when none is left). Answered as \
            LEAGUE_QUERY_RESPONSE with data {match}.",
        message_type: None,
        read_only: true,
        schema: player_schema,
    },
    Spec {
        name: "get_player_stats",
        title: "Player statistics",
        description: "A player's row in the table, the results of its matches, and its match history \
            (every match it is scheduled for, with its result once played). Answered as \
            LEAGUE_QUERY_RESPONSE with data {standing, results, matches}.",
        message_type: None,
        read_only: true,
        schema: player_schema,
    },
    Spec {
        name: "get_leagues",
        title: "Leagues",
        description: "Every league, newest first (league_id, game_type, status, rounds, players, \
            created/started/completed times, champion once completed), a page at a time. Answered as \
            LEAGUE_QUERY_RESPONSE with data {leagues, next_page_token} (null on the last page).",
        message_type: None,
        read_only: true,
        schema: leagues_schema,
    },
    Spec {
        name: "ping",
        title: "Ping",
        description: "Is the league there? Answers {status: \"ok\", protocol: \"league.v2\", timestamp}. \
            Needs no token.",
        message_type: None,
        read_only: true,
        schema: ping_schema,
    },
];

static TOOLS: LazyLock<Vec<Tool>> = LazyLock::new(|| SPECS.iter().map(Spec::tool).collect());

fn string(description: &str) -> Value {
    json!({"type": "string", "description": description})
}

/// The envelope fields an agent may send with any message; all optional here (the tool implies
/// `protocol` and `message_type`; strict compliance mode still wants `sender`, `timestamp` and
/// `conversation_id` on registrations and LEAGUE_QUERY).
fn envelope_properties() -> Map<String, Value> {
    let Value::Object(properties) = json!({
        "protocol": {"type": "string", "const": "league.v2", "description": "Filled in when absent."},
        "sender": string("player:<id> or referee:<id> (before registration, any name)."),
        "timestamp": string("ISO-8601 in UTC, e.g. 2026-01-31T12:00:00Z."),
        "conversation_id": string("Thread id; the answer echoes it."),
    }) else {
        unreachable!("an object literal")
    };
    properties
}

fn token_property() -> Value {
    string(
        "The caller's token (an agent's auth_token, or the operator token). Optional when the request \
         carries `Authorization: Bearer <token>`.",
    )
}

fn league_id_property() -> Value {
    string("The league; the newest league when absent.")
}

fn object_schema(properties: Map<String, Value>, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required})
}

fn agent_meta_properties() -> Map<String, Value> {
    let Value::Object(properties) = json!({
        "display_name": string("The agent's name."),
        "version": string("The agent's own version."),
        "game_types": {"type": "array", "items": {"type": "string"}, "minItems": 1,
                       "description": "Games it plays, e.g. [\"even_odd\"]."},
        "contact_endpoint": string("The http(s) URL where the league calls the agent (league.v2 JSON-RPC)."),
        "protocol_version": string("league.v2 revision it speaks, e.g. \"2.1.0\" (at least 2.0.0)."),
    }) else {
        unreachable!("an object literal")
    };
    properties
}

fn register_player_schema() -> Value {
    let mut properties = envelope_properties();
    properties.insert(
        "message_type".into(),
        json!({"type": "string", "const": "LEAGUE_REGISTER_REQUEST"}),
    );
    properties.insert(
        "league_id".into(),
        string("The league to join; the open one when absent."),
    );
    properties.insert(
        "player_meta".into(),
        object_schema(
            agent_meta_properties(),
            &["display_name", "game_types", "contact_endpoint"],
        ),
    );
    object_schema(properties, &["player_meta"])
}

fn register_referee_schema() -> Value {
    let mut properties = envelope_properties();
    properties.insert(
        "message_type".into(),
        json!({"type": "string", "const": "REFEREE_REGISTER_REQUEST"}),
    );
    let mut meta = agent_meta_properties();
    meta.insert(
        "max_concurrent_matches".into(),
        json!({"type": "integer", "minimum": 1, "maximum": 1000, "description": "Matches it runs at once."}),
    );
    properties.insert(
        "referee_meta".into(),
        object_schema(meta, &["display_name", "game_types", "contact_endpoint"]),
    );
    object_schema(properties, &["referee_meta"])
}

fn league_query_schema() -> Value {
    let mut properties = envelope_properties();
    properties.insert(
        "message_type".into(),
        json!({"type": "string", "const": "LEAGUE_QUERY"}),
    );
    properties.insert("auth_token".into(), token_property());
    properties.insert("league_id".into(), league_id_property());
    properties.insert(
        "query_type".into(),
        json!({"type": "string", "enum": [
            "GET_STANDINGS", "GET_SCHEDULE", "GET_NEXT_MATCH", "GET_PLAYER_STATS", "GET_MATCH", "GET_LEAGUE_STATUS",
            "GET_STANDINGS_BY_ROUND", "GET_LEAGUES"
        ]}),
    );
    properties.insert(
        "query_params".into(),
        json!({"type": "object", "properties": {
            "player_id": string("GET_NEXT_MATCH, GET_PLAYER_STATS: the player (default: the asking agent)."),
            "match_id": string("GET_MATCH: the match, e.g. R1M1."),
            "first_round_id": first_round_property(),
            "limit": limit_property(),
            "page_token": page_token_property(),
        }}),
    );
    object_schema(properties, &["query_type"])
}

fn first_round_property() -> Value {
    json!({"type": "integer", "minimum": 0,
           "description": "GET_SCHEDULE, GET_STANDINGS_BY_ROUND: the first round of the page (the previous page's next_round_id)."})
}

fn limit_property() -> Value {
    json!({"type": "integer", "minimum": 0,
           "description": "Page size: matches for GET_SCHEDULE (at most 2000), rounds for GET_STANDINGS_BY_ROUND, leagues for GET_LEAGUES (at most 100); 0 or absent: the largest page."})
}

fn page_token_property() -> Value {
    string("GET_LEAGUES: the previous page's next_page_token.")
}

fn schedule_schema() -> Value {
    let mut properties = Map::new();
    properties.insert("league_id".into(), league_id_property());
    properties.insert("first_round_id".into(), first_round_property());
    properties.insert("limit".into(), limit_property());
    properties.insert("auth_token".into(), token_property());
    object_schema(properties, &[])
}

fn leagues_schema() -> Value {
    let mut properties = Map::new();
    properties.insert("limit".into(), limit_property());
    properties.insert("page_token".into(), page_token_property());
    properties.insert("auth_token".into(), token_property());
    object_schema(properties, &[])
}

fn league_only_schema() -> Value {
    let mut properties = Map::new();
    properties.insert("league_id".into(), league_id_property());
    properties.insert("auth_token".into(), token_property());
    object_schema(properties, &[])
}

fn match_schema() -> Value {
    let mut properties = Map::new();
    properties.insert("match_id".into(), string("The match, e.g. R1M1."));
    properties.insert("league_id".into(), league_id_property());
    properties.insert("auth_token".into(), token_property());
    object_schema(properties, &["match_id"])
}

fn player_schema() -> Value {
    let mut properties = Map::new();
    properties.insert(
        "player_id".into(),
        string("The player, e.g. P01; the asking agent when absent (required with the operator token)."),
    );
    properties.insert("league_id".into(), league_id_property());
    properties.insert("auth_token".into(), token_property());
    object_schema(properties, &[])
}

fn ping_schema() -> Value {
    object_schema(Map::new(), &[])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_resolves_to_a_league_call() {
        for spec in SPECS {
            let message = spec
                .message(JsonObject::new())
                .expect("empty arguments are a message");
            let resolved = crate::dialect::resolve(spec.name, Value::Object(message));
            assert!(resolved.is_ok(), "{}: {resolved:?}", spec.name);
        }
    }

    #[test]
    fn tools_list_their_schemas() {
        let names: Vec<&str> = TOOLS.iter().map(|tool| tool.name.as_ref()).collect();
        assert_eq!(
            names,
            [
                "register_player",
                "register_referee",
                "league_query",
                "get_standings",
                "get_standings_by_round",
                "get_schedule",
                "get_match",
                "get_next_match",
                "get_player_stats",
                "get_leagues",
                "ping"
            ]
        );
        for tool in TOOLS.iter() {
            assert_eq!(
                tool.input_schema.get("type"),
                Some(&json!("object")),
                "{}",
                tool.name
            );
        }
    }

    #[test]
    fn message_type_is_filled_in_or_must_match() {
        let spec = SPECS
            .iter()
            .find(|spec| spec.name == "register_player")
            .expect("tool");
        let filled = spec.message(JsonObject::new()).expect("filled in");
        assert_eq!(filled["message_type"], json!("LEAGUE_REGISTER_REQUEST"));
        assert_eq!(filled["protocol"], json!("league.v2"));
        let mut other = JsonObject::new();
        other.insert("message_type".into(), json!("GAME_JOIN_ACK"));
        assert_eq!(
            spec.message(other.clone()).map_err(|e| e.code),
            Err(ErrorCode::InvalidMessageFormat)
        );
        let standings = SPECS
            .iter()
            .find(|spec| spec.name == "get_standings")
            .expect("tool");
        assert!(standings.message(other).is_err());
    }

    #[test]
    fn bearer_scheme_is_case_insensitive() {
        let mut headers = http::HeaderMap::new();
        headers.insert(header::AUTHORIZATION, "bearer  abc ".parse().expect("header"));
        assert_eq!(bearer(&headers).as_deref(), Some("abc"));
        headers.insert(header::AUTHORIZATION, "Basic abc".parse().expect("header"));
        assert_eq!(bearer(&headers), None);
    }

    #[test]
    fn errors_become_tool_errors_with_the_league_error() {
        let error = LeagueError::new(ErrorCode::AuthTokenInvalid, "no such token").to_rpc(None);
        let result = tool_result(crate::jsonrpc::failure(json!(1), &error));
        assert_eq!(result.is_error, Some(true));
        let content = result.structured_content.expect("structured");
        assert_eq!(content["error_code"], json!("E012"));
        let ok = tool_result(crate::jsonrpc::success(json!(1), json!({"status": "ok"})));
        assert_eq!(ok.is_error, Some(false));
        assert_eq!(ok.structured_content, Some(json!({"status": "ok"})));
    }
}
