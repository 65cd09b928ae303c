//! Many leagues on one deployment, players that stay: a player registers once and is enrolled in later
//! leagues with the same id and token — by registering again with its credentials while a league is
//! open, or by the operator — and every enrollment is held to the league's status, game and size.

#![allow(clippy::unwrap_used)]

use crate::support;

use league_proto::v2::*;
use league_runtime::Credentials;
use secrecy::ExposeSecret;
use support::*;

async fn create(manager: &TestManager, request: CreateLeagueRequest) -> Result<String, tonic::Status> {
    manager
        .client()
        .create_league(manager.operator(request))
        .await
        .map(|created| created.into_inner().league_id)
}

async fn members(manager: &TestManager, league_id: &str) -> Vec<String> {
    sqlx::query_scalar("select player_id from league_players where league_id = $1 order by player_id")
        .bind(league_id)
        .fetch_all(&manager.pool)
        .await
        .unwrap()
}

async fn status(manager: &TestManager, league_id: &str) -> String {
    sqlx::query_scalar("select status from leagues where league_id = $1")
        .bind(league_id)
        .fetch_one(&manager.pool)
        .await
        .unwrap()
}

#[tokio::test]
async fn players_keep_their_identity_from_one_league_to_the_next() {
    let (manager, mut client, alice, bob) = two_player_league().await;
    let second = create(
        &manager,
        CreateLeagueRequest {
            league_id: "second".into(),
            game_type: "even_odd".into(),
            auto_start_players: 2,
            ..CreateLeagueRequest::default()
        },
    )
    .await
    .unwrap();

    // While its league runs, a player that registers again stays in it, although another is open.
    let during = resume(&mut client, &alice, meta("alice"), "").await.unwrap();
    assert_eq!(
        (during.player_id.as_str(), during.league_id.as_str()),
        (alice.agent_id.as_str(), "test_league")
    );
    assert_eq!(during.auth_token, alice.token.expose_secret());

    // The league ends.
    let referee = register_referee(&mut client, "ref-1").await;
    let assignment = &claim(&mut client, &referee, 1).await[0];
    report_a_win(&mut client, &referee, assignment).await.unwrap();
    assert_eq!(status(&manager, "test_league").await, "completed");

    // Registering again now joins the open league, with the same id and token; the second player's
    // enrollment (naming the league) reaches its auto-start threshold.
    let next = resume(&mut client, &alice, meta("alice"), "").await.unwrap();
    assert_eq!(
        (
            next.player_id.as_str(),
            next.auth_token.as_str(),
            next.league_id.as_str()
        ),
        (
            alice.agent_id.as_str(),
            alice.token.expose_secret(),
            second.as_str()
        )
    );
    let named = resume(&mut client, &bob, meta("bob"), "second").await.unwrap();
    assert_eq!(
        (named.player_id, named.league_id),
        (bob.agent_id.clone(), second.clone())
    );
    assert_eq!(members(&manager, &second).await, ["P01", "P02"]);
    assert_eq!(status(&manager, &second).await, "running");
    // Once more: nothing changes, and nobody was registered twice.
    let again = resume(&mut client, &alice, meta("alice"), "").await.unwrap();
    assert_eq!(again.league_id, second);
    assert_eq!(members(&manager, &second).await, ["P01", "P02"]);
    let (agents,): (i64,) = sqlx::query_as("select count(*) from agents where kind = 'player'")
        .fetch_one(&manager.pool)
        .await
        .unwrap();
    assert_eq!(agents, 2);
    // No league is open now: a new player is refused.
    let carol = registration_refused(&mut client, meta("carol"), "").await;
    assert_eq!(code(&carol), Some("E008"), "no league is open: {carol:?}");
}

#[tokio::test]
async fn the_operator_enrolls_registered_players_within_the_league_s_rules() {
    let manager = spawn_manager(0).await;
    let mut client = manager.client();
    let alice = register_player(&mut client, "alice").await;
    let bob = register_player(&mut client, "bob").await;
    let carol = register_player(&mut client, "carol").await;

    // Leagues that cannot be made are refused, and none is created.
    for (asked, expected) in [
        (("chess", 0), "E019"),
        (("even_odd", 1), "E002"),
        (("even_odd", 201), "E002"),
    ] {
        let refused = create(
            &manager,
            CreateLeagueRequest {
                league_id: "refused".into(),
                game_type: asked.0.into(),
                max_players: asked.1,
                ..CreateLeagueRequest::default()
            },
        )
        .await
        .unwrap_err();
        assert_eq!(code(&refused), Some(expected), "{asked:?}: {refused:?}");
    }
    let (refused,): (i64,) = sqlx::query_as("select count(*) from leagues where league_id = 'refused'")
        .fetch_one(&manager.pool)
        .await
        .unwrap();
    assert_eq!(refused, 0);

    let small = create(
        &manager,
        CreateLeagueRequest {
            league_id: "small".into(),
            game_type: "even_odd".into(),
            max_players: 2,
            ..CreateLeagueRequest::default()
        },
    )
    .await
    .unwrap();
    let enroll = |league_id: &str, player: &Credentials| EnrollPlayerRequest {
        league_id: league_id.to_owned(),
        player_id: player.agent_id.clone(),
    };

    // Only the operator enrolls.
    let denied = client
        .enroll_player(alice.request(enroll(&small, &alice)))
        .await
        .unwrap_err();
    assert_eq!(code(&denied), Some("E020"));
    let unknown = client
        .enroll_player(manager.operator(EnrollPlayerRequest {
            league_id: small.clone(),
            player_id: "P99".into(),
        }))
        .await
        .unwrap_err();
    assert_eq!(code(&unknown), Some("E005"));
    let nowhere = client
        .enroll_player(manager.operator(enroll("no_such_league", &alice)))
        .await
        .unwrap_err();
    assert_eq!(code(&nowhere), Some("E006"));

    let first = client
        .enroll_player(manager.operator(enroll(&small, &alice)))
        .await
        .unwrap()
        .into_inner();
    assert!(first.enrolled && !first.started);
    let twice = client
        .enroll_player(manager.operator(enroll(&small, &alice)))
        .await
        .unwrap()
        .into_inner();
    assert!(!twice.enrolled, "enrolled already: nothing changes");
    client
        .enroll_player(manager.operator(enroll(&small, &bob)))
        .await
        .unwrap();
    // The league's own limit: 2.
    let full = client
        .enroll_player(manager.operator(enroll(&small, &carol)))
        .await
        .unwrap_err();
    assert_eq!(code(&full), Some("E008"));
    assert!(full.message().contains("at most 2"), "{full:?}");
    assert_eq!(members(&manager, &small).await, ["P01", "P02"]);

    // A league of a game the player does not list.
    let board = create(
        &manager,
        CreateLeagueRequest {
            league_id: "board".into(),
            game_type: "tic_tac_toe".into(),
            ..CreateLeagueRequest::default()
        },
    )
    .await
    .unwrap();
    let other_game = client
        .enroll_player(manager.operator(enroll(&board, &carol)))
        .await
        .unwrap_err();
    assert_eq!(code(&other_game), Some("E019"));

    // Started, the league takes nobody more; the players play it under their first ids.
    let started = client
        .start_league(manager.operator(StartLeagueRequest {
            league_id: small.clone(),
        }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(started.total_matches, 1);
    let late = client
        .enroll_player(manager.operator(enroll(&small, &carol)))
        .await
        .unwrap_err();
    assert_eq!(code(&late), Some("E008"));
    let (player_a, player_b): (String, String) =
        sqlx::query_as("select player_a_id, player_b_id from matches where league_id = $1")
            .bind(&small)
            .fetch_one(&manager.pool)
            .await
            .unwrap();
    assert_eq!((player_a.as_str(), player_b.as_str()), ("P01", "P02"));
    assert_eq!(members(&manager, "test_league").await, ["P01", "P02", "P03"]);
}
