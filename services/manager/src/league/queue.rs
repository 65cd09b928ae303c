//! The match queue: referees claim ready matches under a lease (`FOR UPDATE SKIP LOCKED`, so concurrent
//! referees never get the same match and never wait on each other), renew leases while they run, and a
//! match whose lease expired is claimable again. No transaction outlives a statement here.

use std::time::Duration;

use league_domain::{LeagueId, RefereeId};
use league_proto::v2::{
    AssignedPlayer, LeaseRenewal, MatchAssignment, MatchStatus, MatchTiming, PlayerRecord, ScheduledMatch,
};
use sqlx::{PgConnection, PgPool};
use tokio::time::Instant;

use crate::error::ManagerResult;
use crate::league::events::Queued;
use crate::league::lease::Lease;
use crate::league::waiting_claims::WaitingClaim;
use crate::wakeups::{EVENTS_PENDING_CHANNEL, MATCHES_READY_CHANNEL, Wakeups};

/// The shortest pause between two looks of a waiting claim that no wake-up ended. A waiting claim looks
/// again on a wake-up (matches released, a round completed), and when the earliest running lease
/// expires (expired leases make work without a wake-up) — not on a timer: an idle league's waiting
/// claims cost one query each per claim wait, however many referees wait.
const RECHECK: Duration = Duration::from_millis(250);

/// A leased match with its league's timings and, for each seat, where to reach the player and its
/// record so far (from the totals every result adds to): a claim's, or a match a round's release handed
/// to a waiting claim.
struct ClaimedRow {
    /// The referee holding the lease.
    referee_id: String,
    /// The waiting claim a release handed it to: its place (from 1) in the claims given; 0 for a match
    /// a claim took itself.
    claim: i64,
    league_id: String,
    match_id: String,
    round_id: i32,
    lease_id: String,
    expires_ms: i64,
    game_type: String,
    join_timeout_ms: i64,
    move_timeout_ms: i64,
    game_over_timeout_ms: i64,
    max_attempts: i32,
    retry_delay_ms: i64,
    lease_duration_ms: i64,
    a_id: String,
    a_name: String,
    a_endpoint: String,
    a_wins: i32,
    a_draws: i32,
    a_losses: i32,
    b_id: String,
    b_name: String,
    b_endpoint: String,
    b_wins: i32,
    b_draws: i32,
    b_losses: i32,
}

/// A checked `sqlx::query_as!` of [`ClaimedRow`]s, whose statement is `$head` (up to and with the
/// select list's first columns), then who sits in each leased match `c` — each player's name, where to
/// reach it and its record so far — then `$from` (the from clause, naming the leased matches `c`), the
/// joins those columns read, and `$tail`; with `$argument`s. The claim and the release read the seats
/// alike: written once here.
macro_rules! query_seated {
    ($head:literal, $from:literal, $tail:literal $(, $argument:expr)* $(,)?) => {
        sqlx::query_as!(
            ClaimedRow,
            $head
                + r#", a.agent_id as "a_id!", a.display_name as "a_name!", a.service_endpoint as "a_endpoint!",
                    coalesce(sa.wins, 0) as "a_wins!", coalesce(sa.draws, 0) as "a_draws!",
                    coalesce(sa.losses, 0) as "a_losses!",
                    b.agent_id as "b_id!", b.display_name as "b_name!", b.service_endpoint as "b_endpoint!",
                    coalesce(sb.wins, 0) as "b_wins!", coalesce(sb.draws, 0) as "b_draws!",
                    coalesce(sb.losses, 0) as "b_losses!" "#
                + $from
                + " join agents a on a.agent_id = c.player_a_id
                    join agents b on b.agent_id = c.player_b_id
                    left join standings sa on sa.league_id = c.league_id and sa.player_id = c.player_a_id
                    left join standings sb on sb.league_id = c.league_id and sb.player_id = c.player_b_id "
                + $tail
            $(, $argument)*
        )
    };
}

/// Claims up to `max` matches for `referee_id`, waiting up to `wait` for one to become ready. Never more
/// than the referee's free slots: `max_concurrent_matches` minus the live leases it holds. The cap is
/// counted, not locked: concurrent claims for one referee (one per gateway replica, for an external
/// referee) can together exceed it by a batch.
pub async fn claim(
    pool: &PgPool,
    wakeups: &Wakeups,
    referee_id: &RefereeId,
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
        let look_again = match next_lease_expiry(pool).await? {
            Some(expiry) => now + expiry.max(RECHECK),
            None => deadline,
        };
        // Waiting where the next release can hand matches to it (crate::league::waiting_claims). A
        // release that committed since the look above still wakes it through `notified`.
        let mut waiting = wakeups.waiting_claims.wait(referee_id, max);
        let answered = tokio::select! {
            biased;
            handed = &mut waiting.answer => Some(handed),
            _ = notified => None,
            _ = tokio::time::sleep_until(deadline.min(look_again)) => None,
        };
        let handed = match answered {
            Some(handed) => handed,
            // Taken by a release (most likely the one that woke it): the answer comes with its commit.
            None if waiting.is_taken() => (&mut waiting.answer).await,
            None => continue,
        };
        // A release that took this claim and failed (or handed it nothing) drops the answer: look again.
        if let Ok(assignments) = handed
            && !assignments.is_empty()
        {
            return Ok(assignments);
        }
    }
}

/// How long until the earliest running lease expires (the current rounds' matches: no index names the
/// lease, so that its renewals are HOT updates: ADR 0091); `None` when nothing runs.
async fn next_lease_expiry(pool: &PgPool) -> ManagerResult<Option<Duration>> {
    let millis = sqlx::query_scalar!(
        r#"select (extract(epoch from min(lease_expires_at) - now()) * 1000)::bigint as "millis?"
         from current_round_matches where status = 'running'"#
    )
    .fetch_one(pool)
    .await?;
    Ok(millis.map(|millis| Duration::from_millis(u64::try_from(millis).unwrap_or(0))))
}

/// Claims once, without waiting: in one statement, as a claim is on the critical path between two
/// rounds.
async fn claim_once(pool: &PgPool, referee_id: &RefereeId, max: u32) -> ManagerResult<Vec<MatchAssignment>> {
    crate::metrics::CLAIM_LOOKS.inc();
    let rows = query_seated!(
        r#"with free as (
             select greatest(0, coalesce(a.max_concurrent_matches, $2::bigint) - (
                 select count(*) from current_round_matches r
                 where r.referee_id = $1 and r.status = 'running' and r.lease_expires_at >= now()
             )) as slots
             from agents a where a.agent_id = $1
         ), candidates as (
             -- A running league's current round holds its only claimable matches: the scheduled ones
             -- (ready: migrations' match_status) and those whose lease expired. Reading just that
             -- round (matches_by_round) keeps a claim O(the round's matches), not O(the league's).
             select m.league_id, m.match_id
             from leagues l
             join matches m on m.league_id = l.league_id and m.round_id = l.current_round
             where l.status = 'running'
               and (m.status = 'scheduled' or (m.status = 'running' and m.lease_expires_at < now()))
               and l.game_type = any(select unnest(game_types) from agents where agent_id = $1)
               -- A match whose report by this referee was refused, or that it gave back untouched, goes
               -- to another live referee of the game when there is one (release.rs).
               and (m.refused_referee_id is distinct from $1 or not exists (
                   select 1 from agents o
                   where o.kind = 'referee' and o.agent_id <> $1 and o.revoked_at is null
                     and o.last_seen_at > now() - $3::text::interval and l.game_type = any(o.game_types)))
             -- Each league's next match first, the lowest round among those: a round just released
             -- starts beside the rounds of leagues behind it rather than after them, and a league
             -- that falls behind is still served first at every match number (match-queue.md).
             order by m.match_number, m.round_id
             limit least($2::bigint, (select slots from free))
             for update of m skip locked
         ), claimed as (
             update matches m
             set status = 'running', referee_id = $1, lease_id = gen_random_uuid(), claims = m.claims + 1,
                 claimed_at = clock_timestamp(),
                 lease_expires_at = now() + l.lease_duration_ms * interval '1 millisecond'
             from candidates c, leagues l
             where m.league_id = c.league_id and m.match_id = c.match_id and l.league_id = m.league_id
             returning m.league_id, m.match_id, m.round_id, m.match_number, m.player_a_id, m.player_b_id,
                 m.referee_id, m.lease_id::text, (extract(epoch from m.lease_expires_at) * 1000)::bigint as expires_ms,
                 l.game_type, l.join_timeout_ms, l.move_timeout_ms, l.game_over_timeout_ms,
                 l.max_attempts, l.retry_delay_ms, l.lease_duration_ms
         )
         select c.referee_id as "referee_id!", 0::bigint as "claim!", c.league_id as "league_id!",
                c.match_id as "match_id!", c.round_id as "round_id!", c.lease_id as "lease_id!",
                c.expires_ms as "expires_ms!", c.game_type as "game_type!",
                c.join_timeout_ms as "join_timeout_ms!", c.move_timeout_ms as "move_timeout_ms!",
                c.game_over_timeout_ms as "game_over_timeout_ms!", c.max_attempts as "max_attempts!",
                c.retry_delay_ms as "retry_delay_ms!", c.lease_duration_ms as "lease_duration_ms!""#,
        " from claimed c",
        " order by c.round_id, c.match_number",
        referee_id.as_str(),
        i64::from(max),
        crate::league::registration::LIVE_WITHIN,
    )
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().map(assignment).collect())
}

/// The most matches a round's release hands to one waiting claim. The claim's answer waits for the
/// whole release statement, so a release that leased a referee's every slot (64 in the bench) started
/// its first match later than one that hands a few: the referee claims the rest as soon as it has
/// started these (its worker claims again while it has free slots), beside the matches already running.
/// Measured (docs/benchmarks.md): 64 a claim made the 500-player gap worse; 16 brought the 50- and
/// 200-player gaps down by 1.1–1.5 ms.
const HANDED_PER_CLAIM: i32 = 16;

/// Releases `round_id` of `league_id` inside the completing transaction `tx` (the round's row and the
/// league's current round, in one statement), and wakes every manager's waiting claims once `tx`
/// commits. Its first matches go straight to the waiting `claims` of this manager, in the order given,
/// each up to its `max` ([`HANDED_PER_CLAIM`] at most) and its referee's free slots (counted as a claim
/// counts them), and only if the referee runs the league's game. The rest stay as they are: scheduled,
/// which in the current round is ready for any claim, so only the handed rows are written (ADR 0028). A
/// handed match is leased exactly as a claimed one: one update of its row instead of two, and no claim
/// statement or commit between the release and the round's first matches. `events` (the completed
/// round's and the new round's announcement) are queued by the same statement. Returns the matches
/// handed to each claim, in the order of the claims given.
pub async fn release_round(
    tx: &mut PgConnection,
    league_id: &LeagueId,
    round_id: u32,
    claims: &[WaitingClaim],
    events: &Queued,
) -> ManagerResult<Vec<Vec<MatchAssignment>>> {
    let referees: Vec<&str> = claims.iter().map(|claim| claim.referee_id.as_str()).collect();
    let maxima: Vec<i32> = claims
        .iter()
        .map(|claim| i32::try_from(claim.max).unwrap_or(i32::MAX))
        .collect();
    let (kinds, rounds, payloads) = events.columns();
    // One statement, which returns only the handed matches. Its `queued` part queues `events`
    // ($7-$10), as events::enqueue does (keep the two alike); the NOTIFY that wakes the claims of every
    // manager is in the league's update (`returning`), which runs whatever the statement returns.
    let rows = query_seated!(
        r#"with queued as (
             insert into league_events (league_id, kind, round_id, payload)
             select $1, e.kind, e.round_id, e.payload
             from unnest($7::text[], $8::int[], $9::bytea[]) with ordinality as e(kind, round_id, payload, n)
             order by e.n
             returning pg_notify($10, '')
         ), released as (
             update rounds set status = 'released', released_at = clock_timestamp()
             where league_id = $1 and round_id = $2
         ), current as (
             update leagues set current_round = $2 where league_id = $1
             returning pg_notify($5, '')
         ), waiting as (
             select w.referee_id, w.n, least(w.max, $6::int, greatest(0, coalesce(a.max_concurrent_matches, w.max) - (
                 select count(*) from current_round_matches r
                 where r.referee_id = w.referee_id and r.status = 'running' and r.lease_expires_at >= now()
             ))) as slots
             from unnest($3::text[], $4::int[]) with ordinality as w(referee_id, max, n)
             join agents a on a.agent_id = w.referee_id
             -- Only a running league hands out matches: a paused one's wait for its resumption.
             where (select game_type from leagues where league_id = $1 and status = 'running')
                   = any(a.game_types)
         ), seats as (
             select w.referee_id, w.n, row_number() over (order by w.n, g.seat) as seat
             from waiting w cross join lateral generate_series(1, w.slots) as g(seat)
         ), unplayed as (
             -- Its matches still to play: a withdrawal may have finished some as forfeits already.
             -- Try-locked (`skip locked`): this transaction holds the league's row, which comes after
             -- matches in the lock order (docs/subsystems/lock-order.md), so it must not wait for a
             -- match; one locked elsewhere (an operator's cancel or withdrawal) is not handed, and
             -- stays ready for a claim.
             select match_id, match_number
             from matches where league_id = $1 and round_id = $2 and status = 'scheduled'
             order by match_number
             for update skip locked
         ), round as (
             select match_id, row_number() over (order by match_number) as seat from unplayed
         ), assigned as (
             select r.match_id, s.referee_id, s.n from round r join seats s on s.seat = r.seat
         ), handed as (
             -- The rows to write are named by round and key (`= any(array(...))`), so the update
             -- reads only them whatever the planner thinks of the table. With no statistics yet (a
             -- league's schedule is written just before its first release) it took the league's
             -- every match for one row and joined the seats to each of them: 4-5 ms at 20 players.
             update matches m
             set status = 'running', referee_id = a.referee_id, lease_id = gen_random_uuid(),
                 claims = m.claims + 1, claimed_at = clock_timestamp(),
                 lease_expires_at = now() + l.lease_duration_ms * interval '1 millisecond'
             from assigned a, leagues l
             where m.league_id = $1 and m.round_id = $2
               and m.match_id = any(array(select match_id from assigned))
               and m.match_id = a.match_id and l.league_id = $1
             returning m.league_id, m.match_id, m.round_id, m.match_number, m.player_a_id, m.player_b_id,
                 m.referee_id, m.lease_id, m.lease_expires_at, a.n as claim
         )
         select c.referee_id as "referee_id!", c.claim as "claim!", c.league_id as "league_id!",
                c.match_id as "match_id!", c.round_id as "round_id!", c.lease_id::text as "lease_id!",
                (extract(epoch from c.lease_expires_at) * 1000)::bigint as "expires_ms!",
                l.game_type, l.join_timeout_ms, l.move_timeout_ms, l.game_over_timeout_ms, l.max_attempts,
                l.retry_delay_ms, l.lease_duration_ms"#,
        " from handed c join leagues l on l.league_id = c.league_id",
        " order by c.match_number",
        league_id.as_str(),
        round_id as i32,
        &referees as &[&str],
        &maxima,
        MATCHES_READY_CHANNEL,
        HANDED_PER_CLAIM,
        kinds as &[&str],
        rounds,
        payloads,
        EVENTS_PENDING_CHANNEL,
    )
    .fetch_all(&mut *tx)
    .await?;
    by_claim(claims.len(), rows)
}

/// The handed matches, by claim (`claim` counts from 1 in the order the claims were given).
fn by_claim(claims: usize, rows: Vec<ClaimedRow>) -> ManagerResult<Vec<Vec<MatchAssignment>>> {
    let mut handed: Vec<Vec<MatchAssignment>> = (0..claims).map(|_| Vec::new()).collect();
    for row in rows {
        let claim = row.claim;
        usize::try_from(claim - 1)
            .ok()
            .and_then(|index| handed.get_mut(index))
            .ok_or_else(|| anyhow::anyhow!("a released match was handed to claim {claim}, not one given"))?
            .push(assignment(row));
    }
    Ok(handed)
}

fn assignment(row: ClaimedRow) -> MatchAssignment {
    let referee_id = row.referee_id;
    tracing::debug!(league_id = %row.league_id, match_id = %row.match_id, %referee_id, "match claimed");
    let count = |value: i32| u32::try_from(value).unwrap_or(0);
    let player = |player_id: String, display_name, service_endpoint, (wins, draws, losses)| AssignedPlayer {
        player_id,
        display_name,
        service_endpoint,
        record: Some(PlayerRecord {
            wins: count(wins),
            losses: count(losses),
            draws: count(draws),
        }),
    };
    let timing = TimingRow {
        join_timeout_ms: row.join_timeout_ms,
        move_timeout_ms: row.move_timeout_ms,
        game_over_timeout_ms: row.game_over_timeout_ms,
        max_attempts: row.max_attempts,
        retry_delay_ms: row.retry_delay_ms,
        lease_duration_ms: row.lease_duration_ms,
    };
    MatchAssignment {
        r#match: Some(ScheduledMatch {
            league_id: row.league_id,
            round_id: row.round_id as u32,
            match_id: row.match_id,
            game_type: row.game_type,
            player_a_id: row.a_id.clone(),
            player_b_id: row.b_id.clone(),
            status: MatchStatus::Running as i32,
            referee_id,
            ..ScheduledMatch::default()
        }),
        player_a: Some(player(
            row.a_id,
            row.a_name,
            row.a_endpoint,
            (row.a_wins, row.a_draws, row.a_losses),
        )),
        player_b: Some(player(
            row.b_id,
            row.b_name,
            row.b_endpoint,
            (row.b_wins, row.b_draws, row.b_losses),
        )),
        lease_id: row.lease_id,
        lease_expires_at: Some(timestamp_from_millis(row.expires_ms)),
        timing: Some(match_timing(timing)),
    }
}

/// Extends every lease in `leases` that `referee_id` still holds; the others come back `renewed: false`.
/// With `players_called` the referee has called a player under each lease: it is noted (the release of
/// an untouched match leaves these alone), and an empty `lease_id` stands for the lease the referee
/// holds now (the gateway's replica that takes the call may not know it).
pub async fn renew(
    pool: &PgPool,
    referee_id: &RefereeId,
    leases: &[Lease],
    players_called: bool,
) -> ManagerResult<Vec<LeaseRenewal>> {
    let (leagues, matches, ids) = Lease::columns(leases);
    // The matches locked in key order first, whatever order the request names them in: a batch of
    // reports locks the same referee's matches in that order, and a renewal that took them in the
    // request's order could hold one the batch waits for while it waits for another
    // (docs/subsystems/lock-order.md).
    let renewed: Vec<(String, String, i64)> = sqlx::query!(
        r#"with held as (
             select m.league_id, m.match_id
             from matches m
             join unnest($2::text[], $3::text[], $4::text[]) as r(league_id, match_id, lease_id)
               on m.league_id = r.league_id and m.match_id = r.match_id
             where (m.lease_id::text = r.lease_id or ($5 and r.lease_id = ''))
               and m.referee_id = $1 and m.status = 'running'
             order by m.league_id, m.match_id
             for update of m
         )
         update matches m set lease_expires_at = now() + l.lease_duration_ms * interval '1 millisecond',
             called_lease_id = case when $5 then m.lease_id else m.called_lease_id end
         from held h, leagues l
         where m.league_id = h.league_id and m.match_id = h.match_id and l.league_id = m.league_id
         returning m.league_id, m.match_id,
             (extract(epoch from m.lease_expires_at) * 1000)::bigint as "expires_ms!""#,
        referee_id.as_str(),
        &leagues as &[&str],
        &matches as &[String],
        &ids as &[&str],
        players_called,
    )
    .fetch_all(pool)
    .await?
    .into_iter()
    .map(|renewed| (renewed.league_id, renewed.match_id, renewed.expires_ms))
    .collect();
    Ok(leases
        .iter()
        .map(|lease| {
            let found = renewed.iter().find(|(league, id, _)| lease.is_of(league, id));
            LeaseRenewal {
                match_id: lease.match_id.to_string(),
                league_id: lease.league_id.to_string(),
                renewed: found.is_some(),
                lease_expires_at: found.map(|(_, _, millis)| timestamp_from_millis(*millis)),
            }
        })
        .collect())
}

/// A league's timings as stored (the columns of `leagues` of the same names).
#[derive(Debug)]
pub struct TimingRow {
    pub join_timeout_ms: i64,
    pub move_timeout_ms: i64,
    pub game_over_timeout_ms: i64,
    pub max_attempts: i32,
    pub retry_delay_ms: i64,
    pub lease_duration_ms: i64,
}

/// A league's timings as the contracts carry them.
pub fn match_timing(timing: TimingRow) -> MatchTiming {
    MatchTiming {
        join_timeout: Some(duration_from_millis(timing.join_timeout_ms)),
        move_timeout: Some(duration_from_millis(timing.move_timeout_ms)),
        game_over_timeout: Some(duration_from_millis(timing.game_over_timeout_ms)),
        max_attempts: timing.max_attempts as u32,
        retry_delay: Some(duration_from_millis(timing.retry_delay_ms)),
        lease_duration: Some(duration_from_millis(timing.lease_duration_ms)),
    }
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
