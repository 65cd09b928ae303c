//! Every way real agents name a call, resolved; and every dialect framed as such an agent expects.

use super::*;
use serde_json::json;

fn action(method: &str, params: Value) -> (Action, Dialect) {
    let resolved = resolve(method, params).unwrap_or_else(|e| panic!("{method}: {e:?}"));
    (resolved.action, resolved.dialect)
}

#[test]
fn every_dialect_of_registration_resolves() {
    let register = Action::Message(MessageType::LeagueRegisterRequest);
    let message = json!({"message_type": "LEAGUE_REGISTER_REQUEST"});
    assert_eq!(
        action("register_player", message.clone()),
        (register, Dialect::Canonical)
    );
    assert_eq!(
        action("LEAGUE_REGISTER_REQUEST", message.clone()),
        (register, Dialect::MessageType)
    );
    assert_eq!(
        action("league_register_request", json!({})),
        (register, Dialect::LowerMessageType)
    );
    assert_eq!(
        action(
            "league_register_request",
            json!({"league_register_request": message.clone()})
        ),
        (register, Dialect::Nested)
    );
    assert_eq!(
        action(
            "league_register_request",
            json!({"protocol": "league.v2", "sender": "player:X",
                "league_register_request": {"player_meta": {}}})
        ),
        (register, Dialect::DetailsNested)
    );
    assert_eq!(action("league_register", json!({})), (register, Dialect::Legacy));
    assert_eq!(
        action("receive_league_register_request", json!({})),
        (register, Dialect::Receive)
    );
    assert_eq!(
        action("handle_message", json!({"message": message.clone()})),
        (register, Dialect::HandleMessage)
    );
    assert_eq!(
        action("mcp_message", message.clone()),
        (register, Dialect::McpMessage)
    );
    assert_eq!(
        action(
            "tools/call",
            json!({"name": "register_player", "arguments": message})
        ),
        (register, Dialect::ToolsCall)
    );
}

#[test]
fn message_type_in_params_wins() {
    let (action, _) = action("report_match_result", json!({"message_type": "GAME_JOIN_ACK"}));
    assert_eq!(action, Action::Message(MessageType::GameJoinAck));
}

#[test]
fn unknown_methods_and_bad_nesting() {
    assert_eq!(
        resolve("fly", json!({})).map_err(|e| e.code),
        Err(METHOD_NOT_FOUND)
    );
    assert_eq!(
        resolve("handle_message", json!({})).map_err(|e| e.code),
        Err(INVALID_PARAMS)
    );
    assert_eq!(
        resolve("tools/call", json!({"arguments": {}})).map_err(|e| e.code),
        Err(INVALID_PARAMS)
    );
    assert_eq!(
        resolve("ping", json!([1])).map_err(|e| e.code),
        Err(INVALID_PARAMS)
    );
}

#[test]
fn the_leagues_answers_name_no_call() {
    for answer in MessageType::all().filter(|kind| kind.is_answer()) {
        assert_eq!(canonical_method(answer), None, "{}", answer.as_str());
        assert_eq!(message_type(answer.as_str()), None, "{}", answer.as_str());
        assert_eq!(
            resolve(answer.as_str(), json!({})).map_err(|e| e.code),
            Err(METHOD_NOT_FOUND),
            "{}",
            answer.as_str()
        );
    }
    // Every other type has its method, and an answer's name in `params.message_type` decides nothing.
    assert!(
        MessageType::all()
            .filter(|kind| !kind.is_answer())
            .all(|kind| canonical_method(kind).is_some())
    );
    assert_eq!(
        action(
            "register_player",
            json!({"message_type": "LEAGUE_REGISTER_RESPONSE"})
        ),
        (
            Action::Message(MessageType::LeagueRegisterRequest),
            Dialect::Canonical
        )
    );
}

#[test]
fn configuration_and_registration_labels_use_the_same_names() {
    for dialect in Dialect::ALL {
        let configured: Dialect = serde_json::from_value(json!(dialect.as_str()))
            .unwrap_or_else(|e| panic!("{}: {e}", dialect.as_str()));
        assert_eq!(configured, dialect);
        assert_eq!(Dialect::parse(dialect.as_str()), Some(dialect));
    }
}

#[test]
fn outbound_framing() {
    let message = json!({"message_type": "CHOOSE_PARITY_CALL"});
    let call = MessageType::ChooseParityCall;
    let framed = |dialect: Dialect| {
        let (method, params) = dialect.frame(call, &message);
        (method.into_owned(), serde_json::to_value(params).expect("params"))
    };
    assert_eq!(
        framed(Dialect::Canonical),
        ("choose_parity".to_owned(), message.clone())
    );
    assert_eq!(framed(Dialect::MessageType).0, "CHOOSE_PARITY_CALL");
    assert_eq!(framed(Dialect::Legacy).0, "parity_choose");
    assert_eq!(framed(Dialect::LowerMessageType).0, "choose_parity_call");
    assert_eq!(framed(Dialect::Receive).0, "receive_choose_parity_call");
    assert_eq!(
        framed(Dialect::Nested),
        (
            "choose_parity_call".to_owned(),
            json!({"choose_parity_call": message})
        )
    );
    assert_eq!(
        framed(Dialect::DetailsNested),
        (
            "choose_parity_call".to_owned(),
            json!({"message_type": "CHOOSE_PARITY_CALL", "choose_parity_call": {}})
        )
    );
    assert_eq!(
        framed(Dialect::ToolsCall),
        (
            "tools/call".to_owned(),
            json!({"name": "choose_parity", "arguments": message})
        )
    );
    assert_eq!(
        framed(Dialect::HandleMessage),
        ("handle_message".to_owned(), json!({"message": message}))
    );
    assert_eq!(framed(Dialect::McpMessage).1, message);
}

#[test]
fn a_debug_shorthand_asks_its_query() {
    use crate::query::Query;
    assert_eq!(
        action("get_standings", json!({})),
        (Action::Query(Query::Standings), Dialect::Canonical)
    );
    assert_eq!(
        action("list_leagues", json!({})),
        (Action::Query(Query::Leagues), Dialect::Canonical)
    );
    assert!(
        resolve("get_registrations", json!({})).is_err(),
        "the referees' question has no shorthand"
    );
}
