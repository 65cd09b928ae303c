//! Players that are MCP servers (ADR 0046), over real HTTP and gRPC: an rmcp streamable HTTP server with
//! sessions, one tool per message, registered with a plain `register_player`. The bridge learns what it
//! is from its first answer, opens one session and keeps it; a tool that answers too late is the same
//! E001 as any agent's silence, and the session outlives it.

use crate::mcp_player::{McpPlayer, invitation, register};
use crate::support;

use std::sync::atomic::Ordering;
use std::time::Duration;

use league_proto::ErrorCode;
use league_v2::compliance::Mode;
use serde_json::json;
use support::*;

#[tokio::test(flavor = "multi_thread")]
async fn an_mcp_server_is_called_in_one_session_and_its_silence_is_a_timeout() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway(&manager, Mode::Lenient, Limits::default()).await;
    let player = McpPlayer::default();
    let endpoint = player.serve().await;
    let id = register(&gateway, &endpoint).await;

    for _ in 0..2 {
        let joined = gateway
            .players()
            .invite_to_match(invitation(&id, Duration::from_secs(5)))
            .await
            .expect("joined")
            .into_inner();
        assert!(joined.accept, "{joined:?}");
    }
    let calls = player.called();
    assert_eq!(calls.len(), 2, "{calls:?}");
    for (tool, arguments) in &calls {
        assert_eq!(tool, "handle_game_invitation");
        // The message under the tool's one argument, as the bridge writes it for every dialect.
        assert_eq!(
            arguments["message"]["message_type"], "GAME_INVITATION",
            "{arguments}"
        );
        assert_eq!(arguments["message"]["match_id"], "R1M1", "{arguments}");
        assert!(arguments["message"]["auth_token"].is_string(), "{arguments}");
    }
    // The registration's greeting found it is an MCP server (it has no tool for the standings: not
    // implemented, as a -32601), and every call since went in the session it opened: one plain call
    // refused with 406, ever.
    assert_eq!(player.sessions.load(Ordering::SeqCst), 1);
    assert_eq!(player.plain.load(Ordering::SeqCst), 1);

    // An answer later than the invitation's deadline is no answer: E001, said without the endpoint.
    *player.delay.lock().expect("delay") = Duration::from_secs(3);
    let status = gateway
        .players()
        .invite_to_match(invitation(&id, Duration::from_millis(500)))
        .await
        .expect_err("too late");
    assert_eq!(
        league_proto::error_code::code_of(&status),
        Some(ErrorCode::Timeout),
        "{status:?}"
    );
    assert!(status.message().contains("did not answer"), "{status:?}");
    assert!(!status.message().contains(&endpoint), "{status:?}");

    // The session outlives a late answer.
    *player.delay.lock().expect("delay") = Duration::ZERO;
    let joined = gateway
        .players()
        .invite_to_match(invitation(&id, Duration::from_secs(5)))
        .await
        .expect("joined again")
        .into_inner();
    assert!(joined.accept);
    assert_eq!(player.sessions.load(Ordering::SeqCst), 1);
    assert_eq!(player.plain.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stateless_mcp_server_answering_in_json_is_called_as_well() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway(&manager, Mode::Lenient, Limits::default()).await;
    let player = McpPlayer::default();
    let endpoint = player.serve_stateless().await;
    let id = register(&gateway, &endpoint).await;
    for _ in 0..2 {
        let joined = gateway
            .players()
            .invite_to_match(invitation(&id, Duration::from_secs(5)))
            .await
            .expect("joined")
            .into_inner();
        assert!(joined.accept, "{joined:?}");
    }
    assert_eq!(player.called().len(), 2);
    assert_eq!(player.plain.load(Ordering::SeqCst), 1);
}

/// Asks the gateway to invite the player twice; both joined, in one session, after one plain call.
async fn joins_twice_in_one_session(gateway: &TestGateway, player: &McpPlayer, id: &str) {
    for _ in 0..2 {
        let joined = gateway
            .players()
            .invite_to_match(invitation(id, Duration::from_secs(5)))
            .await
            .expect("joined")
            .into_inner();
        assert!(joined.accept, "{joined:?}");
    }
    assert_eq!(player.called().len(), 2);
    assert_eq!(player.sessions.load(Ordering::SeqCst), 1);
    assert_eq!(player.plain.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_mcp_server_that_answers_a_plain_call_400_is_asked_and_called_as_one() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway(&manager, Mode::Lenient, Limits::default()).await;
    let player = McpPlayer::default();
    let no_session = json!({"jsonrpc": "2.0", "id": null,
        "error": {"code": -32000, "message": "Bad Request: No valid session ID provided"}});
    let endpoint = player
        .serve_behind(http::StatusCode::BAD_REQUEST, no_session)
        .await;
    let id = register(&gateway, &endpoint).await;
    joins_twice_in_one_session(&gateway, &player, &id).await;
    // What the gateway learnt is the operator's to see.
    let warnings = gateway
        .wait_for_warnings("the mcp_server note", |warnings| {
            has_warning(warnings, &id, "mcp_server")
        })
        .await;
    let note = warnings
        .iter()
        .find(|warning| warning["kind"] == "mcp_server")
        .expect("the note");
    assert!(
        note["example"].as_str().is_some_and(|d| d.contains("HTTP 400")),
        "{note}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_mcp_server_that_answers_a_plain_call_with_a_json_rpc_error_is_asked_too() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway(&manager, Mode::Lenient, Limits::default()).await;
    let player = McpPlayer::default();
    let unknown = json!({"jsonrpc": "2.0", "id": 1,
        "error": {"code": -32601, "message": "Method not found"}});
    let endpoint = player.serve_behind(http::StatusCode::OK, unknown).await;
    let id = register(&gateway, &endpoint).await;
    joins_twice_in_one_session(&gateway, &player, &id).await;
    let warnings = gateway
        .wait_for_warnings("the mcp_server note", |warnings| {
            has_warning(warnings, &id, "mcp_server")
        })
        .await;
    assert_eq!(warning_kinds(&warnings, &id), ["mcp_server"], "{warnings:?}");
}
