//! `league serve` watches its services: its player host killed with kill -9 mid-league (a slow bot keeps
//! matches in flight) is started again by the launcher, which says so on its stderr, and rejoins as the
//! same bots on a new port; the league completes with no new agent and nobody charged for the outage.
//! SIGTERM then stops serve and every child it started, the restarted one included.

use std::path::Path;
use std::time::Instant;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use crate::harness::*;
use crate::serve_restart::{LEAGUE, agents, final_standings, log_end, mid_league, serve, served_by};

/// What the launcher prints when the player host dies of a kill -9.
const RESTARTED: &str = "players exited (signal 9: SIGKILL); starting it again (restart 1)";

/// The children `league serve` noted in its state directory, in the order they started: (pid, start
/// time, name).
pub fn noted_children(state_dir: &Path) -> Vec<(i32, String, String)> {
    let text = std::fs::read_to_string(state_dir.join("children")).unwrap_or_default();
    text.lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            Some((
                fields.next()?.parse().ok()?,
                fields.next()?.to_owned(),
                fields.next()?.to_owned(),
            ))
        })
        .collect()
}

/// Whether process `pid`, started at `started` (clock ticks after boot), still runs: a pid reused since,
/// or a zombie, is not it.
pub fn still_runs(pid: i32, started: &str) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let Some(close) = stat.rfind(')') else {
        return false;
    };
    let fields: Vec<&str> = stat[close + 1..].split_whitespace().collect();
    // Field 3 (the state) is the first after the name; field 22 (the start time) 19 further on.
    fields.first().is_some_and(|state| *state != "Z" && *state != "X") && fields.get(19) == Some(&started)
}

/// What the launcher's watch said in the log at `log` (each exit, each start again and why), among its
/// services' own logs.
fn supervisor_lines(log: &Path) -> String {
    let said = std::fs::read_to_string(log).unwrap_or_default();
    said.lines()
        .filter(|line| line.contains("starting it again") || line.contains("not started again"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_player_host_killed_under_serve_is_started_again_and_the_league_completes_with_the_same_agents() {
    let _serial = serial().await;
    let clock = Instant::now();
    let db = Database::fresh().await;
    let database =
        league_manager::postgres::database_name(secrecy::ExposeSecret::expose_secret(&db.url)).to_owned();
    let logs = Logs::new("serve_supervised");
    let log = logs.path("serve");
    // Where serve keeps its identities and its children file: `serve/<database>` beside the state file.
    let state_dir = logs.dir.join("serve").join(&database);
    let spec = Spec::new(
        LEAGUE,
        6,
        "late:300,random,adaptive,alternating,always_even,always_odd",
        Timing::long_lease(),
    );

    let mut served = serve(&database, &logs.dir, &log);
    let pid = served.id().expect("league serve runs");
    let (manager_url, token) = served_by(&logs.dir, &mut served, &log).await;
    // Mid-league: a match finished and others running, some of them the late bot's.
    let (finished_then, running_then) = mid_league(&db).await;
    let before = agents(&db).await;
    assert_eq!(before.len(), 8, "6 bots and 2 referees: {before:?}");
    let players = |children: &[(i32, String, String)]| -> Vec<i32> {
        children
            .iter()
            .filter(|(_, _, name)| name == "players")
            .map(|(pid, _, _)| *pid)
            .collect()
    };
    let [host] = players(&noted_children(&state_dir))[..] else {
        panic!("one player host noted: {:?}", noted_children(&state_dir));
    };
    kill(Pid::from_raw(host), Signal::SIGKILL).expect("kill -9 the player host");

    // The launcher says it, and starts another player host (noted like the first). If it does not,
    // the test fails with serve's log and the children it noted, which say why (a start that failed or
    // hung, an exit never seen).
    let restarted = tokio::time::timeout(
        OBSERVE_DEADLINE,
        // The timeout above bounds the wait; observe's own bound is only past it.
        observe(
            "the launcher restarts the player host",
            2 * OBSERVE_DEADLINE,
            async || {
                let said = std::fs::read_to_string(&log).ok()?.contains(RESTARTED);
                (said && players(&noted_children(&state_dir)).len() == 2).then_some(())
            },
        ),
    )
    .await;
    assert!(
        restarted.is_ok(),
        "the launcher did not restart the player host within {OBSERVE_DEADLINE:?}; noted children: {:?}; \
         what serve said of its services:\n{}\nits log ends:\n{}",
        noted_children(&state_dir),
        supervisor_lines(&log),
        log_end(&log)
    );
    wait_for_completion(&db.pool, LEAGUE, &logs).await;
    let table = final_standings(&manager_url, &token).await;
    // No technical loss, no double forfeit: the outage was ours.
    let facts = check_invariants_through_restarts(&db.pool, &spec, &table).await;
    assert_eq!(
        agents(&db).await,
        before,
        "no new agent: the restarted bots resumed their identities"
    );

    // SIGTERM: serve stops, and every child it started (the restarted player host too) is gone.
    kill(Pid::from_raw(i32::try_from(pid).expect("a pid")), Signal::SIGTERM)
        .expect("SIGTERM to league serve");
    let stopped = tokio::time::timeout(EXIT_WITHIN, served.wait())
        .await
        .expect("league serve stops on SIGTERM")
        .expect("its exit status");
    assert!(stopped.success(), "league serve exited with {stopped}");
    let children = noted_children(&state_dir);
    assert_eq!(
        children.len(),
        6,
        "manager, gateway, player host twice, 2 referees: {children:?}"
    );
    let left: Vec<_> = children
        .iter()
        .filter(|(pid, started, _)| still_runs(*pid, started))
        .collect();
    assert!(left.is_empty(), "children left running: {left:?}");
    let restarts = std::fs::read_to_string(&log)
        .expect("the log")
        .matches("starting it again")
        .count();
    assert_eq!(restarts, 1, "only the player host was started again");
    println!(
        "serve_supervised: player host killed with {finished_then} matches finished and {running_then} running; \
         started again, {} matches, claims per match {:?}, the same {} agents; {:.1} s",
        facts.matches.len(),
        claims_histogram(&facts),
        before.len(),
        clock.elapsed().as_secs_f64()
    );
    db.drop().await;
    logs.remove();
}
