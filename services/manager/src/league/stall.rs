//! Why a league makes no progress, said only from what the manager knows for certain: the league's own
//! status, the leases of its matches, and when one of its matches was last released, claimed or
//! finished. Whether a referee process is alive it cannot know; a referee that stopped renewing shows as
//! an expired lease, and one that never comes shows as ready matches nobody claims. Why a referee takes
//! no match the gateway sometimes knows (it refused the referee's calls to players and told it why): that
//! is a compliance warning here, and a stall for want of a referee names it as its cause.
//!
//! Running matches are only ever in the league's current round (rounds are released in order), so
//! every count reads that round's matches (matches_by_round): O(the round), asked every 500 ms by each
//! gateway's live page watcher. They are read by the league's status statement (crate::league::status),
//! in the same read of the round as the league's progress.

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

/// What the league's status statement (crate::league::status) reads for the stall: the league's own
/// status and, from its current round's matches, the expired leases, the ready and the live matches, and
/// when the round last moved.
#[derive(Debug)]
pub struct StallRow {
    pub status: String,
    pub paused_ms: Option<i64>,
    pub expired: i64,
    pub expired_since_ms: Option<i64>,
    pub ready: i64,
    pub live: i64,
    pub progress_ms: Option<i64>,
    pub idle_ms: Option<i64>,
    pub referees: i64,
}

/// The stall of `league_id`, if it is stalled, judged from `row`.
pub async fn stall(
    conn: &mut PgConnection,
    league_id: &LeagueId,
    row: StallRow,
) -> ManagerResult<Option<LeagueStall>> {
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
