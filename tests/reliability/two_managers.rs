//! Two managers serving one database at once, each with its own referees and its own player host: the
//! league is scheduled once, every match is claimed once and recorded once, every league
//! event exists once and reaches each player once (one event delivery for the database).

use std::collections::BTreeMap;
use std::time::Instant;

use crate::harness::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_managers_on_one_database_schedule_claim_and_record_each_match_once() {
    let _serial = serial().await;
    let clock = Instant::now();
    let db = Database::fresh().await;
    let logs = Logs::new("two_managers");
    // A 30 s lease: nothing expires here, so a second claim of a match could only be a double claim.
    let spec = Spec::new(
        "league_two_managers",
        10,
        "late:100,random,adaptive,alternating,always_even",
        Timing::long_lease(),
    );
    // Both start at once on the fresh database: both migrate, both create the configured league.
    let (first, second) = tokio::join!(
        start_manager(&logs, "manager-1", &db.url, &spec, "127.0.0.1:0"),
        start_manager(&logs, "manager-2", &db.url, &spec, "127.0.0.1:0"),
    );
    let managers = [first, second];
    let mut referees = Vec::new();
    for (m, manager) in managers.iter().enumerate() {
        for r in 1..=2 {
            let name = format!("referee-{}-{r}", m + 1);
            referees.push(start_referee(&logs, &name, &manager.url, 1, &[]).await);
        }
    }
    let ids = referee_ids(&db.pool, &referees).await;
    // Five bots register through each manager, at once; the tenth registration starts the league.
    let (players_1, players_2) = tokio::join!(
        start_players(&logs, "players-1", &managers[0].url, &spec, spec.players / 2),
        start_players(&logs, "players-2", &managers[1].url, &spec, spec.players / 2),
    );

    wait_for_completion(&db.pool, &spec.league_id, &logs).await;
    let table = standings(&managers[1].url, &spec.league_id).await;
    assert_eq!(
        standings(&managers[0].url, &spec.league_id).await,
        table,
        "both managers give the same standings"
    );
    let facts = check_invariants(&db.pool, &spec, &table).await;

    // Scheduled once: one league row, its rounds and matches once (primary keys), one schedule.
    let (leagues, rounds): (i64, i64) = sqlx::query_as(
        "select (select count(*) from leagues), (select count(*) from rounds where league_id = $1)",
    )
    .bind(&spec.league_id)
    .fetch_one(&db.pool)
    .await
    .expect("counts");
    assert_eq!((leagues, rounds), (1, i64::from(spec.players - 1)));
    // Claimed once and recorded once, by one of the four referees.
    for m in &facts.matches {
        assert_eq!(m.claims, 1, "{} was claimed {} times", m.match_id, m.claims);
        assert!(ids.contains(m.referee_id.as_ref().expect("a referee")));
    }
    let mut per_manager = BTreeMap::new();
    for m in &facts.matches {
        let referee = ids
            .iter()
            .position(|id| Some(id) == m.referee_id.as_ref())
            .expect("one of ours");
        *per_manager.entry(referee / 2 + 1).or_insert(0) += 1;
    }
    assert_eq!(
        per_manager.len(),
        2,
        "the referees of both managers played: {per_manager:?}"
    );
    // Delivered once: neither player host was sent a notification twice.
    let mut hosts = [players_1, players_2];
    stop_all(&mut hosts).await;
    for host in &hosts {
        let twice = redeliveries(&logs.path(&host.name));
        assert!(twice.is_empty(), "{} was sent {twice:?} twice", host.name);
    }
    println!(
        "two_managers: {} matches, each claimed and recorded once; results per manager (through its \
         referees) {per_manager:?}; {} events, {} deliveries, none twice; {:.1} s",
        facts.matches.len(),
        facts.events.len(),
        facts.deliveries.len(),
        clock.elapsed().as_secs_f64()
    );

    stop_all(&mut referees).await;
    let mut managers = managers;
    stop_all(&mut managers).await;
    db.drop().await;
    logs.remove();
}
