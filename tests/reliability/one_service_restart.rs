//! One service killed (kill -9) and started again alone, with its own environment but a new port (as the
//! launcher starts every service, on `127.0.0.1:0`): the player host and then a referee each rejoin under
//! their old identities, kept under one state directory by their names, and the league completes with
//! the same agents, nobody charged for the outage.

use std::time::{Duration, Instant};

use crate::harness::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_service_restarted_alone_on_a_new_port_rejoins_under_its_old_identity() {
    let _serial = serial().await;
    let clock = Instant::now();
    let db = Database::fresh().await;
    let logs = Logs::new("one_service_restart");
    // One state directory for every agent, as the launcher and compose give them: each instance keeps
    // its own identities there, under its own name.
    let state = logs.dir.join("state");
    let state = state.to_str().expect("a UTF-8 path").to_owned();
    // Bots answer each move after 300 ms: a restart lands in the middle of a round. A 5 s lease: a match
    // goes to another referee only if its referee is really gone.
    let spec = Spec::new(
        "league_one_service",
        6,
        "late:300",
        Timing {
            lease: Some(Duration::from_secs(5)),
            ..Timing::short_lease()
        },
    );
    let league_id = spec.league_id.clone();
    let manager = start_manager(&logs, "manager", &db.url, &spec, "127.0.0.1:0").await;
    let start_ref = async |name: &str| {
        let env = [
            ("LEAGUE_STATE_DIR", state.as_str()),
            ("LEAGUE_REFEREE_NAME", name),
        ];
        start_referee(&logs, name, &manager.url, 2, &env).await
    };
    let mut referee = start_ref("referee-1").await;
    let other_referee = start_ref("referee-2").await;
    let players_env = [("LEAGUE_STATE_DIR", state.as_str())];
    let mut players =
        start_players_with(&logs, "players", &manager.url, &spec, spec.players, &players_env).await;
    let agents = async || -> Vec<(String, String, String)> {
        sqlx::query_as("select agent_id, kind, contact_endpoint from agents order by agent_id")
            .fetch_all(&db.pool)
            .await
            .expect("the agents")
    };
    let finished = async |at_least: i64| {
        observe(
            &format!("{at_least} finished matches"),
            LEAGUE_DEADLINE,
            async || {
                let (finished,): (i64,) = sqlx::query_as(
                    "select count(*) from matches where league_id = $1 and status = 'finished'",
                )
                .bind(&league_id)
                .fetch_one(&db.pool)
                .await
                .ok()?;
                (finished >= at_least).then_some(finished)
            },
        )
        .await
    };

    // The player host, while its bots play: back on another port, every bot resumes.
    finished(1).await;
    let before = agents().await;
    assert_eq!(before.len(), 8, "6 bots and 2 referees: {before:?}");
    players.kill().await.expect("kill -9 the player host");
    let old_players_url = players.url.clone();
    players = start_players_with(
        &logs,
        "players-again",
        &manager.url,
        &spec,
        spec.players,
        &players_env,
    )
    .await;
    assert_ne!(players.url, old_players_url, "a new port");

    // Then a referee, the same way.
    let restarted_at = finished(5).await;
    referee.kill().await.expect("kill -9 referee-1");
    let old_referee_url = referee.url.clone();
    referee = start_ref("referee-1").await;
    assert_ne!(referee.url, old_referee_url, "a new port");

    wait_for_completion(&db.pool, &league_id, &logs).await;
    let table = standings(&manager.url, &league_id).await;
    let facts = check_invariants_through_restarts(&db.pool, &spec, &table).await;
    let after = agents().await;
    let ids = |agents: &[(String, String, String)]| -> Vec<(String, String)> {
        agents
            .iter()
            .map(|(id, kind, _)| (id.clone(), kind.clone()))
            .collect()
    };
    assert_eq!(
        ids(&after),
        ids(&before),
        "no new agent: the restarted services resumed"
    );
    for (id, kind, endpoint) in &after {
        let here = if kind == "referee" {
            *endpoint == referee.url || *endpoint == other_referee.url
        } else {
            endpoint.starts_with(&format!("{}/players/", players.url))
        };
        assert!(here, "{id} is registered where it runs now, not at {endpoint}");
    }
    // Each instance kept its own identities under its name.
    let kept = |path: &str| std::path::Path::new(&state).join(path).exists();
    assert!(kept("referee-1/referee.json") && kept("referee-2/referee.json") && kept("players/bot-06.json"));
    assert!(
        !kept("referee-1-2") && !kept("players-2"),
        "nobody took a second instance"
    );

    let mut all = vec![manager, referee, other_referee, players];
    stop_all(&mut all).await;
    println!(
        "one_service_restart: the player host and a referee restarted on new ports (the referee after \
         {restarted_at} matches); {} matches, claims per match {:?}, the same {} agents; {:.1} s",
        facts.matches.len(),
        claims_histogram(&facts),
        after.len(),
        clock.elapsed().as_secs_f64()
    );
    db.drop().await;
    logs.remove();
}
