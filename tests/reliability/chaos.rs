//! Chaos: a league with bots and external Python agents in which a referee, the player host, the
//! manager and the gateway are each killed (kill -9) and started again on the same addresses, one after
//! another, mid-league, and another referee is stopped cleanly (SIGTERM) and started again. Restarts and outages must not cost anyone a match: the league completes, every
//! pair meets once, the standings equal the recomputation, nobody registers twice (the referee and the
//! bots resume their identities from their state directories), and not one technical loss or double
//! forfeit is recorded — every agent in this league answers in time, so any would be charged for our
//! own infrastructure failing.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt;
use tokio::process::{Child, Command};

use crate::harness::*;
use crate::invariants;

const AGENT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/agents/league_agent.py");
/// Bots in the player host; two external agents join them.
const BOTS: u32 = 8;
/// Bound on an external agent's exit after LEAGUE_COMPLETED.
const AGENT_EXIT_WITHIN: Duration = Duration::from_secs(60);

fn python_agent(mcp_url: &str, style: &str, name: &str) -> Child {
    Command::new("python3")
        .arg(AGENT)
        .args([mcp_url, style, name])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("python3 runs the agent")
}

/// Rounds of the league completed so far.
async fn rounds_completed(db: &Database, league_id: &str) -> Option<i64> {
    sqlx::query_as::<_, (i64,)>("select count(*) from rounds where league_id = $1 and status = 'completed'")
        .bind(league_id)
        .fetch_one(&db.pool)
        .await
        .ok()
        .map(|(count,)| count)
}

/// Waits until `rounds` rounds are completed.
async fn after_round(db: &Database, league_id: &str, rounds: i64) {
    observe(
        &format!("round {rounds} completed"),
        OBSERVE_DEADLINE,
        async || {
            rounds_completed(db, league_id)
                .await
                .filter(|done| *done >= rounds)
        },
    )
    .await;
}

fn log_mentions(path: &Path, text: &str) -> usize {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .matches(text)
        .count()
}

/// The referees' logs, whichever of them ran.
const REFEREE_LOGS: [&str; 4] = ["referee-1", "referee-1-again", "referee-2", "referee-2-again"];

/// How often the referees logged `text`.
fn referees_logged(logs: &Logs, text: &str) -> usize {
    REFEREE_LOGS
        .iter()
        .map(|name| log_mentions(&logs.path(name), text))
        .sum()
}

/// What a referee logs when it cannot report a result and keeps it.
const RESULT_KEPT: &str = "keeping it and retrying";
/// What a referee logs when it cannot reach the manager to claim matches.
const CLAIM_FAILED: &str = "claiming matches failed";

/// What a referee logs when a call to a player fails because the service in between is down.
const OUTAGE_WAITED: &str = "not the player's miss";
/// What a referee logs when a player has missed the last attempt of an exchange: it will be charged.
const LAST_ATTEMPT_MISSED: &str = "retry_follows=false";

/// Referees' log lines about a dead service so far: (outages waited out, last attempts missed).
fn failures_logged(logs: &Logs) -> (usize, usize) {
    (
        referees_logged(logs, OUTAGE_WAITED),
        referees_logged(logs, LAST_ATTEMPT_MISSED),
    )
}

/// Waits until the referees have run into the dead `service` for longer than a player's attempts
/// would last: either they waited it out several times (calls to players in flight each tried again),
/// or a player missed its last attempt — which a referee that mistook our outage for the player's
/// miss then charges to it, and the test fails on.
async fn outage_outlasts_the_attempts(logs: &Logs, before: (usize, usize), service: &str) {
    observe(
        &format!("referees run into the dead {service}"),
        OBSERVE_DEADLINE,
        async || {
            let (waited, charged) = failures_logged(logs);
            (waited >= before.0 + 6 || charged > before.1).then_some(())
        },
    )
    .await;
}

/// Waits until a match with a bot in it is running: a bot answers after 300 ms, so the match is still
/// running for a while after this returns.
async fn while_a_bot_plays(db: &Database, league_id: &str, bots_endpoint: &str) {
    observe("a match of a bot running", OBSERVE_DEADLINE, async || {
        let (running,): (i64,) = sqlx::query_as(
            "select count(*) from matches m join agents a on a.agent_id in (m.player_a_id, m.player_b_id)
             where m.league_id = $1 and m.status = 'running' and a.service_endpoint = $2",
        )
        .bind(league_id)
        .bind(bots_endpoint)
        .fetch_one(&db.pool)
        .await
        .ok()?;
        (running > 0).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restarts_and_outages_mid_league_cost_nobody_a_match() {
    let _serial = serial().await;
    let clock = Instant::now();
    let db = Database::fresh().await;
    let logs = Logs::new("chaos");
    let state = logs.dir.join("state");
    let state_of = |service: &str| {
        let dir = state.join(service);
        dir.to_str().expect("a UTF-8 path").to_owned()
    };
    let (referee_state, other_referee_state, players_state) =
        (state_of("referee-1"), state_of("referee-2"), state_of("players"));
    // Bots answer each move after 300 ms, so a round lasts long enough for a restart to land in it. A
    // 5 s lease: a match is only handed to another referee if its referee is really gone.
    let spec = Spec::new(
        "league_chaos",
        BOTS + 2,
        "late:300",
        Timing {
            lease: Some(Duration::from_secs(5)),
            ..Timing::short_lease()
        },
    );
    let league_id = spec.league_id.clone();

    let mut manager = start_manager(&logs, "manager", &db.url, &spec, "127.0.0.1:0").await;
    let manager_addr = listen_addr(&manager);
    let mut gateway = start_gateway(&logs, "gateway", &manager.url, "127.0.0.1:0", "127.0.0.1:0").await;
    let gateway_http = listen_addr(&gateway);
    let referee_env = [
        ("LEAGUE_STATE_DIR", referee_state.as_str()),
        ("LEAGUE_REFEREE_NAME", "referee-1"),
    ];
    let mut referee = start_referee(&logs, "referee-1", &manager.url, 2, &referee_env).await;
    let other_referee_env = [
        ("LEAGUE_STATE_DIR", other_referee_state.as_str()),
        ("LEAGUE_REFEREE_NAME", "referee-2"),
    ];
    let mut other_referee = start_referee(&logs, "referee-2", &manager.url, 2, &other_referee_env).await;
    let players_env = [("LEAGUE_STATE_DIR", players_state.as_str())];
    let mut players = start_players_with(&logs, "players", &manager.url, &spec, BOTS, &players_env).await;
    let mcp = format!("{}/mcp", gateway.url);
    let agents = vec![
        python_agent(&mcp, "message_type", "alpha"),
        python_agent(&mcp, "sloppy", "charlie"),
    ];
    // The gateway's gRPC bridge is where the manager and referees reach external players: the service
    // endpoint the agents were registered with. A restarted gateway must serve it again.
    let gateway_grpc = observe(
        "the league starts with every player",
        OBSERVE_DEADLINE,
        async || {
            let endpoints: Vec<(String,)> = sqlx::query_as(
                "select distinct a.service_endpoint from agents a
             join league_players p on p.player_id = a.agent_id
             join leagues l on l.league_id = p.league_id
             where l.league_id = $1 and l.status <> 'registering' and a.service_endpoint <> $2",
            )
            .bind(&league_id)
            .bind(&players.url)
            .fetch_all(&db.pool)
            .await
            .ok()?;
            let [(endpoint,)] = endpoints.as_slice() else {
                return None;
            };
            Some(endpoint.strip_prefix("http://")?.to_owned())
        },
    )
    .await;

    // 1. A referee, mid-league; back on its contact endpoint, it resumes its identity.
    after_round(&db, &league_id, 1).await;
    let referee_addr = listen_addr(&referee);
    assert!(!referee.kill().await.expect("kill -9 the referee").success());
    let restarted_env = [
        referee_env[0],
        referee_env[1],
        ("LEAGUE_LISTEN_ADDR", referee_addr.as_str()),
    ];
    referee = start_referee(&logs, "referee-1-again", &manager.url, 2, &restarted_env).await;

    // 2. The other referee, stopped cleanly (SIGTERM): it finishes or releases its matches, exits, and
    //    resumes its identity when it starts again on its contact endpoint.
    after_round(&db, &league_id, 2).await;
    let other_referee_addr = listen_addr(&other_referee);
    let stopped = other_referee
        .terminate(EXIT_WITHIN)
        .await
        .expect("SIGTERM to the referee");
    assert!(stopped.success(), "the referee exits cleanly: {stopped}");
    let restarted_env = [
        other_referee_env[0],
        other_referee_env[1],
        ("LEAGUE_LISTEN_ADDR", other_referee_addr.as_str()),
    ];
    other_referee = start_referee(&logs, "referee-2-again", &manager.url, 2, &restarted_env).await;

    // 3. The player host: referees find it gone in the middle of matches; then it is back on its
    //    address, and its bots resume and play the rest of their matches.
    after_round(&db, &league_id, 3).await;
    let before = failures_logged(&logs);
    let players_addr = listen_addr(&players);
    assert!(!players.kill().await.expect("kill -9 the player host").success());
    outage_outlasts_the_attempts(&logs, before, "player host").await;
    let restarted_env = [players_env[0], ("LEAGUE_LISTEN_ADDR", players_addr.as_str())];
    players = start_players_with(&logs, "players-again", &manager.url, &spec, BOTS, &restarted_env).await;

    // 4. The manager, while bots play: the results finished meanwhile are kept and reported later.
    after_round(&db, &league_id, 5).await;
    while_a_bot_plays(&db, &league_id, &players.url).await;
    let (kept, claims_failed) = (
        referees_logged(&logs, RESULT_KEPT),
        referees_logged(&logs, CLAIM_FAILED),
    );
    assert!(!manager.kill().await.expect("kill -9 the manager").success());
    // Usually the bot's match ends while the manager is away and its referee keeps the result; on a
    // loaded machine it may have ended just before. Either way, the manager stays away until the
    // referees have found it gone several times.
    observe(
        "referees keep a result, or fail to claim, while the manager is away",
        OBSERVE_DEADLINE,
        async || {
            (referees_logged(&logs, RESULT_KEPT) > kept
                || referees_logged(&logs, CLAIM_FAILED) >= claims_failed + 4)
                .then_some(())
        },
    )
    .await;
    manager = start_manager(&logs, "manager-again", &db.url, &spec, &manager_addr).await;

    // 5. The gateway: referees find it gone while external agents play; their matches wait for it.
    after_round(&db, &league_id, 7).await;
    let before = failures_logged(&logs);
    assert!(!gateway.kill().await.expect("kill -9 the gateway").success());
    outage_outlasts_the_attempts(&logs, before, "gateway").await;
    gateway = start_gateway(&logs, "gateway-again", &manager.url, &gateway_http, &gateway_grpc).await;

    wait_for_completion(&db.pool, &league_id, &logs).await;
    let table = standings(&manager.url, &league_id).await;
    // The invariants of `check_invariants` but one: a notification may take more than one attempt here
    // (its receiver was down for a while); it must still be delivered, and recorded once.
    let facts = invariants::Facts::load(&db.pool, &league_id).await;
    assert_eq!(
        facts.players.len(),
        spec.players as usize,
        "players in the league"
    );
    invariants::one_result_per_match(&facts);
    invariants::pairs_meet_once(&facts);
    invariants::standings_equal_recomputation(&facts, &table);
    invariants::rounds_run_in_order(&facts);
    invariants::choices_before_the_draw(&facts);
    let undelivered: Vec<_> = facts
        .deliveries
        .iter()
        .filter(|delivery| !delivery.delivered || delivery.gave_up)
        .collect();
    assert!(
        undelivered.is_empty(),
        "notifications not delivered: {undelivered:?}"
    );
    let redelivered = facts
        .deliveries
        .iter()
        .filter(|delivery| delivery.attempts > 1)
        .count();
    let charged: Vec<_> = facts
        .matches
        .iter()
        .filter(|m| m.result_status.as_deref() != Some("win") && m.result_status.as_deref() != Some("draw"))
        .map(|m| (&m.match_id, &m.result_status, &m.at_fault_player_ids))
        .collect();
    assert!(
        charged.is_empty(),
        "technical losses charged to healthy agents: {charged:?} (logs in {})",
        logs.dir.display()
    );
    for row in &table.standings {
        assert_eq!(row.technical_losses, 0, "{row:?}");
    }
    let (agents_registered,): (i64,) = sqlx::query_as("select count(*) from agents")
        .fetch_one(&db.pool)
        .await
        .expect("agents");
    assert_eq!(
        agents_registered,
        i64::from(spec.players) + 2,
        "the restarted referee and bots resumed; nobody registered twice"
    );
    for restarted in ["referee-1-again", "referee-2-again"] {
        assert_eq!(
            log_mentions(&logs.path(restarted), "referee resumed its registration"),
            1,
            "{restarted}"
        );
    }
    assert_eq!(
        log_mentions(&logs.path("players-again"), "bot resumed its registration"),
        BOTS as usize
    );

    for mut agent in agents {
        let mut output = String::new();
        let mut stdout = agent.stdout.take().expect("agent stdout");
        tokio::time::timeout(AGENT_EXIT_WITHIN, stdout.read_to_string(&mut output))
            .await
            .expect("the agent stops after LEAGUE_COMPLETED")
            .expect("agent output");
        let summary: serde_json::Value =
            serde_json::from_str(output.trim()).unwrap_or_else(|_| panic!("summary: {output}"));
        assert_eq!(summary["completed"], true, "{summary}");
        assert_eq!(summary["received"]["LEAGUE_COMPLETED"], 1, "{summary}");
        agent.wait().await.expect("the agent exits");
    }
    println!(
        "chaos: killed and restarted a referee, the player host, the manager and the gateway, stopped and \
         restarted another referee; {} matches, \
         0 charged; claims per match {:?}; notifications delivered after a retry {redelivered} of {}; \
         outage retries logged by the referees {}; results kept through the manager's outage {}; {:.1} s",
        facts.matches.len(),
        claims_histogram(&facts),
        facts.deliveries.len(),
        referees_logged(&logs, OUTAGE_WAITED),
        referees_logged(&logs, RESULT_KEPT),
        clock.elapsed().as_secs_f64()
    );

    stop_all(&mut [referee, other_referee, players, gateway, manager]).await;
    db.drop().await;
    logs.remove();
}
