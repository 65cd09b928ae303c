//! Withdrawing a player from a league (docs/adr/0044-operator-actions.md).
//!
//! Before the league starts the player is simply no longer enrolled: it has no match yet. Once the
//! league runs (or is paused), every match of the player that is not finished — scheduled, ready, or
//! running under a referee's lease — is finished at once as a forfeit the player loses: a technical
//! loss, the opponent winning 3–0. (The opponent is always still in: a player who withdrew before has
//! no unfinished match left.) The forfeits are ordinary results: the standings take them as they take a referee's, so the table is
//! still a recomputation from the results and every player still meets every other once. A running
//! match loses its lease: its referee's renewals come back not renewed, and its report is refused
//! (E015). The player stays in the table with its results, and still receives the league's events.
//!
//! A forfeit of a round not released yet is recorded now and counted when that round completes; the
//! round completes at its release if every match of it is a forfeit (crate::league::round_completion).

use league_domain::{LeagueId, PlayerId};
use league_proto::ErrorCode;
use league_proto::v2::{
    MatchResult, MatchState, MatchTranscript, PlayerScore, ResultStatus, StateTransition, TranscriptEntry,
    transcript_entry,
};
use prost::Message;
use sqlx::{PgConnection, PgPool};

use crate::error::{ManagerResult, reject};
use crate::league::kept_table::KeptTables;
use crate::league::lifecycle::{lock_league, lock_unfinished};
use crate::league::round_completion;
use crate::league::waiting_claims::WaitingClaims;
use crate::results::{Outcome, Side};
use crate::standings::StandingRow;

/// What a withdrawal did: the forfeits it recorded, in play order (none before the start).
#[derive(Debug)]
pub struct Withdrawn {
    pub forfeits: Vec<MatchResult>,
}

/// An unfinished match of the withdrawing player, locked.
struct Unfinished {
    match_id: String,
    player_a_id: String,
    player_b_id: String,
}

/// Withdraws `player_id` from `league_id`, then completes the league's current round if the forfeits
/// finished it.
pub async fn withdraw(
    pool: &PgPool,
    waiting: &WaitingClaims,
    league_id: &LeagueId,
    player_id: &PlayerId,
) -> ManagerResult<Withdrawn> {
    let mut tx = pool.begin().await?;
    // Matches, standings, then the league's row: the lock order (docs/subsystems/lock-order.md).
    lock_unfinished(&mut tx, league_id, Some(player_id)).await?;
    lock_standings(&mut tx, league_id, player_id).await?;
    let status = lock_league(&mut tx, league_id).await?;
    let enrolled = sqlx::query_scalar!(
        r#"select withdrawn_at is not null as "withdrawn!" from league_players
           where league_id = $1 and player_id = $2"#,
        league_id.as_str(),
        player_id.as_str(),
    )
    .fetch_optional(&mut *tx)
    .await?;
    match enrolled {
        None => {
            return Err(reject(
                ErrorCode::PlayerNotRegistered,
                format!("{player_id} is not in league {league_id}"),
            ));
        }
        Some(true) => {
            return Err(reject(
                ErrorCode::InvalidLeagueState,
                format!("{player_id} has already withdrawn from league {league_id}"),
            ));
        }
        Some(false) => {}
    }
    match status.as_str() {
        "registering" => {
            sqlx::query!(
                "delete from league_players where league_id = $1 and player_id = $2",
                league_id.as_str(),
                player_id.as_str(),
            )
            .execute(&mut *tx)
            .await?;
            tx.commit().await?;
            tracing::info!(%league_id, %player_id, "player withdrawn before the start");
            return Ok(Withdrawn { forfeits: Vec::new() });
        }
        "running" | "paused" => {}
        _ => {
            return Err(reject(
                ErrorCode::InvalidLeagueState,
                format!("league {league_id} is {status}: there is nothing left to withdraw from"),
            ));
        }
    }
    let forfeits = forfeit_unfinished(&mut tx, league_id, player_id).await?;
    let current_round = sqlx::query_scalar!(
        "select current_round from leagues where league_id = $1",
        league_id.as_str()
    )
    .fetch_one(&mut *tx)
    .await?;
    tx.commit().await?;
    tracing::info!(%league_id, %player_id, forfeits = forfeits.len(), "player withdrawn");
    // The forfeits may have finished the round being played (and the rounds after it). The withdrawal
    // is committed whatever happens here; should it fail, the next result of the round, or the next
    // start of a manager (round_completion::complete_final_rounds), completes the round.
    let round_id = u32::try_from(current_round).unwrap_or(0);
    if let Err(error) =
        round_completion::complete_if_final(pool, &KeptTables::default(), waiting, league_id, round_id).await
    {
        tracing::error!(%league_id, round_id, %error, "completing a round after a withdrawal failed");
    }
    Ok(Withdrawn { forfeits })
}

/// Locks the standings rows the forfeits of `player_id` add to (its own and its opponents' in its
/// unfinished matches, locked by the caller), in key order, before the league's row: a batch of
/// reports adds to standings and then, completing a round, locks the league's row, so a withdrawal
/// that took the league's row first could wait for a standings row that batch holds while the batch
/// waits for the league's row.
async fn lock_standings(
    tx: &mut PgConnection,
    league_id: &LeagueId,
    player_id: &PlayerId,
) -> ManagerResult<()> {
    // No columns: the statement is run for its locks.
    sqlx::query!(
        "select from standings
         where league_id = $1 and player_id in (
             select unnest(array[m.player_a_id, m.player_b_id]) from matches m
             where m.league_id = $1 and $2 in (m.player_a_id, m.player_b_id)
               and m.status in ('scheduled', 'running'))
         order by league_id, player_id
         for update",
        league_id.as_str(),
        player_id.as_str(),
    )
    .execute(&mut *tx)
    .await?;
    Ok(())
}

/// Marks `player_id` withdrawn and finishes each of its unfinished matches (locked by the caller) as a
/// forfeit it loses, adding the results to the standings.
async fn forfeit_unfinished(
    tx: &mut PgConnection,
    league_id: &LeagueId,
    player_id: &PlayerId,
) -> ManagerResult<Vec<MatchResult>> {
    sqlx::query!(
        "update league_players set withdrawn_at = now() where league_id = $1 and player_id = $2",
        league_id.as_str(),
        player_id.as_str(),
    )
    .execute(&mut *tx)
    .await?;
    let unfinished = sqlx::query_as!(
        Unfinished,
        "select m.match_id, m.player_a_id, m.player_b_id
         from matches m
         where m.league_id = $1 and $2 in (m.player_a_id, m.player_b_id)
           and m.status in ('scheduled', 'running')
         order by m.round_id, m.match_number",
        league_id.as_str(),
        player_id.as_str(),
    )
    .fetch_all(&mut *tx)
    .await?;
    let mut forfeits = Vec::with_capacity(unfinished.len());
    for unfinished in unfinished {
        let loser = if *player_id == unfinished.player_a_id {
            Side::A
        } else {
            Side::B
        };
        let result = forfeit_result(&unfinished, player_id.as_str(), loser);
        record(
            tx,
            league_id,
            &unfinished,
            &result,
            Outcome::TechnicalLoss { loser },
        )
        .await?;
        forfeits.push(result);
    }
    Ok(forfeits)
}

/// The result of a forfeit `withdrawing` (in seat `loser`) loses.
fn forfeit_result(unfinished: &Unfinished, withdrawing: &str, loser: Side) -> MatchResult {
    let (a, b) = (&unfinished.player_a_id, &unfinished.player_b_id);
    let opponent = if a == withdrawing { b } else { a };
    let outcome = Outcome::TechnicalLoss { loser };
    let points = |side| outcome.mark_for(side).points();
    MatchResult {
        match_id: unfinished.match_id.clone(),
        status: ResultStatus::TechnicalLoss as i32,
        winner_player_id: opponent.clone(),
        scores: vec![
            PlayerScore {
                player_id: a.clone(),
                points: points(Side::A),
            },
            PlayerScore {
                player_id: b.clone(),
                points: points(Side::B),
            },
        ],
        reason: format!("{withdrawing} withdrew from the league: {opponent} wins by forfeit"),
        at_fault_player_ids: vec![withdrawing.to_owned()],
        game_metadata: None,
    }
}

/// Finishes the match with `result`, the forfeit `outcome` (no referee, no lease), and adds it to both players' totals.
async fn record(
    tx: &mut PgConnection,
    league_id: &LeagueId,
    unfinished: &Unfinished,
    result: &MatchResult,
    outcome: Outcome,
) -> ManagerResult<()> {
    let now = std::time::SystemTime::now();
    // The transcript says why the match ended without being played (or while it was); stored as JSON
    // only, as a referee's are.
    let transcript = MatchTranscript {
        match_id: unfinished.match_id.clone(),
        entries: vec![TranscriptEntry {
            at: Some(prost_types::Timestamp::from(now)),
            entry: Some(transcript_entry::Entry::StateTransition(StateTransition {
                from: MatchState::Unspecified as i32,
                to: MatchState::Aborted as i32,
                reason: result.reason.clone(),
            })),
        }],
    };
    let json = |text: Result<String, league_proto::json::JsonError>| {
        text.map_err(|error| anyhow::anyhow!("storing a forfeit of {}: {error}", unfinished.match_id))
    };
    let result_json = json(league_proto::json::record_to_json_text(result))?;
    let transcript_json = json(league_proto::json::record_to_json_text(&transcript))?;
    let rows: Vec<(String, StandingRow<()>)> = [
        (&unfinished.player_a_id, Side::A),
        (&unfinished.player_b_id, Side::B),
    ]
    .into_iter()
    .map(|(player, side)| {
        let mut row = StandingRow::new(());
        row.record(outcome.mark_for(side));
        (player.clone(), row)
    })
    .collect();
    let players: Vec<&str> = rows.iter().map(|(player, _)| player.as_str()).collect();
    let column = |value: fn(&StandingRow<()>) -> u32| -> Vec<i32> {
        rows.iter()
            .map(|(_, row)| i32::try_from(value(row)).unwrap_or(i32::MAX))
            .collect()
    };
    sqlx::query!(
        "with finished as (
             update matches
             set status = 'finished', result_status = $3, winner_player_id = $4, at_fault_player_ids = $5,
                 result = $6, result_json = $7::text::jsonb, transcript_json = $8,
                 finished_at = clock_timestamp(), referee_id = null, lease_id = null, lease_expires_at = null
             where league_id = $1 and match_id = $2
         ), added as (
             update standings s
             set played = s.played + d.played, wins = s.wins + d.wins, draws = s.draws + d.draws,
                 losses = s.losses + d.losses, technical_losses = s.technical_losses + d.technical_losses,
                 points = s.points + d.points
             from unnest($9::text[], $10::int[], $11::int[], $12::int[], $13::int[], $14::int[], $15::int[])
                  as d(player_id, played, wins, draws, losses, technical_losses, points)
             where s.league_id = $1 and s.player_id = d.player_id
         )
         -- No columns: the statement is run for what its parts write.
         select",
        league_id.as_str(),
        unfinished.match_id,
        "technical_loss",
        result.winner_player_id,
        &result.at_fault_player_ids,
        result.encode_to_vec(),
        result_json,
        transcript_json,
        &players as &[&str],
        &column(|row| row.played),
        &column(|row| row.wins),
        &column(|row| row.draws),
        &column(|row| row.losses),
        &column(|row| row.technical_losses),
        &column(|row| row.points),
    )
    .execute(&mut *tx)
    .await?;
    Ok(())
}
