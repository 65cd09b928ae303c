//! Referees scaled from 1 to 4 while a league runs: the new referees register and start claiming at
//! once, matches per second rise, and nothing else changes — every match still claimed and recorded
//! once, every invariant intact.
//!
//! Throughput is measured and printed, never asserted: on a small, busy machine a rate is not a fact.
//! The bots answer each move after 50 ms and every referee runs one match at a time, so a match costs
//! little CPU and mostly waits; a round of 6 matches then takes 6 waits with one referee and 2 with four,
//! whatever the machine. What is asserted is robust: each of the four referees recorded matches after
//! the scale-up (a round has more matches than one referee can hold), and the invariants.

use std::time::Instant;

use crate::harness::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn more_referees_mid_league_play_more_matches_at_once_and_change_nothing_else() {
    let _serial = serial().await;
    let clock = Instant::now();
    let db = Database::fresh().await;
    let logs = Logs::new("scale_referees");
    let spec = Spec::new("league_scale_referees", 12, "late:50", Timing::long_lease());
    let manager = start_manager(&logs, "manager", &db.url, &spec, "127.0.0.1:0").await;
    let mut referees = vec![start_referee(&logs, "referee-1", &manager.url, 1, &[]).await];
    referee_ids(&db.pool, &referees).await;
    let players = start_players(&logs, "players", &manager.url, &spec, spec.players).await;

    // One referee plays the first two rounds.
    let scale_at: f64 = observe("two completed rounds", OBSERVE_DEADLINE, async || {
        let (completed, now): (i64, f64) = sqlx::query_as(
            "select count(*), extract(epoch from now())::float8 from rounds
             where league_id = $1 and status = 'completed'",
        )
        .bind(&spec.league_id)
        .fetch_one(&db.pool)
        .await
        .ok()?;
        (completed >= 2).then_some(now)
    })
    .await;
    let (two, three, four) = tokio::join!(
        start_referee(&logs, "referee-2", &manager.url, 1, &[]),
        start_referee(&logs, "referee-3", &manager.url, 1, &[]),
        start_referee(&logs, "referee-4", &manager.url, 1, &[]),
    );
    referees.extend([two, three, four]);
    let ids = referee_ids(&db.pool, &referees).await;
    let (scaled_at,): (f64,) = sqlx::query_as(
        "select extract(epoch from max(registered_at))::float8 from agents where agent_id = any($1)",
    )
    .bind(&ids)
    .fetch_one(&db.pool)
    .await
    .expect("when the last referee registered");

    wait_for_completion(&db.pool, &spec.league_id, &logs).await;
    let table = standings(&manager.url, &spec.league_id).await;
    let facts = check_invariants(&db.pool, &spec, &table).await;
    for m in &facts.matches {
        assert_eq!(m.claims, 1, "{} was claimed {} times", m.match_id, m.claims);
    }
    let (started_at, completed_at): (f64, f64) = sqlx::query_as(
        "select extract(epoch from started_at)::float8, extract(epoch from completed_at)::float8
         from leagues where league_id = $1",
    )
    .bind(&spec.league_id)
    .fetch_one(&db.pool)
    .await
    .expect("the league's start and end");
    let finished = |m: &crate::invariants::MatchRow| m.finished_ms.expect("finished") as f64 / 1000.0;
    let before = facts.matches.iter().filter(|m| finished(m) <= scale_at).count();
    let after: Vec<_> = facts
        .matches
        .iter()
        .filter(|m| finished(m) >= scaled_at)
        .collect();
    for id in &ids {
        let played = after.iter().filter(|m| m.referee_id.as_ref() == Some(id)).count();
        assert!(played > 0, "{id} recorded no match after the scale-up");
    }
    let rate_one = before as f64 / (scale_at - started_at);
    let rate_four = after.len() as f64 / (completed_at - scaled_at);
    let per_referee: Vec<(String, usize)> = ids
        .iter()
        .map(|id| {
            let played = after.iter().filter(|m| m.referee_id.as_ref() == Some(id)).count();
            (id.clone(), played)
        })
        .collect();
    println!(
        "scale_referees: 1 referee: {before} matches in {:.2} s = {rate_one:.1} matches/s; 4 referees: {} \
         matches in {:.2} s = {rate_four:.1} matches/s ({:.1}x); after the scale-up, matches per referee \
         {per_referee:?}; scale-up took {:.0} ms; {:.1} s",
        scale_at - started_at,
        after.len(),
        completed_at - scaled_at,
        rate_four / rate_one,
        (scaled_at - scale_at) * 1000.0,
        clock.elapsed().as_secs_f64()
    );

    referees.push(players);
    referees.push(manager);
    stop_all(&mut referees).await;
    db.drop().await;
    logs.remove();
}
