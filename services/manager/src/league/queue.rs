//! The match queue: referees claim ready matches under a lease (`FOR UPDATE SKIP LOCKED`, so concurrent
//! referees never get the same match and never wait on each other), renew leases while they run, and a
//! match whose lease expired is claimable again. No transaction outlives a statement here.

use std::time::Duration;

use league_proto::v2::{
    AssignedPlayer, LeaseRef, LeaseRenewal, MatchAssignment, MatchStatus, MatchTiming, PlayerRecord,
    ScheduledMatch,
};
use sqlx::PgPool;
use tokio::time::Instant;

use crate::error::ManagerResult;
use crate::wakeups::Wakeups;

/// How often a waiting claim looks again without a wake-up (expired leases make work without one).
const RECHECK: Duration = Duration::from_millis(250);

type ClaimedRow = (
    String,
    String,
    i32,
    String,
    String,
    String,
    i64,
    String,
    i64,
    i64,
    i64,
    i32,
    i64,
    i64,
);

/// Claims up to `max` matches for `referee_id`, waiting up to `wait` for one to become ready. Never more
/// than the referee's free slots: `max_concurrent_matches` minus the live leases it holds. The cap is
/// counted, not locked: concurrent claims for one referee (one per gateway replica, for an external
/// referee) can together exceed it by a batch.
pub async fn claim(
    pool: &PgPool,
    wakeups: &Wakeups,
    referee_id: &str,
    max: u32,
    wait: Duration,
) -> ManagerResult<Vec<MatchAssignment>> {
    let deadline = Instant::now() + wait;
    loop {
        // Registered before looking, so a release between the look and the wait is not missed.
        let notified = wakeups.matches_ready.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        let claimed = claim_once(pool, referee_id, max).await?;
        let now = Instant::now();
        if !claimed.is_empty() || now >= deadline {
            return Ok(claimed);
        }
        tokio::select! {
            _ = notified => {}
            _ = tokio::time::sleep_until(deadline.min(now + RECHECK)) => {}
        }
    }
}

async fn claim_once(pool: &PgPool, referee_id: &str, max: u32) -> ManagerResult<Vec<MatchAssignment>> {
    let rows: Vec<ClaimedRow> = sqlx::query_as(
        "with free as (
             select greatest(0, coalesce(a.max_concurrent_matches, $2) - (
                 select count(*) from matches r
                 where r.referee_id = $1 and r.status = 'running' and r.lease_expires_at >= now()
             )) as slots
             from agents a where a.agent_id = $1
         ), candidates as (
             select m.league_id, m.match_id
             from matches m join leagues l on l.league_id = m.league_id
             where (m.status = 'ready' or (m.status = 'running' and m.lease_expires_at < now()))
               and l.game_type = any(select unnest(game_types) from agents where agent_id = $1)
             order by m.round_id, m.match_number
             limit least($2, (select slots from free))
             for update of m skip locked
         )
         update matches m
         set status = 'running', referee_id = $1, lease_id = gen_random_uuid(), claims = m.claims + 1,
             lease_expires_at = now() + l.lease_duration_ms * interval '1 millisecond'
         from candidates c, leagues l
         where m.league_id = c.league_id and m.match_id = c.match_id and l.league_id = m.league_id
         returning m.league_id, m.match_id, m.round_id, m.player_a_id, m.player_b_id, m.lease_id::text,
             (extract(epoch from m.lease_expires_at) * 1000)::bigint, l.game_type,
             l.join_timeout_ms, l.move_timeout_ms, l.game_over_timeout_ms, l.max_attempts,
             l.retry_delay_ms, l.lease_duration_ms",
    )
    .bind(referee_id)
    .bind(i64::from(max))
    .fetch_all(pool)
    .await?;
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let mut players = Vec::with_capacity(rows.len() * 2);
    for row in &rows {
        players.push(row.3.clone());
        players.push(row.4.clone());
    }
    // One query for every player of the batch: a claim is on the critical path between two rounds.
    let assigned = assigned_players(pool, &players).await?;
    let find = |id: &str| assigned.iter().find(|player| player.player_id == id).cloned();
    let mut assignments = Vec::with_capacity(rows.len());
    for row in rows {
        let (
            league_id,
            match_id,
            round_id,
            a,
            b,
            lease_id,
            expires_ms,
            game_type,
            join,
            moves,
            over,
            attempts,
            retry,
            lease,
        ) = row;
        tracing::debug!(%league_id, %match_id, %referee_id, "match claimed");
        assignments.push(MatchAssignment {
            player_a: find(&a),
            player_b: find(&b),
            r#match: Some(ScheduledMatch {
                league_id,
                round_id: round_id as u32,
                match_id,
                game_type,
                player_a_id: a,
                player_b_id: b,
                status: MatchStatus::Running as i32,
                referee_id: referee_id.to_owned(),
                ..ScheduledMatch::default()
            }),
            lease_id,
            lease_expires_at: Some(timestamp_from_millis(expires_ms)),
            timing: Some(MatchTiming {
                join_timeout: Some(duration_from_millis(join)),
                move_timeout: Some(duration_from_millis(moves)),
                game_over_timeout: Some(duration_from_millis(over)),
                max_attempts: attempts as u32,
                retry_delay: Some(duration_from_millis(retry)),
                lease_duration: Some(duration_from_millis(lease)),
            }),
        });
    }
    Ok(assignments)
}

/// Players with where to reach them and their record so far in their league (a player is in one league).
async fn assigned_players(pool: &PgPool, players: &[String]) -> ManagerResult<Vec<AssignedPlayer>> {
    let rows: Vec<(String, String, String, i64, i64, i64)> = sqlx::query_as(
        "with played as (
             select player_a_id as player_id, winner_player_id, result_status from matches
             where status = 'finished' and player_a_id = any($1)
             union all
             select player_b_id, winner_player_id, result_status from matches
             where status = 'finished' and player_b_id = any($1)
         )
         select a.agent_id, a.display_name, a.service_endpoint,
                count(p.player_id) filter (where p.winner_player_id = a.agent_id),
                count(p.player_id) filter (where p.result_status = 'draw'),
                count(p.player_id) filter (where p.result_status <> 'draw'
                                             and p.winner_player_id is distinct from a.agent_id)
         from agents a left join played p on p.player_id = a.agent_id
         where a.agent_id = any($1)
         group by a.agent_id, a.display_name, a.service_endpoint",
    )
    .bind(players)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(
            |(player_id, display_name, service_endpoint, wins, draws, losses)| AssignedPlayer {
                player_id,
                display_name,
                service_endpoint,
                record: Some(PlayerRecord {
                    wins: wins as u32,
                    losses: losses as u32,
                    draws: draws as u32,
                }),
            },
        )
        .collect())
}

/// Extends every lease in `leases` that `referee_id` still holds; the others come back `renewed: false`.
pub async fn renew(pool: &PgPool, referee_id: &str, leases: &[LeaseRef]) -> ManagerResult<Vec<LeaseRenewal>> {
    let leagues: Vec<&str> = leases.iter().map(|lease| lease.league_id.as_str()).collect();
    let matches: Vec<&str> = leases.iter().map(|lease| lease.match_id.as_str()).collect();
    let ids: Vec<&str> = leases.iter().map(|lease| lease.lease_id.as_str()).collect();
    let renewed: Vec<(String, String, i64)> = sqlx::query_as(
        "update matches m set lease_expires_at = now() + l.lease_duration_ms * interval '1 millisecond'
         from leagues l, unnest($2::text[], $3::text[], $4::text[]) as r(league_id, match_id, lease_id)
         where m.league_id = r.league_id and m.match_id = r.match_id and m.lease_id::text = r.lease_id
           and m.referee_id = $1 and m.status = 'running' and l.league_id = m.league_id
         returning m.league_id, m.match_id, (extract(epoch from m.lease_expires_at) * 1000)::bigint",
    )
    .bind(referee_id)
    .bind(&leagues)
    .bind(&matches)
    .bind(&ids)
    .fetch_all(pool)
    .await?;
    Ok(leases
        .iter()
        .map(|lease| {
            let found = renewed
                .iter()
                .find(|(league, id, _)| *league == lease.league_id && *id == lease.match_id);
            LeaseRenewal {
                match_id: lease.match_id.clone(),
                league_id: lease.league_id.clone(),
                renewed: found.is_some(),
                lease_expires_at: found.map(|(_, _, millis)| timestamp_from_millis(*millis)),
            }
        })
        .collect())
}

pub fn duration_from_millis(millis: i64) -> prost_types::Duration {
    prost_types::Duration {
        seconds: millis.div_euclid(1000),
        nanos: (millis.rem_euclid(1000) * 1_000_000) as i32,
    }
}

pub fn timestamp_from_millis(millis: i64) -> prost_types::Timestamp {
    prost_types::Timestamp {
        seconds: millis.div_euclid(1000),
        nanos: (millis.rem_euclid(1000) * 1_000_000) as i32,
    }
}
