//! The league's MCP tools: each one league.v2 call, with its title, description, the message type it
//! sends, and the JSON schema of its arguments.

use std::sync::LazyLock;

use league_domain::MessageType;
use league_proto::ErrorCode;
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{Map, Value, json};

use league_v2::league_error::LeagueError;
use league_v2::query::Query;

/// One tool: its league.v2 method, the message it carries when it carries one, and its schema.
pub(super) struct Spec {
    pub(super) name: &'static str,
    title: &'static str,
    description: &'static str,
    /// The message type the tool sends: filled in when absent, refused when another is named.
    message_type: Option<MessageType>,
    read_only: bool,
    schema: fn() -> Value,
}

impl Spec {
    /// The league.v2 message (the call's params) for these arguments.
    pub(super) fn message(&self, mut arguments: JsonObject) -> Result<Map<String, Value>, LeagueError> {
        let named = arguments.get("message_type").filter(|value| !value.is_null());
        match (self.message_type, named) {
            (Some(kind), None) => {
                arguments.insert("message_type".into(), kind.as_str().into());
                arguments
                    .entry("protocol")
                    .or_insert_with(|| league_v2::envelope::PROTOCOL.into());
            }
            (Some(kind), Some(named)) => {
                if named.as_str().and_then(league_v2::dialect::message_type) != Some(kind) {
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

pub(super) static SPECS: &[Spec] = &[
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

pub(super) static TOOLS: LazyLock<Vec<Tool>> = LazyLock::new(|| SPECS.iter().map(Spec::tool).collect());

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
        json!({"type": "string", "enum": Query::ALL.map(Query::as_str)}),
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
            let resolved = league_v2::dialect::resolve(spec.name, Value::Object(message));
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
}
