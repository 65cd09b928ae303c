//! Many small leagues played at once while every core is kept busy: no transaction of the manager may
//! end in a deadlock (Postgres SQLSTATE 40P01). Every transaction takes its row locks in the one order
//! of docs/subsystems/lock-order.md; this test is the run that showed the outbox delivery and a
//! round's release taking `leagues` rows in opposite orders (issue 56).
//!
//! Deadlocks are read where Postgres counts them, `pg_stat_database.deadlocks` of the test's database,
//! once every connection to it has ended (a backend adds its counts when it ends); and every failed
//! report or renewal fails the test with its message.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use league_proto::v2::manager_service_client::ManagerServiceClient;
use league_proto::v2::*;
use league_runtime::Credentials;
use league_runtime::grpc::GrpcChannel;
use league_testkit::{EventHost, observe};
use secrecy::ExposeSecret;
use sqlx::{Connection, PgConnection};

use crate::support::*;

/// Leagues played at once, and each league's players (eight matches a round, 30 rounds: a double
/// round robin). Run before the fix, the code of 57153c6 deadlocked in one run of four in this shape
/// (event delivery's count against a round's release); with 4-6 players a league, or 12-100 leagues,
/// it did not in ten runs: rounds complete often, but each completion holds its league's row too
/// briefly to meet the other.
const LEAGUES: usize = 20;
const PLAYERS: usize = 16;
const CYCLES: u32 = 2;
/// Referees, each claiming up to its capacity across every league (lowest round first), so that one
/// batch of reports holds several leagues' results and completes their rounds together.
const REFEREES: usize = 4;
const REFEREE_CAPACITY: u32 = 64;
/// The whole run's bound: the leagues finish in 10-30 s on a loaded two-core machine (debug build).
const WITHIN: Duration = Duration::from_secs(180);

/// A thread spinning on each core until dropped, or until [`WITHIN`] has passed: the machine loaded,
/// so that transactions are preempted between their statements and overlap more.
struct Load {
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Load {
    fn start() -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let cores = std::thread::available_parallelism().map_or(2, usize::from);
        let deadline = Instant::now() + WITHIN;
        let threads = (0..cores)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    let mut x = 0_u64;
                    while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
                        for _ in 0..10_000 {
                            x = std::hint::black_box(
                                x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1),
                            );
                        }
                    }
                })
            })
            .collect();
        Self { stop, threads }
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

async fn deadlocks(conn: &mut PgConnection, database: &str) -> i64 {
    sqlx::query_scalar("select deadlocks from pg_stat_database where datname = $1")
        .bind(database)
        .fetch_one(conn)
        .await
        .unwrap()
}

/// Creates league `league_id` with `PLAYERS` players served by `endpoint`, not started.
async fn league_of_players(
    manager: &TestManager,
    client: &mut ManagerServiceClient<GrpcChannel>,
    league_id: &str,
    endpoint: &str,
) {
    client
        .create_league(manager.operator(CreateLeagueRequest {
            league_id: league_id.to_owned(),
            game_type: "even_odd".into(),
            cycles: CYCLES,
            ..CreateLeagueRequest::default()
        }))
        .await
        .unwrap();
    for n in 0..PLAYERS {
        client
            .register_player(RegisterPlayerRequest {
                meta: Some(AgentMeta {
                    service_endpoint: endpoint.to_owned(),
                    ..meta(&format!("{league_id}-p{n}"))
                }),
                league_id: league_id.to_owned(),
            })
            .await
            .unwrap();
    }
}

/// A referee that claims across every league and, for what it got, renews the leases (several
/// matches in one statement) and reports every result at once; until `done`. Every error goes to
/// `errors`.
async fn referee(
    mut client: ManagerServiceClient<GrpcChannel>,
    referee: Credentials,
    done: Arc<AtomicBool>,
    errors: Arc<Mutex<Vec<String>>>,
) {
    while !done.load(Ordering::Relaxed) {
        let assignments = client
            .claim_matches(referee.request(ClaimMatchesRequest {
                max_matches: REFEREE_CAPACITY,
                wait: Some(prost_types::Duration {
                    seconds: 0,
                    nanos: 200_000_000,
                }),
            }))
            .await
            .unwrap()
            .into_inner()
            .assignments;
        if assignments.is_empty() {
            continue;
        }
        // Renewed in reverse, then reported in the order given: the statements name the matches in
        // whatever order the caller sends them.
        let mut leases: Vec<LeaseRef> = assignments.iter().map(lease_of).collect();
        leases.reverse();
        let renewal = client
            .renew_leases(referee.request(RenewLeasesRequest {
                leases,
                players_called: true,
            }))
            .await;
        if let Err(status) = renewal {
            errors
                .lock()
                .unwrap()
                .push(format!("renewal: {}", status.message()));
        }
        let reports = assignments.iter().map(|assignment| {
            let mut client = client.clone();
            let request = referee.request(report_of(assignment, a_wins(assignment)));
            async move { client.report_match_result(request).await }
        });
        for reported in futures::future::join_all(reports).await {
            if let Err(status) = reported {
                errors
                    .lock()
                    .unwrap()
                    .push(format!("report: {}", status.message()));
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn leagues_at_once_on_a_loaded_machine_never_deadlock() {
    let (_host, endpoint) = EventHost::serve().await;
    let manager = league_testkit::spawn_manager("league_lock_order", "test_league", |config| {
        config.db_max_connections = 16;
    })
    .await;
    let database = manager.database.name().to_owned();
    // A connection of the test's own, which outlives the manager's to read the count at the end.
    let mut admin = PgConnection::connect(manager.database_url.expose_secret())
        .await
        .unwrap();
    let before = deadlocks(&mut admin, &database).await;

    let mut client = manager.client();
    let leagues: Vec<String> = (1..=LEAGUES).map(|n| format!("load_{n:02}")).collect();
    for league_id in &leagues {
        league_of_players(&manager, &mut client, league_id, &endpoint).await;
    }
    let mut referees = Vec::new();
    for n in 0..REFEREES {
        let response = client
            .register_referee(RegisterRefereeRequest {
                meta: Some(meta(&format!("ref-{n}"))),
                max_concurrent_matches: REFEREE_CAPACITY,
            })
            .await
            .unwrap()
            .into_inner();
        referees.push(Credentials::new(response.referee_id, response.auth_token));
    }

    let load = Load::start();
    let done = Arc::new(AtomicBool::new(false));
    let errors = Arc::new(Mutex::new(Vec::new()));
    let playing: Vec<_> = referees
        .into_iter()
        .map(|credentials| {
            tokio::spawn(referee(
                manager.client(),
                credentials,
                done.clone(),
                errors.clone(),
            ))
        })
        .collect();
    // Started together, each in its own call, side by side.
    let starts = leagues.iter().map(|league_id| {
        let mut client = manager.client();
        let request = manager.operator(StartLeagueRequest {
            league_id: league_id.clone(),
        });
        async move { client.start_league(request).await.unwrap() }
    });
    futures::future::join_all(starts).await;
    // Every league completed and every notification delivered: the outbox's counts ran beside the
    // releases to the end.
    let expected = i64::try_from(LEAGUES * PLAYERS).unwrap();
    observe("every league completed and notified", WITHIN, async || {
        let (completed, last_notified): (i64, i64) = sqlx::query_as(
            "select count(*) filter (where l.status = 'completed'),
                    (select count(*) from every_event_delivery d join league_events e using (event_id)
                     where e.kind = 'league_completed' and d.delivered_at is not null)
             from leagues l where l.league_id like 'load_%'",
        )
        .fetch_one(&manager.pool)
        .await
        .unwrap();
        (completed == LEAGUES as i64 && last_notified == expected).then_some(())
    })
    .await;
    done.store(true, Ordering::Relaxed);
    for referee in playing {
        referee.await.unwrap();
    }
    drop(load);

    // A backend adds its deadlocks to pg_stat_database when it ends: end every other connection to the
    // test database (the manager's pools), then read.
    manager.shutdown.trigger();
    manager.pool.close().await;
    sqlx::query(
        "select pg_terminate_backend(pid) from pg_stat_activity
         where datname = $1 and pid <> pg_backend_pid()",
    )
    .bind(&database)
    .execute(&mut admin)
    .await
    .unwrap();
    observe(
        "every connection to the test database ended",
        WITHIN,
        async || {
            let left: i64 = sqlx::query_scalar(
                "select count(*) from pg_stat_activity
             where datname = $1 and pid <> pg_backend_pid()",
            )
            .bind(&database)
            .fetch_one(&mut admin)
            .await
            .unwrap();
            (left == 0).then_some(())
        },
    )
    .await;
    let after = deadlocks(&mut admin, &database).await;
    let errors = errors.lock().unwrap().clone();
    assert_eq!(
        after - before,
        0,
        "deadlocks in the test database; the agents' errors: {errors:#?}"
    );
    assert!(errors.is_empty(), "{errors:#?}");
}
