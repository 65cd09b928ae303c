//! An MCP agent's tools as league messages: which tool takes which message and how its arguments are
//! written (read once from `tools/list` when the session opens), and a tool's result read once into the
//! [`Answer`] every dialect's call produces.

use std::collections::HashMap;

use league_domain::MessageType;
use league_v2::dialect::canonical_method;
use league_v2::jsonrpc::RpcError;
use rmcp::model::{CallToolResult, ContentBlock, Tool};
use serde_json::{Map, Value};

use crate::bridge::client::Answer;

/// The JSON-RPC code a tool's own failure (`isError: true`) is read as: the agent ran the tool and
/// refused the message (JSON-RPC's "server error" range; the agent's words are the message).
pub(crate) const TOOL_ERROR: i64 = -32000;

/// How a tool takes a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Arguments {
    /// The message's fields are the tool's arguments (`choose_parity(match_id, player_id, …)`).
    Fields,
    /// The message is the tool's one argument, of this name (`handle_game_invitation(message: dict)`).
    Under(String),
}

/// The tool for a message type, and how it takes the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ToolFor {
    pub(crate) name: String,
    pub(crate) arguments: Arguments,
}

/// The tools of one agent, by the message type each takes.
#[derive(Debug, Default)]
pub(crate) struct Tools(HashMap<MessageType, ToolFor>);

impl Tools {
    /// Reads `tools/list`: the tool for each message type is the one named as the specification names
    /// its method (`choose_parity`), else by the message type (`CHOOSE_PARITY_CALL`, in any case), else
    /// `receive_<type>`; the names the field's agents use, in the order the bridge tries dialects.
    pub(crate) fn new(listed: &[Tool]) -> Self {
        let by_name: HashMap<String, &Tool> = listed
            .iter()
            .map(|tool| (tool.name.to_ascii_lowercase(), tool))
            .collect();
        let tools = MessageType::all()
            .filter_map(|kind| {
                let lower = kind.as_str().to_ascii_lowercase();
                let tool = [
                    canonical_method(kind)?.to_owned(),
                    lower.clone(),
                    format!("receive_{lower}"),
                ]
                .iter()
                .find_map(|name| by_name.get(name))?;
                let found = ToolFor {
                    name: tool.name.to_string(),
                    arguments: arguments(tool),
                };
                Some((kind, found))
            })
            .collect();
        Self(tools)
    }

    pub(crate) fn get(&self, kind: MessageType) -> Option<&ToolFor> {
        self.0.get(&kind)
    }
}

/// A tool whose input schema has one property, an object or of any type, takes the message under that
/// name; any other takes the message's fields (JSON Schema: properties named in `properties`, the
/// type in each property's `type`).
fn arguments(tool: &Tool) -> Arguments {
    let Some(Value::Object(properties)) = tool.input_schema.get("properties") else {
        return Arguments::Fields;
    };
    let mut names = properties.iter();
    match (names.next(), names.next()) {
        (Some((name, schema)), None)
            if matches!(schema.get("type"), None | Some(Value::Null))
                || schema.get("type").and_then(Value::as_str) == Some("object") =>
        {
            Arguments::Under(name.clone())
        }
        _ => Arguments::Fields,
    }
}

impl ToolFor {
    /// The arguments that carry `message` (a league message, an object) to this tool.
    pub(crate) fn arguments(&self, message: Value) -> Map<String, Value> {
        match (&self.arguments, message) {
            (Arguments::Fields, Value::Object(fields)) => fields,
            (Arguments::Under(name), message) => Map::from_iter([(name.clone(), message)]),
            (Arguments::Fields, other) => Map::from_iter([("message".to_owned(), other)]),
        }
    }
}

/// A tool's result as the agent's answer. A failure (`isError: true`) is the agent refusing the message,
/// in its words (the text content). A success is read as the league's other dialects' results are: the
/// text content when it is JSON (what the SDKs write a returned object as), else the structured content
/// (without the `{"result": …}` wrapper the Python SDK puts around a value that is not an object), else
/// the text itself (`"ok"`), else nothing.
pub(crate) fn answer(result: CallToolResult) -> Answer {
    let text = result.content.iter().find_map(|block| match block {
        ContentBlock::Text(text) => Some(text.text.as_str()),
        _ => None,
    });
    if result.is_error == Some(true) {
        let message = text.unwrap_or("the tool failed").to_owned();
        return Answer::Error(RpcError {
            code: TOOL_ERROR,
            message,
            data: result.structured_content,
        });
    }
    if let Some(Ok(json)) = text.map(serde_json::from_str::<Value>) {
        return Answer::Result(json);
    }
    match (result.structured_content, text) {
        (Some(Value::Object(mut structured)), _)
            if structured.len() == 1 && structured.contains_key("result") =>
        {
            // Present: the guard checked it.
            Answer::Result(structured.remove("result").unwrap_or_default())
        }
        (Some(structured), _) => Answer::Result(structured),
        (None, Some(text)) => Answer::Result(Value::String(text.to_owned())),
        (None, None) => Answer::Result(Value::Null),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Arc;

    fn result(value: Value) -> CallToolResult {
        serde_json::from_value(value).expect("a CallToolResult")
    }

    fn tool(name: &str, schema: Value) -> Tool {
        let Value::Object(schema) = schema else {
            panic!("a schema object")
        };
        Tool::new(name.to_owned(), "", Arc::new(schema))
    }

    #[test]
    fn a_returned_object_is_read_from_its_text_or_its_structured_content() {
        let ack = json!({"message_type": "GAME_JOIN_ACK", "accept": true});
        // The Python SDK: both, the text being the object's JSON.
        let both = result(json!({
            "content": [{"type": "text", "text": ack.to_string()}],
            "structuredContent": ack,
            "isError": false
        }));
        assert_eq!(answer(both), Answer::Result(ack.clone()));
        // Structured content only.
        let structured = result(json!({"content": [], "structuredContent": ack}));
        assert_eq!(answer(structured), Answer::Result(ack.clone()));
        // Text only (an SDK without structured output).
        let text = result(json!({"content": [{"type": "text", "text": ack.to_string()}]}));
        assert_eq!(answer(text), Answer::Result(ack));
    }

    #[test]
    fn a_returned_value_that_is_no_object_is_read_without_the_sdk_s_wrapper() {
        let wrapped = result(json!({
            "content": [{"type": "text", "text": "ok"}],
            "structuredContent": {"result": "ok"}
        }));
        assert_eq!(answer(wrapped), Answer::Result(json!("ok")));
        let text = result(json!({"content": [{"type": "text", "text": "joined"}]}));
        assert_eq!(answer(text), Answer::Result(json!("joined")));
        let nothing = result(json!({"content": []}));
        assert_eq!(answer(nothing), Answer::Result(Value::Null));
    }

    #[test]
    fn a_tool_error_is_the_agent_s_refusal_in_its_words() {
        let refused = result(json!({
            "content": [{"type": "text", "text": "-32602 Sender not registered"}],
            "isError": true
        }));
        let Answer::Error(error) = answer(refused) else {
            panic!("a refusal")
        };
        assert_eq!(error.code, TOOL_ERROR);
        assert!(league_v2::sender::refused_over_sender(&error), "{error:?}");
        let silent = result(json!({"content": [], "isError": true}));
        assert!(matches!(
            answer(silent),
            Answer::Error(RpcError { code: TOOL_ERROR, .. })
        ));
    }

    #[test]
    fn tools_are_found_by_the_names_agents_give_them() {
        let message =
            json!({"type": "object", "properties": {"message": {"type": "object"}}, "required": ["message"]});
        let fields = json!({"type": "object", "properties": {
            "match_id": {"type": "string"}, "player_id": {"type": "string"}, "context": {"type": "object"}
        }});
        let tools = Tools::new(&[
            tool("handle_game_invitation", message),
            tool("choose_parity", fields),
            tool(
                "GAME_OVER",
                json!({"type": "object", "properties": {"payload": {}}}),
            ),
            tool("receive_round_announcement", json!({"type": "object"})),
            tool("roll_dice", json!({"type": "object"})),
        ]);
        let found = |kind| tools.get(kind).cloned();
        assert_eq!(
            found(MessageType::GameInvitation),
            Some(ToolFor {
                name: "handle_game_invitation".to_owned(),
                arguments: Arguments::Under("message".to_owned())
            })
        );
        assert_eq!(
            found(MessageType::ChooseParityCall).map(|tool| tool.arguments),
            Some(Arguments::Fields)
        );
        assert_eq!(
            found(MessageType::GameOver),
            Some(ToolFor {
                name: "GAME_OVER".to_owned(),
                arguments: Arguments::Under("payload".to_owned())
            })
        );
        assert_eq!(
            found(MessageType::RoundAnnouncement).map(|tool| (tool.name, tool.arguments)),
            Some(("receive_round_announcement".to_owned(), Arguments::Fields))
        );
        assert_eq!(found(MessageType::LeagueCompleted), None);
    }

    #[test]
    fn the_message_is_written_as_the_tool_takes_it() {
        let message = json!({"match_id": "M1", "player_id": "P1"});
        let under = ToolFor {
            name: "handle_game_invitation".to_owned(),
            arguments: Arguments::Under("message".to_owned()),
        };
        assert_eq!(
            Value::Object(under.arguments(message.clone())),
            json!({"message": message})
        );
        let fields = ToolFor {
            name: "choose_parity".to_owned(),
            arguments: Arguments::Fields,
        };
        assert_eq!(Value::Object(fields.arguments(message.clone())), message);
    }
}
