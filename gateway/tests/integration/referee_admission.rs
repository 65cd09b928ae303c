//! The issue's attack through the gateway, on the configurations `league serve` and compose use (a
//! token the operator set; a token file the manager generated): a referee registering without the
//! referee registration token is refused, so it has no id to pull matches with, and nothing it sends
//! records a result. With the token, a referee registers (ADR 0039).

use crate::support;

use std::path::PathBuf;

use serde_json::{Value, json};
use support::*;

fn mode() -> league_v2::compliance::Mode {
    league_v2::compliance::Mode::Lenient
}

/// Whether `response` gave the caller nothing: a JSON-RPC error, a refusal, or no match at all.
fn nothing(response: &Value) -> bool {
    response.get("error").is_some()
        || response["result"]["status"] == "REJECTED"
        || response["result"]["matches"]
            .as_array()
            .is_some_and(Vec::is_empty)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tokenless_referee_cannot_claim_matches_or_report_on_serves_and_composes_configuration() {
    let file = std::env::temp_dir().join(format!(
        "league-gw-admission-{}/referee-token",
        std::process::id()
    ));
    let configurations: [(&str, Option<PathBuf>); 2] = [("serve", None), ("compose", Some(file.clone()))];
    for (name, token_file) in configurations {
        let manager = spawn_manager_with(|config| {
            config.registration.referee_registration_open = false;
            match token_file {
                Some(path) => config.registration.referee_registration_token_file = Some(path),
                None => {
                    config.registration.referee_registration_token = Some("serve-token".to_owned().into());
                }
            }
        })
        .await;
        let gateway = spawn_gateway(&manager, mode(), Limits::default()).await;
        let agents = spawn_agents(Behaviour::Instant).await;
        for player in ["p1", "p2", "p3", "p4"] {
            register(
                &gateway,
                "register_player",
                player_registration(player, &agents.endpoint(player)),
            )
            .await;
        }
        start_league(&gateway).await;

        // The attacker registers a referee without the token: refused, nothing registered.
        let refused = gateway
            .rpc(
                "register_referee",
                referee_registration("rogue", "http://127.0.0.1:9/rogue"),
            )
            .await;
        assert_eq!(refused["result"]["error_code"], "E020", "{name}: {refused}");
        assert!(refused["result"].get("auth_token").is_none(), "{name}: {refused}");
        // It pulls matches as the referee ids a league hands out, without a token, and reports a win.
        for referee_id in ["REF01", "REF02"] {
            let pulled = gateway
                .rpc("get_assigned_matches", json!({"referee_id": referee_id}))
                .await;
            assert!(nothing(&pulled), "{name}: {pulled}");
        }
        let report = gateway
            .rpc(
                "report_match_result",
                json!({
                    "protocol": "league.v2", "message_type": "MATCH_RESULT_REPORT", "sender": "referee:REF01",
                    "timestamp": "2026-11-21T08:53:40Z", "conversation_id": "c-r", "auth_token": "guessed",
                    "league_id": LEAGUE_ID, "round_id": 1, "match_id": "R1M1", "game_type": "even_odd",
                    "result": {"winner": "P01", "score": {"P01": 3, "P02": 0}},
                }),
            )
            .await;
        assert!(nothing(&report), "{name}: {report}");
        let after = snapshot(&manager.pool).await;
        assert_eq!(after.results, 0, "{name}: no result recorded");
        let (referees,): (i64,) = sqlx::query_as("select count(*) from agents where kind = 'referee'")
            .fetch_one(&manager.pool)
            .await
            .expect("referees");
        assert_eq!(referees, 0, "{name}: no referee registered");

        // The operator's token admits a referee.
        let token = match name {
            "serve" => "serve-token".to_owned(),
            _ => std::fs::read_to_string(&file)
                .expect("the kept token")
                .trim()
                .to_owned(),
        };
        let mut registration = referee_registration("trusted", "http://127.0.0.1:9/trusted");
        registration["auth_token"] = token.into();
        let admitted = gateway.rpc("register_referee", registration).await;
        assert_eq!(admitted["result"]["status"], "ACCEPTED", "{name}: {admitted}");
    }
    std::fs::remove_dir_all(file.parent().expect("a folder")).ok();
}
