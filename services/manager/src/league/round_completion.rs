//! Completing a round: once every match of a round is finished, exactly one transaction marks it
//! completed, queues ROUND_COMPLETED and LEAGUE_STANDINGS_UPDATE, and releases the next round (or
//! completes the league and queues LEAGUE_COMPLETED) — so each of these happens exactly once.
//!
//! Every recorded result is followed by [`complete_if_final`], in its own short transaction after the
//! result's commit (once per round for results recorded together: crate::league::report). Why that
//! finds the last result: whichever of a round's results commits last, its check starts after that
//! commit and so sees every match finished. Why only one check completes the
//! round: the checks update the round's row `where status = 'released'`, skipping it while another check
//! holds it. A round's last matches end together, so several checks often find it final at once; one
//! locks the row and completes it, the others answer at once instead of holding a connection while they
//! wait (and a check that comes after the commit finds the round completed). Should the completing
//! transaction fail, its referee's report fails and is repeated, and the repeat checks again. A manager that
//! dies between a result's commit and its check is made good by the referee, which reports again until it
//! gets an answer (a repeated report checks too), and by [`complete_final_rounds`] at start-up.

use league_proto::v2::notify_league_event_request::Event;
use league_proto::v2::{LeagueCompleted, RoundCompleted, RoundSummary, StandingsUpdate};
use sqlx::{PgConnection, PgPool};

use crate::error::ManagerResult;
use crate::league::{events, table};
use crate::wakeups::Wakeups;

/// Completes `round_id` of `league_id` if none of its matches is unfinished. Returns whether this call
/// completed it. Reads only (no commit to wait for) when the round is not final.
pub async fn complete_if_final(pool: &PgPool, league_id: &str, round_id: u32) -> ManagerResult<bool> {
    let mut tx = pool.begin().await?;
    let completed = sqlx::query(
        "update rounds set status = 'completed', completed_at = clock_timestamp()
         where (league_id, round_id) = (
             select league_id, round_id from rounds
             where league_id = $1 and round_id = $2 and status = 'released'
               and not exists (select 1 from matches
                               where league_id = $1 and round_id = $2 and status <> 'finished')
             for update skip locked)",
    )
    .bind(league_id)
    .bind(round_id as i32)
    .execute(&mut *tx)
    .await?
    .rows_affected()
        == 1;
    if !completed {
        tx.rollback().await?;
        return Ok(false);
    }
    follow_round(&mut tx, league_id, round_id).await?;
    tx.commit().await?;
    Ok(true)
}

/// Completes every released round whose matches are all finished: what a manager that stopped between a
/// result and its check left undone. Run at start-up.
pub async fn complete_final_rounds(pool: &PgPool) -> ManagerResult<u32> {
    let rounds: Vec<(String, i32)> = sqlx::query_as(
        "select r.league_id, r.round_id from rounds r
         where r.status = 'released'
           and not exists (select 1 from matches m
                           where m.league_id = r.league_id and m.round_id = r.round_id and m.status <> 'finished')",
    )
    .fetch_all(pool)
    .await?;
    let mut completed = 0;
    for (league_id, round_id) in rounds {
        if complete_if_final(pool, &league_id, round_id as u32).await? {
            tracing::warn!(%league_id, round_id, "a round left final but not completed was completed");
            completed += 1;
        }
    }
    Ok(completed)
}

/// Everything that follows the completion of a round. Returns whether the league is now completed.
async fn follow_round(tx: &mut PgConnection, league_id: &str, round_id: u32) -> ManagerResult<bool> {
    let (total_rounds, total_matches): (i32, i64) = sqlx::query_as(
        "select total_rounds, (select coalesce(sum(matches), 0) from rounds where league_id = $1)
         from leagues where league_id = $1",
    )
    .bind(league_id)
    .fetch_one(&mut *tx)
    .await?;
    let (played, wins, draws, technical): (i64, i64, i64, i64) = sqlx::query_as(
        "select count(*), count(*) filter (where result_status = 'win'), count(*) filter (where result_status = 'draw'),
                count(*) filter (where result_status in ('technical_loss', 'double_forfeit'))
         from matches where league_id = $1 and round_id = $2",
    )
    .bind(league_id)
    .bind(round_id as i32)
    .fetch_one(&mut *tx)
    .await?;
    let standings = table::standings(&mut *tx, league_id).await?;
    let last = round_id as i32 >= total_rounds;
    let next_round_id = if last { 0 } else { round_id + 1 };
    events::enqueue(
        tx,
        league_id,
        round_id,
        Event::RoundCompleted(RoundCompleted {
            round_id,
            matches_completed: played as u32,
            next_round_id,
            summary: Some(RoundSummary {
                total_matches: played as u32,
                wins: wins as u32,
                draws: draws as u32,
                technical_losses: technical as u32,
            }),
        }),
    )
    .await?;
    events::enqueue(
        tx,
        league_id,
        round_id,
        Event::StandingsUpdate(StandingsUpdate {
            round_id,
            standings: standings.clone(),
        }),
    )
    .await?;
    if last {
        sqlx::query("update leagues set status = 'completed', completed_at = now() where league_id = $1")
            .bind(league_id)
            .execute(&mut *tx)
            .await?;
        events::enqueue(
            tx,
            league_id,
            round_id,
            Event::LeagueCompleted(LeagueCompleted {
                total_rounds: total_rounds as u32,
                total_matches: total_matches as u32,
                champion: standings.first().cloned(),
                final_standings: standings,
            }),
        )
        .await?;
        tracing::info!(%league_id, "league completed");
        return Ok(true);
    }
    sqlx::query("update rounds set status = 'released', released_at = clock_timestamp() where league_id = $1 and round_id = $2")
        .bind(league_id)
        .bind(next_round_id as i32)
        .execute(&mut *tx)
        .await?;
    sqlx::query("update matches set status = 'ready' where league_id = $1 and round_id = $2")
        .bind(league_id)
        .bind(next_round_id as i32)
        .execute(&mut *tx)
        .await?;
    sqlx::query("update leagues set current_round = $2 where league_id = $1")
        .bind(league_id)
        .bind(next_round_id as i32)
        .execute(&mut *tx)
        .await?;
    events::announce_round(tx, league_id, next_round_id).await?;
    Wakeups::matches_ready_on_commit(tx).await?;
    tracing::info!(%league_id, round_id, next_round_id, "round completed");
    Ok(false)
}
