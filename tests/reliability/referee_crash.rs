//! kill -9 one of three referees mid-league: its matches come back to the queue when their leases run
//! out, the other referees play them from the start, and the league completes with exactly one result per
//! match and standings equal to the recomputation. At the league's default lease too: the dead referee's
//! match is played by another within seconds (the lease is 10 s, renewed every 2 s; ADR 0042), and the
//! replay charges nobody.

use std::time::{Duration, Instant};

use crate::harness::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_referee_killed_mid_league_leaves_every_match_with_exactly_one_result() {
    // The lease is 1 s, so the dead referee's matches come back within a second.
    killed_mid_league("referee_crash", Timing::short_lease()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_referee_killed_mid_match_is_replaced_within_seconds_at_the_default_lease() {
    // No LEAGUE_LEASE_DURATION: the dead referee's match must be played by another one well within
    // OBSERVE_DEADLINE (30 s), which a 60 s lease never allowed.
    killed_mid_league(
        "referee_crash_default_lease",
        Timing {
            lease: None,
            ..Timing::short_lease()
        },
    )
    .await;
}

async fn killed_mid_league(test: &str, timing: Timing) {
    let _serial = serial().await;
    let clock = Instant::now();
    let db = Database::fresh().await;
    let logs = Logs::new(test);
    // One bot answers each move after 600 ms: its matches are in flight long enough to kill their
    // referee in the middle.
    let spec = Spec::new(
        &format!("league_{test}"),
        10,
        "late:600,random,adaptive,alternating,always_even,always_odd",
        timing,
    );
    let manager = start_manager(&logs, "manager", &db.url, &spec, "127.0.0.1:0").await;
    let mut referees = Vec::new();
    for i in 1..=3 {
        referees.push(start_referee(&logs, &format!("referee-{i}"), &manager.url, 2, &[]).await);
    }
    let ids = referee_ids(&db.pool, &referees).await;
    let players = start_players(&logs, "players", &manager.url, &spec, spec.players).await;
    let late = observe("the bots register", OBSERVE_DEADLINE, async || {
        bot(&db.pool, "late:600").await
    })
    .await;

    // Mid-league: a match is finished, and a referee is waiting for the late bot's move, asked less
    // than 300 ms ago (so the answer is at least 300 ms away when the referee dies).
    let (victim, match_id) = observe(
        "a finished match, and a referee collecting the late bot's move",
        OBSERVE_DEADLINE,
        async || {
            let (finished,): (i64,) =
                sqlx::query_as("select count(*) from matches where league_id = $1 and status = 'finished'")
                    .bind(&spec.league_id)
                    .fetch_one(&db.pool)
                    .await
                    .ok()?;
            if finished == 0 {
                return None;
            }
            for (index, referee) in referees.iter().enumerate() {
                let running = running_on(referee).await;
                if let Some(found) = running
                    .iter()
                    .find(|m| collecting_recently(m, &late, Duration::from_millis(300)))
                {
                    let scheduled = found.r#match.as_ref()?;
                    return Some((index, scheduled.match_id.clone()));
                }
            }
            None
        },
    )
    .await;
    let victim_id = ids[victim].clone();
    let killed = referees[victim].kill().await.expect("kill -9 the referee");
    let killed_at = Instant::now();
    assert!(!killed.success(), "killed, not exited: {killed}");

    // The dead referee can no longer renew or report: what it held at its death is frozen here.
    let orphans: Vec<(String,)> = sqlx::query_as(
        "select match_id from matches where league_id = $1 and status = 'running' and referee_id = $2
         order by match_id",
    )
    .bind(&spec.league_id)
    .bind(&victim_id)
    .fetch_all(&db.pool)
    .await
    .expect("the dead referee's matches");
    let orphans: Vec<String> = orphans.into_iter().map(|(id,)| id).collect();
    assert!(
        orphans.contains(&match_id),
        "{victim_id} died running {match_id}; the database says it held {orphans:?}"
    );

    // Its match waiting for the late bot is played by a live referee, once the lease runs out.
    let retaken = observe(
        "another referee runs the dead referee's match",
        OBSERVE_DEADLINE,
        async || {
            let (referee, claims): (Option<String>, i32) = sqlx::query_as(
                "select referee_id, claims from matches where league_id = $1 and match_id = $2",
            )
            .bind(&spec.league_id)
            .bind(&match_id)
            .fetch_one(&db.pool)
            .await
            .ok()?;
            (claims >= 2 && referee.as_deref() != Some(victim_id.as_str())).then_some(killed_at.elapsed())
        },
    )
    .await;

    wait_for_completion(&db.pool, &spec.league_id, &logs).await;
    let table = standings(&manager.url, &spec.league_id).await;
    let facts = check_invariants(&db.pool, &spec, &table).await;
    // The match waiting for the late bot cannot have been finished by the dead referee: it is played
    // again by a live one. Another match it held may have had its report in flight when it died (sent,
    // not yet committed when the orphans were read): the manager rightly records that one, once.
    for orphan in &orphans {
        let m = facts.match_row(orphan);
        if *orphan != match_id && m.referee_id.as_deref() == Some(victim_id.as_str()) {
            assert_eq!(
                m.claims, 1,
                "{orphan}: reported by {victim_id} as it died, never replayed"
            );
            continue;
        }
        assert!(m.claims >= 2, "{orphan} was claimed again: {} claims", m.claims);
        assert_ne!(
            m.referee_id.as_deref(),
            Some(victim_id.as_str()),
            "{orphan} was recorded by a live referee"
        );
        assert!(
            m.at_fault().is_empty(),
            "{orphan}: nobody is charged for the dead referee ({:?})",
            m.result_status
        );
    }
    let by_dead: Vec<&str> = facts
        .matches
        .iter()
        .filter(|m| m.referee_id.as_deref() == Some(victim_id.as_str()))
        .map(|m| m.match_id.as_str())
        .collect();
    println!(
        "{test}: killed {victim_id} while it held {orphans:?}; {match_id} taken by another referee \
         {:.1} s after the kill; {} matches, each with one result ({} recorded by {victim_id} before it \
         died); claims per match {:?}; {:.1} s",
        retaken.as_secs_f64(),
        facts.matches.len(),
        by_dead.len(),
        claims_histogram(&facts),
        clock.elapsed().as_secs_f64()
    );

    let mut survivors: Vec<_> = referees
        .into_iter()
        .enumerate()
        .filter(|(index, _)| *index != victim)
        .map(|(_, referee)| referee)
        .collect();
    survivors.push(players);
    survivors.push(manager);
    stop_all(&mut survivors).await;
    db.drop().await;
    logs.remove();
}
