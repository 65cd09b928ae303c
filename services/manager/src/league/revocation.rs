//! Revoking a referee (`league revoke-referee`, ADR 0039): from the commit on, its credentials no
//! longer authenticate (crate::auth reads `revoked_at`), so its reports, claims, renewals and
//! registrations are refused; and every match it was running goes back to the queue in the same
//! transaction, its lease released, for another referee to play from the start. Nobody is charged: the
//! match was not played to an end, so it has no result, and a new claim plays it whole. The referee
//! registration token is rotated before the commit (ADR 0082): a referee that is out stays out, not
//! back at once under a new id with the token it knew; a rotation that fails undoes the revocation.

use std::collections::HashMap;

use league_domain::RefereeId;
use league_proto::ErrorCode;
use sqlx::PgPool;

use crate::error::{ManagerResult, reject};
use crate::league::referee_admission::{RefereeAdmission, Rotation};

/// What a revocation did.
#[derive(Debug)]
pub struct Revoked {
    /// The matches it was running, now back in the queue.
    pub released: Vec<String>,
    /// It was revoked before: nothing changed.
    pub already: bool,
    /// What became of the referee registration token.
    pub rotation: Rotation,
}

/// Revokes referee `referee_id`, hands its running matches on and rotates the referee registration
/// token of `admission` (E013 if there is no such referee: then nothing changes).
pub async fn revoke(
    pool: &PgPool,
    referee_id: &RefereeId,
    admission: &RefereeAdmission,
) -> ManagerResult<Revoked> {
    // Lock order (docs/subsystems/lock-order.md): the referee's row, then its running matches in key order.
    let mut tx = pool.begin().await?;
    let row = sqlx::query_scalar!(
        r#"select revoked_at is not null as "revoked!" from agents
           where agent_id = $1 and kind = 'referee' for update"#,
        referee_id.as_str()
    )
    .fetch_optional(&mut *tx)
    .await?;
    let Some(already) = row else {
        return Err(reject(
            ErrorCode::RefereeNotRegistered,
            format!("{referee_id} is not a registered referee"),
        ));
    };
    if !already {
        sqlx::query!(
            "update agents set revoked_at = clock_timestamp() where agent_id = $1",
            referee_id.as_str()
        )
        .execute(&mut *tx)
        .await?;
    }
    let released = crate::league::release::release_all(&mut tx, referee_id).await?;
    // Even when it was revoked before: it may have registered anew under another id meanwhile.
    let rotation = admission.rotate()?;
    tx.commit().await?;
    for (league_id, match_id) in &released {
        tracing::info!(%league_id, %match_id, %referee_id, "lease of a revoked referee released");
    }
    tracing::info!(%referee_id, released = released.len(), already, "referee revoked");
    Ok(Revoked {
        released: released.into_iter().map(|(_, match_id)| match_id).collect(),
        already,
        rotation,
    })
}

/// How many matches each referee is running now.
pub async fn running_matches(pool: &PgPool) -> ManagerResult<HashMap<String, u32>> {
    let rows = sqlx::query!(
        r#"select referee_id as "referee_id!", count(*) as "running!" from current_round_matches
           where status = 'running' and referee_id is not null
           group by referee_id"#,
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|row| (row.referee_id, u32::try_from(row.running).unwrap_or(u32::MAX)))
        .collect())
}
