//! kill -9 the manager mid-league — at the worst moment for the outbox: notifications delivered to the
//! player host but not yet recorded as delivered — and start it again on the same address and database.
//! The league resumes and completes; the restarted manager's event delivery delivers what was left; no
//! league event is lost, and the only ones a player host receives twice are those the crash
//! left unrecorded, which it recognises by their event id and takes once.
//!
//! How the moment is made, without timing: the test holds the event delivery's advisory lock from the
//! start, so notifications pile up undelivered. Mid-league it locks the pending delivery rows, then lets
//! go of the advisory lock: the manager's event delivery takes it, delivers every pending notification, and
//! blocks on the rows when it tries to record them (seen in `pg_blocking_pids`). Then the manager is
//! killed, and the row locks dropped.

use std::collections::BTreeSet;
use std::time::Instant;

use league_manager::event_delivery::EVENT_DELIVERY_LOCK;
use secrecy::ExposeSecret;
use sqlx::{Connection, PgConnection};

use crate::harness::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manager_killed_mid_delivery_and_restarted_resumes_the_league_losing_nothing() {
    let _serial = serial().await;
    let clock = Instant::now();
    let db = Database::fresh().await;
    let logs = Logs::new("manager_restart");
    let spec = Spec::new(
        "league_manager_restart",
        10,
        "random,adaptive,alternating,always_even,always_odd",
        Timing::short_lease(),
    );
    // Before any manager runs: no event delivery runs while the test holds this.
    let mut outbox = PgConnection::connect(db.url.expose_secret())
        .await
        .expect("the test's outbox connection");
    let (outbox_pid,): (i32,) = sqlx::query_as("select pg_backend_pid()")
        .fetch_one(&mut outbox)
        .await
        .expect("a backend pid");
    sqlx::query("select pg_advisory_lock($1)")
        .bind(EVENT_DELIVERY_LOCK)
        .execute(&mut outbox)
        .await
        .expect("the event-delivery lock");

    let mut first = start_manager(&logs, "manager-1", &db.url, &spec, "127.0.0.1:0").await;
    let mut referees = Vec::new();
    for i in 1..=2 {
        referees.push(start_referee(&logs, &format!("referee-{i}"), &first.url, 2, &[]).await);
    }
    referee_ids(&db.pool, &referees).await;
    let mut players = start_players(&logs, "players", &first.url, &spec, spec.players).await;

    // Mid-league: a round is completed (and its notifications wait in the outbox).
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
    // Event delivery stands by (the test holds its lock), so the test writes the queued events'
    // delivery rows, waiting (the statement event delivery writes them with for the players it did not
    // reach), and the rows are there to lock.
    let (queued,): (Vec<i64>,) =
        sqlx::query_as("select coalesce(array_agg(event_id), '{}') from league_events where not fanned_out")
            .fetch_one(&mut outbox)
            .await
            .expect("the queued events");
    league_manager::league::events::fan_out(&mut outbox, &queued, &Default::default())
        .await
        .expect("the queued events fanned out");
    let mut tx = outbox.begin().await.expect("a transaction");
    let held: Vec<(String, i64)> = sqlx::query_as(
        "select player_id, event_id from event_deliveries where delivered_at is null
         order by event_id, player_id for update",
    )
    .fetch_all(&mut *tx)
    .await
    .expect("the pending deliveries, locked");
    let held: BTreeSet<(String, i64)> = held.into_iter().collect();
    assert!(!held.is_empty(), "notifications wait in the outbox");
    sqlx::query("select pg_advisory_unlock($1)")
        .bind(EVENT_DELIVERY_LOCK)
        .execute(&mut *tx)
        .await
        .expect("the event-delivery lock let go");
    // Event delivery has delivered and now waits to record the deliveries.
    observe(
        "the manager's event delivery blocks on recording the deliveries",
        OBSERVE_DEADLINE,
        async || {
            let (blocked,): (i64,) = sqlx::query_as(
                "select count(*) from pg_stat_activity
                 where $1 = any(pg_blocking_pids(pid)) and query ilike 'update event_deliveries%'",
            )
            .bind(outbox_pid)
            .fetch_one(&db.pool)
            .await
            .ok()?;
            (blocked > 0).then_some(())
        },
    )
    .await;
    let killed = first.kill().await.expect("kill -9 the manager");
    assert!(!killed.success(), "killed, not exited: {killed}");
    tx.rollback().await.expect("the row locks dropped");
    let (last_event_at_kill, finished_at_kill): (i64, i64) = sqlx::query_as(
        "select (select coalesce(max(event_id), 0) from league_events),
                (select count(*) from matches where status = 'finished')",
    )
    .fetch_one(&db.pool)
    .await
    .expect("the league at the kill");
    let (recorded_at_kill,): (i64,) =
        sqlx::query_as("select count(*) from every_event_delivery where delivered_at is not null")
            .fetch_one(&db.pool)
            .await
            .expect("deliveries recorded");
    assert_eq!(
        recorded_at_kill, 0,
        "the killed manager recorded no delivery: all were pending"
    );

    // The same address, so the referees find it again.
    let second = start_manager(&logs, "manager-2", &db.url, &spec, &listen_addr(&first)).await;
    assert_eq!(second.url, first.url);
    wait_for_completion(&db.pool, &spec.league_id, &logs).await;
    let table = standings(&second.url, &spec.league_id).await;
    let facts = check_invariants(&db.pool, &spec, &table).await;
    assert!(
        finished_at_kill < facts.matches.len() as i64,
        "the kill was mid-league: {finished_at_kill} of {} matches were finished",
        facts.matches.len()
    );

    // What the player host received twice: exactly the deliveries the killed manager made and could not
    // record — every row the test held, perhaps a few more events of the same batch, nothing created
    // after the kill — and each of those twice, not more.
    stop_all(std::slice::from_mut(&mut players)).await;
    let redelivered = redeliveries(&logs.path("players"));
    let redelivered = once_each(&redelivered, "redeliveries");
    assert!(
        held.is_subset(&redelivered),
        "every delivery the crash left unrecorded came again and was recognised: missing {:?}",
        held.difference(&redelivered).collect::<Vec<_>>()
    );
    assert!(
        redelivered.iter().all(|(_, event)| *event <= last_event_at_kill),
        "nothing created after the kill was delivered twice: {redelivered:?}"
    );
    println!(
        "manager_restart: killed the manager after {finished_at_kill} of {} matches with {} deliveries \
         made but unrecorded; the restarted manager completed the league and delivered all {} \
         notifications; the player host got {} twice (recognised by event id), every other once; \
         claims per match {:?}; {:.1} s",
        facts.matches.len(),
        held.len(),
        facts.deliveries.len(),
        redelivered.len(),
        claims_histogram(&facts),
        clock.elapsed().as_secs_f64()
    );

    let mut rest = referees;
    rest.push(second);
    stop_all(&mut rest).await;
    outbox.close().await.ok();
    db.drop().await;
    logs.remove();
}
