//! One contact endpoint, one agent (issue 53 item 2, ADR 0081): with a player registered at its
//! endpoint, another caller registering any spelling that reaches the same agent — another loopback
//! name or address, the IPv4-mapped form, the path in other case, a query added — is refused E014 with
//! the resume hint and registers nothing; the victim itself may come back at any of them with its own
//! token. Many agents on one host at different paths (the fake agents' `/NAME/mcp`, peers'
//! `/mcp/players/PNN`) each register.

use crate::registration_replay::rpc_from;
use crate::support;

use std::net::IpAddr;

use league_v2::compliance::Mode;
use serde_json::Value;
use support::*;

/// Another address of this machine's loopback: another caller, to the gateway.
const ATTACKER: [u8; 4] = [127, 0, 0, 67];

async fn agents(manager: &TestManager) -> i64 {
    let (agents,): (i64,) = sqlx::query_as("select count(*) from agents")
        .fetch_one(&manager.pool)
        .await
        .expect("count");
    agents
}

fn assert_refused_with_the_resume_hint(answer: &Value, what: &str) {
    let result = &answer["result"];
    assert_eq!(result["error_code"], "E014", "{what}: {answer}");
    assert!(result.get("auth_token").is_none(), "{what}: {answer}");
    assert!(
        result["reason"]
            .as_str()
            .is_some_and(|reason| reason.contains("its own token as auth_token")),
        "{what}: the refusal says how an agent comes back: {answer}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn every_spelling_of_a_registered_endpoint_is_refused_with_the_resume_hint() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway(&manager, Mode::Lenient, Limits::default()).await;
    let victim_agent = FakeAgents::start(Behaviour::Instant).await;
    let victim = register_player(&gateway, &victim_agent, "victim").await;
    let port = victim_agent.endpoint("victim");
    let port = port
        .rsplit_once(':')
        .and_then(|(_, rest)| rest.split_once('/'))
        .map(|(port, _)| port.to_owned())
        .expect("a port");
    let clones = [
        format!("http://localhost:{port}/victim/mcp"),
        format!("http://127.0.0.1:{port}/victim/mcp?x=1"),
        format!("http://127.0.0.1:{port}/victim/MCP"),
        format!("http://[::ffff:127.0.0.1]:{port}/victim/mcp"),
        format!("http://127.0.0.2:{port}/victim/mcp"),
        format!("http://[::1]:{port}/Victim/mcp/"),
    ];
    let source = IpAddr::from(ATTACKER);
    for (n, clone) in clones.iter().enumerate() {
        let answer = rpc_from(
            source,
            gateway.http,
            "register_player",
            player_registration(&format!("clone{n}"), clone),
        )
        .await;
        assert_refused_with_the_resume_hint(&answer, clone);
        let answer = rpc_from(
            source,
            gateway.http,
            "register_referee",
            referee_registration(&format!("ref{n}"), clone),
        )
        .await;
        assert_refused_with_the_resume_hint(&answer, clone);
    }
    assert_eq!(agents(&manager).await, 1, "no clone was registered");

    // The victim itself comes back at another spelling with its own id and token: the same identity.
    let mut resume = player_registration("victim", &clones[0]);
    resume["sender"] = format!("player:{}", victim.id).into();
    resume["auth_token"] = victim.token.clone().into();
    let resumed = gateway.rpc("register_player", resume).await;
    assert_eq!(resumed["result"]["status"], "ACCEPTED", "{resumed}");
    assert_eq!(resumed["result"]["player_id"], victim.id.as_str(), "{resumed}");
    assert_eq!(agents(&manager).await, 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn many_agents_on_one_host_at_different_paths_each_register() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway(&manager, Mode::Lenient, Limits::default()).await;
    let fakes = FakeAgents::start(Behaviour::Instant).await;
    let registered = fakes
        .register_players(&format!("http://{}/mcp", gateway.http), 8)
        .await
        .expect("eight fake agents on one server register");
    assert_eq!(registered.len(), 8);
    // A peer's host: its players under one `/mcp`, each at its own path.
    for n in 1..=4 {
        let endpoint = format!("http://127.0.0.1:9/mcp/players/P{n:02}");
        let answer = gateway
            .rpc(
                "register_player",
                player_registration(&format!("peer{n}"), &endpoint),
            )
            .await;
        assert_eq!(answer["result"]["status"], "ACCEPTED", "{endpoint}: {answer}");
    }
    let referee = referee_registration("referee", "http://127.0.0.1:9/mcp");
    let answer = gateway.rpc("register_referee", referee).await;
    assert_eq!(answer["result"]["status"], "ACCEPTED", "{answer}");
    assert_eq!(agents(&manager).await, 13);
}
