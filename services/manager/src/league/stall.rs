//! Why a league makes no progress, said only from what the manager knows for certain: the league's own
//! status, the leases of its matches, and when one of its matches was last released, claimed or
//! finished. Whether a referee process is alive it cannot know; a referee that stopped renewing shows as
//! an expired lease, and one that never comes shows as ready matches nobody claims. Why a referee takes
//! no match the gateway sometimes knows (it refused the referee's calls to players and told it why): that
//! is a compliance warning here, and a stall for want of a referee names it as its cause.
//!
//! Running matches are only ever in the league's current round (rounds are released in order), so
//! every count reads that round's matches (matches_by_round): O(the round), asked every 500 ms by each
//! gateway's live page watcher.

use league_domain::LeagueId;
use std::time::Duration;

use league_proto::v2::{LeagueStall, StallReason};
use sqlx::PgConnection;

use crate::error::ManagerResult;
use crate::league::queue::timestamp_from_millis;

/// How long ready matches may wait with no claim and no result in the league before it is called
/// stalled for want of a referee: longer than a referee's claim loop takes to come back (its long poll
/// is answered at once when matches are released), shorter than anyone watching would wait.
pub const NO_REFEREE_AFTER: Duration = Duration::from_secs(10);

/// The compliance warning the gateway records when it refuses a referee's call to a player, saying why
/// (league-v2's `compliance::kinds::REFUSED_REFEREE_CALL`, the gateway's word; the manager reads it).
pub const REFUSED_REFEREE_CALL: &str = "refused_referee_call";

struct StallRow {
    status: String,
    paused_ms: Option<i64>,
    expired: i64,
    expired_since_ms: Option<i64>,
    ready: i64,
    live: i64,
    progress_ms: Option<i64>,
    idle_ms: Option<i64>,
    referees: i64,
}

/// The stall of `league_id`, if it is stalled.
pub async fn stall(conn: &mut PgConnection, league_id: &LeagueId) -> ManagerResult<Option<LeagueStall>> {
    let row = sqlx::query_as!(
        StallRow,
        r#"with league as (
             select status, current_round, game_type, paused_at from leagues where league_id = $1
         ), round as (
             select m.status, m.lease_expires_at, m.claimed_at, m.finished_at
             from matches m, league l
             where m.league_id = $1 and m.round_id = l.current_round
         ), progress as (
             select greatest(r.released_at, (select max(claimed_at) from round),
                             (select max(finished_at) from round)) as at
             from rounds r, league l
             where r.league_id = $1 and r.round_id = l.current_round
         )
         select l.status as "status!",
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
    .fetch_optional(&mut *conn)
    .await?;
    let Some(row) = row else { return Ok(None) };
    let count = |value: i64| u32::try_from(value).unwrap_or(u32::MAX);
    let stall = |reason: StallReason, since: Option<i64>, waiting: i64| LeagueStall {
        reason: reason as i32,
        since: since.map(timestamp_from_millis),
        waiting_matches: count(waiting),
        referees: count(row.referees),
        cause: String::new(),
    };
    let no_referee_after = i64::try_from(NO_REFEREE_AFTER.as_millis()).unwrap_or(i64::MAX);
    let stall = match row.status.as_str() {
        "paused" => Some(stall(StallReason::Paused, row.paused_ms, row.ready)),
        "running" if row.expired > 0 => Some(stall(
            StallReason::LeasesExpired,
            row.expired_since_ms,
            row.expired,
        )),
        "running" if row.ready > 0 && row.live == 0 && row.idle_ms.unwrap_or(0) >= no_referee_after => {
            Some(stall(StallReason::NoReferee, row.progress_ms, row.ready))
        }
        _ => None,
    };
    match stall {
        // Paused: the operator's doing, whatever the referees were told.
        Some(mut stall) if stall.reason() != StallReason::Paused => {
            stall.cause = refused_calls(conn, league_id).await?.unwrap_or_default();
            Ok(Some(stall))
        }
        stall => Ok(stall),
    }
}

/// The latest refusal of a call to a player by a referee of the league's game since the league's current
/// round was released, as the operator reads it; `None` when no such call was refused.
async fn refused_calls(conn: &mut PgConnection, league_id: &LeagueId) -> ManagerResult<Option<String>> {
    let refused = sqlx::query!(
        r#"select w.agent_id, w.detail
           from leagues l
           join rounds r on r.league_id = l.league_id and r.round_id = l.current_round
           join agents a on a.kind = 'referee' and l.game_type = any(a.game_types)
           join compliance_warnings w on w.agent_id = a.agent_id and w.kind = $2
           where l.league_id = $1 and w.last_seen >= r.released_at
           order by w.last_seen desc
           limit 1"#,
        league_id.as_str(),
        REFUSED_REFEREE_CALL,
    )
    .fetch_optional(&mut *conn)
    .await?;
    Ok(refused.map(|row| format!("{}'s calls to players are refused: {}", row.agent_id, row.detail)))
}
