//! Agents on https: one whose certificate chains to the extra roots (LEAGUE_EXTRA_ROOTS) is called as
//! any other; the same agent, its CA not trusted, is told so in the call's error (the referee's reason)
//! and in the operator's warnings. Registration does not depend on reaching the agent.

use crate::support;

use std::time::{Duration, SystemTime};

use league_proto::v2::*;
use league_v2::compliance::Mode;
use support::*;

fn invitation(player_id: &str) -> InviteToMatchRequest {
    InviteToMatchRequest {
        player_id: player_id.into(),
        context: Some(MatchContext {
            league_id: LEAGUE_ID.into(),
            round_id: 1,
            match_id: "R1M1".into(),
            game_type: "even_odd".into(),
            conversation_id: "conv-tls".into(),
            referee_id: "REF01".into(),
        }),
        role_in_match: Role::PlayerA as i32,
        opponent_id: "P99".into(),
        deadline: Some(prost_types::Timestamp::from(
            SystemTime::now() + Duration::from_secs(10),
        )),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_https_agent_whose_ca_is_an_extra_root_is_called() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway_with(&manager.url, |config| {
        config.tls.extra_roots = Some(league_testkit::tls::CA.into());
    })
    .await;
    let agents = FakeAgents::start_tls(Behaviour::Clean).await;
    assert!(agents.endpoint("alpha").starts_with("https://"));
    let me = register_player(&gateway, &agents, "alpha").await;
    agents.set_credentials("alpha", &me);
    // The agent answers with a separate GAME_JOIN_ACK this test does not wait for: what counts is
    // that the invitation reached it over TLS (the manager's greeting may have, too).
    let outcome = gateway.players().invite_to_match(invitation(&me.id)).await;
    if let Err(status) = &outcome {
        assert!(!status.message().contains("cannot reach"), "{status:?}");
    }
    let methods = agents.methods("alpha");
    assert!(
        methods.contains(&"handle_game_invitation".to_owned()),
        "{methods:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agent_with_an_untrusted_certificate_is_told_so() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway(&manager, Mode::Strict, Limits::default()).await;
    let agents = FakeAgents::start_tls(Behaviour::Clean).await;
    let me = register_player(&gateway, &agents, "bravo").await;
    let refused = gateway
        .players()
        .invite_to_match(invitation(&me.id))
        .await
        .expect_err("not reached");
    let said = refused.message();
    assert!(
        said.contains("certificate is not trusted") && said.contains("LEAGUE_EXTRA_ROOTS"),
        "{said}"
    );
    assert!(agents.received().is_empty());
    let warnings = gateway
        .wait_for_warnings("untrusted_certificate", |w| {
            has_warning(w, &me.id, "untrusted_certificate")
        })
        .await;
    assert_eq!(warning_kinds(&warnings, &me.id), ["untrusted_certificate"]);
}
