//! Giving matches back: a referee that is shutting down releases the leases of the matches it will not
//! finish, and each goes back to the queue at once instead of waiting for its lease to expire. Only the
//! lease holder can release (the same test as a renewal or a report: referee, lease id, still running);
//! any other lease in the request is left exactly as it is.

use league_domain::RefereeId;
use league_proto::v2::LeaseRef;
use sqlx::{PgConnection, PgPool};

use crate::error::ManagerResult;
use crate::league::lease::Lease;
use crate::wakeups::Wakeups;

/// Puts every match of `leases` that `referee_id` still holds back in the queue (`scheduled`, which in
/// the current round is ready); returns the leases that
/// were released, in the order asked. Claimers waiting in any manager are woken when it commits.
/// With `unless_players_called`, a lease under which the referee has called a player
/// (`called_lease_id`, noted by a renewal) is kept too: the gateway gives back only what an external
/// referee left untouched. A match given back so, or with `refused` (its report was no result), notes
/// the referee as the one refused (`refused_referee_id`): its claims pass the match by while another
/// live referee runs the league's game. Without that, a referee that leaves its matches untouched and
/// has a claim already waiting when it gives one back (two slots or more) takes the same match again
/// as often as not, and the referee that would play it waits (ADR 0042).
pub async fn release(
    pool: &PgPool,
    referee_id: &RefereeId,
    leases: &[Lease],
    unless_players_called: bool,
    refused: bool,
) -> ManagerResult<Vec<LeaseRef>> {
    if leases.is_empty() {
        return Ok(Vec::new());
    }
    let (leagues, matches, ids) = Lease::columns(leases);
    let mut tx = pool.begin().await?;
    // `claims` keeps counting: the next claim of a released match is its second.
    // The matches locked in key order first, whatever order the request names them in, as a batch of
    // reports locks them (docs/subsystems/lock-order.md).
    let released: Vec<(String, String)> = sqlx::query!(
        "with held as (
             select m.league_id, m.match_id
             from matches m
             join unnest($2::text[], $3::text[], $4::text[]) as r(league_id, match_id, lease_id)
               on m.league_id = r.league_id and m.match_id = r.match_id
             where (m.lease_id::text = r.lease_id or r.lease_id = '')
               and m.referee_id = $1 and m.status = 'running'
               and not ($5 and m.called_lease_id is not distinct from m.lease_id)
             order by m.league_id, m.match_id
             for update of m
         )
         update matches m set status = 'scheduled', referee_id = null, lease_id = null, lease_expires_at = null,
             refused_referee_id = case when $5 or $6 then $1 else m.refused_referee_id end
         from held h
         where m.league_id = h.league_id and m.match_id = h.match_id
         returning m.league_id, m.match_id",
        referee_id.as_str(),
        &leagues as &[&str],
        &matches as &[String],
        &ids as &[&str],
        unless_players_called,
        refused,
    )
    .fetch_all(&mut *tx)
    .await?
    .into_iter()
    .map(|released| (released.league_id, released.match_id))
    .collect();
    if !released.is_empty() {
        Wakeups::matches_ready_on_commit(&mut tx).await?;
    }
    tx.commit().await?;
    for (league_id, match_id) in &released {
        tracing::info!(%league_id, %match_id, %referee_id, "lease released: the match is ready again");
    }
    Ok(leases
        .iter()
        .filter(|lease| released.iter().any(|(league, id)| lease.is_of(league, id)))
        .map(LeaseRef::from)
        .collect())
}

/// Puts every match `referee_id` is running back in the queue, whatever its lease (the referee came back
/// under a new process, or was revoked), in the caller's transaction; returns them as
/// (league, match). `claims` keeps counting: the next claim of a released match is its second.
/// Claimers waiting in any manager are woken when the transaction commits.
pub async fn release_all(
    tx: &mut PgConnection,
    referee_id: &RefereeId,
) -> ManagerResult<Vec<(String, String)>> {
    let released: Vec<(String, String)> = sqlx::query!(
        // Locked in key order first (docs/subsystems/lock-order.md). Found through the current
        // rounds (current_round_matches' join, written out so that only the matches are locked).
        "with held as (
             select m.league_id, m.match_id
             from leagues l
             join matches m on m.league_id = l.league_id and m.round_id = l.current_round
             where l.status in ('running', 'paused') and m.referee_id = $1 and m.status = 'running'
             order by m.league_id, m.match_id
             for update of m
         )
         update matches m set status = 'scheduled', referee_id = null, lease_id = null, lease_expires_at = null
         from held h
         where m.league_id = h.league_id and m.match_id = h.match_id
         returning m.league_id, m.match_id",
        referee_id.as_str()
    )
    .fetch_all(&mut *tx)
    .await?
    .into_iter()
    .map(|released| (released.league_id, released.match_id))
    .collect();
    if !released.is_empty() {
        Wakeups::matches_ready_on_commit(tx).await?;
    }
    Ok(released)
}
