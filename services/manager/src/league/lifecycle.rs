//! The operator's changes to a league that is not over: pause, resume and cancel
//! (docs/adr/0044-operator-actions.md). Each locks the league's row, checks its status and changes it in
//! one transaction, so a refused change changes nothing and two operators cannot interleave.
//!
//! Paused is a status of its own: a claim takes only a running league's matches, and a round's release
//! hands matches to waiting claims only in a running league (crate::league::queue), so a paused league
//! hands nothing out while everything else goes on: running matches finish and are recorded, and a
//! round whose last result arrives completes (its successor is announced, and handed out on resume).

use league_domain::{LeagueId, PlayerId};
use league_proto::ErrorCode;
use league_proto::v2::notify_league_event_request::Event;
use league_proto::v2::{CancelLeagueResponse, LeagueCompleted, PauseLeagueResponse};
use sqlx::{PgConnection, PgPool};

use crate::error::{ManagerResult, reject};
use crate::league::{events, table};
use crate::wakeups::Wakeups;

/// The league's status, its row locked until `tx` ends; E006 when there is no such league. `for no key
/// update`, the lock an update of the row takes: it keeps other changes of the row out but not the
/// key checks of rows that name the league (a round's events), which `for update` would make wait.
pub async fn lock_league(tx: &mut PgConnection, league_id: &LeagueId) -> ManagerResult<String> {
    let found = sqlx::query_scalar!(
        "select status from leagues where league_id = $1 for no key update",
        league_id.as_str()
    )
    .fetch_optional(&mut *tx)
    .await?;
    found.ok_or_else(|| reject(ErrorCode::LeagueNotFound, format!("no league {league_id}")))
}

/// Locks the unfinished matches of `league_id` (of `player_id` only, if given), in the order a batch of
/// reports locks matches, before the league's row is locked ([`lock_league`]): a report locks its
/// matches and then, completing a round, the league's row, so taking them in the other order could
/// deadlock with it. A match a report finishes meanwhile is not locked (it is no longer unfinished).
pub async fn lock_unfinished(
    tx: &mut PgConnection,
    league_id: &LeagueId,
    player_id: Option<&PlayerId>,
) -> ManagerResult<()> {
    // No columns: the statement is run for its locks.
    sqlx::query!(
        "select from matches
         where league_id = $1 and status in ('scheduled', 'running')
           and ($2::text is null or $2 in (player_a_id, player_b_id))
         order by league_id, match_id
         for update",
        league_id.as_str(),
        player_id.map(PlayerId::as_str),
    )
    .execute(&mut *tx)
    .await?;
    Ok(())
}

/// E008 for an action the league's status does not allow.
fn wrong_state(league_id: &LeagueId, status: &str, action: &str) -> crate::error::ManagerError {
    reject(
        ErrorCode::InvalidLeagueState,
        format!("league {league_id} is {status}: only a {action}"),
    )
}

/// Pauses a running league: no match of it is handed out until [`resume`]; the running ones finish.
pub async fn pause(pool: &PgPool, league_id: &LeagueId) -> ManagerResult<PauseLeagueResponse> {
    // Lock order (docs/subsystems/lock-order.md): the league's row only.
    let mut tx = pool.begin().await?;
    let status = lock_league(&mut tx, league_id).await?;
    if status != "running" {
        return Err(wrong_state(league_id, &status, "running league can be paused"));
    }
    let running = sqlx::query_scalar!(
        r#"with paused as (
             update leagues set status = 'paused', paused_at = now() where league_id = $1
         )
         select count(*) as "running!" from current_round_matches where league_id = $1 and status = 'running'"#,
        league_id.as_str()
    )
    .fetch_one(&mut *tx)
    .await?;
    tx.commit().await?;
    tracing::info!(%league_id, running, "league paused by the operator");
    Ok(PauseLeagueResponse {
        league_id: league_id.to_string(),
        running_matches: u32::try_from(running).unwrap_or(u32::MAX),
    })
}

/// Resumes a paused league: its ready matches are handed out again, and the claims waiting in every
/// manager are woken to take them.
pub async fn resume(pool: &PgPool, wakeups: &Wakeups, league_id: &LeagueId) -> ManagerResult<()> {
    // Lock order (docs/subsystems/lock-order.md): the league's row only.
    let mut tx = pool.begin().await?;
    let status = lock_league(&mut tx, league_id).await?;
    if status != "paused" {
        return Err(wrong_state(league_id, &status, "paused league can be resumed"));
    }
    sqlx::query!(
        "update leagues set status = 'running', paused_at = null where league_id = $1",
        league_id.as_str()
    )
    .execute(&mut *tx)
    .await?;
    Wakeups::matches_ready_on_commit(&mut tx).await?;
    tx.commit().await?;
    wakeups.matches_ready.notify_waiters();
    tracing::info!(%league_id, "league resumed by the operator");
    Ok(())
}

/// Cancels a league that is not over. Before its start it simply ends. Once started, its unfinished
/// matches are cancelled — no result, so nobody is charged — and lose their leases, so their referees'
/// renewals and reports are refused; its players are sent LEAGUE_COMPLETED with the table as it stands
/// (the results recorded so far), the matches played, and no champion.
pub async fn cancel(pool: &PgPool, league_id: &LeagueId) -> ManagerResult<CancelLeagueResponse> {
    // Lock order (docs/subsystems/lock-order.md): the unfinished matches in key order, then the league's row.
    let mut tx = pool.begin().await?;
    lock_unfinished(&mut tx, league_id, None).await?;
    let status = lock_league(&mut tx, league_id).await?;
    if !matches!(status.as_str(), "registering" | "running" | "paused") {
        return Err(reject(
            ErrorCode::InvalidLeagueState,
            format!("league {league_id} is {status}: there is nothing left to cancel"),
        ));
    }
    let counts = sqlx::query!(
        r#"with unfinished as (
             select match_id, status from matches
             where league_id = $1 and status in ('scheduled', 'running')
         ), cancelled as (
             update matches m set status = 'cancelled', lease_id = null, lease_expires_at = null
             from unfinished u
             where m.league_id = $1 and m.match_id = u.match_id
             returning u.status as was
         ), league as (
             update leagues set status = 'cancelled', cancelled_at = now(), paused_at = null
             where league_id = $1
             returning total_rounds, current_round
         )
         select (select count(*) from cancelled) as "cancelled!",
                (select count(*) from cancelled where was = 'running') as "running!",
                (select count(*) from matches where league_id = $1 and status = 'finished') as "played!",
                total_rounds as "total_rounds!", current_round as "current_round!"
         from league"#,
        league_id.as_str()
    )
    .fetch_one(&mut *tx)
    .await?;
    let (cancelled, running, played, total_rounds, current_round) = (
        counts.cancelled,
        counts.running,
        counts.played,
        counts.total_rounds,
        counts.current_round,
    );
    if status != "registering" {
        let final_standings = table::standings(&mut tx, league_id).await?;
        let completed = LeagueCompleted {
            total_rounds: u32::try_from(total_rounds).unwrap_or(0),
            total_matches: u32::try_from(played).unwrap_or(0),
            champion: None,
            final_standings,
        };
        let round_id = u32::try_from(current_round).unwrap_or(0);
        events::enqueue(
            &mut tx,
            league_id,
            vec![(round_id, Event::LeagueCompleted(completed))],
        )
        .await?;
    }
    // The event wakes event delivery when this commits (crate::league::events::enqueue).
    tx.commit().await?;
    tracing::info!(%league_id, cancelled, running, "league cancelled by the operator");
    Ok(CancelLeagueResponse {
        league_id: league_id.to_string(),
        cancelled_matches: u32::try_from(cancelled).unwrap_or(u32::MAX),
        running_matches: u32::try_from(running).unwrap_or(u32::MAX),
    })
}
