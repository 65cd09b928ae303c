//! What an external referee's calls to its players must carry: a GAME_ERROR its error code and a
//! GAME_OVER its game result. Without them the call is refused (E003) and the player hears nothing;
//! with them the player gets the message. A call naming another league than the one of the match whose
//! lease the referee holds is taken for the lease's league, with a warning.

use crate::support;

use league_v2::compliance::Mode;
use serde_json::{Value, json};
use support::*;

/// The league error code of a refused call.
fn refused(answer: &Value) -> &str {
    answer["error"]["data"]["error_code"]
        .as_str()
        .unwrap_or_else(|| panic!("not refused: {answer}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_game_error_needs_its_code_and_a_game_over_its_result() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway(&manager, Mode::Lenient, Limits::default()).await;
    let agents = spawn_agents(Behaviour::Clean).await;
    let alice = register_player(&gateway, &agents, "alice").await;
    register_player(&gateway, &agents, "bob").await;
    let referee = register(
        &gateway,
        "register_referee",
        referee_registration("ref", &agents.endpoint("ref")),
    )
    .await;
    start_league(&gateway).await;
    let match_id = pulled_match(&gateway, &referee).await;
    let to_alice = |message_type: &str, fields: Value| {
        let mut message = json!({
            "protocol": "league.v2",
            "message_type": message_type,
            "sender": format!("referee:{}", referee.id),
            "timestamp": "2026-11-25T10:00:00Z",
            "conversation_id": "conv-referee-calls",
            "auth_token": referee.token,
            "league_id": LEAGUE_ID,
            "round_id": 1,
            "match_id": match_id,
            "player_id": alice.id,
        });
        if let (Value::Object(message), Value::Object(fields)) = (&mut message, fields) {
            message.extend(fields);
        }
        json!({"jsonrpc": "2.0", "method": message_type, "params": message, "id": 1})
    };
    let explained = json!({
        "error_description": "no GAME_JOIN_ACK in time",
        "affected_player": alice.id,
        "action_required": "RESEND_JOIN_ACK",
        "consequence": "TECHNICAL_LOSS",
    });

    let mut without_code = to_alice("GAME_ERROR", explained.clone());
    let answer = gateway.post(without_code.to_string()).await.json();
    assert_eq!(refused(&answer), "E003", "{answer}");
    assert!(answer.to_string().contains("error_code is required"), "{answer}");
    without_code["params"]["error_code"] = "".into();
    let answer = gateway.post(without_code.to_string()).await.json();
    assert_eq!(refused(&answer), "E003", "{answer}");
    let answer = gateway
        .post(to_alice("GAME_OVER", json!({})).to_string())
        .await
        .json();
    assert_eq!(refused(&answer), "E003", "{answer}");
    assert!(answer.to_string().contains("game_result is required"), "{answer}");
    let heard = |message_type: &str| -> Vec<Received> {
        agents
            .received()
            .into_iter()
            .filter(|call| call.agent == "alice" && call.message_type() == message_type)
            .collect()
    };
    assert!(
        heard("GAME_ERROR").is_empty() && heard("GAME_OVER").is_empty(),
        "alice heard nothing"
    );

    let mut with_code = explained;
    with_code["error_code"] = "E001".into();
    let answer = gateway
        .post(to_alice("GAME_ERROR", with_code).to_string())
        .await
        .json();
    assert_eq!(answer["result"]["status"], "acknowledged", "{answer}");
    let game_errors = heard("GAME_ERROR");
    assert_eq!(game_errors.len(), 1, "{game_errors:#?}");
    assert_eq!(game_errors[0].params["error_code"], "E001");
    assert_eq!(game_errors[0].params["action_required"], "RESEND_JOIN_ACK");
}

/// The match `referee` holds, pulled as a pulling referee pulls it.
async fn pulled_match(gateway: &TestGateway, referee: &Registered) -> String {
    // The referee pulls its match: it holds the lease of the league's only match. The gateway's claimer
    // for the referee may take the match first, between a pull's look at what the referee holds and its
    // own claim; that pull answers no match, and the next one lists it (a pulling referee asks again, as
    // pull.rs describes). So pull until the match is listed, a bounded number of times.
    let mut pulls = 0;
    loop {
        let pulled = gateway
            .rpc(
                "get_assigned_matches",
                json!({"referee_id": referee.id, "auth_token": referee.token}),
            )
            .await;
        if let Some(match_id) = pulled["result"]["matches"][0]["match_id"].as_str() {
            break match_id.to_owned();
        }
        pulls += 1;
        assert!(pulls < 100, "no match to referee after {pulls} pulls: {pulled}");
        tokio::task::yield_now().await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_naming_another_league_is_taken_for_the_lease_s_league() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway(&manager, Mode::Lenient, Limits::default()).await;
    let agents = spawn_agents(Behaviour::Clean).await;
    let alice = register_player(&gateway, &agents, "alice").await;
    register_player(&gateway, &agents, "bob").await;
    let referee = register(
        &gateway,
        "register_referee",
        referee_registration("ref", &agents.endpoint("ref")),
    )
    .await;
    start_league(&gateway).await;
    let match_id = pulled_match(&gateway, &referee).await;
    // The referee's own configured league id, which is no league here.
    let game_error = json!({"jsonrpc": "2.0", "method": "GAME_ERROR", "id": 1, "params": {
        "protocol": "league.v2", "message_type": "GAME_ERROR",
        "sender": format!("referee:{}", referee.id), "timestamp": "2026-11-25T10:00:00Z",
        "conversation_id": "conv-other-league", "auth_token": referee.token,
        "league_id": "league_of_my_own_config", "round_id": 1, "match_id": match_id,
        "player_id": alice.id, "error_code": "E001", "error_description": "no GAME_JOIN_ACK in time",
        "affected_player": alice.id, "action_required": "RESEND_JOIN_ACK", "consequence": "TECHNICAL_LOSS",
    }});
    let answer = gateway.post(game_error.to_string()).await.json();
    assert_eq!(answer["result"]["status"], "acknowledged", "{answer}");
    let heard: Vec<Received> = agents
        .received()
        .into_iter()
        .filter(|call| call.agent == "alice" && call.message_type() == "GAME_ERROR")
        .collect();
    assert_eq!(heard.len(), 1, "{heard:#?}");
    assert_eq!(heard[0].params["league_id"], LEAGUE_ID, "{heard:#?}");
    let warnings = gateway
        .wait_for_warnings("the league id warning", |w| {
            has_warning(w, &referee.id, "league_id_not_the_lease_s")
        })
        .await;
    let warning = warnings
        .iter()
        .find(|w| w["kind"] == "league_id_not_the_lease_s")
        .expect("the warning");
    assert!(
        warning["example"]
            .as_str()
            .is_some_and(|example| example.contains("league_of_my_own_config")),
        "{warning}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tokenless_call_to_a_player_is_refused_saying_why_and_the_operator_sees_it() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway(&manager, Mode::Lenient, Limits::default()).await;
    let agents = spawn_agents(Behaviour::Clean).await;
    let alice = register_player(&gateway, &agents, "alice").await;
    register_player(&gateway, &agents, "bob").await;
    let referee = register(
        &gateway,
        "register_referee",
        referee_registration("ref", &agents.endpoint("ref")),
    )
    .await;
    start_league(&gateway).await;
    let match_id = pulled_match(&gateway, &referee).await;
    // As a pulling referee of the field calls: no auth_token (its pulls went without one).
    let invitation = json!({"jsonrpc": "2.0", "method": "GAME_INVITATION", "id": 1, "params": {
        "protocol": "league.v2", "message_type": "GAME_INVITATION",
        "sender": format!("referee:{}", referee.id), "timestamp": "2026-11-25T10:00:00Z",
        "conversation_id": "conv-tokenless", "league_id": LEAGUE_ID, "round_id": 1,
        "match_id": match_id, "player_id": alice.id,
    }});
    let answer = gateway.post(invitation.to_string()).await.json();
    assert_eq!(refused(&answer), "E011", "{answer}");
    let said = answer["error"]["data"]["error_description"]
        .as_str()
        .unwrap_or_default();
    assert!(
        said.contains("calls to players") && said.contains("registration"),
        "the refusal says what to send: {answer}"
    );
    assert!(
        agents
            .received()
            .iter()
            .all(|call| !(call.agent == "alice" && call.message_type() == "GAME_INVITATION")),
        "alice was not invited"
    );
    let warnings = gateway
        .wait_for_warnings("the refused call's warning", |w| {
            has_warning(w, &referee.id, "refused_referee_call")
        })
        .await;
    let warning = warnings
        .iter()
        .find(|w| w["kind"] == "refused_referee_call")
        .expect("the warning");
    assert!(
        warning["example"]
            .as_str()
            .is_some_and(|example| example.contains(&match_id) && example.contains("E011")),
        "{warning}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_referee_giving_matches_back_for_refused_calls_is_told_why_and_claimed_nothing() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway(&manager, Mode::Lenient, Limits::default()).await;
    let agents = spawn_agents(Behaviour::Clean).await;
    let alice = register_player(&gateway, &agents, "alice").await;
    register_player(&gateway, &agents, "bob").await;
    let referee = register(
        &gateway,
        "register_referee",
        referee_registration("ref", &agents.endpoint("ref")),
    )
    .await;
    start_league(&gateway).await;
    // A pulling referee of the field: pulls and calls without a token, from its own address. Each match
    // it takes goes back untouched after the join timeout, and it takes it again at its next pull.
    let pull = json!({"referee_id": referee.id});
    let benched = league_testkit::observe("the referee claimed nothing more", 3 * PATIENCE, async || {
        let pulled = gateway.rpc("get_assigned_matches", pull.clone()).await;
        if let Some(why) = pulled["error"]["data"]["error_description"].as_str() {
            return Some(why.to_owned());
        }
        let match_id = pulled["result"]["matches"][0]["match_id"].as_str()?;
        let invitation = json!({"jsonrpc": "2.0", "method": "GAME_INVITATION", "id": 1, "params": {
            "protocol": "league.v2", "message_type": "GAME_INVITATION",
            "sender": format!("referee:{}", referee.id), "timestamp": "2026-11-25T10:00:00Z",
            "conversation_id": "conv-tokenless", "league_id": LEAGUE_ID, "round_id": 1,
            "match_id": match_id, "player_id": alice.id,
        }});
        let answer = gateway.post(invitation.to_string()).await.json();
        assert_eq!(refused(&answer), "E011", "{answer}");
        None
    })
    .await;
    assert!(
        benched.contains("gave back 3 matches") && benched.contains("auth_token is required"),
        "the pull says why: {benched}"
    );
    // The operator sees it too, with the matches given back for it.
    gateway
        .wait_for_warnings("the refused calls' warning with the matches given back", |w| {
            w.iter().any(|w| {
                w["kind"] == "refused_referee_call"
                    && w["example"]
                        .as_str()
                        .is_some_and(|example| example.contains("matches given back untouched"))
            })
        })
        .await;
}
