//! Method-name dialects. Inbound, every way real agents name a call is resolved to one league.v2 message
//! type or gateway action (`params.message_type` wins when present). Outbound, each external agent is
//! called in the dialect it registered with, unless configuration says otherwise.

use league_domain::MessageType;
use std::borrow::Cow;

use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::jsonrpc::{INVALID_PARAMS, METHOD_NOT_FOUND, RpcError};
use crate::query::Query;

/// The specification's method name for a message (docs/protocol.md, the table under "Tools"); none
/// for the league's answers, which are never calls.
pub fn canonical_method(kind: MessageType) -> Option<&'static str> {
    let method = match kind {
        MessageType::RefereeRegisterRequest => "register_referee",
        MessageType::LeagueRegisterRequest => "register_player",
        MessageType::RoundAnnouncement => "notify_round",
        MessageType::GameInvitation => "handle_game_invitation",
        MessageType::GameJoinAck => "game_join_ack",
        MessageType::ChooseParityCall => "choose_parity",
        MessageType::ChooseParityResponse => "choose_parity_response",
        MessageType::GameOver => "notify_match_result",
        MessageType::MatchResultReport => "report_match_result",
        MessageType::LeagueStandingsUpdate => "update_standings",
        MessageType::RoundCompleted => "notify_round_completed",
        MessageType::LeagueCompleted => "notify_league_completed",
        MessageType::GameError => "notify_game_error",
        MessageType::LeagueQuery => "league_query",
        MessageType::GameMoveCall => "request_move",
        MessageType::GameMoveResponse => "game_move_response",
        MessageType::StartMatch => "start_match",
        // The league's answers (`MessageType::is_answer`); a test holds that every other type is above.
        _ => return None,
    };
    Some(method)
}

/// A message type an agent may send or be called with, from its name (any case) or an alias real
/// agents use. The league's answers are not among them: no call is named for one.
pub fn message_type(name: &str) -> Option<MessageType> {
    if let Some(found) = MessageType::parse(name) {
        return (!found.is_answer()).then_some(found);
    }
    match name.to_ascii_uppercase().as_str() {
        // The older revision of the specification (`parity_choose`).
        "RESPONSE_PARITY_CHOOSE" | "PARITY_CHOOSE_RESPONSE" => Some(MessageType::ChooseParityResponse),
        "PARITY_CHOOSE" => Some(MessageType::ChooseParityCall),
        "STANDINGS_UPDATE" => Some(MessageType::LeagueStandingsUpdate),
        _ => None,
    }
}

/// An operator's change to a league that runs (docs/operations.md, "Pause, cancel, withdraw").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lifecycle {
    Pause,
    Resume,
    Cancel,
    Withdraw,
}

impl Lifecycle {
    /// The method name, which is also the metrics label.
    pub fn method(self) -> &'static str {
        match self {
            Lifecycle::Pause => "pause_league",
            Lifecycle::Resume => "resume_league",
            Lifecycle::Cancel => "cancel_league",
            Lifecycle::Withdraw => "withdraw_player",
        }
    }
}

/// What a call asks the gateway to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Handle a league.v2 message.
    Message(MessageType),
    Ping,
    /// Operator: start the league.
    StartLeague,
    /// Operator: create a league.
    CreateLeague,
    /// Operator: enroll a registered player in a league.
    EnrollPlayer,
    /// Operator: pause, resume or cancel a league, or withdraw a player from it.
    Lifecycle(Lifecycle),
    /// A debug tool named for one LEAGUE_QUERY (`get_standings`…).
    Query(Query),
    /// Operator: every agent's compliance warnings.
    ComplianceWarnings,
    /// A pulling referee asks for its matches (`get_assigned_matches`).
    AssignedMatches,
}

/// How an agent names calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Dialect {
    /// The specification's method names (`handle_game_invitation`, `choose_parity`…).
    Canonical,
    /// The message type as the method (`GAME_INVITATION`).
    MessageType,
    /// The message type in lower case as the method (`game_invitation`).
    #[serde(rename = "message_type_lower")]
    LowerMessageType,
    /// The lower-case message type as the method, with the message nested under that name
    /// (`game_invitation {"game_invitation": {...}}`). Such an agent answers every method it does not
    /// know `200 {"status": "ok"}`, so its dialect cannot be found by trying: it is learned only from
    /// an agent that registers this way.
    Nested,
    /// The lower-case message type as the method, the envelope at the top of the params and only the
    /// message's own details nested under that name ([`crate::details_nested`]). Learned, as `nested`,
    /// from an agent that registers this way.
    DetailsNested,
    /// `receive_<message type>` in lower case.
    Receive,
    /// One method `handle_message` with the message in `params.message`.
    HandleMessage,
    /// One method `mcp_message` with the message as params.
    McpMessage,
    /// MCP framing: `tools/call {name: <canonical>, arguments: <message>}`.
    ToolsCall,
    /// The older revision: canonical names, but `parity_choose` for the parity call.
    Legacy,
    /// A real MCP server (streamable HTTP): each message a `tools/call` of the tool that handles it, in
    /// an MCP session (the gateway's MCP client; ADR 0046). Learned from the agent's answer (or
    /// configured), never from how it registered.
    Mcp,
}

impl Dialect {
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::Canonical => "canonical",
            Dialect::MessageType => "message_type",
            Dialect::LowerMessageType => "message_type_lower",
            Dialect::Nested => "nested",
            Dialect::DetailsNested => "details_nested",
            Dialect::Receive => "receive",
            Dialect::HandleMessage => "handle_message",
            Dialect::McpMessage => "mcp_message",
            Dialect::ToolsCall => "tools_call",
            Dialect::Legacy => "legacy",
            Dialect::Mcp => "mcp",
        }
    }

    const ALL: [Dialect; 11] = [
        Dialect::Canonical,
        Dialect::MessageType,
        Dialect::LowerMessageType,
        Dialect::Nested,
        Dialect::DetailsNested,
        Dialect::Receive,
        Dialect::HandleMessage,
        Dialect::McpMessage,
        Dialect::ToolsCall,
        Dialect::Legacy,
        Dialect::Mcp,
    ];

    pub fn parse(text: &str) -> Option<Dialect> {
        Self::ALL.into_iter().find(|d| d.as_str() == text)
    }

    /// The method and params to send `message` (a league.v2 message of type `kind`) in this dialect.
    /// The params borrow the message: a message tried in several dialects is framed without a copy.
    pub fn frame<M: Serialize>(self, kind: MessageType, message: &M) -> (Cow<'static, str>, Params<'_, M>) {
        let lower = || Cow::Owned(kind.as_str().to_ascii_lowercase());
        // The league never calls with one of its answers; were one framed, its type would name it.
        let canonical = || canonical_method(kind).map_or_else(lower, Cow::Borrowed);
        match self {
            Dialect::Canonical => (canonical(), Params::Message(message)),
            Dialect::MessageType => (kind.as_str().into(), Params::Message(message)),
            Dialect::LowerMessageType => (lower(), Params::Message(message)),
            Dialect::Nested => (lower(), Params::Under(lower(), message)),
            Dialect::DetailsNested => (lower(), Params::Details(lower(), message)),
            Dialect::Receive => (
                format!("receive_{}", kind.as_str().to_ascii_lowercase()).into(),
                Params::Message(message),
            ),
            Dialect::HandleMessage => ("handle_message".into(), Params::Under("message".into(), message)),
            Dialect::McpMessage => ("mcp_message".into(), Params::Message(message)),
            // An MCP server's calls go through its session (the gateway's MCP client), which names the
            // tool from the server's own list; as one JSON-RPC call, this is the tool call.
            Dialect::ToolsCall | Dialect::Mcp => (
                "tools/call".into(),
                Params::Tool {
                    name: canonical(),
                    arguments: message,
                },
            ),
            Dialect::Legacy if kind == MessageType::ChooseParityCall => {
                ("parity_choose".into(), Params::Message(message))
            }
            Dialect::Legacy => (canonical(), Params::Message(message)),
        }
    }
}

/// The params of an outbound call: the message itself, the message under one field, or an MCP tool
/// call with the message as its arguments.
#[derive(Debug, Clone, PartialEq)]
pub enum Params<'a, M> {
    Message(&'a M),
    Under(Cow<'static, str>, &'a M),
    /// The envelope on top, the message's details under this name ([`crate::details_nested`]).
    Details(Cow<'static, str>, &'a M),
    Tool {
        name: Cow<'static, str>,
        arguments: &'a M,
    },
}

impl<M: Serialize> Serialize for Params<'_, M> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Params::Message(message) => message.serialize(serializer),
            Params::Under(field, message) => {
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry(field.as_ref(), message)?;
                map.end()
            }
            Params::Details(field, message) => {
                let message = serde_json::to_value(message).map_err(serde::ser::Error::custom)?;
                crate::details_nested::split(message, field).serialize(serializer)
            }
            Params::Tool { name, arguments } => {
                let mut map = serializer.serialize_map(Some(2))?;
                map.serialize_entry("name", name.as_ref())?;
                map.serialize_entry("arguments", arguments)?;
                map.end()
            }
        }
    }
}

/// A call resolved: what to do, the league.v2 message it carries, and the dialect it was sent in.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    pub action: Action,
    pub message: Map<String, Value>,
    pub dialect: Dialect,
}

/// Resolves a call's method and params.
pub fn resolve(method: &str, params: Value) -> Result<Resolved, RpcError> {
    let message = match params {
        Value::Object(object) => object,
        Value::Null => Map::new(),
        _ => {
            return Err(RpcError::new(
                INVALID_PARAMS,
                "Invalid params: params must be an object",
            ));
        }
    };
    resolve_in(method, message, 0)
}

fn resolve_in(method: &str, mut message: Map<String, Value>, depth: u8) -> Result<Resolved, RpcError> {
    let not_found = || RpcError::new(METHOD_NOT_FOUND, format!("Method not found: {method}"));
    let lower = method.to_ascii_lowercase();
    // Envelopes that carry another call, one level deep.
    match lower.as_str() {
        "handle_message" if depth == 0 => return envelope(Dialect::HandleMessage, message),
        "mcp_message" if depth == 0 => return envelope(Dialect::McpMessage, message),
        "tools/call" if depth == 0 => return tools_call(message, depth),
        _ => {}
    }
    if let Some(resolved) = nested(method, &mut message) {
        return Ok(resolved);
    }
    if let Some(kind) = message_type(method).filter(|kind| kind.as_str().to_ascii_lowercase() == method)
        && let Some(merged) = crate::details_nested::merge(method, &mut message)
    {
        return Ok(Resolved {
            action: Action::Message(kind),
            message: merged,
            dialect: Dialect::DetailsNested,
        });
    }
    let by_method = by_method(&lower).map(|(action, dialect)| {
        // The message type written in lower case is a dialect of its own (it is how such an agent is
        // called back).
        if dialect == Dialect::MessageType && method == lower {
            (action, Dialect::LowerMessageType)
        } else {
            (action, dialect)
        }
    });
    // `params.message_type` decides when present and known.
    if let Some(kind) = message
        .get("message_type")
        .and_then(Value::as_str)
        .and_then(message_type)
    {
        let dialect = match by_method {
            Some((_, dialect)) => dialect,
            None => return Err(not_found()),
        };
        return Ok(Resolved {
            action: Action::Message(kind),
            message,
            dialect,
        });
    }
    let (action, dialect) = by_method.ok_or_else(not_found)?;
    Ok(Resolved {
        action,
        message,
        dialect,
    })
}

/// `handle_message {"message": {...}}` or `mcp_message` (whose message may also be the params
/// themselves): the nested message names its type.
fn envelope(dialect: Dialect, mut message: Map<String, Value>) -> Result<Resolved, RpcError> {
    let inner = match message.remove("message") {
        Some(Value::Object(inner)) => inner,
        Some(_) => {
            return Err(RpcError::new(
                INVALID_PARAMS,
                "Invalid params: `message` must be an object",
            ));
        }
        None if dialect == Dialect::McpMessage => message,
        None => {
            return Err(RpcError::new(
                INVALID_PARAMS,
                "Invalid params: `message` is required",
            ));
        }
    };
    let Some(kind) = inner
        .get("message_type")
        .and_then(Value::as_str)
        .and_then(message_type)
    else {
        return Err(RpcError::new(
            INVALID_PARAMS,
            "Invalid params: the nested message needs a known `message_type`",
        ));
    };
    Ok(Resolved {
        action: Action::Message(kind),
        message: inner,
        dialect,
    })
}

/// An MCP `tools/call`: the tool's name is the method, its arguments the params.
fn tools_call(mut message: Map<String, Value>, depth: u8) -> Result<Resolved, RpcError> {
    let Some(Value::String(name)) = message.remove("name") else {
        return Err(RpcError::new(
            INVALID_PARAMS,
            "Invalid params: tools/call needs a `name`",
        ));
    };
    let arguments = match message.remove("arguments") {
        Some(Value::Object(arguments)) => arguments,
        None | Some(Value::Null) => Map::new(),
        Some(_) => {
            return Err(RpcError::new(
                INVALID_PARAMS,
                "Invalid params: `arguments` must be an object",
            ));
        }
    };
    let mut resolved = resolve_in(&name, arguments, depth + 1)?;
    resolved.dialect = Dialect::ToolsCall;
    Ok(resolved)
}

/// A message nested under its own lower-case type name, the method naming the same type:
/// `league_register_request {"league_register_request": {...}}`.
fn nested(method: &str, message: &mut Map<String, Value>) -> Option<Resolved> {
    let kind = message_type(method).filter(|kind| kind.as_str().to_ascii_lowercase() == method)?;
    if message.len() != 1 || !matches!(message.get(method), Some(Value::Object(_))) {
        return None;
    }
    let Some(Value::Object(inner)) = message.remove(method) else {
        return None;
    };
    Some(Resolved {
        action: Action::Message(kind),
        message: inner,
        dialect: Dialect::Nested,
    })
}

/// The action and dialect a method name stands for.
fn by_method(lower: &str) -> Option<(Action, Dialect)> {
    let action = match lower {
        "ping" => Action::Ping,
        "start_league" => Action::StartLeague,
        "create_league" => Action::CreateLeague,
        "enroll_player" => Action::EnrollPlayer,
        "pause_league" => Action::Lifecycle(Lifecycle::Pause),
        "resume_league" => Action::Lifecycle(Lifecycle::Resume),
        "cancel_league" => Action::Lifecycle(Lifecycle::Cancel),
        "withdraw_player" => Action::Lifecycle(Lifecycle::Withdraw),
        "get_compliance_warnings" => Action::ComplianceWarnings,
        "get_assigned_matches" => Action::AssignedMatches,
        _ => {
            if let Some(query) = Query::by_shorthand(lower) {
                return Some((Action::Query(query), Dialect::Canonical));
            }
            let (kind, dialect) = message_method(lower)?;
            return Some((Action::Message(kind), dialect));
        }
    };
    Some((action, Dialect::Canonical))
}

fn message_method(lower: &str) -> Option<(MessageType, Dialect)> {
    if let Some(kind) = MessageType::all().find(|t| canonical_method(*t) == Some(lower)) {
        return Some((kind, Dialect::Canonical));
    }
    let aliases = [
        (
            "league_register",
            MessageType::LeagueRegisterRequest,
            Dialect::Legacy,
        ),
        (
            "referee_register",
            MessageType::RefereeRegisterRequest,
            Dialect::Legacy,
        ),
        ("parity_choose", MessageType::ChooseParityCall, Dialect::Legacy),
        (
            "response_parity_choose",
            MessageType::ChooseParityResponse,
            Dialect::Legacy,
        ),
        (
            "choose_parity_reply",
            MessageType::ChooseParityResponse,
            Dialect::Canonical,
        ),
        ("join_ack", MessageType::GameJoinAck, Dialect::Canonical),
    ];
    if let Some((_, kind, dialect)) = aliases.iter().find(|(name, ..)| *name == lower) {
        return Some((*kind, *dialect));
    }
    if let Some(rest) = lower.strip_prefix("receive_") {
        let (kind, _) = message_method(rest).or_else(|| message_type(rest).map(|k| (k, Dialect::Receive)))?;
        return Some((kind, Dialect::Receive));
    }
    message_type(lower).map(|kind| (kind, Dialect::MessageType))
}

#[cfg(test)]
mod tests;
