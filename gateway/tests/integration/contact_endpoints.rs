//! No agent's contact endpoint reaches anyone but the operator. What the bridge says when it cannot
//! reach an agent becomes the match's reason (the referee writes it into a technical loss), which the
//! public page, its event stream, GET_SCHEDULE and get_player_stats show: it says what happened, never
//! where. Over real gRPC to the gateway's bridge, for an agent nobody listens for and one that never
//! answers.

use crate::support;

use std::time::{Duration, SystemTime};

use league_proto::v2::*;
use league_v2::compliance::Mode;
use support::*;

fn invitation(player_id: &str, within: Duration) -> InviteToMatchRequest {
    InviteToMatchRequest {
        player_id: player_id.into(),
        context: Some(MatchContext {
            league_id: LEAGUE_ID.into(),
            round_id: 1,
            match_id: "R1M1".into(),
            game_type: "even_odd".into(),
            conversation_id: "conv-hidden".into(),
            referee_id: "REF01".into(),
        }),
        role_in_match: Role::PlayerA as i32,
        opponent_id: "P99".into(),
        deadline: Some(prost_types::Timestamp::from(SystemTime::now() + within)),
    }
}

async fn register(gateway: &TestGateway, name: &str, endpoint: &str) -> String {
    let response = gateway
        .rpc("register_player", player_registration(name, endpoint))
        .await;
    response["result"]["player_id"]
        .as_str()
        .unwrap_or_else(|| panic!("registered: {response}"))
        .to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_call_says_what_happened_without_the_contact_endpoint() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway(&manager, Mode::Lenient, Limits::default()).await;
    // Nobody listens here.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let closed_addr = closed.local_addr().expect("address");
    drop(closed);
    // Here a listener takes connections and never answers.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let silent_addr = silent.local_addr().expect("address");
    let held = tokio::spawn(async move {
        let mut connections = Vec::new();
        while let Ok((stream, _)) = silent.accept().await {
            connections.push(stream);
        }
    });
    for (name, endpoint, within, said) in [
        (
            "unreachable",
            format!("http://{closed_addr}/secret-unreachable/mcp"),
            Duration::from_secs(5),
            "cannot reach",
        ),
        (
            "silent",
            format!("http://{silent_addr}/secret-silent/mcp"),
            Duration::from_millis(500),
            "did not answer",
        ),
    ] {
        let id = register(&gateway, name, &endpoint).await;
        let status = gateway
            .players()
            .invite_to_match(invitation(&id, within))
            .await
            .expect_err("the agent cannot answer");
        let message = status.message();
        for secret in [endpoint.as_str(), &endpoint[7..], "secret-"] {
            assert!(!message.contains(secret), "{name}: {message:?} shows {secret:?}");
        }
        assert!(message.contains(said), "{name}: says what happened: {message:?}");
    }
    held.abort();
}
