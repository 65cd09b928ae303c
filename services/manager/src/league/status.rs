//! A league's status (LEAGUE_QUERY's `get_league_status`, the operator's `league status`): its progress,
//! its players, its notifications and, while it runs, why it makes no progress (crate::league::stall).
//! `league run` and the bench ask it every 20–100 ms while a league plays, and each gateway's live page
//! every 500 ms, so it is read in one statement that reads the current round's matches once, for the
//! progress and the stall alike: at 1,000 players two statements that each read the round (500
//! matches) ran 13 s in a league whose Postgres used 95 s of CPU (pg_stat_statements,
//! docs/benchmarks.md).

use league_domain::LeagueId;
use league_proto::v2::{GetLeagueStatusResponse, LeagueStatus};
use sqlx::PgConnection;

use crate::error::ManagerResult;
use crate::league::queue::timestamp_from_millis;
use crate::league::stall::{self, StallRow};
use crate::league::{history, table};

struct StatusRow {
    game_type: String,
    status: String,
    current_round: i32,
    total_rounds: i32,
    auto_start_players: i32,
    started_ms: Option<i64>,
    completed_ms: Option<i64>,
    cancelled_ms: Option<i64>,
    total: i64,
    finished: i64,
    players: i64,
    delivered: i64,
    pending: i64,
    paused_ms: Option<i64>,
    expired: i64,
    expired_since_ms: Option<i64>,
    ready: i64,
    live: i64,
    progress_ms: Option<i64>,
    idle_ms: Option<i64>,
    referees: i64,
}

impl StatusRow {
    fn stall_row(&self) -> StallRow {
        StallRow {
            status: self.status.clone(),
            paused_ms: self.paused_ms,
            expired: self.expired,
            expired_since_ms: self.expired_since_ms,
            ready: self.ready,
            live: self.live,
            progress_ms: self.progress_ms,
            idle_ms: self.idle_ms,
            referees: self.referees,
        }
    }
}

pub async fn league_status(
    conn: &mut PgConnection,
    league_id: &LeagueId,
) -> ManagerResult<GetLeagueStatusResponse> {
    let row = sqlx::query_as!(
        StatusRow,
        // The league's progress comes from its rounds (each knows its number of matches) and its
        // current round's matches: it is not counted from its matches, which grow with the square of
        // its size. The current round is the only one released and not completed (a round is released
        // once the one before it is final, in the statement that makes it current): its finished
        // matches are added to the completed rounds' while it is released. `round`, named more than
        // once, is read once (Postgres materializes it).
        r#"with league as (
             select game_type, status, current_round, total_rounds, auto_start_players, paused_at,
                    started_at, completed_at, cancelled_at
             from leagues where league_id = $1
         ), current as (
             select r.status, r.released_at from rounds r, league l
             where r.league_id = $1 and r.round_id = l.current_round
         ), round as (
             select m.status, m.lease_expires_at, m.claimed_at, m.finished_at
             from matches m, league l
             where m.league_id = $1 and m.round_id = l.current_round
         ), progress as (
             select greatest(c.released_at, (select max(claimed_at) from round),
                             (select max(finished_at) from round)) as at
             from current c
         ), players as (
             select count(*) as n from league_players where league_id = $1
         )
         select l.game_type as "game_type!", l.status as "status!", l.current_round as "current_round!",
                l.total_rounds as "total_rounds!", l.auto_start_players as "auto_start_players!",
                (extract(epoch from l.started_at) * 1000)::bigint as "started_ms?",
                (extract(epoch from l.completed_at) * 1000)::bigint as "completed_ms?",
                (extract(epoch from l.cancelled_at) * 1000)::bigint as "cancelled_ms?",
                (select coalesce(sum(matches), 0) from rounds where league_id = $1)::bigint as "total!",
                ((select coalesce(sum(matches), 0) from rounds where league_id = $1 and status = 'completed')
                 + (select count(*) from round
                    where status = 'finished' and (select status from current) = 'released'))::bigint
                    as "finished!",
                (select n from players) as "players!",
                coalesce((select delivered from league_notification_counts where league_id = $1), 0)
                    as "delivered!",
                -- Pending: the deliveries not made yet, and every player's share of the events not
                -- fanned out yet (crate::league::events::fan_out).
                ((select count(*) from event_deliveries d join league_events e using (event_id)
                  where e.league_id = $1 and d.delivered_at is null and d.gave_up_at is null)
                 + (select count(*) from league_events where league_id = $1 and not fanned_out)
                   * (select n from players))::bigint as "pending!",
                (extract(epoch from l.paused_at) * 1000)::bigint as "paused_ms?",
                (select count(*) from round where status = 'running' and lease_expires_at < now()) as "expired!",
                (select (extract(epoch from min(lease_expires_at)) * 1000)::bigint from round
                 where status = 'running' and lease_expires_at < now()) as "expired_since_ms?",
                (select count(*) from round where status = 'scheduled') as "ready!",
                (select count(*) from round where status = 'running' and lease_expires_at >= now()) as "live!",
                (select (extract(epoch from at) * 1000)::bigint from progress) as "progress_ms?",
                (select (extract(epoch from now() - at) * 1000)::bigint from progress) as "idle_ms?",
                (select count(*) from agents where kind = 'referee' and l.game_type = any(game_types))
                    as "referees!"
         from league l"#,
        league_id.as_str()
    )
    .fetch_one(&mut *conn)
    .await?;
    let status = history::league_status(&row.status);
    let stall = stall::stall(conn, league_id, row.stall_row()).await?;
    let champion = if status == LeagueStatus::Completed {
        table::standings(conn, league_id).await?.into_iter().next()
    } else {
        None
    };
    let count = |value: i64| value as u32;
    Ok(GetLeagueStatusResponse {
        league_id: league_id.to_string(),
        game_type: row.game_type,
        status: status as i32,
        current_round_id: row.current_round as u32,
        total_rounds: row.total_rounds as u32,
        total_matches: count(row.total),
        finished_matches: count(row.finished),
        registered_players: count(row.players),
        champion,
        started_at: row.started_ms.map(timestamp_from_millis),
        completed_at: row.completed_ms.map(timestamp_from_millis),
        notifications_delivered: count(row.delivered),
        notifications_pending: count(row.pending),
        stall,
        cancelled_at: row.cancelled_ms.map(timestamp_from_millis),
        expected_players: u32::try_from(row.auto_start_players).unwrap_or(0),
    })
}
