//! SIGTERM to the manager under `league serve` mid-league, with the gateway (its `WatchReplies`
//! stream open), both referees and the player host connected: the manager exits on its own, with code
//! 0, within 5 s — not after its callers give up, nor killed at the end of an orchestrator's grace —
//! the launcher starts it again, and the league completes with every match played and nobody charged
//! for the outage (what ran at the signal was finished or released).

use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use crate::harness::*;
use crate::serve_restart::{LEAGUE, agents, final_standings, mid_league, serve, served_by};
use crate::serve_supervised::{noted_children, still_runs};

/// What the issue asks of a manager told to stop (compose gives 10 s, Kubernetes 30 s).
const MANAGER_EXITS_WITHIN: Duration = Duration::from_secs(5);
/// What a server logs when calls outlast its drain (league_runtime::grpc::DRAIN_LIMIT) and are cut off.
const CUT_OFF: &str = "calls still running";
/// What the launcher prints when the manager exits on its own with code 0.
const EXITED_CLEANLY: &str = "manager exited (code 0); starting it again (restart 1)";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manager_told_to_stop_under_serve_exits_within_5_s_with_everything_connected() {
    let _serial = serial().await;
    let clock = Instant::now();
    let db = Database::fresh().await;
    let database =
        league_manager::postgres::database_name(secrecy::ExposeSecret::expose_secret(&db.url)).to_owned();
    let logs = Logs::new("serve_manager_sigterm");
    let log = logs.path("serve");
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
    let (finished_then, running_then) = mid_league(&db).await;
    let before = agents(&db).await;
    let children = noted_children(&state_dir);
    let names: Vec<&str> = children.iter().map(|(_, _, name)| name.as_str()).collect();
    assert!(
        names.iter().any(|name| name.starts_with("gateway")) && names.contains(&"players"),
        "the gateway and the player host run beside the manager: {names:?}"
    );
    let [(manager, started, _)] = &children
        .iter()
        .filter(|(_, _, name)| name == "manager")
        .collect::<Vec<_>>()[..]
    else {
        panic!("one manager noted: {children:?}");
    };

    let asked = Instant::now();
    kill(Pid::from_raw(*manager), Signal::SIGTERM).expect("SIGTERM to the manager");
    observe("the manager exits", OBSERVE_DEADLINE, async || {
        (!still_runs(*manager, started)).then_some(())
    })
    .await;
    let took = asked.elapsed();
    assert!(
        took < MANAGER_EXITS_WITHIN,
        "the manager took {took:?} to stop (logs in {})",
        logs.dir.display()
    );
    // Every stream ended when the manager was told to stop: none was left for the drain's bound to cut.
    let said = std::fs::read_to_string(&log).expect("the log");
    assert!(
        !said.contains(CUT_OFF),
        "calls were still running when the manager stopped (logs in {})",
        logs.dir.display()
    );
    observe(
        "the launcher says the manager exited with code 0",
        OBSERVE_DEADLINE,
        async || {
            std::fs::read_to_string(&log)
                .ok()?
                .contains(EXITED_CLEANLY)
                .then_some(())
        },
    )
    .await;

    // Started again on the same address: the league completes, nothing lost and nobody charged.
    wait_for_completion(&db.pool, LEAGUE, &logs).await;
    let table = final_standings(&manager_url, &token).await;
    let facts = check_invariants_through_restarts(&db.pool, &spec, &table).await;
    assert_eq!(agents(&db).await, before, "no new agent");

    kill(Pid::from_raw(i32::try_from(pid).expect("a pid")), Signal::SIGTERM)
        .expect("SIGTERM to league serve");
    let stopped = tokio::time::timeout(EXIT_WITHIN, served.wait())
        .await
        .expect("league serve stops on SIGTERM")
        .expect("its exit status");
    assert!(stopped.success(), "league serve exited with {stopped}");
    println!(
        "serve_manager_sigterm: the manager got SIGTERM with {finished_then} matches finished and \
         {running_then} running, exited after {:.0} ms; {} matches, claims per match {:?}; {:.1} s",
        took.as_secs_f64() * 1000.0,
        facts.matches.len(),
        claims_histogram(&facts),
        clock.elapsed().as_secs_f64()
    );
    db.drop().await;
    logs.remove();
}
