//! A token only ever goes to its agent: a registration replayed by someone else — the same display name
//! and contact endpoint (both public or guessable), in the other sender form, from another address, at
//! once — gets no token, and neither does a resume naming the victim's id with the caller's own token.
//! The victim's token keeps working, and the replays change nothing: no row, no label, no call to the
//! victim. The victim's one answer was already in the form it takes: the gateway greeted it first.

use crate::support;

use std::net::{IpAddr, SocketAddr};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use league_testkit::observe;
use league_v2::compliance::Mode;
use serde_json::{Value, json};
use support::*;
use tokio::net::TcpSocket;

/// Another address of this machine's loopback: another caller, to the gateway.
const ATTACKER: [u8; 4] = [127, 0, 0, 66];

/// A JSON-RPC call to the gateway from `source`; the response.
pub(crate) async fn rpc_from(source: IpAddr, gateway: SocketAddr, method: &str, params: Value) -> Value {
    let socket = TcpSocket::new_v4().expect("socket");
    socket.bind(SocketAddr::new(source, 0)).expect("bind the source");
    let stream = socket.connect(gateway).await.expect("connect");
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .expect("HTTP handshake");
    tokio::spawn(connection);
    let body = json!({"jsonrpc": "2.0", "method": method, "params": params, "id": 1});
    let request = http::Request::post("/mcp")
        .header(http::header::HOST, gateway.to_string())
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(body.to_string())))
        .expect("request");
    let response = sender.send_request(request).await.expect("HTTP response");
    assert_eq!(response.status(), 200, "{method}");
    let body = response.into_body().collect().await.expect("body").to_bytes();
    serde_json::from_slice(&body).expect("a JSON-RPC response")
}

/// The victim's labels, as stored (its dialect and sender form).
async fn labels(manager: &TestManager, agent_id: &str) -> (Vec<String>, Vec<String>) {
    sqlx::query_as("select label_keys, label_values from agents where agent_id = $1")
        .bind(agent_id)
        .fetch_one(&manager.pool)
        .await
        .expect("the agent's labels")
}

fn assert_no_token(answer: &Value, what: &str) {
    let result = &answer["result"];
    assert_eq!(result["status"], "REJECTED", "{what}: {answer}");
    assert!(result.get("auth_token").is_none(), "{what}: {answer}");
    assert!(
        !answer.to_string().contains("league_out_"),
        "{what}: not even the outbound token: {answer}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_replayed_registration_gets_no_token_and_changes_nothing() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway(&manager, Mode::Lenient, Limits::default()).await;
    let victim_agent = FakeAgents::start(Behaviour::TypedSenders).await;
    let registration = player_registration("victim", &victim_agent.endpoint("picky"));
    let first = gateway.rpc("register_player", registration.clone()).await;
    // Greeted before it was answered: its one answer is already in the form it takes.
    assert_eq!(first["result"]["sender"], "league_manager:LM01", "{first}");
    let victim = Registered {
        id: first["result"]["player_id"].as_str().expect("an id").to_owned(),
        token: first["result"]["auth_token"]
            .as_str()
            .expect("a token")
            .to_owned(),
    };
    let attacker_agents = FakeAgents::start(Behaviour::Instant).await;
    let attacker = register_player(&gateway, &attacker_agents, "mallory").await;
    // The form it takes is stored with its registration in the background: wait until it is there.
    observe("the sender form stored", PATIENCE, async || {
        let (_, forms) = labels(&manager, &victim.id).await;
        forms.contains(&"typed".to_owned()).then_some(())
    })
    .await;
    let before = (
        snapshot(&manager.pool).await,
        labels(&manager, &victim.id).await,
        victim_agent.received().len(),
    );

    let source = IpAddr::from(ATTACKER);
    // The same registration at once, from another address, in the other sender form.
    let mut replay = registration.clone();
    replay["sender"] = "player:VICTIM".into();
    let replayed = rpc_from(source, gateway.http, "register_player", replay).await;
    assert_no_token(&replayed, "a replay");
    assert_eq!(replayed["result"]["error_code"], "E014", "{replayed}");
    assert!(
        replayed["result"]["reason"]
            .as_str()
            .is_some_and(|reason| reason.contains("its own token as auth_token")),
        "the refusal says how an agent comes back: {replayed}"
    );
    // The victim's id with the attacker's own token.
    let mut claim = registration.clone();
    claim["sender"] = format!("player:{}", victim.id).into();
    claim["auth_token"] = attacker.token.clone().into();
    let claimed = rpc_from(source, gateway.http, "register_player", claim).await;
    assert_no_token(&claimed, "another agent's token");
    // The nested spelling of the same replay.
    let nested = rpc_from(
        source,
        gateway.http,
        "league_register_request",
        json!({"league_register_request": registration}),
    )
    .await;
    assert_no_token(&nested, "a nested replay");

    let after = (
        snapshot(&manager.pool).await,
        labels(&manager, &victim.id).await,
        victim_agent.received().len(),
    );
    assert_eq!(after, before, "the replays changed nothing");
    // The victim's token still works, and only for the victim.
    let query = json!({
        "protocol": "league.v2", "message_type": "LEAGUE_QUERY", "sender": format!("player:{}", victim.id),
        "timestamp": "2026-11-21T08:53:40Z", "conversation_id": "c-q", "auth_token": victim.token,
        "league_id": LEAGUE_ID, "query_type": "GET_STANDINGS",
    });
    let answered = gateway.rpc("league_query", query).await;
    assert_eq!(answered["result"]["success"], true, "{answered}");
}
