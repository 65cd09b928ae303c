//! Ids are parsed where a league.v2 request enters the gateway (docs/adr/0061-typed-ids-at-the-gateways-boundary.md):
//! a malformed league, match, player or agent id is E002 naming the field and what the id should be,
//! answered before the manager is asked, and changes nothing.

use crate::support;

use league_proto::ErrorCode;
use league_proto::v2::{InviteToMatchRequest, MatchContext, Role};
use league_v2::compliance::Mode;
use serde_json::{Value, json};
use support::*;

/// One request naming a malformed id: the method, its params, and the field and kind the refusal names.
struct Case {
    method: &'static str,
    params: Value,
    field: &'static str,
    kind: &'static str,
}

fn case(method: &'static str, params: Value, field: &'static str, kind: &'static str) -> Case {
    Case {
        method,
        params,
        field,
        kind,
    }
}

/// A complete league.v2 message of `message_type` from `who`, with `fields` beside its envelope.
fn from(who: &Registered, message_type: &str, fields: Value) -> Value {
    let mut message = json!({
        "protocol": "league.v2",
        "message_type": message_type,
        "sender": format!("player:{}", who.id),
        "timestamp": "2026-11-21T08:54:00Z",
        "conversation_id": "conv-malformed",
        "auth_token": who.token,
    });
    if let (Some(message), Value::Object(fields)) = (message.as_object_mut(), fields) {
        message.extend(fields);
    }
    message
}

#[tokio::test(flavor = "multi_thread")]
async fn a_malformed_id_is_refused_naming_its_field_and_changes_nothing() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway(&manager, Mode::Lenient, Limits::default()).await;
    let agents = spawn_agents(Behaviour::Clean).await;
    let alice = register_player(&gateway, &agents, "alice").await;
    let operator = |fields: Value| {
        let mut params = json!({"auth_token": OPERATOR_TOKEN});
        if let (Some(params), Value::Object(fields)) = (params.as_object_mut(), fields) {
            params.extend(fields);
        }
        params
    };
    let query = |query_params: Value| {
        from(
            &alice,
            "LEAGUE_QUERY",
            json!({"league_id": LEAGUE_ID, "query_type": "GET_MATCH", "query_params": query_params}),
        )
    };
    let cases = [
        case(
            "start_league",
            operator(json!({"league_id": "../results"})),
            "league_id",
            "a league id",
        ),
        case(
            "pause_league",
            operator(json!({"league_id": "Evening League"})),
            "league_id",
            "a league id",
        ),
        case(
            "create_league",
            operator(json!({"league_id": "x/y"})),
            "league_id",
            "a league id",
        ),
        case(
            "enroll_player",
            operator(json!({"player_id": "alice"})),
            "player_id",
            "a player id",
        ),
        case(
            "withdraw_player",
            operator(json!({"league_id": LEAGUE_ID, "player_id": "p1"})),
            "player_id",
            "a player id",
        ),
        case(
            "get_compliance_warnings",
            operator(json!({"agent_id": "ref1"})),
            "agent_id",
            "an agent id",
        ),
        case(
            "league_query",
            query(json!({"match_id": "M1"})),
            "match_id",
            "a match id",
        ),
        case(
            "league_query",
            with_field(query(json!({"match_id": "R1M1"})), "league_id", "L1"),
            "league_id",
            "a league id",
        ),
        case(
            "get_player_stats",
            json!({"auth_token": alice.token, "player_id": "P1"}),
            "player_id",
            "a player id",
        ),
        case(
            "GAME_JOIN_ACK",
            from(
                &alice,
                "GAME_JOIN_ACK",
                json!({"match_id": "R01M1", "accept": true}),
            ),
            "match_id",
            "a match id",
        ),
        case(
            "register_player",
            with_field(
                player_registration("bob", &agents.endpoint("bob")),
                "league_id",
                "Evening",
            ),
            "league_id",
            "a league id",
        ),
    ];
    for case in cases {
        let before = snapshot(&manager.pool).await;
        let response = gateway.rpc(case.method, case.params).await;
        let error = &response["error"]["data"];
        assert_eq!(
            error["error_code"],
            ErrorCode::InvalidMessageFormat.code(),
            "{} naming a malformed {}: {response}",
            case.method,
            case.field
        );
        let description = error["error_description"].as_str().unwrap_or_default();
        let named = format!("{} \"", case.field);
        let grammar = format!("is not {}: {} is ", case.kind, case.kind);
        assert!(
            description.starts_with(&named) && description.contains(&grammar),
            "{}: the refusal names {} and says what {} is: {description}",
            case.method,
            case.field,
            case.kind
        );
        assert_eq!(
            snapshot(&manager.pool).await,
            before,
            "{} changed something",
            case.method
        );
    }
}

/// `message` with `field` set to `value`.
fn with_field(mut message: Value, field: &str, value: &str) -> Value {
    message[field] = value.into();
    message
}

/// What a case changes in a well-formed invitation.
type Malform = fn(&mut InviteToMatchRequest);

/// A referee's call through the bridge (gRPC `PlayerService`) is parsed where it enters as a league.v2
/// message is: a malformed player, opponent, league, match or referee id is E002 naming the field and
/// the grammar, and the agent hears nothing of it.
#[tokio::test(flavor = "multi_thread")]
async fn a_bridge_call_naming_a_malformed_id_is_refused_and_reaches_no_agent() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway(&manager, Mode::Lenient, Limits::default()).await;
    let agents = spawn_agents(Behaviour::Clean).await;
    let alice = register_player(&gateway, &agents, "alice").await;
    let invitation = |edit: Malform| {
        let mut request = InviteToMatchRequest {
            player_id: alice.id.clone(),
            context: Some(MatchContext {
                league_id: LEAGUE_ID.into(),
                round_id: 1,
                match_id: "R1M1".into(),
                game_type: "even_odd".into(),
                conversation_id: "conv-malformed".into(),
                referee_id: "REF01".into(),
            }),
            role_in_match: Role::PlayerA as i32,
            opponent_id: "P99".into(),
            deadline: None,
        };
        edit(&mut request);
        request
    };
    let cases: [(&str, &str, Malform); 5] = [
        ("player_id", "a player id", |r| r.player_id = "p1".into()),
        ("opponent_id", "a player id", |r| r.opponent_id = "REF01".into()),
        ("context.league_id", "a league id", |r| {
            r.context.get_or_insert_default().league_id = "Evening League".into()
        }),
        ("context.match_id", "a match id", |r| {
            r.context.get_or_insert_default().match_id = "M1".into()
        }),
        ("context.referee_id", "a referee id", |r| {
            r.context.get_or_insert_default().referee_id = "ref1".into()
        }),
    ];
    let heard_before = agents.received().len();
    let mut players = gateway.players();
    for (field, kind, edit) in cases {
        let status = players
            .invite_to_match(invitation(edit))
            .await
            .err()
            .unwrap_or_else(|| panic!("a malformed {field} was taken"));
        assert_eq!(
            league_proto::error_code::code_of(&status),
            Some(ErrorCode::InvalidMessageFormat),
            "a malformed {field}: {status}"
        );
        let grammar = format!("is not {kind}: {kind} is ");
        assert!(
            status.message().starts_with(&format!("{field} \"")) && status.message().contains(&grammar),
            "the refusal names {field} and says what {kind} is: {}",
            status.message()
        );
    }
    assert_eq!(
        agents.received().len(),
        heard_before,
        "the agent heard a refused call"
    );
}
