//! An external agent that restarts resumes its identity through any gateway replica: it registers again
//! with its own id as `sender` and its own token as `auth_token`, and gets the same id and token back —
//! after the replica's short memory of repeated registrations, and at a replica that never saw it. A
//! claim the manager refuses (a wrong token, another agent's id) is a registration like any other, so it
//! gains nothing: the taken contact endpoint is refused.

mod support;

use serde_json::Value;
use support::*;

fn mode() -> league_gateway::compliance::Mode {
    league_gateway::compliance::Mode::Lenient
}

/// `registration` claiming the identity `sender` with `token`.
fn claiming(mut registration: Value, sender: &str, token: &str) -> Value {
    registration["sender"] = sender.into();
    registration["auth_token"] = token.into();
    registration
}

#[tokio::test(flavor = "multi_thread")]
async fn a_restarted_player_resumes_its_identity_at_another_replica() {
    let manager = spawn_manager().await;
    let first = spawn_gateway(&manager, mode(), Limits::default()).await;
    let second = spawn_gateway(&manager, mode(), Limits::default()).await;
    let endpoint = "http://127.0.0.1:9/agent";
    let registered = first
        .rpc("register_player", player_registration("alice", endpoint))
        .await;
    let player_id = registered["result"]["player_id"]
        .as_str()
        .expect("an id")
        .to_owned();
    let token = registered["result"]["auth_token"]
        .as_str()
        .expect("a token")
        .to_owned();

    // A wrong token, or another agent's id, resumes nothing: the endpoint is taken (E014).
    for (sender, token) in [
        (format!("player:{player_id}"), "not-its-token".to_owned()),
        ("player:P99".to_owned(), token.clone()),
    ] {
        let refused = second
            .rpc(
                "register_player",
                claiming(player_registration("alice", endpoint), &sender, &token),
            )
            .await;
        assert_eq!(refused["result"]["status"], "REJECTED", "{sender}: {refused}");
        assert_eq!(refused["result"]["error_code"], "E014", "{sender}: {refused}");
    }

    // Its own id and token: the same identity.
    let resumed = second
        .rpc(
            "register_player",
            claiming(
                player_registration("alice", endpoint),
                &format!("player:{player_id}"),
                &token,
            ),
        )
        .await;
    assert_eq!(resumed["result"]["status"], "ACCEPTED", "{resumed}");
    assert_eq!(resumed["result"]["player_id"], player_id.as_str(), "{resumed}");
    assert_eq!(resumed["result"]["auth_token"], token.as_str(), "{resumed}");
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
    let endpoint = "http://127.0.0.1:9/referee";
    let registered = first
        .rpc("register_referee", referee_registration("zulu", endpoint))
        .await;
    let referee_id = registered["result"]["referee_id"]
        .as_str()
        .expect("an id")
        .to_owned();
    let token = registered["result"]["auth_token"]
        .as_str()
        .expect("a token")
        .to_owned();
    let resumed = second
        .rpc(
            "register_referee",
            claiming(
                referee_registration("zulu", endpoint),
                &format!("referee:{referee_id}"),
                &token,
            ),
        )
        .await;
    assert_eq!(resumed["result"]["status"], "ACCEPTED", "{resumed}");
    assert_eq!(resumed["result"]["referee_id"], referee_id.as_str(), "{resumed}");
    assert_eq!(resumed["result"]["auth_token"], token.as_str(), "{resumed}");
}
