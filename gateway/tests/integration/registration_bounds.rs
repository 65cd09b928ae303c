//! Registration through the gateway is bounded: players per league and referees at most as configured
//! (a clear refusal past it), registrations per address per minute, and contact endpoints parsed into
//! one canonical form and held to the endpoint policy. Every endpoint here is on loopback; nothing is
//! ever called at them.

use crate::support;

use serde_json::{Value, json};
use support::*;

/// A registration's answer: `ACCEPTED`, or the code it was rejected with.
fn outcome(response: &Value) -> String {
    let result = &response["result"];
    match result["status"].as_str() {
        Some("ACCEPTED") => "ACCEPTED".to_owned(),
        Some("REJECTED") => result["error_code"].as_str().unwrap_or("?").to_owned(),
        _ => format!("unexpected: {response}"),
    }
}

async fn register_player_at(gateway: &TestGateway, name: &str, endpoint: &str) -> (String, Value) {
    let response = gateway
        .rpc("register_player", player_registration(name, endpoint))
        .await;
    (outcome(&response), response)
}

#[tokio::test(flavor = "multi_thread")]
async fn endpoints_are_canonical_and_held_to_the_policy() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway(&manager, compliance_mode(), Limits::default()).await;
    let (first, _) = register_player_at(&gateway, "alice", "http://localhost:9/x").await;
    assert_eq!(first, "ACCEPTED");
    // Other spellings of the same endpoint are the same endpoint.
    for (name, spelling) in [
        ("alice2", "http://localhost:9/x/"),
        ("alice3", "http://LOCALHOST:9/x"),
    ] {
        let (answer, response) = register_player_at(&gateway, name, spelling).await;
        assert_eq!(answer, "E014", "{spelling}: {response}");
    }
    // Unusable endpoints.
    for (name, endpoint, code) in [
        ("port", "http://localhost:99999/x", "E002"),
        ("userinfo", "http://user:pass@localhost:9/y", "E002"),
        ("metadata", "http://169.254.169.254/latest/meta-data", "E020"),
        ("unspecified", "http://0.0.0.0:9/z", "E020"),
        ("multicast", "http://224.0.0.1:9/z", "E020"),
    ] {
        let (answer, response) = register_player_at(&gateway, name, endpoint).await;
        assert_eq!(answer, code, "{endpoint}: {response}");
    }
    // The database, when it is reached over TCP.
    let options = manager.pool.connect_options();
    if !options.get_host().starts_with('/') {
        let endpoint = format!("http://{}:{}/", options.get_host(), options.get_port());
        let (answer, response) = register_player_at(&gateway, "postgres", &endpoint).await;
        assert_eq!(answer, "E020", "{endpoint}: {response}");
    }
    // The manager's own gRPC port.
    let manager_endpoint = format!("{}/mcp", manager.url);
    let (answer, response) = register_player_at(&gateway, "manager", &manager_endpoint).await;
    assert_eq!(answer, "E020", "{manager_endpoint}: {response}");
    // IPv6 addresses carrying the metadata address, and the database and the manager on every loopback
    // spelling.
    let manager_port = manager.url.rsplit(':').next().unwrap_or_default().to_owned();
    let refused = [
        "http://[::169.254.169.254]/".to_owned(),
        "http://[::ffff:0:a9fe:a9fe]/".to_owned(),
        "http://[::ffff:a9fe:a9fe]/".to_owned(),
        "http://[::FFFF:169.254.169.254]/".to_owned(),
        "http://[64:ff9b::a9fe:a9fe]/".to_owned(),
        "http://[2002:a9fe:a9fe::1]/".to_owned(),
        "http://[::1]:5432/".to_owned(),
        "http://127.0.0.2:5432/".to_owned(),
        "http://[::ffff:127.0.0.1]:5432/".to_owned(),
        "http://[::127.0.0.1]:5432/".to_owned(),
        format!("http://[::1]:{manager_port}/mcp"),
        format!("http://127.1.2.3:{manager_port}/mcp"),
        format!("http://localhost:{manager_port}/mcp"),
    ];
    for (n, endpoint) in refused.iter().enumerate() {
        let (answer, response) = register_player_at(&gateway, &format!("embedded{n}"), endpoint).await;
        assert_eq!(answer, "E020", "{endpoint}: {response}");
    }
    // The scheme's case does not matter, to the gateway or to the manager.
    let (answer, response) = register_player_at(&gateway, "upper", "HTTP://127.0.0.1:9/upper").await;
    assert_eq!(answer, "ACCEPTED", "{response}");
    // Nothing refused was registered.
    let (players,): (i64,) = sqlx::query_as("select count(*) from agents")
        .fetch_one(&manager.pool)
        .await
        .expect("count");
    assert_eq!(players, 2);
}

fn compliance_mode() -> league_v2::compliance::Mode {
    league_v2::compliance::Mode::Lenient
}

#[tokio::test(flavor = "multi_thread")]
async fn a_policy_without_loopback_refuses_loopback_endpoints() {
    let manager = spawn_manager_with(|config| config.registration.endpoint_allow_loopback = false).await;
    let gateway = spawn_gateway(&manager, compliance_mode(), Limits::default()).await;
    for endpoint in [
        "http://127.0.0.1:8101/mcp",
        "http://localhost:8101/mcp",
        "http://127.9.9.9:80/",
    ] {
        let (answer, response) = register_player_at(&gateway, "local", endpoint).await;
        assert_eq!(answer, "E020", "{endpoint}: {response}");
        let reason = response["result"]["reason"].as_str().unwrap_or_default();
        assert!(reason.contains("loopback"), "{reason}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn leagues_and_referees_have_a_maximum() {
    let manager = spawn_manager_with(|config| {
        config.registration.max_players = 3;
        config.registration.max_referees = 1;
    })
    .await;
    let gateway = spawn_gateway(&manager, compliance_mode(), Limits::default()).await;
    for n in 0..3 {
        let (answer, response) =
            register_player_at(&gateway, &format!("p{n}"), &format!("http://127.0.0.1:9/p{n}")).await;
        assert_eq!(answer, "ACCEPTED", "{response}");
    }
    let (answer, response) = register_player_at(&gateway, "p3", "http://127.0.0.1:9/p3").await;
    assert_eq!(answer, "E008", "{response}");
    let reason = response["result"]["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("at most 3 players"), "{reason}");

    let referee = |n: u32| referee_registration(&format!("r{n}"), &format!("http://127.0.0.1:9/r{n}"));
    assert_eq!(
        outcome(&gateway.rpc("register_referee", referee(0)).await),
        "ACCEPTED"
    );
    let response = gateway.rpc("register_referee", referee(1)).await;
    assert_eq!(outcome(&response), "E008", "{response}");
}

#[tokio::test(flavor = "multi_thread")]
async fn one_address_registers_at_a_bounded_rate() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway_with(&manager.url, |config| config.registration_rate_limit = 5).await;
    let mut accepted = 0;
    let mut limited = None;
    for n in 0..50 {
        let body = json!({
            "jsonrpc": "2.0",
            "method": "register_player",
            "params": player_registration(&format!("flood{n}"), &format!("http://127.0.0.1:9/f{n}")),
            "id": n,
        });
        let reply = gateway.post(body.to_string()).await;
        if reply.status == 429 {
            limited = Some(reply);
            break;
        }
        assert_eq!(outcome(&reply.json()), "ACCEPTED", "{}", reply.text());
        accepted += 1;
    }
    let limited = limited.expect("50 registrations from one address were never limited");
    assert_eq!(limited.json()["error"]["data"]["error_code"], "E016");
    // 5 a minute, in bursts of 5: a sixth registration within the same minute is refused.
    assert!((5..50).contains(&accepted), "{accepted} accepted");
}

#[tokio::test(flavor = "multi_thread")]
async fn referees_may_be_required_to_present_a_token() {
    const TOKEN: &str = "referee-registration-token";
    let manager = spawn_manager_with(|config| {
        config.registration.referee_registration_open = false;
        config.registration.referee_registration_token = Some(TOKEN.to_owned().into());
    })
    .await;
    let gateway = spawn_gateway(&manager, compliance_mode(), Limits::default()).await;
    let mut registration = referee_registration("r0", "http://127.0.0.1:9/r0");
    let response = gateway.rpc("register_referee", registration.clone()).await;
    assert_eq!(outcome(&response), "E020", "no token: {response}");
    registration["auth_token"] = json!("wrong");
    let response = gateway.rpc("register_referee", registration.clone()).await;
    assert_eq!(outcome(&response), "E020", "a wrong token: {response}");
    registration["auth_token"] = json!(TOKEN);
    let response = gateway.rpc("register_referee", registration).await;
    assert_eq!(outcome(&response), "ACCEPTED", "{response}");
    // Players are not asked.
    let (answer, response) = register_player_at(&gateway, "p", "http://127.0.0.1:9/p").await;
    assert_eq!(answer, "ACCEPTED", "{response}");
}
