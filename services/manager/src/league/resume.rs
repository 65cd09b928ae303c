//! Resuming a registration: an agent that restarts takes its identity back instead of being refused as
//! a duplicate of itself (ADR 0013).
//!
//! A registration that carries credentials (`league-agent-id` and the bearer token issued at the first
//! registration, checked by the caller before it gets here) is a resume. It must be of the same kind (a
//! referee resumes as a referee); it then keeps its id and token, its metadata is brought up to date (a
//! new contact or service endpoint, version or capacity), and a player stays in its league while it is
//! registering or running (after that, it is enrolled in the next open league of its games:
//! crate::league::enrollment). The token is the proof, so the agent may come back at another endpoint
//! (a service restarted on a new port or in a new container, ADR 0040): the new contact endpoint is held
//! to the same rules as a first registration's (the endpoint policy, and no endpoint that reaches
//! another agent, E014: crate::league::contact_key). Without credentials a registration on an endpoint
//! already taken, however written, is still refused (E014): nobody takes over an identity without its
//! token.
//!
//! A player that comes back at another endpoint is a new process too: the referees running its matches
//! call the address it had when they claimed them, where nobody answers now. Those matches are given
//! back at once (to `scheduled`, waiting claims woken), and played again from the start against the
//! player where it is now; nobody is charged for the outage.
//!
//! A referee that resumes is a new process: whatever its previous life held leased, nobody runs now. Those
//! leases are released at once (the match goes back to `ready`, waiting claims are woken), instead of
//! making the league wait for them to expire. Should the previous process still be alive after all, its
//! reports are refused as E015 — a match is still recorded exactly once.

use league_domain::{AgentId, LeagueId, PlayerId, RefereeId};
use league_proto::ErrorCode;
use league_proto::v2::{AgentMeta, RegisterRefereeRequest};
use secrecy::SecretString;
use sqlx::{PgConnection, PgPool};

use crate::auth::AgentKind;
use crate::error::{ManagerError, ManagerResult, reject, violates};
use crate::ids;
use crate::league::contact_key::{self, ContactKey};
use crate::league::enrollment;
use crate::league::registration::{self, RegisteredPlayer, RegisteredReferee, Rules};
use crate::wakeups::Wakeups;

/// Resumes referee `referee_id`, whose `token` the caller has checked.
pub async fn resume_referee(
    pool: &PgPool,
    rules: &Rules,
    referee_id: RefereeId,
    token: SecretString,
    request: RegisterRefereeRequest,
) -> ManagerResult<RegisteredReferee> {
    let (meta, contact_key, max_concurrent_matches) = rules.admit_referee(request).await?;
    // Lock order (docs/subsystems/lock-order.md): the agent's row, then its matches in key order.
    let mut tx = pool.begin().await?;
    update_agent(
        &mut tx,
        &referee_id.clone().into(),
        (&meta, &contact_key),
        Some(max_concurrent_matches.get()),
    )
    .await?;
    let released = crate::league::release::release_all(&mut tx, &referee_id).await?;
    let league_id = registration::current_league(&mut *tx, &meta.game_types).await?;
    tx.commit().await?;
    for (league_id, match_id) in &released {
        tracing::info!(%league_id, %match_id, %referee_id, "lease of a restarted referee released");
    }
    tracing::info!(%referee_id, released = released.len(), "referee resumed its registration");
    Ok(RegisteredReferee {
        referee_id,
        token,
        league_id,
    })
}

/// Resumes player `player_id`, whose `token` the caller has checked. It stays in its league while that
/// league is registering or running; otherwise it is enrolled in the league the request names
/// (`requested`), or in the newest open league of one of its games if there is one with room (it keeps
/// its id and token across leagues); with none, it is answered with its latest league.
pub async fn resume_player(
    pool: &PgPool,
    rules: &Rules,
    player_id: PlayerId,
    token: SecretString,
    requested: Option<LeagueId>,
    meta: Option<AgentMeta>,
) -> ManagerResult<RegisteredPlayer> {
    let deployment_max = rules.max_players;
    let (meta, contact_key) = rules.admit(meta).await?;
    // Lock order (docs/subsystems/lock-order.md): the agent's row, then a league's row and its players
    // (enrollment).
    let mut tx = pool.begin().await?;
    let moved = update_agent(&mut tx, &player_id.clone().into(), (&meta, &contact_key), None).await?;
    // Its leagues, the ones still going first, newest first.
    let leagues: Vec<(String, bool)> = sqlx::query!(
        r#"select l.league_id, l.status in ('registering', 'running', 'paused') as "going!" from league_players lp
         join leagues l on l.league_id = lp.league_id
         where lp.player_id = $1
         order by l.status in ('registering', 'running', 'paused') desc, l.created_at desc"#,
        player_id.as_str()
    )
    .fetch_all(&mut *tx)
    .await?
    .into_iter()
    .map(|league| (league.league_id, league.going))
    .collect();
    let stored = |league_id: &String| ids::stored::<LeagueId>("league_players.league_id", league_id);
    let (league_id, started) = if let Some(requested) = requested {
        if leagues.iter().any(|(id, _)| requested == *id) {
            (requested, false)
        } else {
            let league =
                enrollment::open_league(&mut tx, Some(&requested), &meta.game_types, deployment_max).await?;
            let enrolled = league.enroll(&mut tx, &player_id).await?;
            (enrolled.league_id, enrolled.started)
        }
    } else if let Some((current, true)) = leagues.first() {
        (stored(current)?, false)
    } else {
        match next_league(&mut tx, &player_id, &meta.game_types, deployment_max).await? {
            Some(enrolled) => (enrolled.league_id, enrolled.started),
            None => match leagues.first() {
                Some((latest, _)) => (stored(latest)?, false),
                None => {
                    return Err(reject(
                        ErrorCode::InvalidLeagueState,
                        format!("{player_id} is in no league and no league is open for registration"),
                    ));
                }
            },
        }
    };
    tx.commit().await?;
    if moved {
        give_back_matches_of(pool, &player_id).await?;
    }
    tracing::info!(%player_id, %league_id, enrolled_now = started, moved, "player resumed its registration");
    Ok(RegisteredPlayer {
        player_id,
        token,
        league_id,
        started,
    })
}

/// Gives back every running match of `player_id`, which has just moved: their referees call the
/// address it had when they claimed them. Run after the move is committed, so that a claim committed
/// before it (which may have read the old address) is running here and given back too; a claim whose
/// statement straddles the move may still hold the old address, and its referee then waits out its
/// patience (the lease) and gives the match back uncharged — slower, never wrong.
async fn give_back_matches_of(pool: &PgPool, player_id: &PlayerId) -> ManagerResult<()> {
    let mut tx = pool.begin().await?;
    let given_back = sqlx::query!(
        // Locked in key order first (docs/subsystems/lock-order.md), as a batch of reports locks them.
        // Found through the current rounds (current_round_matches' join, written out so that only the
        // matches are locked).
        "with running as (
             select m.league_id, m.match_id
             from leagues l
             join matches m on m.league_id = l.league_id and m.round_id = l.current_round
             where l.status in ('running', 'paused') and m.status = 'running'
               and (m.player_a_id = $1 or m.player_b_id = $1)
             order by m.league_id, m.match_id
             for update of m
         )
         update matches m set status = 'scheduled', referee_id = null, lease_id = null, lease_expires_at = null
         from running r
         where m.league_id = r.league_id and m.match_id = r.match_id
         returning m.league_id, m.match_id",
        player_id.as_str()
    )
    .fetch_all(&mut *tx)
    .await?;
    if !given_back.is_empty() {
        Wakeups::matches_ready_on_commit(&mut tx).await?;
    }
    tx.commit().await?;
    for (league_id, match_id) in given_back.iter().map(|given| (&given.league_id, &given.match_id)) {
        tracing::info!(%league_id, %match_id, %player_id, "match of a player at a new endpoint given back");
    }
    Ok(())
}

/// Enrolls a returning player, whose leagues are all over, in the newest open league of its games, if
/// one has room.
async fn next_league(
    tx: &mut PgConnection,
    player_id: &PlayerId,
    game_types: &[String],
    deployment_max: u32,
) -> ManagerResult<Option<enrollment::Enrollment>> {
    let open = sqlx::query_scalar!(
        "select league_id from leagues where status = 'registering' and game_type = any($1)
         order by created_at desc limit 1",
        game_types
    )
    .fetch_optional(&mut *tx)
    .await?;
    let Some(league_id) = open else {
        return Ok(None);
    };
    let league_id = ids::stored("leagues.league_id", &league_id)?;
    let league = enrollment::open_league(tx, Some(&league_id), game_types, deployment_max).await?;
    if league.check_room(tx).await.is_err() {
        return Ok(None);
    }
    Ok(Some(league.enroll(tx, player_id).await?))
}

/// Brings the stored metadata of `agent_id` up to date, its endpoints and contact key too; refuses an
/// agent of another kind, or a contact endpoint that reaches another agent (and changes nothing then).
/// Returns whether the agent moved (its contact or service endpoint changed).
async fn update_agent(
    tx: &mut PgConnection,
    agent_id: &AgentId,
    (meta, contact_key): (&AgentMeta, &ContactKey),
    max_concurrent_matches: Option<u32>,
) -> ManagerResult<bool> {
    let stored = sqlx::query!(
        "select kind, contact_endpoint, service_endpoint from agents where agent_id = $1 for update",
        agent_id.as_str()
    )
    .fetch_optional(&mut *tx)
    .await?
    .map(|row| (row.kind, row.contact_endpoint, row.service_endpoint));
    let Some((stored_kind, contact_endpoint, service_endpoint)) = stored else {
        return Err(reject(
            ErrorCode::PermissionDenied,
            format!("{agent_id} is not registered"),
        ));
    };
    let kind = AgentKind::of(agent_id);
    if stored_kind != kind.as_str() {
        return Err(reject(
            ErrorCode::PermissionDenied,
            format!("{agent_id} is a {stored_kind}, not a {}", kind.as_str()),
        ));
    }
    // `meta.contact_endpoint` is in canonical form (Rules::admit), as registration stored it.
    let moved = contact_endpoint != meta.contact_endpoint || service_endpoint != meta.service_endpoint;
    let (label_keys, label_values): (Vec<&String>, Vec<&String>) = meta.labels.iter().unzip();
    let updated = sqlx::query!(
        "update agents set display_name = $2, version = $3, game_types = $4, service_endpoint = $5,
             protocol_version = $6, label_keys = $7, label_values = $8,
             max_concurrent_matches = coalesce($9, max_concurrent_matches), contact_endpoint = $10,
             contact_key = $11, last_seen_at = now()
         where agent_id = $1",
        agent_id.as_str(),
        meta.display_name,
        meta.version,
        &meta.game_types,
        meta.service_endpoint,
        meta.protocol_version,
        &label_keys as &[&String],
        &label_values as &[&String],
        max_concurrent_matches.map(|n| i32::try_from(n).unwrap_or(i32::MAX)),
        meta.contact_endpoint,
        contact_key.as_str(),
    )
    .execute(&mut *tx)
    .await;
    match updated {
        Ok(_) => Ok(moved),
        Err(error) if violates(&error, contact_key::UNIQUE_INDEX) => Err(reject(
            ErrorCode::DuplicateRegistration,
            format!(
                "{agent_id} cannot move to {}: another agent is registered there",
                meta.contact_endpoint
            ),
        )),
        Err(error) => Err(ManagerError::Database(error)),
    }
}
