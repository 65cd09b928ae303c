//! Postgres restarted mid-league, on a private cluster of the test's own (never the shared server): every
//! connection the manager holds is cut. The manager's pool reconnects, its LISTEN connection comes back,
//! its event delivery takes its lock again, referees retry what failed, and the league completes with
//! every invariant intact.

use std::path::PathBuf;
use std::time::Instant;

use league_manager::event_delivery::EVENT_DELIVERY_LOCK;
use league_manager::postgres;

use crate::harness::*;

/// A private cluster under a short directory (its Unix socket path must fit in ~100 bytes), listening
/// on that socket only: no TCP port at all. Stopped and removed when dropped.
struct Cluster {
    dir: PathBuf,
}

impl Cluster {
    fn new() -> Cluster {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|elapsed| elapsed.subsec_nanos())
            .unwrap_or_default();
        Cluster {
            dir: PathBuf::from(format!("/tmp/league-pg-{}-{nanos:08x}", std::process::id())),
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = postgres::stop_private_cluster(&self.dir);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_league_survives_a_postgres_restart() {
    let _serial = serial().await;
    let clock = Instant::now();
    let cluster = Cluster::new();
    let server = postgres::start_private_cluster(&cluster.dir)
        .await
        .expect("a private Postgres cluster (initdb and pg_ctl must be installed)");
    let db = Database::create_on(server).await;
    let logs = Logs::new("postgres_restart");
    // One bot takes 200 ms per move, so the league lasts long enough for a restart in its middle.
    let spec = Spec::new(
        "league_postgres_restart",
        10,
        "late:200,random,adaptive,alternating,always_even,always_odd",
        Timing::short_lease(),
    );
    let manager = start_manager(&logs, "manager", &db.url, &spec, "127.0.0.1:0").await;
    let mut referees = Vec::new();
    for i in 1..=2 {
        referees.push(start_referee(&logs, &format!("referee-{i}"), &manager.url, 2, &[]).await);
    }
    referee_ids(&db.pool, &referees).await;
    let players = start_players(&logs, "players", &manager.url, &spec, spec.players).await;

    // Mid-league: a round is completed.
    observe("a completed round", OBSERVE_DEADLINE, async || {
        let (completed,): (i64,) =
            sqlx::query_as("select count(*) from rounds where league_id = $1 and status = 'completed'")
                .bind(&spec.league_id)
                .fetch_one(&db.pool)
                .await
                .ok()?;
        (completed >= 1).then_some(())
    })
    .await;
    let (finished_before,): (i64,) = sqlx::query_as("select count(*) from matches where status = 'finished'")
        .fetch_one(&db.pool)
        .await
        .expect("finished matches");
    let down = Instant::now();
    let dir = cluster.dir.clone();
    tokio::task::spawn_blocking(move || postgres::stop_private_cluster(&dir))
        .await
        .expect("pg_ctl stop runs")
        .expect("the cluster stops");
    postgres::start_private_cluster(&cluster.dir)
        .await
        .expect("the cluster starts again");
    let downtime = down.elapsed();
    let (restarted_at,): (f64,) =
        sqlx::query_as("select extract(epoch from pg_postmaster_start_time())::float8")
            .fetch_one(&db.pool)
            .await
            .expect("the test's pool reconnects too");

    // The manager's LISTEN connection and its event-delivery lock come back with it.
    observe("the manager LISTENs again", OBSERVE_DEADLINE, async || {
        let (listening,): (i64,) = sqlx::query_as(
            "select count(*) from pg_stat_activity where datname = current_database() and query ilike 'listen%'",
        )
        .fetch_one(&db.pool)
        .await
        .ok()?;
        (listening > 0).then_some(())
    })
    .await;
    observe(
        "the event delivery holds its lock again",
        OBSERVE_DEADLINE,
        async || {
            let (locked,): (i64,) = sqlx::query_as(
                "select count(*) from pg_locks where locktype = 'advisory' and granted
               and ((classid::bigint << 32) | objid::bigint) = $1",
            )
            .bind(EVENT_DELIVERY_LOCK)
            .fetch_one(&db.pool)
            .await
            .ok()?;
            (locked == 1).then_some(())
        },
    )
    .await;

    wait_for_completion(&db.pool, &spec.league_id, &logs).await;
    let table = standings(&manager.url, &spec.league_id).await;
    let facts = check_invariants(&db.pool, &spec, &table).await;
    let after_restart = facts
        .matches
        .iter()
        .filter(|m| m.finished_ms.is_some_and(|ms| ms as f64 / 1000.0 >= restarted_at))
        .count();
    assert!(
        after_restart > 0,
        "matches were recorded after the restart ({finished_before} before it)"
    );
    println!(
        "postgres_restart: Postgres down for {:.0} ms after {finished_before} of {} matches; {after_restart} \
         recorded after the restart; LISTEN and the event-delivery lock came back; claims per match {:?}; \
         {:.1} s",
        downtime.as_secs_f64() * 1000.0,
        facts.matches.len(),
        claims_histogram(&facts),
        clock.elapsed().as_secs_f64()
    );

    let mut rest = referees;
    rest.push(players);
    rest.push(manager);
    stop_all(&mut rest).await;
    db.pool.close().await;
    logs.remove();
    drop(cluster);
}
