//! Many leagues through the gateway: the operator creates leagues (`create_league`) and enrolls
//! registered players (`enroll_player`); an external agent that registers again with its own id and
//! token joins the league named in its registration under the same identity. Wrong calls change nothing.

use crate::support;

use serde_json::{Value, json};
use support::*;

fn mode() -> league_v2::compliance::Mode {
    league_v2::compliance::Mode::Lenient
}

fn operator(mut params: Value) -> Value {
    params["auth_token"] = OPERATOR_TOKEN.into();
    params
}

fn refused(answer: &Value) -> &str {
    answer["error"]["data"]["error_code"]
        .as_str()
        .unwrap_or_else(|| panic!("not refused with a league.v2 code: {answer}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_operator_creates_leagues_and_enrolls_players_through_the_gateway() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway(&manager, mode(), Limits::default()).await;
    let replica = spawn_gateway(&manager, mode(), Limits::default()).await;
    let alice = register(
        &gateway,
        "register_player",
        player_registration("alice", "http://127.0.0.1:9/alice"),
    )
    .await;
    let bob = register(
        &gateway,
        "register_player",
        player_registration("bob", "http://127.0.0.1:9/bob"),
    )
    .await;

    // Wrong calls: refused with a code, and nothing is created.
    let before = snapshot(&manager.pool).await;
    let evening = json!({
        "league_id": "evening",
        "game_type": "even_odd",
        "cycles": 2,
        "max_players": 4,
        "timing": {"move_timeout_ms": 45000, "join_timeout_ms": 8000},
    });
    for (what, params, code) in [
        ("no token", evening.clone(), "E011"),
        (
            "a player's token",
            json!({"league_id": "evening", "auth_token": alice.token}),
            "E020",
        ),
        (
            "cycles as text",
            operator(json!({"league_id": "evening", "cycles": "two"})),
            "E002",
        ),
        (
            "an unknown timing",
            operator(json!({"league_id": "evening", "timing": {"move_timout_ms": 1000}})),
            "E002",
        ),
        (
            "an unknown game",
            operator(json!({"league_id": "evening", "game_type": "chess"})),
            "E019",
        ),
        (
            "one player",
            operator(json!({"league_id": "evening", "max_players": 1})),
            "E002",
        ),
    ] {
        let answer = gateway.rpc("create_league", params).await;
        assert_eq!(refused(&answer), code, "{what}: {answer}");
    }
    assert_eq!(snapshot(&manager.pool).await, before);

    let created = gateway.rpc("create_league", operator(evening)).await;
    assert_eq!(created["result"]["status"], "CREATED", "{created}");
    assert_eq!(created["result"]["league_id"], "evening", "{created}");
    let (cycles, max_players, move_ms, join_ms, game_over_ms): (i32, Option<i32>, i64, i64, i64) =
        sqlx::query_as(
            "select cycles, max_players, move_timeout_ms, join_timeout_ms, game_over_timeout_ms
             from leagues where league_id = 'evening'",
        )
        .fetch_one(&manager.pool)
        .await
        .expect("the league");
    // What was asked, and the manager's defaults for the rest.
    assert_eq!(
        (cycles, max_players, move_ms, join_ms),
        (2, Some(4), 45_000, 8_000)
    );
    assert_eq!(game_over_ms, 5_000);
    let again = gateway
        .rpc("create_league", operator(json!({"league_id": "evening"})))
        .await;
    assert_eq!(refused(&again), "E008", "{again}");
    let leagues = gateway
        .rpc("list_leagues", json!({"auth_token": OPERATOR_TOKEN}))
        .await;
    let listed = leagues.to_string();
    assert!(
        listed.contains("evening") && listed.contains(LEAGUE_ID),
        "{leagues}"
    );

    // The operator enrolls alice; a second time changes nothing.
    let enroll = |player: &str| operator(json!({"league_id": "evening", "player_id": player}));
    let enrolled = gateway.rpc("enroll_player", enroll(&alice.id)).await;
    assert_eq!(enrolled["result"]["status"], "ENROLLED", "{enrolled}");
    let twice = gateway.rpc("enroll_player", enroll(&alice.id)).await;
    assert_eq!(twice["result"]["status"], "ALREADY_ENROLLED", "{twice}");
    let unknown = gateway.rpc("enroll_player", enroll("P99")).await;
    assert_eq!(refused(&unknown), "E005", "{unknown}");
    // Without a player to enroll: refused, naming the field, and nothing changed.
    let before = snapshot(&manager.pool).await;
    for nobody in [
        json!({"league_id": "evening"}),
        json!({"league_id": "evening", "player_id": ""}),
    ] {
        let answer = gateway.rpc("enroll_player", operator(nobody)).await;
        assert_eq!(refused(&answer), "E003", "{answer}");
        assert!(answer.to_string().contains("player_id is required"), "{answer}");
    }
    assert_eq!(snapshot(&manager.pool).await, before);
    let as_player = gateway
        .rpc(
            "enroll_player",
            json!({"league_id": "evening", "player_id": bob.id, "auth_token": bob.token}),
        )
        .await;
    assert_eq!(refused(&as_player), "E020", "{as_player}");

    // Bob registers again with his own id and token, naming the league: same identity, new league.
    let mut registration = player_registration("bob", "http://127.0.0.1:9/bob");
    registration["sender"] = format!("player:{}", bob.id).into();
    registration["auth_token"] = bob.token.clone().into();
    registration["league_id"] = "evening".into();
    let joined = replica.rpc("register_player", registration).await;
    assert_eq!(joined["result"]["status"], "ACCEPTED", "{joined}");
    assert_eq!(joined["result"]["player_id"], bob.id.as_str(), "{joined}");
    assert_eq!(joined["result"]["auth_token"], bob.token.as_str(), "{joined}");
    assert_eq!(joined["result"]["league_id"], "evening", "{joined}");

    let members: Vec<String> = sqlx::query_scalar(
        "select player_id from league_players where league_id = 'evening' order by player_id",
    )
    .fetch_all(&manager.pool)
    .await
    .expect("members");
    assert_eq!(members, [alice.id.clone(), bob.id.clone()]);
    let (players,): (i64,) = sqlx::query_as("select count(*) from agents where kind = 'player'")
        .fetch_one(&manager.pool)
        .await
        .expect("agents");
    assert_eq!(players, 2, "nobody registered twice");
}

#[tokio::test(flavor = "multi_thread")]
async fn league_ids_follow_one_grammar() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway(&manager, mode(), Limits::default()).await;
    let before = snapshot(&manager.pool).await;
    let over_long = "a".repeat(65);
    for id in [
        "../../tmp/x",
        "a/b",
        "..",
        "a\u{202e}b",
        "<script>",
        "Evening",
        "a.b",
        "_a",
        over_long.as_str(),
    ] {
        let answer = gateway
            .rpc("create_league", operator(json!({"league_id": id})))
            .await;
        assert_eq!(refused(&answer), "E002", "{id:?}: {answer}");
        let description = answer["error"]["data"]["error_description"]
            .as_str()
            .unwrap_or_default();
        assert!(
            description.contains("^[a-z0-9][a-z0-9_-]{0,63}$"),
            "{id:?}: the refusal names the grammar: {answer}"
        );
    }
    assert_eq!(snapshot(&manager.pool).await, before, "nothing was created");
    // The longest id, and one with every kind of character the grammar allows.
    for id in ["a".repeat(64), "a_b-0".to_owned()] {
        let created = gateway
            .rpc("create_league", operator(json!({"league_id": id})))
            .await;
        assert_eq!(created["result"]["status"], "CREATED", "{id}: {created}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_operator_pauses_withdraws_and_cancels_through_the_gateway() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway(&manager, mode(), Limits::default()).await;
    let alice = register(
        &gateway,
        "register_player",
        player_registration("alice", "http://127.0.0.1:9/alice"),
    )
    .await;
    let bob = register(
        &gateway,
        "register_player",
        player_registration("bob", "http://127.0.0.1:9/bob"),
    )
    .await;
    start_league(&gateway).await;
    let league = || operator(json!({"league_id": LEAGUE_ID}));

    let paused = gateway.rpc("pause_league", league()).await;
    assert_eq!(paused["result"]["status"], "PAUSED", "{paused}");
    let twice = gateway.rpc("pause_league", league()).await;
    assert_eq!(refused(&twice), "E008", "{twice}");
    let resumed = gateway.rpc("resume_league", league()).await;
    assert_eq!(resumed["result"]["status"], "RUNNING", "{resumed}");

    // Only the operator, and only naming a league; nothing changes otherwise.
    let before = snapshot(&manager.pool).await;
    let as_player = gateway
        .rpc(
            "cancel_league",
            json!({"league_id": LEAGUE_ID, "auth_token": alice.token}),
        )
        .await;
    assert_eq!(refused(&as_player), "E020", "{as_player}");
    let unnamed = gateway.rpc("cancel_league", operator(json!({}))).await;
    assert_eq!(refused(&unnamed), "E003", "{unnamed}");
    let nobody = gateway.rpc("withdraw_player", league()).await;
    assert_eq!(refused(&nobody), "E003", "{nobody}");
    assert_eq!(snapshot(&manager.pool).await, before);

    // Bob withdraws: the league's one match is his forfeit, and the league is over.
    let withdrawn = gateway
        .rpc(
            "withdraw_player",
            operator(json!({"league_id": LEAGUE_ID, "player_id": bob.id})),
        )
        .await;
    assert_eq!(withdrawn["result"]["status"], "WITHDRAWN", "{withdrawn}");
    assert_eq!(
        withdrawn["result"]["forfeits"][0]["winner_player_id"],
        alice.id.as_str(),
        "{withdrawn}"
    );
    let status = gateway
        .rpc(
            "get_league_status",
            json!({"league_id": LEAGUE_ID, "auth_token": OPERATOR_TOKEN}),
        )
        .await;
    assert!(status.to_string().contains("COMPLETED"), "{status}");
    let late = gateway.rpc("cancel_league", league()).await;
    assert_eq!(refused(&late), "E008", "{late}");
}
