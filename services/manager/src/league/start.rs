//! Creating a league and starting it: the round-robin schedule is computed from the registered players
//! (in registration order), persisted whole, and round 1 is released to the referees.

use crate::schedule::{Schedule, round_robin_cycles};
use anyhow::Context;
use league_domain::{GameType, LeagueId, Timing};
use league_proto::ErrorCode;
use sqlx::{PgConnection, PgPool};

use crate::error::{ManagerResult, reject};
use crate::league::events;
use crate::wakeups::Wakeups;

/// A league to create.
#[derive(Debug, Clone)]
pub struct NewLeague {
    pub league_id: LeagueId,
    pub game_type: GameType,
    pub timing: Timing,
    /// 0: started by command; otherwise at least 2.
    pub auto_start_players: u32,
    /// Times the round robin is played (at least 1).
    pub cycles: u32,
    /// The league's own limit on players; none: the deployment's.
    pub max_players: Option<u32>,
}

/// What starting a league scheduled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Started {
    pub total_rounds: u32,
    pub total_matches: u32,
}

/// Creates `league`; refuses an id already in use.
pub async fn create(pool: &PgPool, league: &NewLeague) -> ManagerResult<()> {
    if !insert(pool, league).await? {
        return Err(reject(
            ErrorCode::InvalidLeagueState,
            format!("league {} already exists", league.league_id),
        ));
    }
    Ok(())
}

/// Creates `league` unless one with its id exists (start-up configuration; restarts keep the league).
pub async fn ensure(pool: &PgPool, league: &NewLeague) -> ManagerResult<()> {
    insert(pool, league).await.map(|_| ())
}

async fn insert(pool: &PgPool, league: &NewLeague) -> ManagerResult<bool> {
    if league.cycles == 0 {
        return Err(reject(
            ErrorCode::InvalidMessageFormat,
            "a league plays its round robin at least once",
        ));
    }
    if league.auto_start_players == 1 {
        return Err(reject(
            ErrorCode::InvalidLeagueState,
            "a league needs at least 2 players",
        ));
    }
    crate::config::validate_timing(&league.timing)
        .map_err(|error| reject(ErrorCode::InvalidMessageFormat, error.to_string()))?;
    let millis = |d: std::time::Duration| i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
    let inserted = sqlx::query!(
        "insert into leagues (league_id, game_type, status, join_timeout_ms, move_timeout_ms,
             game_over_timeout_ms, max_attempts, retry_delay_ms, lease_duration_ms, auto_start_players, cycles,
             max_players)
         values ($1, $2, 'registering', $3, $4, $5, $6, $7, $8, $9, $10, $11)
         on conflict (league_id) do nothing",
        league.league_id.as_str(),
        league.game_type.as_str(),
        millis(league.timing.join_timeout),
        millis(league.timing.move_timeout),
        millis(league.timing.game_over_timeout),
        i32::try_from(league.timing.max_attempts).unwrap_or(i32::MAX),
        millis(league.timing.retry_delay),
        millis(league.timing.lease_duration),
        i32::try_from(league.auto_start_players).unwrap_or(i32::MAX),
        i32::try_from(league.cycles).unwrap_or(i32::MAX),
        league.max_players.map(|max| i32::try_from(max).unwrap_or(i32::MAX)),
    )
    .execute(pool)
    .await?;
    Ok(inserted.rows_affected() == 1)
}

/// Starts `league_id` (operator command).
pub async fn start(pool: &PgPool, league_id: &LeagueId) -> ManagerResult<Started> {
    // Lock order (docs/subsystems/lock-order.md): the league's row; the schedule's rows are new (nothing
    // waits on them).
    let mut tx = pool.begin().await?;
    let found = sqlx::query_scalar!(
        "select league_id from leagues where league_id = $1 for update",
        league_id.as_str()
    )
    .fetch_optional(&mut *tx)
    .await?;
    if found.is_none() {
        return Err(reject(
            ErrorCode::LeagueNotFound,
            format!("no league {league_id}"),
        ));
    }
    let started = start_locked(&mut tx, league_id).await?;
    tx.commit().await?;
    Ok(started)
}

/// Brings the planner's statistics up to date with the schedule the start's transaction `tx` has
/// written, so that they are committed with it.
///
/// A start multiplies `matches` (124,750 rows at 500 players) in one transaction. Until the table is
/// analyzed the planner knows only its size on disk, and the statements that find matches by key (the
/// result writer's, which plans each statement once: crate::db::connect_writer) may keep a plan made for
/// a table it took for a few hundred rows: at 100 players the writer read every match twice for each
/// batch of results. Autovacuum analyzes a grown table too, but only at its next round (a minute by
/// default), when a short league is over. Analyzed after the commit, the first claims ran before the
/// statistics were there and scanned every match (4,000–12,000 buffers a claim at 1,000 players);
/// analyzed inside the transaction (which counts its own new rows), they are there from the first claim.
/// An analysis also makes every connection plan its statements on these tables afresh.
///
/// Only the columns whose picture at the start holds for the whole league are analyzed: the keys and the
/// players. `status`, `referee_id` and the lease are left out: they change with every claim and result,
/// and a picture from the start would mislead every plan that filters on them. Sampled, so bounded
/// whatever the tables hold.
async fn analyze_schedule(tx: &mut PgConnection, league_id: &LeagueId) -> ManagerResult<()> {
    let began = std::time::Instant::now();
    sqlx::query!(
        "analyze matches (league_id, round_id, match_id, player_a_id, player_b_id),
                 rounds (league_id, round_id), standings (league_id, player_id)",
    )
    .execute(&mut *tx)
    .await
    .with_context(|| format!("analyzing the schedule of {league_id}"))?;
    tracing::info!(%league_id, elapsed_ms = began.elapsed().as_millis() as u64,
        "statistics brought up to date with the schedule");
    Ok(())
}

/// Starts a league whose row the caller has locked.
pub async fn start_locked(tx: &mut PgConnection, league_id: &LeagueId) -> ManagerResult<Started> {
    let league = sqlx::query!(
        "select status, cycles from leagues where league_id = $1",
        league_id.as_str()
    )
    .fetch_one(&mut *tx)
    .await?;
    let (status, cycles) = (league.status, league.cycles);
    if status != "registering" {
        return Err(reject(
            ErrorCode::InvalidLeagueState,
            format!("league {league_id} is already {status}"),
        ));
    }
    let players = sqlx::query_scalar!(
        "select lp.player_id from league_players lp join agents a on a.agent_id = lp.player_id
         where lp.league_id = $1 order by a.agent_number",
        league_id.as_str()
    )
    .fetch_all(&mut *tx)
    .await?;
    if players.len() < 2 {
        return Err(reject(
            ErrorCode::InvalidLeagueState,
            format!(
                "league {league_id} has {} registered players; at least 2 are needed",
                players.len()
            ),
        ));
    }
    // Scheduled by reference: a 500-player league has 124,750 pairings.
    let player_ids: Vec<&str> = players.iter().map(String::as_str).collect();
    let schedule = round_robin_cycles(&player_ids, u32::try_from(cycles).unwrap_or(1))
        .map_err(|error| anyhow::anyhow!("scheduling {league_id}: {error}"))?;

    write_schedule(tx, league_id, &schedule).await?;
    let started = Started {
        total_rounds: schedule.rounds.len() as u32,
        total_matches: schedule.total_matches() as u32,
    };
    sqlx::query!(
        "update leagues set status = 'running', started_at = now(), total_rounds = $2, current_round = 1
         where league_id = $1",
        league_id.as_str(),
        started.total_rounds as i32,
    )
    .execute(&mut *tx)
    .await?;
    // Every player's totals start at zero; each result adds to its two players' rows.
    sqlx::query!(
        "insert into standings (league_id, player_id)
         select league_id, player_id from league_players where league_id = $1
         on conflict do nothing",
        league_id.as_str()
    )
    .execute(&mut *tx)
    .await?;
    analyze_schedule(tx, league_id).await?;
    let announcement = events::round_announcement(tx, league_id, 1).await?;
    events::enqueue(tx, league_id, vec![(1, announcement)]).await?;
    Wakeups::matches_ready_on_commit(tx).await?;
    tracing::info!(%league_id, players = players.len(), rounds = started.total_rounds,
        matches = started.total_matches, "league started");
    Ok(started)
}

/// The schedule's rounds (the first released) and matches, written in a few statements.
async fn write_schedule(
    tx: &mut PgConnection,
    league_id: &LeagueId,
    schedule: &Schedule<&str>,
) -> ManagerResult<()> {
    let (mut round_ids, mut counts, mut byes, mut statuses) = (vec![], vec![], vec![], vec![]);
    for round in &schedule.rounds {
        round_ids.push(round.round_id as i32);
        counts.push(round.matches.len() as i32);
        byes.push(round.bye);
        statuses.push(if round.round_id == 1 {
            "released"
        } else {
            "scheduled"
        });
    }
    sqlx::query!(
        "insert into rounds (league_id, round_id, matches, bye_player_id, status, released_at)
         select $1, r.*, case when r.status = 'released' then clock_timestamp() end
         from unnest($2::int[], $3::int[], $4::text[], $5::text[]) as r(round_id, matches, bye, status)",
        league_id.as_str(),
        &round_ids,
        &counts,
        &byes as &[Option<&str>],
        &statuses as &[&str],
    )
    .execute(&mut *tx)
    .await?;
    // The matches go in by whole rounds, at least MATCHES_PER_INSERT to a statement.
    let mut matches = MatchColumns::default();
    for round in &schedule.rounds {
        for pairing in &round.matches {
            matches.match_ids.push(pairing.match_id.to_string());
            matches.rounds.push(round.round_id as i32);
            matches.numbers.push(pairing.match_id.number() as i32);
            matches.player_a.push(pairing.player_a);
            matches.player_b.push(pairing.player_b);
        }
        if matches.match_ids.len() >= MATCHES_PER_INSERT {
            matches.insert(tx, league_id).await?;
        }
    }
    matches.insert(tx, league_id).await?;
    Ok(())
}

/// The columns of the matches to insert, borrowed from the schedule.
#[derive(Default)]
struct MatchColumns<'a> {
    match_ids: Vec<String>,
    rounds: Vec<i32>,
    numbers: Vec<i32>,
    player_a: Vec<&'a str>,
    player_b: Vec<&'a str>,
}

/// Matches per insert statement (at least; whole rounds). One statement for a 500-player league's
/// 124,750 matches took the manager from 18 to 63 MB (the columns and their copies in the statement's
/// parameters), and the allocator kept that for the rest of the league.
const MATCHES_PER_INSERT: usize = 10_000;

impl MatchColumns<'_> {
    /// Inserts the matches gathered so far and empties the columns for the next ones.
    async fn insert(&mut self, tx: &mut PgConnection, league_id: &LeagueId) -> ManagerResult<()> {
        if self.match_ids.is_empty() {
            return Ok(());
        }
        sqlx::query!(
            "insert into matches (league_id, match_id, round_id, match_number, player_a_id, player_b_id, status)
             select $1, *, 'scheduled' from unnest($2::text[], $3::int[], $4::int[], $5::text[], $6::text[])",
            league_id.as_str(),
            &self.match_ids,
            &self.rounds,
            &self.numbers,
            &self.player_a as &[&str],
            &self.player_b as &[&str],
        )
        .execute(&mut *tx)
        .await?;
        self.match_ids.clear();
        self.rounds.clear();
        self.numbers.clear();
        self.player_a.clear();
        self.player_b.clear();
        Ok(())
    }
}
