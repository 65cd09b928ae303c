//! An external agent that restarts resumes its identity through any gateway replica: it registers again
//! with its own id as `sender` and its own token as `auth_token`, and gets the same id and token back —
//! after the replica's short memory of repeated registrations, and at a replica that never saw it. A
//! claim the manager refuses (a wrong token, another agent's id) is a registration like any other, so it
//! gains nothing: the taken contact endpoint is refused.

use crate::support;

use serde_json::Value;
use support::*;

fn mode() -> league_v2::compliance::Mode {
    league_v2::compliance::Mode::Lenient
}

/// `registration` claiming the identity `sender` with `token`.
fn claiming(mut registration: Value, sender: &str, token: &str) -> Value {
    registration["sender"] = sender.into();
    registration["auth_token"] = token.into();
    registration
}

/// An agent registered at one replica, with its id and token: `(method, registration, id field)`.
async fn registered(
    gateway: &TestGateway,
    method: &str,
    registration: Value,
    id_field: &str,
) -> (String, String) {
    let answer = gateway.rpc(method, registration).await;
    let id = answer["result"][id_field].as_str().expect("an id").to_owned();
    let token = answer["result"]["auth_token"]
        .as_str()
        .expect("a token")
        .to_owned();
    (id, token)
}

/// Asserts that `answer` gave back the identity `id` with `token`.
fn assert_resumed(answer: &Value, id_field: &str, id: &str, token: &str) {
    assert_eq!(answer["result"]["status"], "ACCEPTED", "{answer}");
    assert_eq!(answer["result"][id_field], id, "{answer}");
    assert_eq!(answer["result"]["auth_token"], token, "{answer}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_restarted_player_resumes_its_identity_at_another_replica() {
    let manager = spawn_manager().await;
    let first = spawn_gateway(&manager, mode(), Limits::default()).await;
    let second = spawn_gateway(&manager, mode(), Limits::default()).await;
    let endpoint = "http://127.0.0.1:9/agent";
    let registration = || player_registration("alice", endpoint);
    let (player_id, token) = registered(&first, "register_player", registration(), "player_id").await;

    // A wrong token, or another agent's id, resumes nothing: the endpoint is taken (E014).
    for (sender, token) in [
        (format!("player:{player_id}"), "not-its-token".to_owned()),
        ("player:P99".to_owned(), token.clone()),
    ] {
        let refused = second
            .rpc("register_player", claiming(registration(), &sender, &token))
            .await;
        assert_eq!(refused["result"]["status"], "REJECTED", "{sender}: {refused}");
        assert_eq!(refused["result"]["error_code"], "E014", "{sender}: {refused}");
    }

    // Its own id and token: the same identity.
    let sender = format!("player:{player_id}");
    let resumed = second
        .rpc("register_player", claiming(registration(), &sender, &token))
        .await;
    assert_resumed(&resumed, "player_id", &player_id, &token);
    let (players,): (i64,) = sqlx::query_as("select count(*) from agents where kind = 'player'")
        .fetch_one(&manager.pool)
        .await
        .expect("agents");
    assert_eq!(players, 1, "nobody registered twice");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_restarted_referee_resumes_its_identity() {
    let manager = spawn_manager().await;
    let first = spawn_gateway(&manager, mode(), Limits::default()).await;
    let second = spawn_gateway(&manager, mode(), Limits::default()).await;
    let registration = || referee_registration("zulu", "http://127.0.0.1:9/referee");
    let (referee_id, token) = registered(&first, "register_referee", registration(), "referee_id").await;
    let sender = format!("referee:{referee_id}");
    let resumed = second
        .rpc("register_referee", claiming(registration(), &sender, &token))
        .await;
    assert_resumed(&resumed, "referee_id", &referee_id, &token);
}
