//! An external referee that takes a match and calls none of its players within the join timeout gives it
//! back: the match goes back to the queue within seconds, nobody charged, and another referee gets it —
//! instead of waiting out the whole match budget (132 s at the specification's timings).

use std::time::Duration;

use crate::support;

use league_testkit::observe;
use league_v2::compliance::Mode;
use support::*;

/// A match's `(status, referee, claims)`, and how many matches have a result.
async fn row(manager: &TestManager) -> (String, Option<String>, i32, i64) {
    sqlx::query_as(
        "select status, referee_id, claims, (select count(*) from matches where status = 'finished')
         from matches where match_id = 'R1M1'",
    )
    .fetch_one(&manager.pool)
    .await
    .expect("the match")
}

/// Looks at the match until `wanted` holds, for at most [`PATIENCE`] (a bound, not a timing).
async fn until(
    manager: &TestManager,
    what: &str,
    wanted: impl Fn(&(String, Option<String>, i32, i64)) -> bool,
) -> (String, Option<String>, i32, i64) {
    observe(what, PATIENCE, async || {
        let seen = row(manager).await;
        wanted(&seen).then_some(seen)
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_referee_that_calls_no_player_gives_its_match_back_uncharged() {
    // The specification's timings but for a short join timeout: the silence allowed is the join timeout
    // (at least 2 s), and the match budget, 132 s before, is far beyond the patience of this test.
    let manager = spawn_manager_with(|config| {
        config.timing.join_timeout = Duration::from_millis(200);
    })
    .await;
    let gateway = spawn_gateway(&manager, Mode::Lenient, Limits::default()).await;
    // Every call acknowledged: START_MATCH is taken, and nothing follows.
    let agents = spawn_agents(Behaviour::Clean).await;
    for name in ["alice", "bob"] {
        register(
            &gateway,
            "register_player",
            player_registration(name, &agents.endpoint(name)),
        )
        .await;
    }
    let silent = register(
        &gateway,
        "register_referee",
        referee_registration("silent", &agents.endpoint("silent")),
    )
    .await;
    start_league(&gateway).await;

    let held = until(
        &manager,
        "the silent referee claims the match",
        |(status, referee, ..)| status == "running" && referee.as_deref() == Some(silent.id.as_str()),
    )
    .await;
    assert_eq!(held.2, 1, "claimed once: {held:?}");
    // Given back, and the claim after it is the second: with its lease kept for the whole budget it
    // would have stayed at one.
    until(&manager, "the match is given back", |(status, _, claims, _)| {
        status == "scheduled" || *claims >= 2
    })
    .await;

    // Another referee gets it: while one is live, the silent one's claims pass by the match it gave
    // back, though it has a claim waiting (two slots) when it gives the match back.
    let other = register(
        &gateway,
        "register_referee",
        referee_registration("other", &agents.endpoint("other")),
    )
    .await;
    let handed = until(
        &manager,
        "another referee gets the match",
        |(status, referee, ..)| status == "running" && referee.as_deref() == Some(other.id.as_str()),
    )
    .await;
    assert_eq!(handed.3, 0, "no result recorded: {handed:?}");
    // Nobody charged: the players heard of the match only by invitation-free silence, no GAME_ERROR, no
    // GAME_OVER, and the standings are empty.
    let heard: Vec<_> = agents
        .received()
        .into_iter()
        .filter(|call| call.agent == "alice" || call.agent == "bob")
        .map(|call| call.message_type().to_owned())
        .filter(|kind| kind == "GAME_ERROR" || kind == "GAME_OVER")
        .collect();
    assert!(heard.is_empty(), "the players were told nothing: {heard:?}");
    let (played,): (i64,) =
        sqlx::query_as("select coalesce(sum(wins + draws + losses), 0)::bigint from standings")
            .fetch_one(&manager.pool)
            .await
            .expect("standings");
    assert_eq!(played, 0, "nothing in the standings");
}
