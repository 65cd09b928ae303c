//! SIGTERM to a referee in the middle of a match: it stops claiming at once, and either finishes the
//! match within its shutdown grace (and reports it), or — when the grace is shorter than what is left
//! of the match — stops it and releases its lease, so another referee plays it at once rather than
//! after the lease expires. Either way, once the process has exited no match is leased to it.

use std::time::{Duration, Instant};

use league_launcher::children::Service;
use league_proto::v2::transcript_entry;

use crate::harness::*;

/// A league of 6 with one bot answering each move after 800 ms, two referees, a 30 s lease (so a match
/// only changes referee through a release), and `grace` as every referee's `LEAGUE_SHUTDOWN_GRACE`.
struct Sigterm {
    spec: Spec,
    db: Database,
    logs: Logs,
    manager: Service,
    referees: Vec<Service>,
    ids: Vec<String>,
    players: Service,
}

async fn league(name: &str, grace: &str) -> Sigterm {
    let db = Database::fresh().await;
    let logs = Logs::new(name);
    let spec = Spec::new(
        &format!("league_{name}"),
        6,
        "late:800,random,adaptive,alternating,always_even,always_odd",
        Timing::long_lease(),
    );
    let manager = start_manager(&logs, "manager", &db.url, &spec, "127.0.0.1:0").await;
    let grace = [("LEAGUE_SHUTDOWN_GRACE", grace)];
    let mut referees = Vec::new();
    for i in 1..=2 {
        referees.push(start_referee(&logs, &format!("referee-{i}"), &manager.url, 2, &grace).await);
    }
    let ids = referee_ids(&db.pool, &referees).await;
    let players = start_players(&logs, "players", &manager.url, &spec, spec.players).await;
    Sigterm {
        spec,
        db,
        logs,
        manager,
        referees,
        ids,
        players,
    }
}

impl Sigterm {
    /// Waits until a match is finished (mid-league) and a referee waits for the late bot's move, asked
    /// less than 300 ms ago — so at least 500 ms of that match remain; returns the referee's index and
    /// the match id.
    async fn referee_mid_match(&self) -> (usize, String) {
        let late = observe("the bots register", OBSERVE_DEADLINE, async || {
            bot(&self.db.pool, "late:800").await
        })
        .await;
        observe(
            "a finished match, and a referee collecting the late bot's move",
            OBSERVE_DEADLINE,
            async || {
                let (finished,): (i64,) = sqlx::query_as(
                    "select count(*) from matches where league_id = $1 and status = 'finished'",
                )
                .bind(&self.spec.league_id)
                .fetch_one(&self.db.pool)
                .await
                .ok()?;
                if finished == 0 {
                    return None;
                }
                for (index, referee) in self.referees.iter().enumerate() {
                    let running = running_on(referee).await;
                    if let Some(found) = running
                        .iter()
                        .find(|m| collecting_recently(m, &late, Duration::from_millis(300)))
                    {
                        return Some((index, found.r#match.as_ref()?.match_id.clone()));
                    }
                }
                None
            },
        )
        .await
    }

    /// `(status, referee, lease expiry in Unix ms)` of a match.
    async fn lease_of(&self, match_id: &str) -> (String, Option<String>, Option<i64>) {
        sqlx::query_as(
            "select status, referee_id, floor(extract(epoch from lease_expires_at) * 1000)::bigint
             from matches where league_id = $1 and match_id = $2",
        )
        .bind(&self.spec.league_id)
        .bind(match_id)
        .fetch_one(&self.db.pool)
        .await
        .expect("the match row")
    }

    /// Matches leased to `referee_id` right now.
    async fn leased_to(&self, referee_id: &str) -> Vec<String> {
        let rows: Vec<(String,)> = sqlx::query_as(
            "select match_id from matches where league_id = $1 and status = 'running' and referee_id = $2",
        )
        .bind(&self.spec.league_id)
        .bind(referee_id)
        .fetch_all(&self.db.pool)
        .await
        .expect("leased matches");
        rows.into_iter().map(|(id,)| id).collect()
    }

    /// Plays the league to its end, checks the invariants, stops the other services; returns the facts
    /// and the logs (removed by the test once its own checks passed).
    async fn finish(self, stopped: usize) -> (crate::invariants::Facts, Logs) {
        wait_for_completion(&self.db.pool, &self.spec.league_id, &self.logs).await;
        let table = standings(&self.manager.url, &self.spec.league_id).await;
        let facts = check_invariants(&self.db.pool, &self.spec, &table).await;
        let mut rest: Vec<Service> = self
            .referees
            .into_iter()
            .enumerate()
            .filter(|(index, _)| *index != stopped)
            .map(|(_, referee)| referee)
            .collect();
        rest.push(self.players);
        rest.push(self.manager);
        stop_all(&mut rest).await;
        self.db.drop().await;
        (facts, self.logs)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_referee_stopped_mid_match_finishes_and_reports_it_within_its_grace() {
    let _serial = serial().await;
    let clock = Instant::now();
    let mut league = league("referee_sigterm_finish", "20s").await;
    let (index, match_id) = league.referee_mid_match().await;
    let referee_id = league.ids[index].clone();

    let asked = Instant::now();
    let exit = league.referees[index]
        .terminate(EXIT_WITHIN)
        .await
        .expect("the referee exits on its own");
    let took = asked.elapsed();
    assert!(exit.success(), "{referee_id} exited with {exit}");
    assert_eq!(
        league.leased_to(&referee_id).await,
        Vec::<String>::new(),
        "nothing stays leased to {referee_id}"
    );
    let (status, holder, _) = league.lease_of(&match_id).await;
    assert_eq!(
        (status.as_str(), holder.as_deref()),
        ("finished", Some(referee_id.as_str())),
        "{referee_id} finished {match_id} itself before it exited"
    );

    let (facts, logs) = league.finish(index).await;
    let m = facts.match_row(&match_id);
    assert_eq!(m.claims, 1, "{match_id} was played once");
    println!(
        "referee_sigterm (finish): {referee_id} got SIGTERM mid-{match_id}, finished and reported it, \
         exited after {:.0} ms; claims per match {:?}; {:.1} s",
        took.as_secs_f64() * 1000.0,
        claims_histogram(&facts),
        clock.elapsed().as_secs_f64()
    );
    logs.remove();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_referee_whose_grace_runs_out_releases_its_match_to_another_at_once() {
    let _serial = serial().await;
    let clock = Instant::now();
    // 100 ms of grace against at least 500 ms left of the match: it cannot finish.
    let mut league = league("referee_sigterm_release", "100ms").await;
    let (index, match_id) = league.referee_mid_match().await;
    let referee_id = league.ids[index].clone();
    let (_, _, lease_expiry) = league.lease_of(&match_id).await;
    let lease_expiry = lease_expiry.expect("a running match has a lease");

    let exit = league.referees[index]
        .terminate(EXIT_WITHIN)
        .await
        .expect("the referee exits on its own");
    assert!(exit.success(), "{referee_id} exited with {exit}");
    assert_eq!(
        league.leased_to(&referee_id).await,
        Vec::<String>::new(),
        "nothing stays leased to {referee_id}"
    );
    // Ready, or already taken (even finished) by the other referee: given back either way.
    let (status, holder, _) = league.lease_of(&match_id).await;
    assert_ne!(
        holder.as_deref(),
        Some(referee_id.as_str()),
        "{match_id} was given back by {referee_id}: {status}"
    );

    let (facts, logs) = league.finish(index).await;
    let m = facts.match_row(&match_id);
    // Claimed, released, claimed again — and possibly once more in between: a claim the stopping
    // referee still had waiting may be handed the released match, which it gives straight back.
    assert!(
        (2..=3).contains(&m.claims),
        "{match_id}: claimed, released, claimed again: {} claims (logs in {})",
        m.claims,
        logs.dir.display()
    );
    assert_ne!(m.referee_id.as_deref(), Some(referee_id.as_str()));
    // The recorded run started long before the released lease would have expired (30 s).
    let transcript = m.transcript();
    let Some(transcript_entry::Entry::StateTransition(_)) =
        transcript.entries.first().and_then(|entry| entry.entry.as_ref())
    else {
        panic!("{match_id}: the transcript opens with a state transition")
    };
    let replayed_at =
        crate::invariants::unix_millis(transcript.entries[0].at.as_ref().expect("timestamped transcript"));
    assert!(
        replayed_at < lease_expiry,
        "{match_id} was replayed at {replayed_at}, not before its old lease's expiry {lease_expiry}"
    );
    println!(
        "referee_sigterm (release): {referee_id} got SIGTERM mid-{match_id} with 100 ms of grace, \
         released it; {} replayed it {:.1} s before the old lease would have expired; claims per \
         match {:?}; {:.1} s",
        m.referee_id.as_deref().unwrap_or("?"),
        (lease_expiry - replayed_at) as f64 / 1000.0,
        claims_histogram(&facts),
        clock.elapsed().as_secs_f64()
    );
    logs.remove();
}
